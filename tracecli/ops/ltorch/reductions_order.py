"""Order statistics: median and nanmedian (of all elements, or (values, indices) along a
dim), mode and kthvalue along a dim, quantile and nanquantile.

Along a dim each returns torch's named tuple, so `.values` and `.indices` work on the
proxies as on eager results; the indices are those torch's kernel picks (prims run it).
"""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch

from tracecli.core import dtypes
from tracecli.core.dims import Dim, same_shape, statically_equal
from tracecli.ops import prims
from tracecli.ops.autocast import Autocast, Policy, device_type
from tracecli.ops.ltorch._base import convert, expect_tensor, is_tensor, keepdim_reshape, symbol
from tracecli.ops.promotion import ShapeError, canonical_dim


def _ordered(input, op: str, *, bools: bool = False):
    input = expect_tensor(input, op)
    if input.dtype.is_complex or (input.dtype.kind == "bool" and not bools):
        raise ShapeError(f"{op} is not defined for {input.dtype.name} tensors")
    return input


def _along(prim, kind, input, dim, keepdim, *args):
    d = canonical_dim(dim, input.ndim)
    values, indices = prim(input, *args, d)
    if keepdim:
        values, indices = keepdim_reshape(values, input, (d,)), keepdim_reshape(indices, input, (d,))
    return kind((values, indices))


def _median(prim, kind, input, dim, keepdim, op: str):
    input = _ordered(input, op)
    if dim is not None:
        return _along(prim, kind, input, dim, keepdim)
    if keepdim:
        raise ShapeError(f"{op}: keepdim needs a dim")
    if statically_equal(input.numel, 0):
        # torch's median of no elements is NaN (an integer one has no such value).
        if not input.dtype.is_float:
            raise ShapeError(f"{op} of an empty {input.dtype.name} tensor has no value")
        return prims.full((), math.nan, device=input.device, dtype=input.dtype)
    flat = input if input.ndim == 1 else prims.reshape(input, (input.numel,))
    return prim(flat, 0)[0]


@symbol(torch.median, methods=("median",))
def median(input, dim=None, keepdim=False):
    """the lower median of all elements (NaN if one is); along dim, (values, indices)"""
    return _median(prims.median, torch.return_types.median, input, dim, keepdim, "median")


@symbol(torch.nanmedian, methods=("nanmedian",))
def nanmedian(input, dim=None, keepdim=False):
    """the lower median of the elements that are not NaN; along dim, (values, indices)"""
    return _median(prims.nanmedian, torch.return_types.nanmedian, input, dim, keepdim, "nanmedian")


@symbol(torch.mode, methods=("mode",))
def mode(input, dim=-1, keepdim=False):
    """(values, indices) of the most frequent value along dim"""
    return _along(prims.mode, torch.return_types.mode, _ordered(input, "mode", bools=True), dim, keepdim)


@symbol(torch.kthvalue, methods=("kthvalue",))
def kthvalue(input, k, dim=-1, keepdim=False):
    """(values, indices) of the k-th smallest value along dim"""
    if isinstance(k, bool) or not isinstance(k, (int, Dim)):
        raise ShapeError(f"kthvalue: k must be an int, got {k!r}")
    return _along(prims.kthvalue, torch.return_types.kthvalue, _ordered(input, "kthvalue"), dim, keepdim, k)


# --- quantile, nanquantile -------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")
# ATen's autocast lists put quantile and nanquantile in CPU's fp32 list.
_CPU_FP32 = Autocast(cpu=Policy.FP32)


def _q_values(q, input, op: str):
    """q as a 1-D tensor in the input's dtype (torch makes a number one), checked as torch
    checks it: a number when tracing, a tensor's values at run time on CPU."""
    if not is_tensor(q):
        if not 0 <= q <= 1:
            raise ShapeError(f"{op}() q must be in the range [0, 1] but got {q}")
        return prims.full((1,), float(q), device=input.device, dtype=input.dtype)
    if q.ndim > 1:
        raise ShapeError(f"{op}() q must be a scalar or 1D tensor")
    if q.dtype != input.dtype:
        raise ShapeError(f"{op}() q tensor must be same dtype as the input tensor")
    if q.device != input.device:
        raise ShapeError(f"{op}() q tensor must be on the same device as the input tensor")
    if device_type(input.device) == "cpu":
        prims.check_all(prims.bitwise_and(prims.ge(q, 0.0), prims.le(q, 1.0)))
    return q if q.ndim == 1 else prims.reshape(q, (1,))


