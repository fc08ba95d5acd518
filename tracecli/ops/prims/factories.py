"""Factory prims: full, iota, empty, tensor (a literal), linspace and logspace, the random
draws uniform, normal, bernoulli, randint and randperm, manual_seed, and reading and
restoring the generator's state.

Random prims draw from torch's global generator the way eager's factories do, so eager
and traced runs under one seed agree bit for bit; manual_seed seeds that generator where
the program did, so the draws after it are eager's too. A draw fills memory in order, so
the values at each index depend on the layout drawn into: given `like=`, a draw fills a
tensor laid out as that one is (`empty_like`), as eager's `rand_like` and dropout draw in
their input's layout (a transposed input gets the transposed draw). linspace, logspace and randperm
are torch's own kernels: linspace computes each half from its own end with the vector
width of the CPU it runs on, and randperm shuffles with its own draws, which no
decomposition repeats bit for bit.
"""

from __future__ import annotations

import math

import torch

from tracecli.core import dtypes
from tracecli.core.dims import Dim
from tracecli.core.dtypes import DType
from tracecli.core.symbol import Tag
from tracecli.core.values import TensorType
from tracecli.ops.prims.base import INEXACT, check_kinds, prim, torch_dtype
from tracecli.ops.promotion import ShapeError


def _factory_meta(shape, *_, device, dtype) -> TensorType:
    return TensorType(tuple(shape), dtype, device)


def _check_like(name: str, shape, like) -> None:
    if like is not None and tuple(like.shape) != tuple(shape):
        raise ShapeError(f"prims.{name} draws {list(shape)} values laid out like a tensor of shape {list(like.shape)}")


def _sampling_meta(name: str):
    def meta(shape, *_, device, dtype, like=None) -> TensorType:
        # torch samples floating point (and complex) values only.
        check_kinds(name, dtype, INEXACT)
        _check_like(name, shape, like)
        return _factory_meta(shape, device=device, dtype=dtype)

    return meta


def _drawn_into(shape, like, device, dtype):
    """The tensor a draw fills: laid out as `like` is (eager's `*_like` and dropout), or
    contiguous."""
    if like is None:
        return torch.empty(shape, device=device, dtype=torch_dtype(dtype))
    return torch.empty_like(like, device=device, dtype=torch_dtype(dtype))


def _iota_meta(length, start, step, *, device, dtype) -> TensorType:
    return TensorType((length,), dtype, device)


def _full(shape, fill_value, *, device, dtype):
    return torch.full(shape, fill_value, device=device, dtype=torch_dtype(dtype))


def _iota(length, start, step, *, device, dtype):
    return torch.arange(start, start + length * step, step, device=device, dtype=torch_dtype(dtype))[:length]


def _uniform(shape, low, high, *, device, dtype, like=None):
    # Same RNG stream as torch.rand / Tensor.uniform_, so eager and traced agree.
    return _drawn_into(shape, like, device, dtype).uniform_(low, high)


def _normal(shape, mean, std, *, device, dtype, like=None):
    return _drawn_into(shape, like, device, dtype).normal_(mean, std)


def _empty(shape, *, device, dtype):
    return torch.empty(shape, device=device, dtype=torch_dtype(dtype))


# Numbers torch.tensor reads as their Python type says (numpy's scalars carry a dtype of
# their own, and are left to torch); a size symbol is an int.
NUMBER_TYPES = (bool, int, float, complex, Dim)


def literal_layout(data) -> tuple[tuple, str]:
    """(shape, widest number kind) of Python numbers in nested lists or tuples, as
    torch.tensor reads them; ShapeError for ragged nesting or anything but numbers."""
    if isinstance(data, (list, tuple)):
        parts = [literal_layout(item) for item in data]
        if not parts:
            return (0,), "float"  # torch.tensor([]) is an empty float tensor
        if len({shape for shape, _ in parts}) > 1:
            raise ShapeError(f"torch.tensor needs nested sequences of one length at each depth, got {data!r}")
        kind = max((k for _, k in parts), key=dtypes.KIND_ORDER.__getitem__)
        return (len(parts),) + parts[0][0], kind
    if type(data) in NUMBER_TYPES:
        return (), dtypes.kind_of_number(data)
    raise ShapeError(f"a tensor literal holds Python numbers, got {type(data).__name__}")


def _numbers(data):
    if isinstance(data, (list, tuple)):
        for item in data:
            yield from _numbers(item)
    else:
        yield data


def _tensor_meta(data, *, device, dtype: DType) -> TensorType:
    shape, kind = literal_layout(data)
    if kind == "complex" and not dtype.is_complex:
        raise ShapeError(f"a complex number cannot be written into a {dtype.name} tensor")
    for value in _numbers(data):
        if type(value) is int and not -(2**63) <= value < 2**63:
            raise ShapeError(f"{value} does not fit the integers torch.tensor reads")
        if dtype.kind == "int" and isinstance(value, float) and not math.isfinite(value):
            raise ShapeError(f"{value} cannot be converted to {dtype.name}")
    return TensorType(shape, dtype, device)


def _tensor(data, *, device, dtype):
    return torch.tensor(data, device=device, dtype=torch_dtype(dtype))


def _spaced_meta(name: str):
    def meta(start, end, steps, *rest, device, dtype) -> TensorType:
        if not isinstance(steps, Dim) and steps < 0:
            raise ShapeError(f"{name}: number of steps must be non-negative, got {steps}")
        return TensorType((steps,), dtype, device)

    return meta


