"""Tensor factories and random sampling."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch

from tracecli.core import dtypes
from tracecli.core.dims import Dim
from tracecli.core.symbol import Tag
from tracecli.core.values import TensorValue
from tracecli.ops import prims
from tracecli.ops.forms import OPAQUE, UnsupportedCall
from tracecli.ops.ltorch._base import broadcast_to, convert, expect_tensor, shape_arg, symbol, torch_form
from tracecli.ops.ltorch.conversions import clone, to
from tracecli.ops.prims.factories import NUMBER_TYPES, literal_layout
from tracecli.ops.promotion import ShapeError, broadcast_shapes
from tracecli.ops.torch_bridge import to_device, to_dtype


def _dtype(dtype, default=dtypes.float32):
    return to_dtype(dtype) if dtype is not None else default


# torch's factory options that change nothing a trace shows.
_NO_EFFECT = frozenset({"layout", "pin_memory", "requires_grad", "memory_format"})


def _options(options: dict):
    """dtype and device of a factory call; None when an option only torch can honour
    (a `generator=` to draw from, a sparse layout) is given."""
    if options.get("generator") is not None or options.get("layout") not in (None, torch.strided):
        return None
    unknown = set(options) - _NO_EFFECT - {"dtype", "device", "generator"}
    if unknown:
        raise TypeError(f"unexpected keyword arguments {sorted(unknown)}")
    return {"dtype": options.get("dtype"), "device": options.get("device")}


def _sized(sym, sizes: tuple, size, options: dict):
    """torch factories take sizes as varargs, one sequence or `size=`."""
    kept = _options(options)
    if kept is None:
        return OPAQUE
    if size is not None:
        if sizes:
            raise TypeError("sizes given both positionally and as size=")
        sizes = (size,)
    return sym(shape_arg(sizes), **kept)


def _zeros(*sizes, size=None, **options):
    return _sized(zeros, sizes, size, options)


def _ones(*sizes, size=None, **options):
    return _sized(ones, sizes, size, options)


def _rand(*sizes, size=None, **options):
    return _sized(rand, sizes, size, options)


def _randn(*sizes, size=None, **options):
    return _sized(randn, sizes, size, options)


@symbol(torch.zeros, adapter=_zeros)
def zeros(*size, dtype=None, device=None):
    """a tensor of zeros"""
    return prims.full(shape_arg(size), 0, device=to_device(device), dtype=_dtype(dtype))


@symbol(torch.ones, adapter=_ones)
def ones(*size, dtype=None, device=None):
    """a tensor of ones"""
    return prims.full(shape_arg(size), 1, device=to_device(device), dtype=_dtype(dtype))


def _full(size, fill_value, **options):
    kept = _options(options)
    return OPAQUE if kept is None else full(shape_arg((size,)), fill_value, **kept)


@symbol(torch.full, adapter=_full)
def full(size, fill_value, *, dtype=None, device=None):
    """a tensor filled with fill_value (dtype follows the value's Python type)"""
    default = dtypes.DEFAULT_FOR_KIND[dtypes.kind_of_number(fill_value)]
    return prims.full(shape_arg((size,)), fill_value, device=to_device(device), dtype=_dtype(dtype, default))


def _arange(*args, start=None, end=None, step=None, **options):
    kept = _options(options)
    if kept is None or len(args) > 3:
        return OPAQUE
    if start is None and end is None and step is None:
        if not args:
            return OPAQUE
        return arange(*args, **kept)
    # torch's overloads: arange(end) and arange(start, end, step=1), any part by keyword.
    positional = ("end",) if len(args) == 1 and start is None and end is None else ("start", "end", "step")
    given = dict(zip(positional, args, strict=False))
    for key, value in (("start", start), ("end", end), ("step", step)):
        if value is not None:
            if key in given:
                raise TypeError(f"arange() got multiple values for {key}")
            given[key] = value
    if "end" not in given or ("step" in given and "start" not in given):
        raise TypeError(f"arange() cannot take {sorted(given)} alone")
    return arange(given.get("start", 0), given["end"], given.get("step", 1), **kept)


@symbol(torch.arange, adapter=_arange)
def arange(start, end=None, step=1, *, dtype=None, device=None):
    """start, start + step, ... below end"""
    if end is None:
        start, end = 0, start
    integral = all(isinstance(v, (int, Dim)) for v in (start, end, step))
    dtype = _dtype(dtype, dtypes.int64 if integral else dtypes.float32)
    # torch's kernel first casts the bounds to the accumulation type: integers for an
    # integer dtype (truncating, as int() does), so arange(0, 5, 1.5, dtype=int64) steps by 1.
    # A symbolic size is an integer already.
    acc = (lambda v: v if isinstance(v, Dim) else int(v)) if dtype.kind == "int" else (lambda v: v)
    x_start, x_end, x_step = acc(start), acc(end), acc(step)
    if x_step == 0:
        raise ShapeError("arange step must be nonzero")
    if (x_step > 0 and x_end < x_start) or (x_step < 0 and x_end > x_start):
        raise ShapeError(f"arange({start}, {end}, {step}): the bounds are inconsistent with the step's sign")
    if dtype == dtypes.int64 or all(isinstance(v, (int, Dim)) for v in (x_start, x_end, x_step)):
        # Exact integer arithmetic, as torch does for int64 (doubles would lose digits;
        # for integer bounds in any dtype the count is the same).
        sign = 1 if x_step > 0 else -1
        length = abs(x_end - x_start + x_step - sign) // abs(x_step)
    else:
        length = math.ceil((end - start) / step)
    return prims.iota(length, x_start, x_step, device=to_device(device), dtype=dtype)


@symbol(torch.rand, adapter=_rand, tags=(Tag.RANDOM,))
def rand(*size, dtype=None, device=None):
    """uniform samples in [0, 1)"""
    return prims.uniform(shape_arg(size), 0.0, 1.0, device=to_device(device), dtype=_dtype(dtype))


@symbol(torch.randn, adapter=_randn, tags=(Tag.RANDOM,))
def randn(*size, dtype=None, device=None):
    """standard normal samples"""
    return prims.normal(shape_arg(size), 0.0, 1.0, device=to_device(device), dtype=_dtype(dtype))


# --- random integers and permutations -----------------------------------------------------------


def _bound(value) -> bool:
    return isinstance(value, Dim) or type(value) is int


def _randint(*args, low=None, high=None, size=None, **options):
    # torch's overloads: randint(high, size) and randint(low, high, size), any part by keyword.
    if len(args) == 3:
        names = ("low", "high", "size")
    elif len(args) == 2:
        names = ("low", "high") if size is not None else ("high", "size")
    else:
        names = ("low",) if high is not None else ("high",)
    given = dict(zip(names, args, strict=False))
    for key, value in (("low", low), ("high", high), ("size", size)):
        if value is not None:
            if key in given:
                raise TypeError(f"randint() got multiple values for {key}")
            given[key] = value
    if "high" not in given or "size" not in given:
        raise TypeError(f"randint() needs high and size, got {sorted(given)}")
    kept = _options(options)
    low, high = given.get("low", 0), given["high"]
    if kept is None or not (_bound(low) and _bound(high)):
        return OPAQUE
    return randint(low, high, given["size"], **kept)


@symbol(torch.randint, adapter=_randint, tags=(Tag.RANDOM,))
def randint(low, high, size, *, dtype=None, device=None):
    """integers drawn uniformly from [low, high) (int64 unless told)"""
    shape = shape_arg((size,))
    return prims.randint(shape, low, high, device=to_device(device), dtype=_dtype(dtype, dtypes.int64))


def _randint_like(input, *args, low=None, high=None, **options):
    kept = _options(options)
    bounds = {"high": args[0]} if len(args) == 1 else dict(zip(("low", "high"), args, strict=False))
    for key, value in (("low", low), ("high", high)):
        if value is not None:
            bounds[key] = value
    low, high = bounds.get("low", 0), bounds.get("high")
    if kept is None or not (_bound(low) and _bound(high)):
        return OPAQUE  # no high (torch's error), or bounds held in tensors
    return randint_like(input, low, high, **kept)


@symbol(torch.randint_like, adapter=_randint_like, tags=(Tag.RANDOM,))
def randint_like(input, low, high, *, dtype=None, device=None):
    """integers drawn uniformly from [low, high), shaped like input (in its dtype unless told)"""
    shape, dtype, device = _like(input, dtype, device)
    return prims.randint(shape, low, high, device=device, dtype=dtype, like=input)


def _randperm(n, **options):
    kept = _options(options)
    return OPAQUE if kept is None or not _bound(n) else randperm(n, **kept)


@symbol(torch.randperm, adapter=_randperm, tags=(Tag.RANDOM,))
def randperm(n, *, dtype=None, device=None):
    """a random permutation of 0 .. n-1 (int64 unless told)"""
    return prims.randperm(n, device=to_device(device), dtype=_dtype(dtype, dtypes.int64))


# --- normal samples with given means and deviations ----------------------------------------------


def _normal(mean=0.0, std=1.0, size=None, **options):
    kept = _options(options)
    tensors = [v for v in (mean, std) if isinstance(v, TensorValue)]
    if kept is None or any(not isinstance(v, (TensorValue, float, int)) or isinstance(v, bool) for v in (mean, std)):
        return OPAQUE
    if len(tensors) == 2 and mean.dtype != std.dtype:
        return OPAQUE  # torch draws in mean's dtype and multiplies by std in the wider one
    if tensors and (size is not None or kept["dtype"] is not None or kept["device"] is not None):
        raise TypeError("normal() takes size, dtype and device only with a number mean and std")
    if not tensors and size is None:
        raise TypeError("normal() with a number mean and std needs a size")
    return normal(mean, std, size, **kept)


@symbol(torch.normal, adapter=_normal, tags=(Tag.RANDOM,))
def normal(mean, std=1.0, size=None, *, dtype=None, device=None):
    """normal samples: standard ones scaled by std and shifted by mean, as torch draws
    them (mean's dtype for a tensor mean, else std's)"""
    if not isinstance(mean, TensorValue) and not isinstance(std, TensorValue):
        if not std >= 0.0:
            raise ShapeError(f"normal expects std >= 0.0, but found std {std}")
        return prims.normal(shape_arg((size,)), float(mean), float(std), device=to_device(device),
                            dtype=_dtype(dtype))
    like = mean if isinstance(mean, TensorValue) else std
    if not like.dtype.is_inexact:
        raise ShapeError(f"normal draws floating point values, got a {like.dtype.name} tensor")
    shape = broadcast_shapes(*(v.shape for v in (mean, std) if isinstance(v, TensorValue)))
    if isinstance(std, TensorValue):
        # Checked as torch checks it, before drawing: every deviation non-negative (NaN is not).
        prims.check_all(prims.ge(std, 0.0))
        draw = prims.normal(shape, 0.0, 1.0, device=like.device, dtype=like.dtype)
        draw = prims.mul(draw, broadcast_to(std, shape))
    else:
        if not std >= 0.0:
            raise ShapeError(f"normal expects std >= 0.0, but found std {std}")
        draw = prims.normal(shape, 0.0, float(std), device=like.device, dtype=like.dtype)
    return prims.add(draw, broadcast_to(mean, shape) if isinstance(mean, TensorValue) else mean)


def _shaped_like(sym, input, options: dict):
    kept = _options(options)
    return OPAQUE if kept is None else sym(input, **kept)


def _rand_like(input, **options):
    return _shaped_like(rand_like, input, options)


def _randn_like(input, **options):
    return _shaped_like(randn_like, input, options)


def _zeros_like(input, **options):
    return _shaped_like(zeros_like, input, options)


def _ones_like(input, **options):
    return _shaped_like(ones_like, input, options)


def _like(input, dtype, device):
    input = expect_tensor(input, "*_like")
    return input.shape, _dtype(dtype, input.dtype), to_device(device) if device is not None else input.device


@symbol(torch.rand_like, adapter=_rand_like, tags=(Tag.RANDOM,))
def rand_like(input, *, dtype=None, device=None):
    """uniform samples in [0, 1) shaped like input"""
    shape, dtype, device = _like(input, dtype, device)
    return prims.uniform(shape, 0.0, 1.0, device=device, dtype=dtype, like=input)


@symbol(torch.randn_like, adapter=_randn_like, tags=(Tag.RANDOM,))
def randn_like(input, *, dtype=None, device=None):
    """standard normal samples shaped like input"""
    shape, dtype, device = _like(input, dtype, device)
    return prims.normal(shape, 0.0, 1.0, device=device, dtype=dtype, like=input)


@symbol(torch.zeros_like, adapter=_zeros_like)
def zeros_like(input, *, dtype=None, device=None):
    """zeros shaped like input"""
    shape, dtype, device = _like(input, dtype, device)
    return prims.full(shape, 0, device=device, dtype=dtype)


@symbol(torch.ones_like, adapter=_ones_like)
def ones_like(input, *, dtype=None, device=None):
    """ones shaped like input"""
    shape, dtype, device = _like(input, dtype, device)
    return prims.full(shape, 1, device=device, dtype=dtype)


@symbol(torch.manual_seed, tags=(Tag.SIDE_EFFECT,))
def manual_seed(seed):
    """seeds torch's global generator, as the program did at this point (the tracer
    records the call: torch runs it below any mode)"""
    prims.manual_seed(seed)


# torch.random.fork_rng reads the state on entering and restores it on leaving: the draws
# after it repeat eager's because the trace restores the state where the program did.
@symbol(torch.get_rng_state, tags=(Tag.SIDE_EFFECT,))
def get_rng_state():
    """a copy of torch's CPU generator's state, read as the program did at this point"""
    return prims.get_rng_state()


@symbol(torch.set_rng_state, tags=(Tag.SIDE_EFFECT,))
def set_rng_state(new_state):
    """restores torch's CPU generator to a state read before: the draws after it repeat"""
    prims.set_rng_state(expect_tensor(new_state, "set_rng_state"))


# --- uninitialised memory -------------------------------------------------------------------
# Its values are whatever the memory held: the executors make it with torch.empty, and a
# comparison with eager compares only the types of what is computed from them.


def _empty(*sizes, size=None, **options):
    return _sized(empty, sizes, size, options)


def _empty_like(input, **options):
    return _shaped_like(empty_like, input, options)


@symbol(torch.empty, adapter=_empty)
def empty(*size, dtype=None, device=None):
    """a tensor whose values are unspecified"""
    return prims.empty(shape_arg(size), device=to_device(device), dtype=_dtype(dtype))


@symbol(torch.empty_like, adapter=_empty_like)
def empty_like(input, *, dtype=None, device=None):
    """a tensor shaped like input whose values are unspecified"""
    shape, dtype, device = _like(input, dtype, device)
    return prims.empty(shape, device=device, dtype=dtype)


# --- filled with one number ---------------------------------------------------------------------


def _full_like(input, fill_value, **options):
    if isinstance(fill_value, TensorValue):
        return OPAQUE  # a value read from a tensor: torch reads it with .item()
    kept = _options(options)
    return OPAQUE if kept is None else full_like(input, fill_value, **kept)


@symbol(torch.full_like, adapter=_full_like)
def full_like(input, fill_value, *, dtype=None, device=None):
    """fill_value shaped like input (in input's dtype, whatever the value's type)"""
    shape, dtype, device = _like(input, dtype, device)
    return prims.full(shape, fill_value, device=device, dtype=dtype)


def _scalar_tensor(s, **options):
    if isinstance(s, TensorValue):
        return OPAQUE
    kept = _options(options)
    return OPAQUE if kept is None else scalar_tensor(s, **kept)


@symbol(torch.scalar_tensor, adapter=_scalar_tensor)
def scalar_tensor(s, *, dtype=None, device=None):
    """a 0-d tensor holding s (float32 unless told, whatever s's type)"""
    return prims.full((), s, device=to_device(device), dtype=_dtype(dtype))


def _eye(n, m=None, **options):
    kept = _options(options)
    return OPAQUE if kept is None else eye(n, m, **kept)


@symbol(torch.eye, adapter=_eye)
def eye(n, m=None, *, dtype=None, device=None):
    """ones on the diagonal of an n x m matrix (m = n unless given), zeros elsewhere"""
    m = n if m is None else m
    for size in (n, m):
        if not isinstance(size, (int, Dim)) or isinstance(size, bool):
            raise TypeError(f"eye() takes integer sizes, got {size!r}")
        if isinstance(size, int) and size < 0:
            raise ShapeError(f"eye: sizes must be non-negative, got {size}")
    device, dtype = to_device(device), _dtype(dtype)
    rows = prims.broadcast_in_dim(prims.iota(n, 0, 1, device=device, dtype=dtypes.int64), (n, m), (0,))
    cols = prims.broadcast_in_dim(prims.iota(m, 0, 1, device=device, dtype=dtypes.int64), (n, m), (1,))
    return convert(prims.eq(rows, cols), dtype)


# --- from Python data ---------------------------------------------------------------------------


def _numbers_only(data) -> bool:
    if isinstance(data, (list, tuple)):
        return all(_numbers_only(item) for item in data)
    return type(data) in NUMBER_TYPES


def _holds_tensor(data) -> bool:
    return isinstance(data, (list, tuple)) and any(isinstance(x, TensorValue) or _holds_tensor(x) for x in data)


def _tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    if isinstance(data, TensorValue):
        # A copy of the tensor (torch warns to write .clone().detach()).
        return to(clone(data), device=device, dtype=dtype)
    if _holds_tensor(data):
        raise UnsupportedCall(
            "torch.tensor of a sequence holding traced tensors reads their values one by one; "
            "build it with torch.stack (of 0-d tensors) or torch.cat instead"
        )
    # (numpy scalars come as numbers with their dtype: frontend/numpy_calls.py.)
    if not _numbers_only(data):
        return OPAQUE  # numpy arrays, storages: torch's to read
    return tensor(data, dtype=dtype, device=device)


@torch_form(torch.as_tensor)
def _as_tensor(data, dtype=None, device=None):
    if isinstance(data, TensorValue):
        # The tensor itself, converted only where asked: torch.as_tensor copies nothing else.
        return to(data, device=device, dtype=dtype)
    return _tensor(data, dtype=dtype, device=device)


@torch_form(torch.asarray)
def _asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    if requires_grad:
        return OPAQUE
    if isinstance(obj, TensorValue):
        return to(clone(obj) if copy else obj, device=device, dtype=dtype)
    return _tensor(obj, dtype=dtype, device=device)


@symbol(torch.tensor, adapter=_tensor)
def tensor(data, *, dtype=None, device=None):
    """a tensor holding Python numbers (nested sequences of them, sizes among them): the
    dtype is the widest kind among them (bool, int64, float32, complex64) unless told"""
    _, kind = literal_layout(data)
    return prims.tensor(data, device=to_device(device), dtype=_dtype(dtype, dtypes.DEFAULT_FOR_KIND[kind]))


# --- evenly spaced ------------------------------------------------------------------------------


def _spaced_dtype(start, end, dtype):
    """float32, or complex64 when an end is complex, unless told (tensor ends too)."""
    if dtype is not None:
        return to_dtype(dtype)
    complex_end = any(
        (isinstance(v, TensorValue) and v.dtype.is_complex) or isinstance(v, complex) for v in (start, end)
    )
    return dtypes.complex64 if complex_end else dtypes.float32


def _spaced_ends(start, end) -> bool:
    """Whether torch takes these ends as they are: numbers, or 0-d tensors."""
    return all(
        (isinstance(v, TensorValue) and v.ndim == 0) or (type(v) in NUMBER_TYPES) for v in (start, end)
    )


def _linspace(start, end, steps, **options):
    kept = _options(options)
    if kept is None or not _spaced_ends(start, end):
        return OPAQUE
    return linspace(start, end, steps, **kept)


def _logspace(start, end, steps, base=10.0, **options):
    kept = _options(options)
    if kept is None or not _spaced_ends(start, end) or isinstance(base, TensorValue):
        return OPAQUE
    return logspace(start, end, steps, base, **kept)


def _steps(steps) -> int | Dim:
    if not isinstance(steps, (int, Dim)) or isinstance(steps, bool):
        raise TypeError(f"steps must be an integer, got {steps!r}")
    return steps


@symbol(torch.linspace, adapter=_linspace)
def linspace(start, end, steps, *, dtype=None, device=None):
    """steps values from start to end, evenly spaced (each half computed from its own end)"""
    return prims.linspace(start, end, _steps(steps), device=to_device(device), dtype=_spaced_dtype(start, end, dtype))


@symbol(torch.logspace, adapter=_logspace)
def logspace(start, end, steps, base=10.0, *, dtype=None, device=None):
    """base ** each of linspace(start, end, steps)"""
    dtype = _spaced_dtype(start, end, dtype)
    return prims.logspace(start, end, _steps(steps), base, device=to_device(device), dtype=dtype)


# --- Tensor.new_*: factories defaulting to the tensor's dtype and device ----------------


@torch_form(methods=("new_zeros",))
def _new_zeros(self, *sizes, size=None, dtype=None, device=None, **options):
    return _sized(zeros, sizes, size, {**options, "dtype": dtype or self.dtype, "device": device or self.device})


@torch_form(methods=("new_ones",))
def _new_ones(self, *sizes, size=None, dtype=None, device=None, **options):
    return _sized(ones, sizes, size, {**options, "dtype": dtype or self.dtype, "device": device or self.device})


@torch_form(methods=("new_empty",))
def _new_empty(self, *sizes, size=None, dtype=None, device=None, **options):
    return _sized(empty, sizes, size, {**options, "dtype": dtype or self.dtype, "device": device or self.device})


@torch_form(methods=("new_full",))
def _new_full(self, size, fill_value, *, dtype=None, device=None, **options):
    # Unlike torch.full, the dtype is the tensor's, whatever the fill value's type.
    return _full(size, fill_value, **options, dtype=dtype or self.dtype, device=device or self.device)
