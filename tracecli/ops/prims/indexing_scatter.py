"""Scatter prims: scatter, scatter_add and scatter_reduce write `src` into a copy of x
at the places an index tensor names along one dimension.

Each is one torch kernel, which also checks the index values at run time (an index
out of range raises there, as in eager), and whose order of writes among duplicate
indices is eager's own on CPU. The meta rule is torch's shape rule for these kernels:
x, index and src have one rank (a zero-dim tensor counts as one dimension of size 1),
index is no larger than src anywhere and no larger than x outside `dim`.
"""

from __future__ import annotations

import torch

from tracecli.core import dtypes
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import check_dim, prim
from tracecli.ops.promotion import ShapeError, same_device

_INDEX_DTYPES = (dtypes.int32, dtypes.int64)
REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _sizes(x: TensorValue) -> tuple:
    return x.shape if x.ndim else (1,)


def _scatter_type(name: str, x: TensorValue, index: TensorValue, src: TensorValue, dim: int) -> TensorType:
    if index.dtype not in _INDEX_DTYPES:
        raise ShapeError(f"prims.{name} needs an int32 or int64 index, got {index.dtype.name}")
    if not isinstance(src, TensorValue) or src.dtype != x.dtype:
        raise ShapeError(f"prims.{name} takes src of the tensor's own dtype ({x.dtype.name})")
    if x.dtype == dtypes.complex32:
        raise ShapeError(f"prims.{name}: torch's scatter kernels do not take complex32")
    same_device(x, index, src)
    check_dim(name, x, dim)
    xs, idx, ss = _sizes(x), _sizes(index), _sizes(src)
    if not len(xs) == len(idx) == len(ss):
        raise ShapeError(f"prims.{name}: x {list(x.shape)}, index {list(index.shape)} and src "
                         f"{list(src.shape)} differ in rank")
    for d, (i, s, n) in enumerate(zip(idx, ss, xs, strict=True)):
        if i > s or (d != dim and i > n):
            raise ShapeError(f"prims.{name}: index {list(index.shape)} must be no larger than src "
                             f"{list(src.shape)}, nor than x {list(x.shape)} outside dimension {dim}")
    return x.type


def _scatter_meta(x: TensorValue, index: TensorValue, src: TensorValue, dim: int) -> TensorType:
    return _scatter_type("scatter", x, index, src, dim)


def _scatter_add_meta(x: TensorValue, index: TensorValue, src: TensorValue, dim: int) -> TensorType:
    return _scatter_type("scatter_add", x, index, src, dim)


def _scatter_reduce_meta(x: TensorValue, index: TensorValue, src: TensorValue, dim: int, reduce: str,
                         include_self: bool) -> TensorType:
    if reduce not in REDUCTIONS:
        raise ShapeError(f"prims.scatter_reduce: reduce must be one of {', '.join(REDUCTIONS)}, got {reduce!r}")
    # The kernels torch has: no mean of bools, no ordering of complex numbers.
    if reduce == "mean" and x.dtype == dtypes.bool8:
        raise ShapeError("prims.scatter_reduce: torch has no mean of bool values")
    if reduce in ("amax", "amin") and x.dtype.is_complex:
        raise ShapeError(f"prims.scatter_reduce: torch has no {reduce} of complex values")
    return _scatter_type("scatter_reduce", x, index, src, dim)


scatter = prim(
    "scatter", _scatter_meta, lambda x, index, src, dim: torch.scatter(x, dim, index, src),
    doc="x with src[i][j] written at x[index[i][j]][j] (for dim 0)",
)
scatter_add = prim(
    "scatter_add", _scatter_add_meta, lambda x, index, src, dim: torch.scatter_add(x, dim, index, src),
    doc="x with src[i][j] added to x[index[i][j]][j] (for dim 0)",
)


def _scatter_reduce(x, index, src, dim, reduce, include_self):
    return torch.scatter_reduce(x, dim, index, src, reduce, include_self=include_self)


scatter_reduce = prim(
    "scatter_reduce", _scatter_reduce_meta, _scatter_reduce,
    doc="x with the src values landing on each place reduced (with x's own value if include_self)",
)
