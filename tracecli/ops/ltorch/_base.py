"""How ltorch symbols are declared, plus helpers their decompositions share.

An ltorch symbol is a torch-level operation: its Python signature mirrors the torch
function it models (so the printed call runs on torch as is), its decomposition
calls prims on values, and `impl` is the torch callable executors run.
"""

from __future__ import annotations

from collections.abc import Callable

from tracecli.core import dtypes
from tracecli.core.dtypes import DType
from tracecli.core.symbol import Symbol, Tag
from tracecli.core.values import TensorValue
from tracecli.ops import prims
from tracecli.ops.promotion import ShapeError, broadcast_shapes

ALL: dict[str, Symbol] = {}


def symbol(impl: Callable, *, tags: tuple[Tag, ...] = (), name: str | None = None):
    """Declare the decorated decomposition as ltorch.<name>, executed by `impl`."""

    def declare(decomposition: Callable) -> Symbol:
        sym_name = name or decomposition.__name__.rstrip("_")
        doc = (decomposition.__doc__ or "").strip().splitlines()
        sym = Symbol(
            sym_name, "ltorch", impl=impl, decomposition=decomposition, tags=frozenset(tags),
            doc=doc[0] if doc else "",
        )
        ALL[sym_name] = sym
        return sym

    return declare


def is_tensor(x: object) -> bool:
    return isinstance(x, TensorValue)


def expect_tensor(x: object, op: str) -> TensorValue:
    if not isinstance(x, TensorValue):
        raise ShapeError(f"{op} expects a tensor, got {type(x).__name__}")
    return x


def convert(x, dtype: DType):
    """`x` in `dtype`; numbers stay numbers (prims accept them beside tensors)."""
    if isinstance(x, TensorValue):
        return x if x.dtype == dtype else prims.convert_element_type(x, dtype)
    if dtype.kind == "bool":
        return bool(x)
    if dtype.kind == "int" and not isinstance(x, bool):
        return int(x)
    if dtype.is_float and not isinstance(x, bool):
        return float(x)
    return x


def broadcast_to(x, shape: tuple[int, ...]):
    if not isinstance(x, TensorValue) or x.shape == shape:
        return x
    offset = len(shape) - x.ndim
    if offset < 0:
        raise ShapeError(f"cannot broadcast {list(x.shape)} to {list(shape)}")
    return prims.broadcast_in_dim(x, shape, tuple(range(offset, len(shape))))


def broadcast_all(*operands):
    shapes = [x.shape for x in operands if isinstance(x, TensorValue)]
    shape = broadcast_shapes(*shapes)
    return tuple(broadcast_to(x, shape) for x in operands)


def float_dtype_for(x: TensorValue) -> DType:
    """The float dtype torch gives a float-only op on `x` (ints become float32)."""
    return x.dtype if x.dtype.is_inexact else dtypes.float32


def compute_dtype(dtype: DType) -> DType:
    """Low-precision floats are computed in float32 in composite ops, as torch's kernels do."""
    return dtypes.float32 if dtype in (dtypes.float16, dtypes.bfloat16) else dtype


def keepdim_broadcast(reduced: TensorValue, like: TensorValue, dims: tuple[int, ...]) -> TensorValue:
    """Re-expand a reduction result over the reduced `dims` to `like`'s shape."""
    kept = tuple(i for i in range(like.ndim) if i not in dims)
    return prims.broadcast_in_dim(reduced, like.shape, kept)


def keepdim_reshape(reduced: TensorValue, like: TensorValue, dims: tuple[int, ...]) -> TensorValue:
    shape = tuple(1 if i in dims else d for i, d in enumerate(like.shape))
    return prims.reshape(reduced, shape) if reduced.shape != shape else reduced


def shape_arg(shape) -> tuple[int, ...]:
    """torch accepts sizes as varargs or as one sequence: normalise to a tuple of ints."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        raise ShapeError(f"sizes must be integers, got {shape!r}") from None
