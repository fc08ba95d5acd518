"""Reduction prims: sum, amax, amin, var over dimensions, and the cumsum scan.

A reduction keeps its input's dtype: ltorch converts first where torch accumulates in
another (the sum of int32 values is int64).
"""

from __future__ import annotations

import torch

from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import ANY, check_dim, check_kinds, prim
from tracecli.ops.promotion import ShapeError, canonical_dims


def _reduction_meta(x: TensorValue, dims) -> TensorType:
    dims = canonical_dims(dims, x.ndim)
    shape = tuple(d for i, d in enumerate(x.shape) if i not in dims)
    return TensorType(shape, x.dtype, x.device)


def _var_meta(x: TensorValue, dims, correction) -> TensorType:
    # torch's variance of a complex tensor is real: not the input's dtype.
    check_kinds("var", x.dtype, frozenset({"float"}))
    return _reduction_meta(x, dims)


def _extremum_meta(x: TensorValue, dims) -> TensorType:
    check_kinds("amax/amin", x.dtype, ANY - {"complex"})
    # Unlike a sum, a max over no elements has no value: torch refuses it, so do we.
    for d in canonical_dims(dims, x.ndim):
        if x.shape[d] == 0:
            raise ShapeError(f"cannot take the max or min over dimension {d} of size 0 in {list(x.shape)}")
    return _reduction_meta(x, dims)


def _amax(x, dims):
    return torch.amax(x, dims) if x.ndim else x.clone()


def _amin(x, dims):
    return torch.amin(x, dims) if x.ndim else x.clone()


sum = prim("sum", _reduction_meta, lambda x, dims: torch.sum(x, dims, dtype=x.dtype))  # noqa: A001
amax = prim("amax", _extremum_meta, _amax)
amin = prim("amin", _extremum_meta, _amin)
var = prim("var", _var_meta, lambda x, dims, correction: torch.var(x, dims, correction=correction))


# --- scans ------------------------------------------------------------------------


def _cumsum_meta(x: TensorValue, dim: int) -> TensorType:
    # torch's cumsum of bools and small ints counts in int64: ltorch converts first.
    if x.dtype.kind == "bool":
        raise ShapeError("prims.cumsum does not accept bool operands")
    check_dim("cumsum", x, dim)
    return x.type


cumsum = prim("cumsum", _cumsum_meta, lambda x, dim: torch.cumsum(x, dim, dtype=x.dtype))
