"""Shape operations: reshape/view, permute, transpose, unsqueeze, squeeze, expand (and
broadcast_tensors, meshgrid through it), cat, ravel, the views that pick elements
(select, diagonal, unfold), diag, diag_embed, diagflat, narrow_copy, and pad."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from tracecli.core import dtypes
from tracecli.core.dims import same_shape
from tracecli.core.dtypes import DType
from tracecli.core.symbol import Tag
from tracecli.core.values import TensorValue
from tracecli.ops import prims
from tracecli.ops.autocast import Autocast, Policy
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import (
    broadcast_to,
    convert,
    expect_tensor,
    keyword_sizes,
    shape_arg,
    symbol,
    torch_form,
    within,
)
from tracecli.ops.ltorch.indexing import narrow, slice_along
from tracecli.ops.promotion import ShapeError, broadcast_shapes, canonical_dim, infer_shape, result_type


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
def _reshape_method(self, *sizes, shape=None):
    return reshape(self, shape_arg(keyword_sizes(sizes, shape, "shape")))


@torch_form(methods=("view",))
def _view(self, *sizes, size=None, dtype=None):
    if dtype is not None or (sizes and isinstance(sizes[0], DType)):
        return OPAQUE  # x.view(dtype) reinterprets the bits
    return reshape(self, shape_arg(keyword_sizes(sizes, size, "size")))


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
def _permute_method(self, *order, dims=None):
    return permute(self, shape_arg(keyword_sizes(order, dims, "dims")))


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
def _expand_method(self, *sizes, size=None, implicit=False):
    return expand(self, *shape_arg(keyword_sizes(sizes, size, "size")))


@torch_form(methods=("expand_as",))
def _expand_as(self, other):
    return expand(self, *other.shape)


@torch_form(torch.broadcast_to, methods=("broadcast_to",))
def _broadcast_to(input, size):
    return expand(input, *shape_arg((size,)))


@torch_form(properties=(torch.Tensor.H.__get__,))
def _H(self):
    if self.dtype.is_complex:
        return OPAQUE  # the conjugate transpose: left to torch for complex tensors
    if self.ndim > 2:
        raise ShapeError(f"tensor.H is only supported on matrices (2-D tensors), got {self.ndim}-D; "
                         "for batches of matrices use tensor.mH")
    if self.ndim == 1:
        raise ShapeError("tensor.H is only supported on matrices (2-D tensors), got a 1-D tensor")
    return transpose(self, 0, 1) if self.ndim == 2 else self


@torch_form(torch.adjoint, methods=("adjoint",), properties=(torch.Tensor.mH.__get__,))
def _mH(self):
    if self.dtype.is_complex:
        return OPAQUE  # the conjugate transpose: left to torch for complex tensors
    if self.ndim == 0:
        return self  # deprecated in torch, and the identity for real tensors
    if self.ndim < 2:
        raise ShapeError(f"tensor.mH is only supported on matrices or batches of matrices, got {self.ndim}-D")
    return transpose(self, -2, -1)


@torch_form(torch.movedim, torch.moveaxis, methods=("movedim", "moveaxis"))
def _movedim(input, source, destination):
    sources = (source,) if isinstance(source, int) else tuple(source)
    destinations = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(sources) != len(destinations):
        raise ShapeError(f"movedim: source {list(sources)} and destination {list(destinations)} differ in length")
    sources = tuple(canonical_dim(d, input.ndim) for d in sources)
    destinations = tuple(canonical_dim(d, input.ndim) for d in destinations)
    if len(set(sources)) != len(sources) or len(set(destinations)) != len(destinations):
        raise ShapeError("movedim: a dimension is repeated in source or destination")
    if input.ndim == 0:
        return input
    # The dims not moved keep their order in the places left free.
    order: list = [None] * input.ndim
    for s, d in zip(sources, destinations, strict=True):
        order[d] = s
    rest = iter(d for d in range(input.ndim) if d not in sources)
    return permute(input, tuple(d if d is not None else next(rest) for d in order))


@symbol(torch.ravel, methods=("ravel",), tags=(Tag.VIEW,))
def ravel(input):
    """the elements as a vector: a view of a contiguous tensor, else a copy"""
    input = expect_tensor(input, "ravel")
    # Not reshape: torch copies any tensor that is not contiguous first, even a vector
    # reshape would return itself. Always a call of its own, so in-place tracking sees it.
    return prims.reshape(input, (input.numel,))


def _at_least(rank: int, tensors: tuple):
    """torch.atleast_{1,2,3}d: one tensor gives one, several (or a sequence) a tuple."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    elif len(tensors) == 1:
        return _with_rank(expect_tensor(tensors[0], f"atleast_{rank}d"), rank)
    return tuple(_with_rank(expect_tensor(t, f"atleast_{rank}d"), rank) for t in tensors)


