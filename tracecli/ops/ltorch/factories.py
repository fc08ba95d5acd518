"""Tensor factories and random sampling; tensor literals (torch.tensor of Python numbers),
linspace, and empty tensors without elements."""

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
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import convert, expect_tensor, shape_arg, symbol, torch_form
from tracecli.ops.prims.factories import literal_layout
from tracecli.ops.promotion import ShapeError
from tracecli.ops.torch_bridge import TO_TORCH, to_device, to_dtype


def _dtype(dtype, default=dtypes.float32):
    return to_dtype(dtype) if dtype is not None else default


# torch's factory options that change nothing a trace shows.
_NO_EFFECT = frozenset({"layout", "pin_memory", "requires_grad", "memory_format"})


def _options(options: dict):
    """dtype and device of a factory call; None when an option only torch can honour
    (a `generator=` to draw from, a sparse or other non-strided layout) is given."""
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


def _bound(value, device: str) -> bool:
    if isinstance(value, TensorValue):
        return value.ndim == 0 and value.dtype.kind in ("int", "float") and value.device == device
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _linspace(start, end, steps, **options):
    kept = _options(options)
    if kept is None:
        return OPAQUE
    device = to_device(kept["device"])
    if not (_bound(start, device) and _bound(end, device)) or _dtype(kept["dtype"]) not in (dtypes.float32,
                                                                                             dtypes.float64):
        # Complex or bool bounds, and the dtypes torch's kernel steps through in arithmetic
        # of its own (integers in doubles, half precision in halves): left to torch.
        return OPAQUE
    return linspace(start, end, steps, **kept)


@symbol(torch.linspace, adapter=_linspace)
def linspace(start, end, steps, *, dtype=None, device=None):
    """steps values evenly spaced from start to end, both included"""
    dtype, device = _dtype(dtype), to_device(device)
    if isinstance(steps, TensorValue) or isinstance(steps, bool):
        raise TypeError("linspace takes its number of steps as an int")
    steps = int(steps)  # the step between values is a number: a symbolic count takes its example's value
    if steps < 0:
        raise ShapeError("number of steps must be non-negative")
    if any(isinstance(bound, TensorValue) and bound.ndim for bound in (start, end)):
        raise ShapeError("linspace only supports 0-dimensional start and end tensors")
    # Tensor bounds are read as numbers of the dtype (torch reads their values): here they
    # stay zero-dim tensors, broadcast where they meet the points.
    first, last = (convert(v, dtype) for v in (start, end))
    if steps <= 1:
        if isinstance(first, TensorValue):
            return prims.broadcast_in_dim(first, (steps,), ())
        return prims.full((steps,), first, device=device, dtype=dtype)
    if isinstance(first, TensorValue) or isinstance(last, TensorValue):
        low, high = (v if isinstance(v, TensorValue) else prims.full((), v, device=device, dtype=dtype)
                     for v in (first, last))
        step = prims.div(prims.sub(high, low), steps - 1)
    else:
        low, high = (torch.tensor(v, dtype=TO_TORCH[dtype]) for v in (first, last))
        step = ((high - low) / (steps - 1)).item()
    # As torch's kernel: the step computed in the dtype, the first half counted up from
    # start and the second half down from end, so that both ends are exact.
    half = steps // 2
    up = prims.iota(half, 0, 1, device=device, dtype=dtype)
    down = prims.iota(steps - half, steps - half - 1, -1, device=device, dtype=dtype)
    up = _spread(first, _spread(step, up, prims.mul), prims.add)
    down = _spread(last, _spread(step, down, prims.mul), prims.sub)
    return prims.cat([up, down], 0)


def _spread(value, points, op):
    """op(value, points) for a number or a zero-dim tensor `value` (broadcast to the points)."""
    if isinstance(value, TensorValue):
        value = prims.broadcast_in_dim(value, points.shape, ())
    return op(value, points)


def _has_no_elements(shape: tuple) -> bool:
    return any(not isinstance(d, Dim) and d == 0 for d in shape)


def _empty(*sizes, size=None, **options):
    kept = _options(options)
    if kept is None:
        return OPAQUE
    shape = shape_arg((size,) if size is not None else sizes)
    # Any other shape holds uninitialised memory: no trace can say what torch leaves there.
    return empty(shape, **kept) if _has_no_elements(shape) else OPAQUE


@symbol(torch.empty, adapter=_empty)
def empty(*size, dtype=None, device=None):
    """a tensor without elements (one with elements stays a torch call: its memory is uninitialised)"""
    shape = shape_arg(size)
    if not _has_no_elements(shape):
        raise ShapeError(f"ltorch.empty makes tensors without elements, not {list(shape)}")
    return prims.full(shape, 0, device=to_device(device), dtype=_dtype(dtype))


def _numbers_only(data) -> bool:
    if isinstance(data, (list, tuple)):
        return all(_numbers_only(item) for item in data)
    return isinstance(data, (bool, int, float, complex))


def _tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    # Only Python numbers: tensors in the data are values tracing does not have, and
    # other objects (arrays, storages, size symbols) are torch's to read.
    return tensor(data, dtype=dtype, device=device) if _numbers_only(data) else OPAQUE


@symbol(torch.tensor, adapter=_tensor)
def tensor(data, *, dtype=None, device=None):
    """a tensor of the Python numbers in data (nested lists): a constant of the program"""
    _, kind = literal_layout(data)
    return prims.tensor(data, device=to_device(device), dtype=_dtype(dtype, dtypes.DEFAULT_FOR_KIND[kind]))


@symbol(torch.rand, adapter=_rand, tags=(Tag.RANDOM,))
def rand(*size, dtype=None, device=None):
    """uniform samples in [0, 1)"""
    return prims.uniform(shape_arg(size), 0.0, 1.0, device=to_device(device), dtype=_dtype(dtype))


@symbol(torch.randn, adapter=_randn, tags=(Tag.RANDOM,))
def randn(*size, dtype=None, device=None):
    """standard normal samples"""
    return prims.normal(shape_arg(size), 0.0, 1.0, device=to_device(device), dtype=_dtype(dtype))


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
    return prims.uniform(shape, 0.0, 1.0, device=device, dtype=dtype)


@symbol(torch.randn_like, adapter=_randn_like, tags=(Tag.RANDOM,))
def randn_like(input, *, dtype=None, device=None):
    """standard normal samples shaped like input"""
    shape, dtype, device = _like(input, dtype, device)
    return prims.normal(shape, 0.0, 1.0, device=device, dtype=dtype)


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


# --- Tensor.new_*: factories defaulting to the tensor's dtype and device ----------------


@torch_form(methods=("new_zeros",))
def _new_zeros(self, *size, dtype=None, device=None, **options):
    return _sized(zeros, size, None, {**options, "dtype": dtype or self.dtype, "device": device or self.device})


@torch_form(methods=("new_ones",))
def _new_ones(self, *size, dtype=None, device=None, **options):
    return _sized(ones, size, None, {**options, "dtype": dtype or self.dtype, "device": device or self.device})


@torch_form(methods=("new_full",))
def _new_full(self, size, fill_value, *, dtype=None, device=None, **options):
    # Unlike torch.full, the dtype is the tensor's, whatever the fill value's type.
    return _full(size, fill_value, **options, dtype=dtype or self.dtype, device=device or self.device)
