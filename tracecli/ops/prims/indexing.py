"""Prims for indexing and data movement (take, gather), scans (cumsum) and selection by
value (argmax/argmin, sort, topk), declared with `base._prim`.

Index operands are int32 or int64 tensors holding indices already in range: ltorch
wraps negative indices before calling these, so each prim means one torch kernel.
"""

from __future__ import annotations

import torch

from tracecli.core import dtypes
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import _prim
from tracecli.ops.promotion import ShapeError

_INDEX_DTYPES = (dtypes.int32, dtypes.int64)


def _check_index(name: str, x: TensorValue, index: TensorValue) -> None:
    if index.dtype not in _INDEX_DTYPES:
        raise ShapeError(f"prims.{name} needs an int32 or int64 index, got {index.dtype.name}")
    if index.device != x.device:
        raise ShapeError(f"prims.{name}: the index is on {index.device}, the tensor on {x.device}")


def _check_dim(name: str, x: TensorValue, dim: int) -> None:
    # Prims take canonical dims; a zero-dim tensor has the one dimension 0, as in torch.
    if not 0 <= dim < max(x.ndim, 1):
        raise ShapeError(f"prims.{name}: dimension {dim} is out of range for {list(x.shape)}")


def _size(x: TensorValue, dim: int) -> int:
    return x.shape[dim] if x.ndim else 1


# --- take, gather ----------------------------------------------------------------


def _take_meta(x: TensorValue, index: TensorValue, dim: int) -> TensorType:
    _check_index("take", x, index)
    if x.ndim == 0:
        raise ShapeError("prims.take needs a tensor with at least one dimension")
    _check_dim("take", x, dim)
    return TensorType(x.shape[:dim] + index.shape + x.shape[dim + 1 :], x.dtype, x.device)


def _take(x, index, dim):
    out = torch.index_select(x, dim, index.reshape(-1))
    return out.reshape(x.shape[:dim] + index.shape + x.shape[dim + 1 :])


take = _prim(
    "take", _take_meta, _take,
    doc="the slices of x at `index` along dim: shape x[:dim] + index.shape + x[dim+1:]",
)


def _gather_meta(x: TensorValue, index: TensorValue, dim: int) -> TensorType:
    _check_index("gather", x, index)
    _check_dim("gather", x, dim)
    if index.ndim != x.ndim:
        raise ShapeError(f"prims.gather: index {list(index.shape)} and input {list(x.shape)} differ in rank")
    for d, (i, s) in enumerate(zip(index.shape, x.shape, strict=True)):
        if d != dim and i > s:
            raise ShapeError(f"prims.gather: index {list(index.shape)} is larger than input {list(x.shape)} in {d}")
    return TensorType(index.shape, x.dtype, x.device)


gather = _prim("gather", _gather_meta, lambda x, index, dim: torch.gather(x, dim, index))

# --- scans ------------------------------------------------------------------------


def _cumsum_meta(x: TensorValue, dim: int) -> TensorType:
    # torch's cumsum of bools and small ints counts in int64: ltorch converts first.
    if x.dtype.kind == "bool":
        raise ShapeError("prims.cumsum does not accept bool operands")
    _check_dim("cumsum", x, dim)
    return x.type


cumsum = _prim("cumsum", _cumsum_meta, lambda x, dim: torch.cumsum(x, dim, dtype=x.dtype))

# --- selection by value -----------------------------------------------------------


def _reduced_shape(x: TensorValue, dim: int) -> tuple[int, ...]:
    return x.shape[:dim] + x.shape[dim + 1 :]


def _arg_meta(name: str):
    def meta(x: TensorValue, dim: int) -> TensorType:
        if x.dtype.kind in ("bool", "complex"):
            raise ShapeError(f"prims.{name} does not accept {x.dtype.name} operands")
        _check_dim(name, x, dim)
        if _size(x, dim) == 0:
            raise ShapeError(f"prims.{name}: dimension {dim} of {list(x.shape)} is empty")
        return TensorType(_reduced_shape(x, dim), dtypes.int64, x.device)

    return meta


argmax = _prim("argmax", _arg_meta("argmax"), lambda x, dim: torch.argmax(x, dim))
argmin = _prim("argmin", _arg_meta("argmin"), lambda x, dim: torch.argmin(x, dim))


def _sort_meta(x: TensorValue, dim: int, descending: bool, stable: bool) -> tuple[TensorType, TensorType]:
    if x.dtype.is_complex:
        raise ShapeError("prims.sort does not accept complex operands")
    _check_dim("sort", x, dim)
    return x.type, TensorType(x.shape, dtypes.int64, x.device)


def _sort(x, dim, descending, stable):
    return tuple(torch.sort(x, dim=dim, descending=descending, stable=stable))


sort = _prim("sort", _sort_meta, _sort, doc="(values, indices) of x sorted along dim")


def _topk_meta(x: TensorValue, k: int, dim: int, largest: bool, sorted: bool) -> tuple[TensorType, TensorType]:  # noqa: A002
    if x.dtype.kind in ("bool", "complex"):
        raise ShapeError(f"prims.topk does not accept {x.dtype.name} operands")
    _check_dim("topk", x, dim)
    if not 0 <= k <= _size(x, dim):
        raise ShapeError(f"prims.topk: k={k} is out of range for dimension {dim} of {list(x.shape)}")
    shape = x.shape[:dim] + (k,) + x.shape[dim + 1 :] if x.ndim else ()
    return TensorType(shape, x.dtype, x.device), TensorType(shape, dtypes.int64, x.device)


def _topk(x, k, dim, largest, sorted):  # noqa: A002
    return tuple(torch.topk(x, k, dim, largest, sorted))


topk = _prim("topk", _topk_meta, _topk, doc="(values, indices) of the k largest (or smallest) along dim")