def _with_rank(x, rank: int):
    if x.ndim >= rank:
        return x
    # 0-d -> (1, ...); a vector is a row (1, n); atleast_3d puts a matrix's new dim last.
    shape = {0: (1,) * rank, 1: (1,) + x.shape + (1,) * (rank - 2), 2: x.shape + (1,)}[x.ndim]
    return reshape(x, shape)


@torch_form(torch.atleast_1d)
def _atleast_1d(*tensors):
    return _at_least(1, tensors)


@torch_form(torch.atleast_2d)
def _atleast_2d(*tensors):
    return _at_least(2, tensors)


@torch_form(torch.atleast_3d)
def _atleast_3d(*tensors):
    return _at_least(3, tensors)


@torch_form(torch.broadcast_tensors)
def _broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])  # torch.ops.aten's spelling: one list
    tensors = [expect_tensor(t, "broadcast_tensors") for t in tensors]
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(expand(t, *shape) for t in tensors)


@torch_form(torch.meshgrid)
def _meshgrid(*tensors, indexing=None):
    """Each of the (0-d or 1-d) tensors expanded along its own dimension of the grid:
    views of them, as torch's. With indexing="xy" the first two swap places in the grid."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    tensors = [expect_tensor(t, "meshgrid") for t in tensors]
    indexing = "ij" if indexing is None else indexing
    if not tensors:
        raise ShapeError("meshgrid expects a non-empty list of tensors")
    if indexing not in ("ij", "xy"):
        raise ShapeError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    if any(t.ndim > 1 for t in tensors):
        raise ShapeError("meshgrid expects 0-d or 1-d tensors")
    if len({t.dtype for t in tensors}) > 1 or len({t.device for t in tensors}) > 1:
        raise ShapeError("meshgrid expects all tensors to have the same dtype and device")
    axis = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) > 1:
        axis[0], axis[1] = 1, 0
    shape = [0] * len(tensors)
    for t, a in zip(tensors, axis, strict=True):
        shape[a] = t.numel
    grids = []
    for t, a in zip(tensors, axis, strict=True):
        alone = tuple(t.numel if i == a else 1 for i in range(len(tensors)))
        grids.append(expand(reshape(t, alone), *shape))
    return tuple(grids)


# --- views that pick elements: select, diagonal, unfold -------------------------------------


def _select(input, dim, index):
    if isinstance(dim, str) or isinstance(index, TensorValue):
        return OPAQUE  # a named dimension, or an index whose value decides which slice
    return select(input, dim, index)


@symbol(torch.select, methods=("select",), adapter=_select, tags=(Tag.VIEW,))
def select(input, dim, index):
    """input[..., index] along dim: that slice, without the dimension"""
    input = expect_tensor(input, "select")
    if input.ndim == 0:
        raise ShapeError("select() cannot be applied to a zero-dim tensor")
    d = canonical_dim(dim, input.ndim)
    size = input.shape[d]
    i = index + size if index < 0 else index
    if not within(i, size):
        raise ShapeError(f"select(): index {index} out of range for dimension {d} of size {size}")
    return prims.reshape(slice_along(input, d, i, i + 1), input.shape[:d] + input.shape[d + 1 :])


def _diagonal(input, offset=0, dim1=0, dim2=1, *, outdim=None):
    if outdim is not None or isinstance(dim1, str) or isinstance(dim2, str):
        return OPAQUE  # named dimensions
    return diagonal(input, offset, dim1, dim2)


@symbol(torch.diagonal, methods=("diagonal",), adapter=_diagonal, tags=(Tag.VIEW,))
def diagonal(input, offset=0, dim1=0, dim2=1):
    """the elements (i, i + offset) of the dims dim1, dim2, as a new last dimension"""
    input = expect_tensor(input, "diagonal")
    if input.ndim < 2:
        raise ShapeError(f"diagonal needs a tensor with at least 2 dimensions, got {input.ndim}")
    d1, d2 = canonical_dim(dim1, input.ndim), canonical_dim(dim2, input.ndim)
    if d1 == d2:
        raise ShapeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return diagonal_of(input, offset, d1, d2)


def diagonal_of(input, offset: int, d1: int, d2: int):
    """The diagonal `offset` of dims d1 (rows) and d2 (columns), as the last dimension."""
    rest = tuple(d for d in range(input.ndim) if d not in (d1, d2))
    order = rest + (d1, d2)
    x = input if order == tuple(range(input.ndim)) else prims.transpose(input, order)
    rows, cols = input.shape[d1], input.shape[d2]
    # Element (i, i + offset) above the main diagonal, (i - offset, i) below it: read in
    # row-major order, the diagonal is every (cols + 1)-th element from its first.
    if offset >= 0:
        length, first = _non_negative(_smaller(rows, cols - offset)), offset
    else:
        length, first = _non_negative(_smaller(rows + offset, cols)), -offset * cols
    flat = prims.reshape(x, x.shape[:-2] + (rows * cols,))
    places = prims.iota(length, first, cols + 1, device=input.device, dtype=dtypes.int64)
    return prims.take(flat, places, flat.ndim - 1)


def _smaller(a, b):
    return a if a <= b else b


def _non_negative(a):
    return a if a >= 0 else 0


def _diagonal_matrix(v, offset: int):
    """(..., n) -> (..., m, m), m = n + |offset|: v on diagonal `offset`, zeros elsewhere."""
    n, batch = v.shape[-1], v.shape[:-1]
    keep = ((0, 0),) * len(batch)
    zero = convert(0, v.dtype)
    # Each element followed by n zeros, cut to n * n and read as n rows: row i holds v[i]
    # at column i.
    x = prims.pad(prims.reshape(v, batch + (n, 1)), zero, keep + ((0, 0), (0, n)))
    x = prims.slice(prims.reshape(x, batch + (n * (n + 1),)), (0,) * (len(batch) + 1), batch + (n * n,))
    x = prims.reshape(x, batch + (n, n))
    if offset == 0:
        return x
    # Above the main diagonal: columns added on the left, rows below; under it, the opposite.
    k = abs(offset)
    return prims.pad(x, zero, keep + (((0, k), (k, 0)) if offset > 0 else ((k, 0), (0, k))))


@symbol(torch.diag, methods=("diag",))
def diag(input, diagonal=0):
    """a vector as a square matrix with it on diagonal `diagonal`; a matrix's diagonal `diagonal`"""
    input = expect_tensor(input, "diag")
    if input.ndim == 1:
        return _diagonal_matrix(input, diagonal)
    if input.ndim == 2:
        return diagonal_of(input, diagonal, 0, 1)  # a copy in torch, a new value here
    raise ShapeError(f"diag supports 1-D and 2-D tensors, got {input.ndim}-D")