def _sorted_last(input, dim, keepdim):
    """(the values along the reduced dim sorted into a last dim, the reduced shape R):
    shape R + (size,), R the result's shape for one q."""
    if dim is None:
        flat = input if input.ndim == 1 else prims.reshape(input, (input.numel,))
        reduced = (1,) * input.ndim if keepdim else ()
    else:
        d = canonical_dim(dim, input.ndim)
        if input.ndim == 0:
            flat, reduced = prims.reshape(input, (1,)), ()
        else:
            order = tuple(i for i in range(input.ndim) if i != d) + (d,)
            flat = input if d == input.ndim - 1 else prims.transpose(input, order)
            reduced = tuple(1 if i == d else size for i, size in enumerate(input.shape)) if keepdim else flat.shape[:-1]
    values = prims.sort(flat, flat.ndim - 1, False, False)[0]
    shape = tuple(reduced) + (values.shape[-1],)
    return (values if same_shape(values.shape, shape) else prims.reshape(values, shape)), tuple(reduced)


def _lerp(low, high, weight):
    # torch's lerp: from the nearer end, for accuracy.
    step = prims.sub(high, low)
    near_low = prims.add(low, prims.mul(weight, step))
    near_high = prims.sub(high, prims.mul(step, prims.sub(1.0, weight)))
    return prims.where(prims.lt(prims.abs(weight), 0.5), near_low, near_high)


def _quantile(input, q, dim, keepdim, interpolation, op: str, *, ignore_nan: bool):
    input = expect_tensor(input, op)
    if input.dtype not in (dtypes.float32, dtypes.float64):
        raise ShapeError(f"{op}() input tensor must be either float or double dtype, got {input.dtype.name}")
    if interpolation not in _INTERPOLATIONS:
        raise ShapeError(f"{op}() interpolation must be one of {', '.join(_INTERPOLATIONS)}, but got {interpolation}")
    if statically_equal(input.numel, 0):
        raise ShapeError(f"{op}() input tensor must be non-empty")
    qs = _q_values(q, input, op)
    values, reduced = _sorted_last(input, dim, keepdim)
    axis, last = len(reduced), values.shape[-1] - 1
    shape = reduced + qs.shape
    qs = prims.broadcast_in_dim(qs, shape, (axis,))
    kept = tuple(range(axis))
    # NaN is the one value unequal to itself, and sorts last.
    nans = prims.sum(convert(prims.ne(values, values), dtypes.int64), (axis,))
    if ignore_nan:
        # Ranks among the values that are not NaN; with none, rank 0 picks a NaN.
        numbers = prims.sub(prims.sub(values.shape[-1], nans), 1)
        ranks = prims.mul(qs, prims.broadcast_in_dim(convert(numbers, input.dtype), shape, kept))
        ranks = prims.where(prims.lt(ranks, 0.0), convert(0, input.dtype), ranks)
    else:
        # A NaN anywhere makes the quantile NaN: the last rank, where it sorts.
        has_nan = prims.broadcast_in_dim(prims.ne(nans, 0), shape, kept)
        ranks = prims.where(has_nan, convert(last, input.dtype), prims.mul(qs, last))
    if interpolation == "lower":
        ranks = prims.floor(ranks)
    elif interpolation == "higher":
        ranks = prims.ceil(ranks)
    elif interpolation == "nearest":
        ranks = prims.round(ranks)
    below = convert(ranks, dtypes.int64)
    out = prims.gather(values, below, axis)
    if interpolation in ("linear", "midpoint"):
        weight = (prims.full(shape, 0.5, device=input.device, dtype=input.dtype) if interpolation == "midpoint"
                  else prims.sub(ranks, convert(below, input.dtype)))
        out = _lerp(out, prims.gather(values, convert(prims.ceil(ranks), dtypes.int64), axis), weight)
    if not is_tensor(q) or q.ndim == 0:
        return prims.reshape(out, reduced)
    # One result per q, first.
    return prims.transpose(out, (axis,) + kept)


@symbol(torch.quantile, methods=("quantile",), autocast=_CPU_FP32)
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """the q-th quantiles over dim (all elements when None), interpolated between the sorted values"""
    return _quantile(input, q, dim, keepdim, interpolation, "quantile", ignore_nan=False)


@symbol(torch.nanquantile, methods=("nanquantile",), autocast=_CPU_FP32)
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """quantile of the values that are not NaN"""
    return _quantile(input, q, dim, keepdim, interpolation, "nanquantile", ignore_nan=True)
