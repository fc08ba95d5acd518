"""Selection by value and scans: max/min along a dim (values and indices), argmax/argmin,
sort/argsort, topk, clamp, cumsum.

Where torch returns a named tuple (`torch.return_types.max`, ...), so do these
decompositions: the tracer hands user code the same type, so `.values` and
`.indices` work on the proxies as on eager results.
"""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import torch

from tracecli.core import dtypes
from tracecli.ops import prims
from tracecli.ops.ltorch._base import broadcast_all, compute_dtype, convert, expect_tensor, keepdim_reshape, symbol
from tracecli.ops.promotion import ShapeError, canonical_dim, result_type
from tracecli.ops.torch_bridge import to_dtype


def _orderable(input, op: str):
    input = expect_tensor(input, op)
    if input.dtype.is_complex:
        raise ShapeError(f"{op} is not defined for complex tensors")
    return input


def _extremum(input, dim, keepdim, values_prim, index_prim, kind, op: str):
    input = _orderable(input, op)
    d = canonical_dim(dim, input.ndim)
    values = values_prim(input, (d,))
    # torch has no argmax for bools, but max(bool, dim) has indices: count them as 0 and 1.
    indices = index_prim(convert(input, dtypes.uint8) if input.dtype == dtypes.bool8 else input, d)
    if keepdim:
        values, indices = keepdim_reshape(values, input, (d,)), keepdim_reshape(indices, input, (d,))
    return kind((values, indices))


@symbol(torch.max, name="max")
def max_(input, dim, keepdim=False):
    """(values, indices) of the maximum along dim; the first index among ties"""
    return _extremum(input, dim, keepdim, prims.amax, prims.argmax, torch.return_types.max, "max")


@symbol(torch.min, name="min")
def min_(input, dim, keepdim=False):
    """(values, indices) of the minimum along dim; the first index among ties"""
    return _extremum(input, dim, keepdim, prims.amin, prims.argmin, torch.return_types.min, "min")


def _arg_extremum(input, dim, keepdim, prim, op: str):
    input = _orderable(input, op)
    if input.dtype == dtypes.bool8:
        raise ShapeError(f"{op} does not support bool input")
    if dim is None:
        flat = prims.reshape(input, (input.numel,)) if input.ndim != 1 else input
        out = prim(flat, 0)
        return prims.reshape(out, (1,) * input.ndim) if keepdim and input.ndim else out
    d = canonical_dim(dim, input.ndim)
    out = prim(input, d)
    return keepdim_reshape(out, input, (d,)) if keepdim else out


@symbol(torch.argmax)
def argmax(input, dim=None, keepdim=False):
    """the index of the maximum (flattened without dim)"""
    return _arg_extremum(input, dim, keepdim, prims.argmax, "argmax")


@symbol(torch.argmin)
def argmin(input, dim=None, keepdim=False):
    """the index of the minimum (flattened without dim)"""
    return _arg_extremum(input, dim, keepdim, prims.argmin, "argmin")


@symbol(torch.sort)
def sort(input, dim=-1, descending=False, *, stable=False):
    """(values, indices) sorted along dim"""
    input = _orderable(input, "sort")
    values, indices = prims.sort(input, canonical_dim(dim, input.ndim), bool(descending), bool(stable))
    return torch.return_types.sort((values, indices))


@symbol(torch.argsort)
def argsort(input, dim=-1, descending=False, *, stable=False):
    """the indices that sort input along dim"""
    input = _orderable(input, "argsort")
    return prims.sort(input, canonical_dim(dim, input.ndim), bool(descending), bool(stable))[1]


@symbol(torch.topk)
def topk(input, k, dim=-1, largest=True, sorted=True):
    """(values, indices) of the k largest (or smallest) along dim"""
    input = _orderable(input, "topk")
    if input.dtype == dtypes.bool8:
        raise ShapeError("topk does not support bool input")
    values, indices = prims.topk(input, k, canonical_dim(dim, input.ndim), bool(largest), bool(sorted))
    return torch.return_types.topk((values, indices))


@symbol(torch.clamp)
def clamp(input, min=None, max=None):
    """input limited to [min, max] (numbers or tensors, promoting like arithmetic)"""
    input = expect_tensor(input, "clamp")
    if min is None and max is None:
        raise ShapeError("clamp needs at least one of min and max")
    dtype = result_type(input, min, max)
    if dtype.kind in ("bool", "complex"):
        raise ShapeError(f"clamp is not defined for {dtype.name}")
    bounds = (None if bound is None else convert(bound, dtype) for bound in (min, max))
    x, low, high = broadcast_all(convert(input, dtype), *bounds)
    # max first, then min: where min > max, torch's result is max too.
    out = x if low is None else prims.maximum(x, low)
    return out if high is None else prims.minimum(out, high)


@symbol(torch.cumsum)
def cumsum(input, dim, *, dtype=None):
    """running sums along dim; bools and ints sum as int64"""
    input = expect_tensor(input, "cumsum")
    if dtype is not None:
        input = convert(input, to_dtype(dtype))
    elif input.dtype.kind in ("bool", "int"):
        input = convert(input, dtypes.int64)
    d = canonical_dim(dim, input.ndim)
    # Half precision accumulates in float32 and rounds each sum once, as torch's kernel does.
    wide = compute_dtype(input.dtype)
    return convert(prims.cumsum(convert(input, wide), d), input.dtype)
