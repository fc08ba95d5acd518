"""Convolutions (conv1d/2d/3d onto prims.convolution) and padding (F.pad's modes)."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import torch.nn.functional as F

from tracecli.ops import prims
from tracecli.ops.ltorch._base import expect_tensor, symbol
from tracecli.ops.promotion import ShapeError


def ntuple(value, n: int, name: str) -> tuple[int, ...]:
    """torch's `_ntuple`: one int for every dimension, or exactly one per dimension."""
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            value = tuple(value) * n
        if len(value) != n:
            raise ShapeError(f"{name} must be an int or a sequence of {n} ints, got {list(value)}")
        return tuple(int(v) for v in value)
    return (int(value),) * n


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
            extra = tuple(t - 2 * (t // 2) for t in totals)
            if any(extra):
                x = prims.pad(x, 0.0, ((0, 0), (0, 0)) + tuple((0, e) for e in extra))
        else:
            raise ShapeError(f"{op}: padding must be 'valid', 'same', an int or a tuple of ints, got {padding!r}")
    else:
        padding = ntuple(padding, n, "padding")
    out = prims.convolution(x, weight, bias, stride, padding, dilation, int(groups))
    return prims.reshape(out, out.shape[1:]) if unbatched else out


@symbol(F.conv1d)
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (cross-correlation) over (N, C, L) or (C, L) inputs"""
    return _conv(1, input, weight, bias, stride, padding, dilation, groups)


@symbol(F.conv2d)
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation) over (N, C, H, W) or (C, H, W) inputs"""
    return _conv(2, input, weight, bias, stride, padding, dilation, groups)


@symbol(F.conv3d)
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution (cross-correlation) over (N, C, D, H, W) or (C, D, H, W) inputs"""
    return _conv(3, input, weight, bias, stride, padding, dilation, groups)


# --- padding ------------------------------------------------------------------------------


def _slice_dim(x, dim: int, start: int, stop: int):
    starts = [0] * x.ndim
    stops = list(x.shape)
    starts[dim], stops[dim] = start, stop
    return prims.slice(x, tuple(starts), tuple(stops))


def _cat_dim(pieces, dim: int):
    pieces = [p for p in pieces if p.shape[dim] > 0]
    return pieces[0] if len(pieces) == 1 else prims.cat(pieces, dim)


def _repeat_edge(x, dim: int, index: int, count: int):
    """x[index] along `dim`, repeated `count` times."""
    edge = _slice_dim(x, dim, index, index + 1)
    return prims.broadcast_in_dim(edge, x.shape[:dim] + (count,) + x.shape[dim + 1 :], tuple(range(x.ndim)))


def _border(x, dim: int, lo: int, hi: int, mode: str):
    """x extended by lo elements before and hi after along `dim`, taken from x itself."""
    size = x.shape[dim]
    if mode == "reflect":
        if lo >= size or hi >= size:
            raise ShapeError(f"reflect padding ({lo}, {hi}) must be smaller than the padded dimension ({size})")
        # Mirror images without the edge element: x[lo], ..., x[1] before; x[-2], ... after.
        before = [_slice_dim(x, dim, i, i + 1) for i in range(lo, 0, -1)]
        after = [_slice_dim(x, dim, size - 2 - i, size - 1 - i) for i in range(hi)]
    elif mode == "replicate":
        if size == 0:
            raise ShapeError("replicate padding needs a non-empty dimension to copy")
        before = [_repeat_edge(x, dim, 0, lo)] if lo else []
        after = [_repeat_edge(x, dim, size - 1, hi)] if hi else []
    else:  # circular
        if lo > size or hi > size:
            raise ShapeError(f"circular padding ({lo}, {hi}) cannot exceed the padded dimension ({size})")
        before = [_slice_dim(x, dim, size - lo, size)] if lo else []
        after = [_slice_dim(x, dim, 0, hi)] if hi else []
    return _cat_dim([*before, x, *after], dim)


_MODES = ("constant", "reflect", "replicate", "circular")


@symbol(F.pad)
def pad(input, pad, mode="constant", value=None):
    """input padded by (left, right) amounts given from the last dimension backwards"""
    input = expect_tensor(input, "pad")
    amounts = tuple(int(p) for p in pad)
    if len(amounts) % 2 or len(amounts) // 2 > input.ndim:
        raise ShapeError(f"pad: {list(amounts)} must hold (low, high) pairs for at most {input.ndim} dimensions")
    if mode not in _MODES:
        raise ShapeError(f"pad: mode must be one of {', '.join(_MODES)}, got {mode!r}")
    pairs = [(0, 0)] * input.ndim
    for i in range(len(amounts) // 2):
        pairs[input.ndim - 1 - i] = (amounts[2 * i], amounts[2 * i + 1])
    if mode == "constant":
        # Negative amounts crop: slice those away first, then pad the rest.
        starts = tuple(max(-lo, 0) for lo, _ in pairs)
        stops = tuple(d - max(-hi, 0) for d, (_, hi) in zip(input.shape, pairs, strict=True))
        if any(a > b for a, b in zip(starts, stops, strict=True)):
            raise ShapeError(f"pad: {list(amounts)} crops more than {list(input.shape)} holds")
        x = input if starts == (0,) * input.ndim and stops == input.shape else prims.slice(input, starts, stops)
        grow = tuple((max(lo, 0), max(hi, 0)) for lo, hi in pairs)
        if not any(lo or hi for lo, hi in grow):
            return x
        fill = 0 if value is None else value
        fill = bool(fill) if input.dtype.kind == "bool" else fill
        return prims.pad(x, fill, grow)
    if value not in (None, 0, 0.0):
        raise ShapeError(f"pad: a fill value only applies to mode='constant', not {mode!r}")
    # torch pads the trailing 1-3 dimensions of a batched (or unbatched) input this way.
    padded_dims = len(amounts) // 2
    if not padded_dims + 1 <= input.ndim <= padded_dims + 2 or padded_dims > 3:
        raise ShapeError(
            f"pad: mode {mode!r} pads the last 1 to 3 dimensions of an input with one or two more, "
            f"got {list(amounts)} for {list(input.shape)}"
        )
    if any(lo < 0 or hi < 0 for lo, hi in pairs):
        raise ShapeError(f"pad: mode {mode!r} needs non-negative padding, got {list(amounts)}")
    x = input
    for dim, (lo, hi) in enumerate(pairs):
        if lo or hi:
            x = _border(x, dim, lo, hi, mode)
    return x
