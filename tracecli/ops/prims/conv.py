"""Convolution prims."""

from __future__ import annotations

import torch

from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import prim
from tracecli.ops.promotion import ShapeError, same_device


def conv_output_size(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    """torch's output length of a convolution over one spatial dimension (0 or less: the
    padded input is shorter than the dilated kernel)."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _spatial_dims(name: str, x, weight, bias) -> int:
    """The number of spatial dimensions of a convolution's operands, checked."""
    if not isinstance(x, TensorValue) or not isinstance(weight, TensorValue):
        raise ShapeError(f"prims.{name} needs input and weight tensors")
    n = weight.ndim - 2
    if n < 1 or x.ndim != n + 2:
        raise ShapeError(
            f"prims.{name} needs a batched input with {n} spatial dimensions and a weight of rank "
            f"{n + 2}, got {list(x.shape)} and {list(weight.shape)}"
        )
    operands = [x, weight] + ([bias] if bias is not None else [])
    same_device(*operands)
    if any(t.dtype != x.dtype for t in operands):
        raise ShapeError(f"prims.{name} operands must share a dtype")
    if not x.dtype.is_float:
        raise ShapeError(f"prims.{name} needs floating point operands, got {x.dtype.name}")
    return n


def _convolution_meta(x, weight, bias, stride, padding, dilation, groups) -> TensorType:
    n = _spatial_dims("convolution", x, weight, bias)
    if not all(len(p) == n for p in (stride, padding, dilation)):
        raise ShapeError(f"prims.convolution needs stride, padding and dilation for each of {n} dimensions")
    if min(stride) < 1 or min(dilation) < 1 or min(padding) < 0 or groups < 1:
        raise ShapeError("convolution: stride, dilation and groups must be positive, padding non-negative")
    out_channels, in_per_group = weight.shape[:2]
    if x.shape[1] != in_per_group * groups or out_channels % groups:
        raise ShapeError(
            f"convolution: weight {list(weight.shape)} with groups={groups} expects {in_per_group * groups} "
            f"input channels (and output channels divisible by groups), got input {list(x.shape)}"
        )
    if bias is not None and bias.shape != (out_channels,):
        raise ShapeError(f"convolution: bias must have shape [{out_channels}], got {list(bias.shape)}")
    spatial = tuple(
        conv_output_size(size, k, s, p, d)
        for size, k, s, p, d in zip(x.shape[2:], weight.shape[2:], stride, padding, dilation, strict=True)
    )
    if any(size < 1 for size in spatial):  # each on its own: min() would compare them
        raise ShapeError(
            f"convolution: the kernel {list(weight.shape[2:])} (dilation {list(dilation)}) is larger than "
            f"the padded input {[s + 2 * p for s, p in zip(x.shape[2:], padding, strict=True)]}"
        )
    return TensorType((x.shape[0], out_channels) + spatial, x.dtype, x.device)


def _convolution(x, weight, bias, stride, padding, dilation, groups):
    # The kernel F.conv1d/2d/3d reach: same results bit for bit.
    return torch.convolution(
        x, weight, bias, list(stride), list(padding), list(dilation), False, [0] * len(stride), groups
    )


convolution = prim(
    "convolution", _convolution_meta, _convolution,
    doc="N-d convolution of a batched input: explicit per-dimension stride, padding and dilation",
)


def _convolution_transpose_meta(x, weight, bias, stride, padding, output_padding, dilation, groups) -> TensorType:
    n = _spatial_dims("convolution_transpose", x, weight, bias)
    if not all(len(p) == n for p in (stride, padding, output_padding, dilation)):
        raise ShapeError(f"prims.convolution_transpose needs stride, padding, output_padding and dilation for each "
                         f"of {n} dimensions")
    if min(stride) < 1 or min(dilation) < 1 or min(padding) < 0 or min(output_padding) < 0 or groups < 1:
        raise ShapeError("conv_transpose: stride, dilation and groups must be positive, padding non-negative")
    for op, s, d in zip(output_padding, stride, dilation, strict=True):
        if op >= s and op >= d:
            raise ShapeError("conv_transpose: output padding must be smaller than either stride or dilation, got "
                             f"output_padding={list(output_padding)}, stride={list(stride)}, dilation={list(dilation)}")
    in_channels, out_per_group = weight.shape[:2]
    if x.shape[1] != in_channels or in_channels % groups:
        raise ShapeError(
            f"conv_transpose: weight {list(weight.shape)} with groups={groups} expects {in_channels} input "
            f"channels (divisible by groups), got input {list(x.shape)}"
        )
    out_channels = out_per_group * groups
    if bias is not None and bias.shape != (out_channels,):
        raise ShapeError(f"conv_transpose: bias must have shape [{out_channels}], got {list(bias.shape)}")
    spatial = tuple(
        (size - 1) * s - 2 * p + d * (k - 1) + op + 1
        for size, k, s, p, op, d in zip(x.shape[2:], weight.shape[2:], stride, padding, output_padding, dilation,
                                        strict=True)
    )
    if any(size < 1 for size in spatial):  # each on its own: min() would compare them
        raise ShapeError(f"conv_transpose: the output would be empty: input {list(x.shape)}, weight "
                         f"{list(weight.shape)}, padding {list(padding)}")
    return TensorType((x.shape[0], out_channels) + spatial, x.dtype, x.device)


def _convolution_transpose(x, weight, bias, stride, padding, output_padding, dilation, groups):
    return torch.convolution(
        x, weight, bias, list(stride), list(padding), list(dilation), True, list(output_padding), groups
    )


convolution_transpose = prim(
    "convolution_transpose", _convolution_transpose_meta, _convolution_transpose,
    doc="N-d transposed convolution of a batched input (the gradient of a convolution with respect to its input)",
)
