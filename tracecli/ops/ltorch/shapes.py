"""Shape operations: reshape/view, permute, transpose, unsqueeze, squeeze, expand, cat, pad."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from tracecli.core.dims import same_shape
from tracecli.core.dtypes import DType
from tracecli.core.symbol import Tag
from tracecli.ops import prims
from tracecli.ops.autocast import Autocast, Policy
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import broadcast_to, convert, expect_tensor, shape_arg, symbol, torch_form
from tracecli.ops.promotion import ShapeError, canonical_dim, infer_shape, result_type


@symbol(torch.reshape, tags=(Tag.VIEW,))
def reshape(input, shape):
    """the same elements in a new shape (one dimension may be -1)"""
    input = expect_tensor(input, "reshape")
    shape = infer_shape(shape_arg((shape,)), input.numel)
    return input if same_shape(shape, input.shape) else prims.reshape(input, shape)


@symbol(torch.permute, tags=(Tag.VIEW,))
def permute(input, dims):
    """reorder dimensions"""
    input = expect_tensor(input, "permute")
    perm = tuple(canonical_dim(d, input.ndim) for d in shape_arg((dims,)))
    if sorted(perm) != list(range(input.ndim)):
        raise ShapeError(f"permute: {list(dims)} is not a permutation of {input.ndim} dimensions")
    return input if perm == tuple(range(input.ndim)) else prims.transpose(input, perm)


@symbol(
    torch.transpose, aliases=(torch.swapaxes, torch.swapdims), methods=("transpose", "swapaxes", "swapdims"),
    tags=(Tag.VIEW,),
)
def transpose(input, dim0, dim1):
    """swap two dimensions"""
    input = expect_tensor(input, "transpose")
    d0, d1 = canonical_dim(dim0, input.ndim), canonical_dim(dim1, input.ndim)
    if d0 == d1 or input.ndim < 2:
        return input
    perm = list(range(input.ndim))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return prims.transpose(input, tuple(perm))


@symbol(torch.unsqueeze, methods=("unsqueeze",), tags=(Tag.VIEW,))
def unsqueeze(input, dim):
    """insert a dimension of size 1"""
    input = expect_tensor(input, "unsqueeze")
    d = canonical_dim(dim, input.ndim + 1)
    return prims.reshape(input, input.shape[:d] + (1,) + input.shape[d:])


@symbol(torch.squeeze, methods=("squeeze",), tags=(Tag.VIEW,))
def squeeze(input, dim=None):
    """remove dimensions of size 1 (all, or the given ones)"""
    input = expect_tensor(input, "squeeze")
    if dim is None:
        dims = {i for i, d in enumerate(input.shape) if d == 1}
    else:
        dims = {canonical_dim(d, input.ndim) for d in ((dim,) if isinstance(dim, int) else dim)}
        dims = {d for d in dims if input.ndim and input.shape[d] == 1}
    if not dims:
        return input
    return prims.reshape(input, tuple(d for i, d in enumerate(input.shape) if i not in dims))


@symbol(torch.Tensor.expand, tags=(Tag.VIEW,))
def expand(input, *sizes):
    """broadcast to sizes (-1 keeps a dimension)"""
    input = expect_tensor(input, "expand")
    sizes = shape_arg(sizes)
    offset = len(sizes) - input.ndim
    if offset < 0:
        raise ShapeError(f"expand: cannot expand {list(input.shape)} to fewer dimensions {list(sizes)}")
    target = tuple(
        input.shape[i - offset] if s == -1 and i >= offset else s for i, s in enumerate(sizes)
    )
    if any(s < 0 for s in target):
        raise ShapeError(f"expand: -1 is not allowed for a new leading dimension in {list(sizes)}")
    return broadcast_to(input, target)


@symbol(torch.cat, aliases=(torch.concat, torch.concatenate), autocast=Autocast(cpu=Policy.PROMOTE))
def cat(tensors, dim=0):
    """concatenate along dim, promoting dtypes"""
    tensors = [expect_tensor(t, "cat") for t in tensors]
    # torch skips legacy empty 1-D tensors beside others.
    kept = [t for t in tensors if t.shape != (0,)] or tensors[:1]
    if not kept:
        raise ShapeError("cat needs at least one tensor")
    # ... but still promotes over them: cat([f64[0], f32[2, 3]]) is float64.
    dtype = result_type(*tensors)
    d = canonical_dim(dim, kept[0].ndim)
    kept = [convert(t, dtype) for t in kept]
    if len(kept) > 1:
        return prims.cat(kept, d)
    # One tensor is still a copy in torch: never the input's own value, which a write to
    # the result would otherwise reach.
    return prims.clone(kept[0]) if any(kept[0] is t for t in tensors) else kept[0]


# --- the other spellings of these ops ----------------------------------------------------


@torch_form(methods=("reshape",))
def _reshape_method(self, *shape):
    return reshape(self, shape_arg(shape))


@torch_form(methods=("view",))
def _view(self, *shape):
    if shape and isinstance(shape[0], DType):
        return OPAQUE  # x.view(dtype) reinterprets the bits
    return reshape(self, shape_arg(shape))


@torch_form(methods=("view_as", "reshape_as"))
def _view_as(self, other):
    return reshape(self, other.shape)


@torch_form(torch.flatten, methods=("flatten",))
def _flatten(input, start_dim=0, end_dim=-1):
    if isinstance(start_dim, str) or isinstance(end_dim, str):
        return OPAQUE  # named dimensions
    if input.ndim == 0:
        return reshape(input, (1,))
    start, end = canonical_dim(start_dim, input.ndim), canonical_dim(end_dim, input.ndim)
    if start > end:
        raise ShapeError("flatten: start_dim cannot come after end_dim")
    shape = input.shape[:start] + (math.prod(input.shape[start : end + 1]),) + input.shape[end + 1 :]
    return reshape(input, shape)


@torch_form(methods=("permute",))
def _permute_method(self, *dims):
    return permute(self, shape_arg(dims))


@torch_form(torch.t, methods=("t",))
def _t(self):
    if self.ndim > 2:
        raise ShapeError(f"t() expects a tensor with at most 2 dimensions, got {self.ndim}")
    return transpose(self, 0, 1) if self.ndim == 2 else self


@torch_form(properties=(torch.Tensor.T.__get__,))
def _T(self):
    return permute(self, tuple(reversed(range(self.ndim))))


@torch_form(properties=(torch.Tensor.mT.__get__,))
def _mT(self):
    if self.ndim == 0:
        return self  # deprecated in torch, and the identity
    if self.ndim < 2:
        raise ShapeError(f"tensor.mT is only supported on matrices or batches of matrices, got {self.ndim}-D")
    return transpose(self, -2, -1)


@torch_form(methods=("expand",))
def _expand_method(self, *sizes):
    return expand(self, *shape_arg(sizes))


@torch_form(methods=("expand_as",))
def _expand_as(self, other):
    return expand(self, *other.shape)


@torch_form(torch.broadcast_to, methods=("broadcast_to",))
def _broadcast_to(input, size):
    return expand(input, *shape_arg((size,)))


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


@symbol(F.pad, aliases=(torch._C._nn.pad,))
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



_pad = pad  # for the adapter below, whose own parameter is named `pad`, as torch's is

@torch_form(torch.constant_pad_nd)
def _constant_pad_nd(input, pad, value=0):
    return _pad(input, pad, "constant", value)
