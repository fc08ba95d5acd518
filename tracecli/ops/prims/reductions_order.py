"""Order-statistic prims: median, nanmedian, mode and kthvalue along one (canonical)
dimension, each giving (values, indices).

Where several elements hold the chosen value, which index torch reports depends on its
kernel (and differs between devices): these prims run that very kernel, so a trace
reports the index eager does on the same device.
"""

from __future__ import annotations

import torch

from tracecli.core import dtypes
from tracecli.core.dims import statically_equal
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import ANY, REAL, check_dim, check_kinds, prim
from tracecli.ops.promotion import ShapeError


def _size(x: TensorValue, dim: int):
    return x.shape[dim] if x.ndim else 1


def _selected(x: TensorValue, dim: int) -> tuple[TensorType, TensorType]:
    shape = x.shape[:dim] + x.shape[dim + 1 :]
    return TensorType(shape, x.dtype, x.device), TensorType(shape, dtypes.int64, x.device)


def _order_meta(name: str, kinds: frozenset):
    def meta(x: TensorValue, dim: int) -> tuple[TensorType, TensorType]:
        check_kinds(name, x.dtype, kinds)
        check_dim(name, x, dim)
        if statically_equal(_size(x, dim), 0):
            raise ShapeError(f"{name}: dimension {dim} of {list(x.shape)} is empty")
        return _selected(x, dim)

    return meta


def _kthvalue_meta(x: TensorValue, k: int, dim: int) -> tuple[TensorType, TensorType]:
    check_kinds("kthvalue", x.dtype, REAL)
    check_dim("kthvalue", x, dim)
    if not 1 <= k <= _size(x, dim):
        raise ShapeError(f"kthvalue: k={k} is out of range for dimension {dim} of {list(x.shape)}")
    return _selected(x, dim)


median = prim("median", _order_meta("median", REAL), lambda x, dim: tuple(torch.median(x, dim)),
              doc="(values, indices) of the lower median along dim; NaN where the slice holds one")
nanmedian = prim("nanmedian", _order_meta("nanmedian", REAL), lambda x, dim: tuple(torch.nanmedian(x, dim)),
                 doc="(values, indices) of the lower median of the values that are not NaN along dim")
mode = prim("mode", _order_meta("mode", ANY - {"complex"}), lambda x, dim: tuple(torch.mode(x, dim)),
            doc="(values, indices) of the most frequent value along dim (the smallest among equally frequent)")
kthvalue = prim("kthvalue", _kthvalue_meta, lambda x, k, dim: tuple(torch.kthvalue(x, k, dim)),
                doc="(values, indices) of the k-th smallest value along dim")
