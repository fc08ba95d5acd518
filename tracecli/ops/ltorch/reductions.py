"""Reductions and the normalisations built on them."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from tracecli.core import dtypes
from tracecli.ops import prims
from tracecli.ops.ltorch._base import (
    compute_dtype,
    convert,
    expect_tensor,
    keepdim_broadcast,
    keepdim_reshape,
    symbol,
)
from tracecli.ops.promotion import ShapeError, canonical_dims
from tracecli.ops.torch_bridge import to_dtype


def _reduce(prim, x, dim, keepdim, **kw):
    dims = canonical_dims(dim, x.ndim)
    out = prim(x, dims, **kw)
    return keepdim_reshape(out, x, dims) if keepdim else out


def _count(x, dims) -> int:
    return math.prod(x.shape[d] for d in dims)


@symbol(torch.sum)
def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001
    """sum over dims (all when dim is None); ints and bools sum as int64"""
    input = expect_tensor(input, "sum")
    if dtype is not None:
        input = convert(input, to_dtype(dtype))
    elif input.dtype.kind in ("bool", "int"):
        input = convert(input, dtypes.int64)
    return _reduce(prims.sum, input, dim, keepdim)


@symbol(torch.mean)
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """sum / count, accumulated in float32 for half precision"""
    input = expect_tensor(input, "mean")
    out_dtype = to_dtype(dtype) if dtype is not None else input.dtype
    if not out_dtype.is_inexact:
        raise ShapeError(f"mean needs a floating point input, got {input.dtype.name}; pass dtype= or convert first")
    dims = canonical_dims(dim, input.ndim)
    wide = convert(input, compute_dtype(out_dtype))
    total = prims.sum(wide, dims)
    out = convert(prims.div(total, float(_count(input, dims))), out_dtype)
    return keepdim_reshape(out, input, dims) if keepdim else out


@symbol(torch.amax)
def amax(input, dim=(), keepdim=False):
    """maximum over dims"""
    return _reduce(prims.amax, expect_tensor(input, "amax"), dim, keepdim)


@symbol(torch.amin)
def amin(input, dim=(), keepdim=False):
    """minimum over dims"""
    return _reduce(prims.amin, expect_tensor(input, "amin"), dim, keepdim)


@symbol(torch.var)
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
    if any(x.shape[d] == 0 for d in dims):
        return wide, dims, out_dtype  # no elements, no maximum to shift by
    shifted = prims.sub(wide, keepdim_broadcast(prims.amax(wide, dims), wide, dims))
    return shifted, dims, out_dtype


@symbol(torch.softmax)
def softmax(input, dim, dtype=None):
    """exp(x - max) / sum(exp(x - max)) along dim"""
    shifted, dims, out_dtype = _softmax_parts(input, dim, dtype)
    e = prims.exp(shifted)
    out = prims.div(e, keepdim_broadcast(prims.sum(e, dims), e, dims))
    return convert(out, out_dtype)


@symbol(torch.log_softmax)
def log_softmax(input, dim, dtype=None):
    """(x - max) - log(sum(exp(x - max))) along dim"""
    shifted, dims, out_dtype = _softmax_parts(input, dim, dtype)
    log_total = prims.log(prims.sum(prims.exp(shifted), dims))
    out = prims.sub(shifted, keepdim_broadcast(log_total, shifted, dims))
    return convert(out, out_dtype)


@symbol(F.layer_norm)
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """(x - mean) / sqrt(var + eps) * weight + bias over the trailing normalized_shape"""
    input = expect_tensor(input, "layer_norm")
    if not input.dtype.is_float:
        raise ShapeError(f"layer_norm needs a real floating point input, got {input.dtype.name}")
    normalized_shape = tuple(normalized_shape) if not isinstance(normalized_shape, int) else (normalized_shape,)
    n = len(normalized_shape)
    if input.shape[input.ndim - n :] != normalized_shape:
        raise ShapeError(
            f"layer_norm: normalized_shape {list(normalized_shape)} does not match the input's "
            f"trailing dimensions {list(input.shape)}"
        )
    dims = tuple(range(input.ndim - n, input.ndim))
    wide = convert(input, compute_dtype(input.dtype))
    mean_ = prims.div(prims.sum(wide, dims), float(_count(input, dims)))
    centered = prims.sub(wide, keepdim_broadcast(mean_, wide, dims))
    variance = prims.var(wide, dims, 0.0)
    rstd = prims.rsqrt(prims.add(variance, float(eps)))
    out = prims.mul(centered, keepdim_broadcast(rstd, wide, dims))
    trailing = tuple(range(input.ndim - n, input.ndim))
    if weight is not None:
        w = prims.broadcast_in_dim(convert(weight, wide.dtype), input.shape, trailing)
        out = prims.mul(out, w)
    if bias is not None:
        b = prims.broadcast_in_dim(convert(bias, wide.dtype), input.shape, trailing)
        out = prims.add(out, b)
    return convert(out, input.dtype)
