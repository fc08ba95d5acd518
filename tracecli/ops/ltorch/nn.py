"""Neural-network ltorch symbols: embedding, dropout and the normalisations (layer_norm,
rms_norm, batch_norm, group_norm, instance_norm, local_response_norm, normalize).
Attention, convolution, pooling and losses live in their own modules; padding is a
shape op."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from tracecli.core import dtypes
from tracecli.core.dims import Dim, exact_div, statically_equal
from tracecli.core.symbol import Tag
from tracecli.ops import prims
from tracecli.ops.autocast import Autocast, Policy
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch import elementwise as ew
from tracecli.ops.ltorch._base import (
    compute_dtype,
    convert,
    divisor,
    expect_tensor,
    is_tensor,
    keepdim_broadcast,
    symbol,
    torch_form,
)
from tracecli.ops.ltorch.indexing import index_on_meta
from tracecli.ops.ltorch.inplace import copy_
from tracecli.ops.ltorch.pooling import avg_pool2d, avg_pool3d
from tracecli.ops.ltorch.reductions import mean, var
from tracecli.ops.ltorch.reductions_norms import vector_norm
from tracecli.ops.ltorch.shapes import pad
from tracecli.ops.opaque import opaque_symbol
from tracecli.ops.promotion import ShapeError

# float32's epsilon is what torch's rms_norm defaults to for float32 and the half types
# (it computes those in float32); float64 uses its own.
_EPSILON = {dtypes.float32: 1.1920928955078125e-07, dtypes.float64: 2.220446049250313e-16}


def expect_float(x, op: str):
    x = expect_tensor(x, op)
    if not x.dtype.is_float:
        raise ShapeError(f"{op} needs a real floating point tensor, got {x.dtype.name}")
    return x


def expect_params(input, op: str, *params) -> None:
    """torch's CPU normalisation kernels take parameters in the input's dtype, or float32
    beside a half-precision input (they compute in float32); anything else is its error."""
    allowed = {input.dtype, compute_dtype(input.dtype)}
    for p in params:
        if p is not None and expect_tensor(p, op).dtype not in allowed:
            raise ShapeError(
                f"{op}: a {input.dtype.name} input takes parameters in "
                f"{' or '.join(sorted(d.name for d in allowed))}, got {p.dtype.name}"
            )


def along(x, like, dim: int):
    """A 1-D `x` broadcast along dimension `dim` of `like`'s shape."""
    return prims.broadcast_in_dim(x, like.shape, (dim,))


# --- embedding --------------------------------------------------------------------------


def _embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
               sparse=False):
    if max_norm is not None:
        # torch renormalises the rows the lookup picks, in place in the weight, first: the
        # tracer spells that out as the program's own write (frontend/tracer.py).
        return OPAQUE
    return embedding(input, weight, padding_idx)


@torch_form(torch.embedding)
def _torch_embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    # torch.embedding takes the weight first; -1 is its "no padding index".
    return embedding(indices, weight, None if padding_idx == -1 else padding_idx)


@symbol(F.embedding, adapter=_embedding)
def embedding(input, weight, padding_idx=None):
    """rows of weight picked by the indices in input (padding_idx only matters to gradients)"""
    input, weight = expect_tensor(input, "embedding"), expect_tensor(weight, "embedding")
    if input.dtype not in (dtypes.int32, dtypes.int64):
        raise ShapeError(f"embedding indices must be int32 or int64, got {input.dtype.name}")
    if weight.ndim != 2:
        raise ShapeError(f"embedding expects a 2-D weight, got {list(weight.shape)}")
    if padding_idx is not None and not -weight.shape[0] <= padding_idx < weight.shape[0]:
        raise ShapeError(f"padding_idx {padding_idx} is out of range for {weight.shape[0]} embeddings")
    return prims.take(weight, index_on_meta(weight, input), 0)


# --- dropout ------------------------------------------------------------------------------


def check_probability(p, op: str) -> float:
    if not 0.0 <= p <= 1.0:
        raise ShapeError(f"{op} probability has to be between 0 and 1, but got {p}")
    return float(p)


def _dropout(input, p=0.5, training=True, inplace=False):
    check_probability(p, "dropout")
    if not training or p == 0:
        return input  # the identity: nothing to record
    if inplace:
        raise ShapeError("dropout(..., inplace=True) in training mode overwrites its input; in-place dropout is "
                         "not traced (use inplace=False)")
    return dropout(input, p)


@torch_form(torch.dropout)
def _torch_dropout(input, p, train):
    return _dropout(input, p, train)