@symbol(torch.diag_embed, methods=("diag_embed",))
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """input's last dimension as diagonal `offset` of new dims dim1, dim2 (zeros elsewhere)"""
    input = expect_tensor(input, "diag_embed")
    if input.ndim == 0:
        raise ShapeError("diag_embed needs a tensor with at least one dimension")
    ndim = input.ndim + 1
    d1, d2 = canonical_dim(dim1, ndim), canonical_dim(dim2, ndim)
    if d1 == d2:
        raise ShapeError(f"diag_embed: dims cannot be the same, got {dim1} and {dim2}")
    matrices = _diagonal_matrix(input, offset)  # (..., rows, cols)
    # Rows go to dim1 and columns to dim2; the batch dims fill the other places in order.
    batch = iter(range(ndim - 2))
    order = tuple(ndim - 2 if d == d1 else ndim - 1 if d == d2 else next(batch) for d in range(ndim))
    return matrices if order == tuple(range(ndim)) else prims.transpose(matrices, order)


@symbol(torch.diagflat, methods=("diagflat",))
def diagflat(input, offset=0):
    """a square matrix with input's elements (flattened) on diagonal `offset`"""
    input = expect_tensor(input, "diagflat")
    return _diagonal_matrix(prims.reshape(input, (input.numel,)) if input.ndim != 1 else input, offset)


