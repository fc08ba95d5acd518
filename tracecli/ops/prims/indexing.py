"""Indexing prims: take (whole slices at indices along a dimension) and gather; one_hot
with as many classes as the values need.

Index operands are int32 or int64 tensors holding indices already in range: ltorch
wraps negative indices before calling these, so each prim means one torch kernel.
"""

from __future__ import annotations

import torch

from tracecli.core import dtypes
from tracecli.core.dims import unbacked
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import check_dim, prim
from tracecli.ops.promotion import ShapeError, same_device

_INDEX_DTYPES = (dtypes.int32, dtypes.int64)


def _check_index(name: str, x: TensorValue, index: TensorValue) -> None:
    if index.dtype not in _INDEX_DTYPES:
        raise ShapeError(f"prims.{name} needs an int32 or int64 index, got {index.dtype.name}")
    same_device(x, index)


# --- take, gather ----------------------------------------------------------------


def _take_meta(x: TensorValue, index: TensorValue, dim: int) -> TensorType:
    _check_index("take", x, index)
    if x.ndim == 0:
        raise ShapeError("prims.take needs a tensor with at least one dimension")
    check_dim("take", x, dim)
    return TensorType(x.shape[:dim] + index.shape + x.shape[dim + 1 :], x.dtype, x.device)


def _take(x, index, dim):
    out = torch.index_select(x, dim, index.reshape(-1))
    return out.reshape(x.shape[:dim] + index.shape + x.shape[dim + 1 :])


take = prim(
    "take", _take_meta, _take,
    doc="the slices of x at `index` along dim: shape x[:dim] + index.shape + x[dim+1:]",
)


def _gather_meta(x: TensorValue, index: TensorValue, dim: int) -> TensorType:
    _check_index("gather", x, index)
    check_dim("gather", x, dim)
    if index.ndim != x.ndim:
        raise ShapeError(f"prims.gather: index {list(index.shape)} and input {list(x.shape)} differ in rank")
    for d, (i, s) in enumerate(zip(index.shape, x.shape, strict=True)):
        if d != dim and i > s:
            raise ShapeError(f"prims.gather: index {list(index.shape)} is larger than input {list(x.shape)} in {d}")
    return TensorType(index.shape, x.dtype, x.device)


gather = prim("gather", _gather_meta, lambda x, index, dim: torch.gather(x, dim, index))


# --- one_hot: as many classes as the largest value needs -------------------------------------


def _one_hot_meta(x: TensorValue) -> TensorType:
    if x.dtype != dtypes.int64:
        raise ShapeError(f"prims.one_hot needs an int64 tensor, got {x.dtype.name}")
    # One more than the largest value, which nothing bounds but int64 itself: no bound.
    classes = unbacked("the class count (the largest value + 1)", None)
    return TensorType((*x.shape, classes), dtypes.int64, x.device)


# torch's kernel also refuses what it refuses (an empty tensor, a negative value) when it runs.
one_hot = prim("one_hot", _one_hot_meta, lambda x: torch.nn.functional.one_hot(x),
               doc="a 1 at each value's position among as many classes as the largest value needs: a count the "
                   "data decide")


# --- writing at indices -------------------------------------------------------------------


def _index_put_meta(x: TensorValue, indices, values: TensorValue, accumulate: bool = False) -> TensorType:
    if not isinstance(values, TensorValue) or values.dtype != x.dtype or values.device != x.device:
        raise ShapeError("prims.index_put takes values of the tensor's own dtype and device")
    consumed = 0
    for index in indices:
        if index is None:
            consumed += 1
            continue
        if index.dtype == dtypes.bool8:
            consumed += index.ndim  # a mask covers as many dimensions as it has
        elif index.dtype in _INDEX_DTYPES:
            consumed += 1
        else:
            raise ShapeError(f"prims.index_put needs int32, int64 or bool indices, got {index.dtype.name}")
        if index.device != x.device:
            raise ShapeError(f"prims.index_put: an index is on {index.device}, the tensor on {x.device}")
    if consumed > x.ndim:
        raise ShapeError(f"prims.index_put: too many indices for a tensor of dimension {x.ndim}")
    return x.type


def _index_put(x, indices, values, accumulate=False):
    if accumulate:
        # The kernel of torch.index_put(..., accumulate=True), which the Python binding
        # reaches only without Nones: aten's takes them.
        return torch.ops.aten.index_put.default(x, list(indices), values, True)
    # Python's own item assignment, None standing for a whole dimension: the kernel
    # `x[key] = v` runs (zero-dim masks of zero-dim tensors too), on a copy.
    out = x.clone()
    out[tuple(slice(None) if index is None else index for index in indices)] = values
    return out


# x with values written where the indices (index tensors, masks, or None for a whole
# dimension) select, as `x[indices] = values` does; the values broadcast as there.
# With accumulate, values are added there instead, duplicate indices adding up.
index_put = prim("index_put", _index_put_meta, _index_put)
