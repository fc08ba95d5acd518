"""Reductions: sum, mean, amax, amin, var, all, any, softmax and log_softmax over
dimensions, and the cumsum scan."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from tracecli.core import dtypes
from tracecli.ops import prims
from tracecli.ops.autocast import Autocast, Policy
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import (
    compute_dtype,
    convert,
    divisor,
    expect_tensor,
    keepdim_broadcast,
    keepdim_reshape,
    symbol,
    torch_form,
)
from tracecli.ops.promotion import ShapeError, canonical_dim, canonical_dims
from tracecli.ops.torch_bridge import to_dtype

# CUDA autocast computes these in float32 when no dtype is given (ATen's fp32_set_opt_dtype).
_CUDA_FP32_DTYPE = Autocast(cuda=Policy.FP32_DTYPE)


def _reduce(prim, x, dim, keepdim, **kw):
    dims = canonical_dims(dim, x.ndim)
    out = prim(x, dims, **kw)
    return keepdim_reshape(out, x, dims) if keepdim else out


def _count(x, dims) -> int:
    return math.prod(x.shape[d] for d in dims)


@symbol(torch.sum, methods=("sum",), autocast=_CUDA_FP32_DTYPE)
def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001
    """sum over dims (all when dim is None); ints and bools sum as int64"""
    input = expect_tensor(input, "sum")
    if dtype is not None:
        input = convert(input, to_dtype(dtype))
    elif input.dtype.kind in ("bool", "int"):
        input = convert(input, dtypes.int64)
    return _reduce(prims.sum, input, dim, keepdim)


@symbol(torch.mean, methods=("mean",))
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """sum / count, accumulated in float32 for half precision"""
    input = expect_tensor(input, "mean")
    out_dtype = to_dtype(dtype) if dtype is not None else input.dtype
    if not out_dtype.is_inexact:
        raise ShapeError(f"mean needs a floating point input, got {input.dtype.name}; pass dtype= or convert first")
    dims = canonical_dims(dim, input.ndim)
    wide = convert(input, compute_dtype(out_dtype))
    total = prims.sum(wide, dims)
    out = convert(prims.div(total, divisor(_count(input, dims))), out_dtype)
    return keepdim_reshape(out, input, dims) if keepdim else out


@symbol(torch.amax, methods=("amax",))
def amax(input, dim=(), keepdim=False):
    """maximum over dims"""
    return _reduce(prims.amax, expect_tensor(input, "amax"), dim, keepdim)


@symbol(torch.amin, methods=("amin",))
def amin(input, dim=(), keepdim=False):
    """minimum over dims"""
    return _reduce(prims.amin, expect_tensor(input, "amin"), dim, keepdim)


def _var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if input.dtype.is_complex:
        return OPAQUE  # a real variance of complex values: no prim computes it
    if isinstance(dim, bool):  # the legacy var(input, unbiased) form
        dim, unbiased = None, dim
    if correction is None:
        correction = 0 if unbiased is False else 1
    return var(input, dim, correction=correction, keepdim=keepdim)


@symbol(torch.var, methods=("var",), adapter=_var)
def var(input, dim=None, *, correction=1, keepdim=False):
    """variance over dims with Bessel's correction by default"""
    input = expect_tensor(input, "var")
    if not input.dtype.is_float:
        raise ShapeError(f"var needs a real floating point input, got {input.dtype.name}")
    dims = canonical_dims(dim, input.ndim)
    wide = convert(input, compute_dtype(input.dtype))
    out = convert(prims.var(wide, dims, float(correction)), input.dtype)
    return keepdim_reshape(out, input, dims) if keepdim else out


def _softmax_parts(x, dim, dtype):
    x = expect_tensor(x, "softmax")
    out_dtype = to_dtype(dtype) if dtype is not None else x.dtype
    if not out_dtype.is_float:
        raise ShapeError(f"softmax needs a real floating point input, got {out_dtype.name}")
    if dim is None:
        raise ShapeError("softmax needs an explicit dim")
    dims = canonical_dims(dim, x.ndim)
    wide = convert(x, compute_dtype(out_dtype))
    if 0 in (x.shape[d] for d in dims):
        return wide, dims, out_dtype  # no elements, no maximum to shift by
    shifted = prims.sub(wide, keepdim_broadcast(prims.amax(wide, dims), wide, dims))
    return shifted, dims, out_dtype


@symbol(torch.softmax, aliases=(torch.special.softmax,), methods=("softmax",), autocast=_CUDA_FP32_DTYPE)
def softmax(input, dim, dtype=None):
    """exp(x - max) / sum(exp(x - max)) along dim"""
    shifted, dims, out_dtype = _softmax_parts(input, dim, dtype)
    e = prims.exp(shifted)
    out = prims.div(e, keepdim_broadcast(prims.sum(e, dims), e, dims))
    return convert(out, out_dtype)


@symbol(
    torch.log_softmax, aliases=(torch.special.log_softmax,), methods=("log_softmax",), autocast=_CUDA_FP32_DTYPE
)
def log_softmax(input, dim, dtype=None):
    """(x - max) - log(sum(exp(x - max))) along dim"""
    shifted, dims, out_dtype = _softmax_parts(input, dim, dtype)
    log_total = prims.log(prims.sum(prims.exp(shifted), dims))
    out = prims.sub(shifted, keepdim_broadcast(log_total, shifted, dims))
    return convert(out, out_dtype)


def _all_or_any(input, dim, keepdim, *, want_all: bool):
    input = expect_tensor(input, "all" if want_all else "any")
    flags = convert(input, dtypes.bool8)
    dims = canonical_dims(dim, input.ndim)
    # all = no element is false; any = some element is true: reduce as integers.
    counted = flags if want_all is False else prims.logical_not(flags)
    total = prims.sum(convert(counted, dtypes.int64), dims)
    out = prims.eq(total, 0) if want_all else prims.ne(total, 0)
    out = out if input.dtype != dtypes.uint8 else convert(out, dtypes.uint8)
    return keepdim_reshape(out, input, dims) if keepdim else out


@torch_form(F.softmax)
def _f_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return softmax(input, dim, dtype=dtype)


@torch_form(F.log_softmax)
def _f_log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return log_softmax(input, dim, dtype=dtype)


@symbol(torch.all, methods=("all",))
def all(input, dim=None, keepdim=False):
    """true where every element (along dim) is nonzero"""
    return _all_or_any(input, dim, keepdim, want_all=True)


@symbol(torch.any, methods=("any",))
def any(input, dim=None, keepdim=False):
    """true where some element (along dim) is nonzero"""
    return _all_or_any(input, dim, keepdim, want_all=False)


@symbol(torch.cumsum, methods=("cumsum",), autocast=_CUDA_FP32_DTYPE)
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