def _feature_dropout(func, training_default: bool):
    """dropout1d/2d/3d and the alpha dropouts: the identity outside training; in training
    their masks (per channel, or with alpha scaling) are left to torch."""

    def adapter(input, p=0.5, training=training_default, inplace=False):
        check_probability(p, func.__name__)
        if not training or p == 0:
            return input
        return opaque_symbol(func)(input, p, training, inplace)

    adapter.__name__ = f"_{func.__name__}"
    return torch_form(func)(adapter)


for _func, _training_default in (
    (F.dropout1d, True), (F.dropout2d, True), (F.dropout3d, True), (F.alpha_dropout, False),
    (F.feature_alpha_dropout, False),
):
    _feature_dropout(_func, _training_default)


@symbol(F.dropout, adapter=_dropout, tags=(Tag.RANDOM,))
def dropout(input, p=0.5, training=True):
    """input * bernoulli(1 - p) / (1 - p) in training; the identity otherwise"""
    input = expect_float(input, "dropout")
    p = check_probability(p, "dropout")
    if not training or p == 0.0 or input.numel == 0:
        return input  # records nothing, as eager returns its input
    if p == 1.0:
        return prims.mul(input, 0.0)  # eager multiplies by zero: NaN stays NaN
    # Eager's CPU kernel: a Bernoulli mask in the input's dtype and layout, divided by
    # 1 - p, times the input; the same RNG stream, so the same mask.
    keep = 1.0 - p
    mask = prims.bernoulli(input.shape, keep, device=input.device, dtype=input.dtype, like=input)
    return prims.mul(input, prims.div(mask, keep))


# --- normalisations ----------------------------------------------------------------------


def _normalized_dims(input, normalized_shape, op: str) -> tuple[int, ...]:
    if not isinstance(normalized_shape, (tuple, list)):
        raise ShapeError(f"{op}: normalized_shape must be a tuple of ints, got {normalized_shape!r}")
    shape = tuple(normalized_shape)
    n = len(shape)
    if n == 0 or n > input.ndim or input.shape[input.ndim - n :] != shape:
        raise ShapeError(
            f"{op}: normalized_shape {list(shape)} does not match the input's trailing dimensions {list(input.shape)}"
        )
    return tuple(range(input.ndim - n, input.ndim))


@symbol(F.rms_norm, aliases=(torch.rms_norm,))
def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x²) + eps) * weight over the trailing normalized_shape"""
    input = expect_float(input, "rms_norm")
    dims = _normalized_dims(input, normalized_shape, "rms_norm")
    wide = compute_dtype(input.dtype)
    eps = _EPSILON[wide] if eps is None else float(eps)
    x = convert(input, wide)
    count = divisor(math.prod(input.shape[d] for d in dims))
    mean_square = prims.div(prims.sum(prims.mul(x, x), dims), count)
    out = prims.mul(x, keepdim_broadcast(prims.rsqrt(prims.add(mean_square, eps)), x, dims))
    if weight is not None:
        weight = expect_tensor(weight, "rms_norm")
        if weight.shape != tuple(input.shape[d] for d in dims):
            raise ShapeError(f"rms_norm: weight {list(weight.shape)} does not match the normalized shape")
        # torch applies the weight in the compute dtype and rounds once, whatever the
        # weight's own dtype: the result keeps the input's dtype.
        out = prims.mul(out, prims.broadcast_in_dim(convert(weight, wide), input.shape, dims))
    return convert(out, input.dtype)


def _affine_transform(x, mean, invstd, weight, bias, channel_dim: int):
    """x * alpha + beta per channel, with alpha = invstd * weight and beta = bias - mean * alpha:
    the linear form torch's CPU batch norm kernel applies. `mean`/`invstd` are either per
    channel (1-D) or already broadcast to x's shape."""
    wide = x.dtype
    alpha = invstd if weight is None else prims.mul(invstd, _per_channel(convert(weight, wide), invstd, channel_dim))
    shift = prims.mul(mean, alpha)
    beta = prims.neg(shift) if bias is None else prims.sub(_per_channel(convert(bias, wide), shift, channel_dim), shift)
    if alpha.ndim == 1:
        alpha, beta = along(alpha, x, channel_dim), along(beta, x, channel_dim)
    return prims.add(prims.mul(x, alpha), beta)


def _per_channel(param, like, channel_dim: int):
    return param if like.ndim == 1 else along(param, like, channel_dim)


def _batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-05):
    """F.batch_norm. Training with running statistics normalises by the batch's and
    updates the running ones in place, as torch's kernel does: each becomes
    (1 - momentum) * running + momentum * the batch's (its variance unbiased), an
    `ltorch.copy_` into the module's buffer that the trace shows after the op."""
    if not training or (running_mean is None and running_var is None):
        return batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if momentum is None:
        raise ShapeError("batch_norm with momentum=None averages the statistics of every batch seen so far, "
                         "counted in a buffer read as a number: not traced; give the module a momentum")
    out = batch_norm(input, None, None, weight, bias, True, momentum, eps)
    dims = (0,) + tuple(range(2, input.ndim))
    x = convert(input, compute_dtype(input.dtype))
    for running, batch in ((running_mean, lambda: mean(x, dims)), (running_var, lambda: var(x, dims, correction=1))):
        if running is not None:
            updated = ew.add(ew.mul(running, 1.0 - momentum), ew.mul(convert(batch(), running.dtype), momentum))
            copy_(running, updated)
    return out


