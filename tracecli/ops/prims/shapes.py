"""Shape prims: broadcast_in_dim, reshape, transpose, flip, slice, cat, and constant padding."""

from __future__ import annotations

import builtins
import math

import torch

from tracecli.core.dims import Dim, oblivious_equal, statically_equal
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import prim
from tracecli.ops.promotion import ShapeError, same_device


def _broadcast_in_dim_meta(x: TensorValue, shape, broadcast_dims) -> TensorType:
    shape, broadcast_dims = tuple(shape), tuple(broadcast_dims)
    if len(broadcast_dims) != x.ndim:
        raise ShapeError("prims.broadcast_in_dim needs one target dimension per input dimension")
    for d, target in zip(x.shape, broadcast_dims, strict=True):
        # The same size first: `d != 1` of a symbolic size would be a guard it needs not.
        if not statically_equal(d, shape[target]) and not oblivious_equal(d, 1) and d != shape[target]:
            raise ShapeError(f"cannot broadcast {list(x.shape)} to {list(shape)}")
    return TensorType(shape, x.dtype, x.device)


def _broadcast_in_dim(x: torch.Tensor, shape, broadcast_dims):
    view = [1] * len(shape)
    for d, target in zip(x.shape, broadcast_dims, strict=True):
        view[target] = d
    return x.reshape(view).expand(shape)


broadcast_in_dim = prim("broadcast_in_dim", _broadcast_in_dim_meta, _broadcast_in_dim)


def _reshape_meta(x: TensorValue, shape) -> TensorType:
    shape = tuple(shape)
    if math.prod(shape) != x.numel:
        raise ShapeError(f"cannot reshape {list(x.shape)} to {list(shape)}")
    return TensorType(shape, x.dtype, x.device)


reshape = prim("reshape", _reshape_meta, torch.reshape)


def _transpose_meta(x: TensorValue, permutation) -> TensorType:
    if sorted(permutation) != list(range(x.ndim)):
        raise ShapeError(f"{list(permutation)} is not a permutation of {x.ndim} dimensions")
    return TensorType(tuple(x.shape[p] for p in permutation), x.dtype, x.device)


transpose = prim("transpose", _transpose_meta, torch.permute)


def _flip_meta(x: TensorValue, dims) -> TensorType:
    dims = tuple(dims)
    if len(set(dims)) != len(dims) or not all(0 <= d < x.ndim for d in dims):
        raise ShapeError(f"prims.flip needs distinct dimensions of {list(x.shape)}, got {list(dims)}")
    return TensorType(x.shape, x.dtype, x.device)


# The elements in reverse order along each of `dims` (prims.slice only steps forwards).
flip = prim("flip", _flip_meta, torch.flip, doc="x reversed along each of `dims`")


def _slice_meta(x: TensorValue, start_indices, end_indices, strides=None) -> TensorType:
    strides = strides or (1,) * x.ndim
    shape = []
    for size, lo, hi, step in zip(x.shape, start_indices, end_indices, strides, strict=True):
        if not 0 <= lo <= hi <= size or step < 1:
            raise ShapeError(f"slice [{lo}:{hi}:{step}] is out of bounds for size {size}")
        shape.append((hi - lo + step - 1) // step)
    return TensorType(tuple(shape), x.dtype, x.device)


def _slice(x: torch.Tensor, start_indices, end_indices, strides=None):
    strides = strides or (1,) * x.ndim
    return x[tuple(builtins.slice(lo, hi, s) for lo, hi, s in zip(start_indices, end_indices, strides, strict=True))]


slice = prim("slice", _slice_meta, _slice)  # noqa: A001 - printed as prims.slice


def _cat_meta(tensors, dim: int) -> TensorType:
    same_device(*tensors)
    first = tensors[0]
    size = 0
    for t in tensors:
        if t.ndim != first.ndim or t.dtype != first.dtype:
            raise ShapeError("prims.cat operands must share rank and dtype")
        if any(a != b for i, (a, b) in enumerate(zip(t.shape, first.shape, strict=True)) if i != dim):
            raise ShapeError(f"cannot concatenate {list(first.shape)} and {list(t.shape)} along {dim}")
        size += t.shape[dim]
    return TensorType(first.shape[:dim] + (size,) + first.shape[dim + 1 :], first.dtype, first.device)


cat = prim("cat", _cat_meta, torch.cat)

# --- constant padding -----------------------------------------------------------------


def _pad_meta(x: TensorValue, value, padding) -> TensorType:
    padding = tuple(tuple(p) for p in padding)
    if len(padding) != x.ndim or any(len(p) != 2 for p in padding):
        raise ShapeError(f"prims.pad needs one (low, high) pair per dimension of {list(x.shape)}")
    if any(lo < 0 or hi < 0 for lo, hi in padding):
        raise ShapeError("prims.pad only adds elements: crop with prims.slice")
    return TensorType(tuple(d + lo + hi for d, (lo, hi) in zip(x.shape, padding, strict=True)), x.dtype, x.device)


def _pad(x, value, padding):
    flat = [amount for lo_hi in reversed(padding) for amount in lo_hi]  # torch lists the last dim first
    return torch.constant_pad_nd(x, flat, value)


pad = prim("pad", _pad_meta, _pad, doc="x surrounded by `value`: (low, high) amounts per dimension")



# --- writing a slice -----------------------------------------------------------------


def _slice_scatter_meta(x: TensorValue, src: TensorValue, start_indices, end_indices, strides=None) -> TensorType:
    region = _slice_meta(x, start_indices, end_indices, strides)
    if src.shape != region.shape or src.dtype != x.dtype or src.device != x.device:
        raise ShapeError(
            f"prims.slice_scatter writes a {x.dtype.short}{list(region.shape)} region of {list(x.shape)}, "
            f"got {src.dtype.short}{list(src.shape)}"
        )
    return x.type


def _slice_scatter(x: torch.Tensor, src: torch.Tensor, start_indices, end_indices, strides=None):
    strides = strides or (1,) * x.ndim
    out = x.clone()
    out[tuple(builtins.slice(lo, hi, s) for lo, hi, s in zip(start_indices, end_indices, strides, strict=True))] = src
    return out


# The inverse of prims.slice: x with that region replaced by src, as a new value.
slice_scatter = prim("slice_scatter", _slice_scatter_meta, _slice_scatter)


def _shape_meta(x: TensorValue) -> tuple:
    # Only symbolic sizes are read: a static one is a constant where it is used.
    return tuple(d if isinstance(d, Dim) else None for d in x.shape)


def _shape(x: torch.Tensor) -> tuple[int, ...]:
    return tuple(x.shape)


shape = prim("shape", _shape_meta, _shape, doc="the sizes of x: binds its size symbols, `(n, _) = prims.shape(x)`")
