"""Reduction prims: sum, prod, amax, amin, var over dimensions, and the scans cumsum,
cumprod, logcumsumexp, cummax and cummin.

A reduction keeps its input's dtype: ltorch converts first where torch accumulates in
another (the sum of int32 values is int64).
"""

from __future__ import annotations

import torch

from tracecli.core import dtypes
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import ANY, INEXACT, NUMBER, check_dim, check_kinds, prim
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


def _prod_meta(x: TensorValue, dims) -> TensorType:
    # torch's product of bools and small ints counts in int64 unless told otherwise
    # (dtype=torch.bool is a logical and): ltorch converts first.
    check_kinds("prod", x.dtype, ANY)
    return _reduction_meta(x, dims)


def _prod(x, dims):
    # torch.prod takes one dim or none: several are reduced one at a time (the last
    # first, so the others keep their positions).
    dims = tuple(dims)
    if len(dims) == 1:
        return torch.prod(x, dims[0], dtype=x.dtype)
    if len(dims) == x.ndim:
        return torch.prod(x, dtype=x.dtype)
    for d in sorted(dims, reverse=True):
        x = torch.prod(x, d, dtype=x.dtype)
    return x


def _amax(x, dims):
    return torch.amax(x, dims) if x.ndim else x.clone()


def _amin(x, dims):
    return torch.amin(x, dims) if x.ndim else x.clone()


def _everything_meta(x: TensorValue) -> TensorType:
    return _extremum_meta(x, tuple(range(x.ndim)))


sum = prim("sum", _reduction_meta, lambda x, dims: torch.sum(x, dims, dtype=x.dtype))  # noqa: A001
prod = prim("prod", _prod_meta, _prod)
amax = prim("amax", _extremum_meta, _amax)
amin = prim("amin", _extremum_meta, _amin)
# torch.max(x) and torch.min(x) over every element run a kernel of their own: where
# zeros of both signs tie, it returns another one than amax does, which Python reads
# when it formats the value. These run that kernel.
max_all = prim("max_all", _everything_meta, torch.max)
min_all = prim("min_all", _everything_meta, torch.min)
var = prim("var", _var_meta, lambda x, dims, correction: torch.var(x, dims, correction=correction))


# --- scans ------------------------------------------------------------------------


def _cumsum_meta(x: TensorValue, dim: int) -> TensorType:
    # torch's cumsum of bools and small ints counts in int64: ltorch converts first.
    if x.dtype.kind == "bool":
        raise ShapeError("prims.cumsum does not accept bool operands")
    check_dim("cumsum", x, dim)
    return x.type


cumsum = prim("cumsum", _cumsum_meta, lambda x, dim: torch.cumsum(x, dim, dtype=x.dtype))


def _scan_meta(name: str, kinds: frozenset):
    def meta(x: TensorValue, dim: int) -> TensorType:
        check_kinds(name, x.dtype, kinds)
        check_dim(name, x, dim)
        return x.type

    return meta


def _running_extremum_meta(name: str):
    def meta(x: TensorValue, dim: int) -> tuple[TensorType, TensorType]:
        check_kinds(name, x.dtype, ANY - {"complex"})
        check_dim(name, x, dim)
        return x.type, TensorType(x.shape, dtypes.int64, x.device)

    return meta


cumprod = prim("cumprod", _scan_meta("cumprod", NUMBER), lambda x, dim: torch.cumprod(x, dim, dtype=x.dtype))
# torch's running log-sum-exp shifts by the larger of each pair it adds: a shift by one
# maximum for the whole scan would flush the early terms to zero.
logcumsumexp = prim("logcumsumexp", _scan_meta("logcumsumexp", INEXACT), torch.logcumsumexp)
# Ties and NaN pick the later index; the indices are torch's own.
cummax = prim("cummax", _running_extremum_meta("cummax"), lambda x, dim: tuple(torch.cummax(x, dim)),
              doc="(values, indices) of the running maximum along dim")
cummin = prim("cummin", _running_extremum_meta("cummin"), lambda x, dim: tuple(torch.cummin(x, dim)),
              doc="(values, indices) of the running minimum along dim")
