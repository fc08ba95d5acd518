"""Convolutions: conv1d/2d/3d onto prims.convolution, conv_transpose1d/2d/3d onto
prims.convolution_transpose."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import torch.nn.functional as F

from tracecli.core.dims import Dim, statically_equal
from tracecli.ops import prims
from tracecli.ops.autocast import Policy, everywhere
from tracecli.ops.ltorch._base import expect_tensor, symbol
from tracecli.ops.promotion import ShapeError


def ntuple(value, n: int, name: str) -> tuple[int, ...]:
    """torch's `_ntuple`: one int for every dimension, or exactly one per dimension."""
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            value = tuple(value) * n
        if len(value) != n:
            raise ShapeError(f"{name} must be an int or a sequence of {n} ints, got {list(value)}")
        return tuple(_size(v) for v in value)
    return (_size(value),) * n


def _size(value):
    # A size expression stays one: int() of it would pin it to its example value.
    return value if isinstance(value, Dim) else int(value)


def _conv(n: int, input, weight, bias, stride, padding, dilation, groups):
    op = f"conv{n}d"
    input, weight = expect_tensor(input, op), expect_tensor(weight, op)
    if weight.ndim != n + 2:
        raise ShapeError(f"{op} expects a weight with {n + 2} dimensions, got {list(weight.shape)}")
    if input.ndim not in (n + 1, n + 2):
        raise ShapeError(f"{op} expects a {n + 1}-D (unbatched) or {n + 2}-D (batched) input, got {list(input.shape)}")
    if input.dtype != weight.dtype or (bias is not None and expect_tensor(bias, op).dtype != input.dtype):
        raise ShapeError(f"{op} expects input, weight and bias of one dtype, got {input.dtype.name} and "
                         f"{weight.dtype.name}" + (f" and {bias.dtype.name}" if bias is not None else ""))
    unbatched = input.ndim == n + 1
    x = prims.reshape(input, (1,) + input.shape) if unbatched else input
    stride, dilation = ntuple(stride, n, "stride"), ntuple(dilation, n, "dilation")
    kernel = weight.shape[2:]
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * n
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise ShapeError(f"{op}: padding='same' is not supported for strided convolutions")
            # torch pads dilation * (kernel - 1) in all, the odd one out on the right,
            # through an explicit padded copy of the input (as here) when that is uneven.
            totals = [d * (k - 1) for d, k in zip(dilation, kernel, strict=True)]
            padding = tuple(t // 2 for t in totals)
            # t % 2 for a symbolic kernel: a remainder is known to be 0 or 1, so padding
            # by it needs no guard; a kernel that may be even is padded (by 0 when odd).
            extra = tuple(t % 2 if isinstance(t, Dim) else t - 2 * (t // 2) for t in totals)
            if any(not statically_equal(e, 0) for e in extra):
                x = prims.pad(x, 0.0, ((0, 0), (0, 0)) + tuple((0, e) for e in extra))
        else:
            raise ShapeError(f"{op}: padding must be 'valid', 'same', an int or a tuple of ints, got {padding!r}")
    else:
        padding = ntuple(padding, n, "padding")
    out = prims.convolution(x, weight, bias, stride, padding, dilation, int(groups))
    return prims.reshape(out, out.shape[1:]) if unbatched else out


@symbol(F.conv1d, autocast=everywhere(Policy.LOWER))
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (cross-correlation) over (N, C, L) or (C, L) inputs"""
    return _conv(1, input, weight, bias, stride, padding, dilation, groups)


@symbol(F.conv2d, autocast=everywhere(Policy.LOWER))
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation) over (N, C, H, W) or (C, H, W) inputs"""
    return _conv(2, input, weight, bias, stride, padding, dilation, groups)


@symbol(F.conv3d, autocast=everywhere(Policy.LOWER))
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution (cross-correlation) over (N, C, D, H, W) or (C, D, H, W) inputs"""
    return _conv(3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(n: int, input, weight, bias, stride, padding, output_padding, groups, dilation):
    op = f"conv_transpose{n}d"
    input, weight = expect_tensor(input, op), expect_tensor(weight, op)
    if weight.ndim != n + 2:
        raise ShapeError(f"{op} expects a weight with {n + 2} dimensions, got {list(weight.shape)}")
    if input.ndim not in (n + 1, n + 2):
        raise ShapeError(f"{op} expects a {n + 1}-D (unbatched) or {n + 2}-D (batched) input, got {list(input.shape)}")
    if input.dtype != weight.dtype or (bias is not None and expect_tensor(bias, op).dtype != input.dtype):
        raise ShapeError(f"{op} expects input, weight and bias of one dtype, got {input.dtype.name} and "
                         f"{weight.dtype.name}" + (f" and {bias.dtype.name}" if bias is not None else ""))
    unbatched = input.ndim == n + 1
    x = prims.reshape(input, (1,) + input.shape) if unbatched else input
    out = prims.convolution_transpose(
        x, weight, bias, ntuple(stride, n, "stride"), ntuple(padding, n, "padding"),
        ntuple(output_padding, n, "output_padding"), ntuple(dilation, n, "dilation"), int(groups),
    )
    return prims.reshape(out, out.shape[1:]) if unbatched else out


@symbol(F.conv_transpose1d, autocast=everywhere(Policy.LOWER))
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-D transposed convolution over (N, C, L) or (C, L) inputs"""
    return _conv_transpose(1, input, weight, bias, stride, padding, output_padding, groups, dilation)


@symbol(F.conv_transpose2d, autocast=everywhere(Policy.LOWER))
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-D transposed convolution over (N, C, H, W) or (C, H, W) inputs"""
    return _conv_transpose(2, input, weight, bias, stride, padding, output_padding, groups, dilation)


@symbol(F.conv_transpose3d, autocast=everywhere(Policy.LOWER))
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """3-D transposed convolution over (N, C, D, H, W) or (C, D, H, W) inputs"""
    return _conv_transpose(3, input, weight, bias, stride, padding, output_padding, groups, dilation)