def _linspace(start, end, steps, *, device, dtype):
    return torch.linspace(start, end, steps, device=device, dtype=torch_dtype(dtype))


def _logspace(start, end, steps, base, *, device, dtype):
    return torch.logspace(start, end, steps, base, device=device, dtype=torch_dtype(dtype))


full = prim("full", _factory_meta, _full)
iota = prim("iota", _iota_meta, _iota)
empty = prim("empty", _factory_meta, _empty, doc="a tensor whose values are unspecified (torch.empty's memory)")
tensor = prim("tensor", _tensor_meta, _tensor, doc="a constant tensor: the numbers written in the program")
linspace = prim("linspace", _spaced_meta("linspace"), _linspace, doc="steps values from start to end, evenly spaced")
logspace = prim("logspace", _spaced_meta("logspace"), _logspace,
                doc="base ** each of linspace(start, end, steps)")
uniform = prim("uniform", _sampling_meta("uniform"), _uniform, tags=(Tag.RANDOM,))
normal = prim("normal", _sampling_meta("normal"), _normal, tags=(Tag.RANDOM,))

# --- Bernoulli sampling -----------------------------------------------------------------------


def _bernoulli_meta(shape, p, *, device, dtype: DType, like=None) -> TensorType:
    _check_like("bernoulli", shape, like)
    if not dtype.is_float:
        raise ShapeError(f"prims.bernoulli samples floating point values, got {dtype.name}")
    if not 0.0 <= p <= 1.0:
        raise ShapeError(f"bernoulli probability must be in [0, 1], got {p}")
    return TensorType(tuple(shape), dtype, device)


def _bernoulli(shape, p, *, device, dtype, like=None):
    # The draw eager dropout makes on CPU (`empty_like(input).bernoulli_(1 - p)`): the same
    # RNG stream, into the same layout given `like`, so the same mask.
    return _drawn_into(shape, like, device, dtype).bernoulli_(p)


bernoulli = prim(
    "bernoulli", _bernoulli_meta, _bernoulli, tags=(Tag.RANDOM,),
    doc="ones with probability p, else zeros",
)

# --- integers: randint and randperm ---------------------------------------------------------


def _randint_meta(shape, low, high, *, device, dtype: DType, like=None) -> TensorType:
    _check_like("randint", shape, like)
    if dtype.kind == "complex":
        raise ShapeError(f"prims.randint does not draw {dtype.name} values")
    if isinstance(low, int) and isinstance(high, int) and low >= high:
        raise ShapeError(f"randint expects low < high, got low={low}, high={high}")
    return TensorType(tuple(shape), dtype, device)


def _randint(shape, low, high, *, device, dtype, like=None):
    if like is None:
        return torch.randint(low, high, shape, device=device, dtype=torch_dtype(dtype))
    return _drawn_into(shape, like, device, dtype).random_(low, high)  # torch.randint_like's draw


def _randperm_meta(n, *, device, dtype: DType) -> TensorType:
    if dtype.kind not in ("int", "float"):
        raise ShapeError(f"prims.randperm does not draw {dtype.name} values")
    if not isinstance(n, Dim) and n < 0:
        raise ShapeError(f"randperm: n must be non-negative, got {n}")
    return TensorType((n,), dtype, device)


def _randperm(n, *, device, dtype):
    return torch.randperm(n, device=device, dtype=torch_dtype(dtype))


randint = prim("randint", _randint_meta, _randint, tags=(Tag.RANDOM,), doc="integers drawn uniformly from [low, high)")
randperm = prim("randperm", _randperm_meta, _randperm, tags=(Tag.RANDOM,), doc="a random permutation of 0 .. n-1")

# --- the generator's state ---------------------------------------------------------------------


def _seed_meta(seed) -> None:
    if not isinstance(seed, (int, Dim)):
        raise TypeError(f"manual_seed takes an integer seed, got {seed!r}")


def _manual_seed(seed) -> None:
    torch.manual_seed(seed)


manual_seed = prim(
    "manual_seed", _seed_meta, _manual_seed, tags=(Tag.SIDE_EFFECT,),
    doc="seeds torch's global generator (every device's): the draws after it repeat eager's",
)


# The CPU generator's state: a byte tensor of a size fixed by torch's generator.
_STATE_SIZE = torch.random.get_rng_state().numel()
_GET_RNG_STATE, _SET_RNG_STATE = torch.random.get_rng_state, torch.random.set_rng_state


def _get_rng_state_meta() -> TensorType:
    return TensorType((_STATE_SIZE,), dtypes.uint8, "cpu")


def _set_rng_state_meta(state) -> None:
    if state.dtype is not dtypes.uint8 or state.device != "cpu" or tuple(state.shape) != (_STATE_SIZE,):
        raise TypeError(f"set_rng_state takes a cpu uint8[{_STATE_SIZE}] state (from torch.get_rng_state)")


# Reading the state is pinned where the program read it (never merged, dropped or moved).
get_rng_state = prim("get_rng_state", _get_rng_state_meta, _GET_RNG_STATE, tags=(Tag.SIDE_EFFECT,),
                     doc="a copy of the CPU generator's state")
set_rng_state = prim(
    "set_rng_state", _set_rng_state_meta, _SET_RNG_STATE, tags=(Tag.SIDE_EFFECT,),
    doc="restores the CPU generator's state: the draws after it repeat those after its reading",
)
