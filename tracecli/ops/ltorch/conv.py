"""Convolutions: conv1d/2d/3d onto prims.convolution, conv_transpose1d/2d/3d onto
prims.convolution_transpose; unfold (im2col) as strided slices, one per kernel offset."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import itertools

import torch.nn.functional as F

from tracecli.core import dtypes
from tracecli.core.dims import Dim, statically_equal
from tracecli.core.values import TensorValue
from tracecli.ops import prims
from tracecli.ops.autocast import Policy, everywhere
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import expect_tensor, symbol
from tracecli.ops.prims.conv import conv_output_size
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


def _floating(sym):
    """The torch forms of a convolution: integer (and complex) ones stay torch calls. Eager's
    CPU kernels take integer operands and accumulate in their dtype; prims.convolution
    is a floating point convolution, which would not say so."""

    def adapter(input, *args, **kwargs):
        if isinstance(input, TensorValue) and not input.dtype.is_float:
            return OPAQUE
        return sym()(input, *args, **kwargs)

    return adapter


def _batched(op: str, n: int, input, weight, bias):
    """(input with a batch dimension, weight, whether the input had none), checked as
    torch checks a convolution's operands."""
    input, weight = expect_tensor(input, op), expect_tensor(weight, op)
    if weight.ndim != n + 2:
        raise ShapeError(f"{op} expects a weight with {n + 2} dimensions, got {list(weight.shape)}")
    if input.ndim not in (n + 1, n + 2):
        raise ShapeError(f"{op} expects a {n + 1}-D (unbatched) or {n + 2}-D (batched) input, got {list(input.shape)}")
    if input.dtype != weight.dtype or (bias is not None and expect_tensor(bias, op).dtype != input.dtype):
        raise ShapeError(f"{op} expects input, weight and bias of one dtype, got {input.dtype.name} and "
                         f"{weight.dtype.name}" + (f" and {bias.dtype.name}" if bias is not None else ""))
    unbatched = input.ndim == n + 1
    return (prims.reshape(input, (1,) + input.shape) if unbatched else input), weight, unbatched


def _conv(n: int, input, weight, bias, stride, padding, dilation, groups):
    op = f"conv{n}d"
    x, weight, unbatched = _batched(op, n, input, weight, bias)
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


@symbol(F.conv1d, adapter=_floating(lambda: conv1d), autocast=everywhere(Policy.LOWER))
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (cross-correlation) over (N, C, L) or (C, L) inputs"""
    return _conv(1, input, weight, bias, stride, padding, dilation, groups)


@symbol(F.conv2d, adapter=_floating(lambda: conv2d), autocast=everywhere(Policy.LOWER))
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation) over (N, C, H, W) or (C, H, W) inputs"""
    return _conv(2, input, weight, bias, stride, padding, dilation, groups)


@symbol(F.conv3d, adapter=_floating(lambda: conv3d), autocast=everywhere(Policy.LOWER))
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution (cross-correlation) over (N, C, D, H, W) or (C, D, H, W) inputs"""
    return _conv(3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(n: int, input, weight, bias, stride, padding, output_padding, groups, dilation):
    x, weight, unbatched = _batched(f"conv_transpose{n}d", n, input, weight, bias)
    out = prims.convolution_transpose(
        x, weight, bias, ntuple(stride, n, "stride"), ntuple(padding, n, "padding"),
        ntuple(output_padding, n, "output_padding"), ntuple(dilation, n, "dilation"), int(groups),
    )
    return prims.reshape(out, out.shape[1:]) if unbatched else out


@symbol(F.conv_transpose1d, adapter=_floating(lambda: conv_transpose1d), autocast=everywhere(Policy.LOWER))
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-D transposed convolution over (N, C, L) or (C, L) inputs"""
    return _conv_transpose(1, input, weight, bias, stride, padding, output_padding, groups, dilation)


@symbol(F.conv_transpose2d, adapter=_floating(lambda: conv_transpose2d), autocast=everywhere(Policy.LOWER))
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-D transposed convolution over (N, C, H, W) or (C, H, W) inputs"""
    return _conv_transpose(2, input, weight, bias, stride, padding, output_padding, groups, dilation)


@symbol(F.conv_transpose3d, adapter=_floating(lambda: conv_transpose3d), autocast=everywhere(Policy.LOWER))
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """3-D transposed convolution over (N, C, D, H, W) or (C, D, H, W) inputs"""
    return _conv_transpose(3, input, weight, bias, stride, padding, output_padding, groups, dilation)


@symbol(F.unfold)
def im2col(input, kernel_size, dilation=1, padding=0, stride=1):
    """every sliding kernel_size block of a (N, C, H, W) input as a column: (N, C*kh*kw, L)"""
    input = expect_tensor(input, "unfold")
    if input.ndim not in (3, 4):
        raise ShapeError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.ndim}D)")
    if not (input.dtype.is_float or input.dtype == dtypes.bool8):
        raise ShapeError(f'"im2col_out_cpu" not implemented for {input.dtype.name}')
    kernel, dilation = ntuple(kernel_size, 2, "kernel_size"), ntuple(dilation, 2, "dilation")
    padding, stride = ntuple(padding, 2, "padding"), ntuple(stride, 2, "stride")
    if min(kernel) < 1 or min(dilation) < 1 or min(stride) < 1 or min(padding) < 0:
        raise ShapeError("unfold: kernel_size, dilation and stride must be positive and padding non-negative")
    x = prims.reshape(input, (1,) + input.shape) if input.ndim == 3 else input
    n, c = x.shape[:2]
    out = [conv_output_size(size, k, s, p, d)
           for size, k, s, p, d in zip(x.shape[2:], kernel, stride, padding, dilation, strict=True)]
    if any(o < 1 for o in out):
        raise ShapeError(f"Given input with spatial size {list(x.shape[2:])}, kernel_size={list(kernel)}, "
                         f"dilation={list(dilation)}, padding={list(padding)}, calculated shape of the array of "
                         f"sliding blocks as {out}, but its components must be at least one.")
    if any(padding):
        x = prims.pad(x, False if x.dtype == dtypes.bool8 else 0.0, ((0, 0), (0, 0)) + tuple((p, p) for p in padding))
    blocks = []
    for i, j in itertools.product(range(kernel[0]), range(kernel[1])):
        starts = (0, 0, i * dilation[0], j * dilation[1])
        stops = (n, c) + tuple(start + (o - 1) * s + 1 for start, o, s in zip(starts[2:], out, stride, strict=True))
        block = prims.slice(x, starts, stops, (1, 1) + stride)
        blocks.append(prims.reshape(block, (n, c, 1, out[0], out[1])))
    columns = prims.cat(blocks, 2) if len(blocks) > 1 else blocks[0]
    result = prims.reshape(columns, (n, c * kernel[0] * kernel[1], out[0] * out[1]))
    return prims.reshape(result, result.shape[1:]) if input.ndim == 3 else result