@symbol(F.batch_norm, adapter=_batch_norm)
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-05):
    """per-channel (x - mean) / sqrt(var + eps) * weight + bias; running statistics, or the batch's in training

    In training with running statistics, the adapter updates them in place after it."""
    input = expect_float(input, "batch_norm")
    if input.ndim < 2:
        raise ShapeError(f"batch_norm expects an input with a channel dimension, got {list(input.shape)}")
    channels = input.shape[1]
    params = (running_mean, running_var, weight, bias)
    expect_params(input, "batch_norm", *params)
    for p in params:
        if p is not None and p.shape != (channels,):
            raise ShapeError(f"batch_norm: parameters must have shape [{channels}], got {list(p.shape)}")
    wide = compute_dtype(input.dtype)
    x = convert(input, wide)
    if training:
        if running_mean is not None or running_var is not None:
            raise ShapeError("batch_norm in training mode with running statistics is called through "
                             "F.batch_norm, which updates them in place after it")
        dims = (0,) + tuple(range(2, input.ndim))
        count = math.prod(input.shape[d] for d in dims)
        if count <= 1:
            raise ShapeError(f"batch_norm expects more than 1 value per channel when training, got {list(input.shape)}")
        mean = prims.div(prims.sum(x, dims), divisor(count))
        # The kernel keeps the batch statistics in the parameters' dtype: the input's,
        # unless float32 parameters accompany a half-precision input.
        stats = wide if any(p is not None and p.dtype != input.dtype for p in (weight, bias)) else input.dtype
        if stats != dtypes.bfloat16:
            variance = prims.var(x, dims, 0.0)
        else:
            # For bfloat16 it rounds each channel's sum of squared deviations to that dtype
            # too, before dividing by the count (not for float16).
            centered = prims.sub(x, keepdim_broadcast(mean, x, dims))
            squares = convert(convert(prims.sum(prims.mul(centered, centered), dims), stats), wide)
            variance = prims.div(squares, divisor(count))
        invstd = prims.reciprocal(prims.sqrt(prims.add(variance, float(eps))))
        mean, invstd = (convert(convert(s, stats), wide) for s in (mean, invstd))
    else:
        if running_mean is None or running_var is None:
            raise ShapeError("batch_norm outside training needs running_mean and running_var")
        mean = convert(running_mean, wide)
        invstd = prims.reciprocal(prims.sqrt(prims.add(convert(running_var, wide), float(eps))))
    return convert(_affine_transform(x, mean, invstd, weight, bias, 1), input.dtype)


@torch_form(torch.batch_norm)
def _torch_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


@torch_form(torch.group_norm)
def _torch_group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    return group_norm(input, num_groups, weight, bias, eps)


@symbol(F.group_norm, autocast=Autocast(cuda=Policy.FP32))
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """normalise each group of channels by its own mean and variance, then weight + bias per channel"""
    input = expect_float(input, "group_norm")
    if input.ndim < 2:
        raise ShapeError(f"group_norm expects an input with a channel dimension, got {list(input.shape)}")
    batch, channels = input.shape[:2]
    if num_groups < 1 or channels % num_groups:
        raise ShapeError(f"group_norm: {channels} channels cannot be split into {num_groups} groups")
    expect_params(input, "group_norm", weight, bias)
    for p in (weight, bias):
        if p is not None and p.shape != (channels,):
            raise ShapeError(f"group_norm: weight and bias must have shape [{channels}], got {list(p.shape)}")
    wide = compute_dtype(input.dtype)
    x = convert(input, wide)
    if isinstance(x.numel, Dim):
        # Each group's size as a product (channels / groups exact under the guard above),
        # so that the reshape's element count is the input's as polynomials, not a guess.
        group_size = exact_div(channels, num_groups) * math.prod(input.shape[2:])
    else:
        group_size = x.numel // max(batch * num_groups, 1)
    grouped = prims.reshape(x, (batch, num_groups, group_size))
    count = divisor(grouped.shape[2])
    mean = prims.div(prims.sum(grouped, (2,)), count)
    invstd = prims.rsqrt(prims.add(prims.var(grouped, (2,), 0.0), float(eps)))
    # Statistics per (sample, group), spread over each group's channels and positions.
    per_group = exact_div(channels, num_groups)
    stats_shape = (batch, num_groups, per_group) + input.shape[2:]
    mean, invstd = (
        prims.reshape(prims.broadcast_in_dim(s, stats_shape, (0, 1)), input.shape) for s in (mean, invstd)
    )
    return convert(_affine_transform(x, mean, invstd, weight, bias, 1), input.dtype)