@symbol(torch.Tensor.unfold, methods=("unfold",), tags=(Tag.VIEW,))
def unfold(input, dimension, size, step):
    """windows of `size` elements every `step` along dimension, as a new last dimension"""
    input = expect_tensor(input, "unfold")
    if input.ndim == 0:
        # A zero-dim tensor is one element: one window of it (size 1) or of nothing (size 0).
        canonical_dim(dimension, 0)
        windows = unfold.decomposition(prims.reshape(input, (1,)), 0, size, step)
        return prims.reshape(windows, (size,))
    d = canonical_dim(dimension, input.ndim)
    n = input.shape[d]
    if size < 0 or size > n:
        raise ShapeError(f"unfold: size {size} must be between 0 and {n}, the size of dimension {d}")
    if step <= 0:
        raise ShapeError(f"unfold: step must be positive, got {step}")
    count = (n - size) // step + 1
    # Window w holds the elements w * step + j for j < size: one index per (w, j).
    starts = prims.iota(count, 0, step, device=input.device, dtype=dtypes.int64)
    offsets = prims.iota(size, 0, 1, device=input.device, dtype=dtypes.int64)
    index = prims.add(prims.broadcast_in_dim(starts, (count, size), (0,)),
                      prims.broadcast_in_dim(offsets, (count, size), (1,)))
    windows = prims.take(input, index, d)  # input.shape[:d] + (count, size) + input.shape[d + 1:]
    order = tuple(range(d + 1)) + tuple(range(d + 2, input.ndim + 1)) + (d + 1,)
    return windows if order == tuple(range(input.ndim + 1)) else prims.transpose(windows, order)


@symbol(torch.narrow_copy, methods=("narrow_copy",))
def narrow_copy(input, dim, start, length):
    """input[start:start + length] along dim, as a copy (start may be negative)"""
    out = narrow.decomposition(input, dim, start, length)
    return prims.clone(out) if out is input else out


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
    # Negative amounts crop. circular crops first and wraps what is left; reflect and
    # replicate extend the whole input first, then crop, as torch does.
    x = input
    for dim, (lo, hi) in enumerate(pairs):
        size = x.shape[dim]
        crop = (max(-lo, 0), size - max(-hi, 0))
        if mode == "circular" and (lo < 0 or hi < 0):
            x = _slice_dim(x, dim, *crop)
        if lo > 0 or hi > 0:
            x = _border(x, dim, max(lo, 0), max(hi, 0), mode)
        if mode != "circular" and (lo < 0 or hi < 0):
            if not size + lo + hi > 0:
                raise ShapeError(f"pad: {list(amounts)} leaves nothing of dimension {dim} (size {size})")
            x = _slice_dim(x, dim, crop[0], crop[1] + max(lo, 0) + max(hi, 0))
    return x


_pad = pad  # for the adapter below, whose own parameter is named `pad`, as torch's is

@torch_form(torch.constant_pad_nd)
def _constant_pad_nd(input, pad, value=0):
    return _pad(input, pad, "constant", value)