@symbol(F.layer_norm, autocast=Autocast(cuda=Policy.FP32))
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
    mean_ = prims.div(prims.sum(wide, dims), divisor(math.prod(input.shape[d] for d in dims)))
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


@torch_form(torch.layer_norm)
def _torch_layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    return layer_norm(input, normalized_shape, weight, bias, eps)


# --- instance_norm, local_response_norm, normalize ----------------------------------------------


def _repeated(param, times):
    """A per-channel parameter repeated for each of `times` samples: (c,) -> (times * c,)."""
    if param is None:
        return None
    (c,) = param.shape
    return prims.reshape(prims.broadcast_in_dim(param, (times, c), (1,)), (times * c,))


def _instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                   momentum=0.1, eps=1e-05):
    if running_mean is not None or running_var is not None:
        # torch writes the running statistics back (even outside training): left to it.
        return OPAQUE
    return instance_norm(input, weight=weight, bias=bias, use_input_stats=use_input_stats, momentum=momentum, eps=eps)


@symbol(F.instance_norm, adapter=_instance_norm)
def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-05):
    """each channel of each sample normalised by its own mean and variance, then weight + bias per channel

    With running statistics it stays a torch call: torch writes them back."""
    input = expect_float(input, "instance_norm")
    if running_mean is not None or running_var is not None:
        raise ShapeError("instance_norm with running statistics is left to torch, which writes them back")
    if not use_input_stats:
        raise ShapeError("instance_norm: expected running_mean and running_var to be defined when use_input_stats "
                         "is false")
    if input.ndim < 2 or statically_equal(math.prod(input.shape[2:]), 1):
        raise ShapeError(f"instance_norm: expected more than 1 spatial element when training, got input size "
                         f"{list(input.shape)}")
    batch, channels = input.shape[:2]
    for p in (weight, bias):
        if p is not None and expect_tensor(p, "instance_norm").shape != (channels,):
            raise ShapeError(f"instance_norm: weight and bias must have shape [{channels}], got {list(p.shape)}")
    if statically_equal(input.numel, 0):
        return input
    # torch's own reduction: each (sample, channel) a channel of one batch-norm sample.
    grouped = prims.reshape(input, (1, batch * channels) + input.shape[2:])
    out = batch_norm(grouped, None, None, _repeated(weight, batch), _repeated(bias, batch), True, momentum, eps)
    return prims.reshape(out, input.shape)


@torch_form(torch.instance_norm)
def _torch_instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                         cudnn_enabled):
    return _instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


@symbol(F.local_response_norm)
def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """input / (k + alpha * mean of input² over `size` neighbouring channels) ** beta"""
    input = expect_tensor(input, "local_response_norm")
    if input.ndim < 3:
        raise ShapeError(f"local_response_norm: expected 3D or higher dimensionality input, got {input.ndim} "
                         "dimensions")
    if statically_equal(input.numel, 0):
        return input
    # torch's own composition: the channels, zero-padded, are pooled as the height of one
    # image (one volume beyond 3-D) per sample; autocast meets each op as in eager.
    batch, channels = input.shape[:2]
    squares = ew.mul(input, input)
    if input.ndim == 3:
        grid = prims.reshape(squares, (batch, 1) + input.shape[1:])
        windows = avg_pool2d(pad(grid, (0, 0, size // 2, (size - 1) // 2)), (size, 1), stride=1)
    else:
        grid = prims.reshape(squares, (batch, 1, channels, input.shape[2], math.prod(input.shape[3:])))
        windows = avg_pool3d(pad(grid, (0, 0, 0, 0, size // 2, (size - 1) // 2)), (size, 1, 1), stride=1)
    scale = ew.pow(ew.add(ew.mul(prims.reshape(windows, input.shape), alpha), k), beta)
    return ew.true_divide(input, scale)


def _normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    if isinstance(p, str) or (is_tensor(input) and input.dtype.is_complex):
        return OPAQUE  # torch.norm's matrix orders, and complex norms: torch's
    return normalize(input, p, dim, eps)


@symbol(F.normalize, adapter=_normalize)
def normalize(input, p=2.0, dim=1, eps=1e-12):
    """input / max(its p-norm along dim, eps)"""
    input = expect_tensor(input, "normalize")
    dims = None if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    norms = vector_norm(input, 2.0 if p is None else p, dims, True)
    return ew.true_divide(input, ew.clamp(norms, min=eps))
