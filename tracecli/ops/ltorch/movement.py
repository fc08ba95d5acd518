"""Data-movement ltorch symbols: split (and tensor_split, hsplit, ... through it), chunk,
unbind, stack, unflatten, repeat (and tile), repeat_interleave, diff, the triangle masks
triu/tril and indices triu_indices/tril_indices, flip, roll, rot90 and take. The joins
of several tensors into a new one are in movement_joins.py."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import torch

from tracecli.core import dtypes
from tracecli.core.dims import Dim, exact_div, known, same_shape, statically_equal
from tracecli.core.symbol import Tag
from tracecli.core.values import TensorValue
from tracecli.ops import prims
from tracecli.ops.autocast import Autocast, Policy
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import convert, expect_tensor, keyword_sizes, pieces_of, shape_arg, symbol, torch_form
from tracecli.ops.ltorch.indexing import getitem, slice_along
from tracecli.ops.promotion import ShapeError, canonical_dim, infer_shape, result_type
from tracecli.ops.torch_bridge import to_device, to_dtype


def _dim_of(input, dim, op: str) -> int:
    if input.ndim == 0:
        raise ShapeError(f"{op} expects a tensor with at least one dimension")
    return canonical_dim(dim, input.ndim)


def _pieces(input, d: int, sizes: list[int]) -> tuple:
    if len(sizes) == 1:
        return (input,)
    out, start = [], 0
    for size in sizes:
        out.append(slice_along(input, d, start, start + size, always=True))
        start += size
    return tuple(out)


def _split(tensor, split_size_or_sections=None, dim=0, *, split_size=None):
    # Tensor.split names its size `split_size`; torch.split `split_size_or_sections`.
    sections = split_size if split_size is not None else split_size_or_sections
    if isinstance(sections, TensorValue):
        return OPAQUE
    return split(tensor, sections, dim)


@symbol(torch.split, methods=("split",), adapter=_split, tags=(Tag.VIEW,))
def split(input, split_size_or_sections, dim=0):
    """pieces of input along dim: of one size (the last may be smaller) or of the given sizes"""
    input = expect_tensor(input, "split")
    d = _dim_of(input, dim, "split")
    n = input.shape[d]
    if isinstance(split_size_or_sections, (int, Dim)):  # one size: a symbolic one too (`C = x.shape[-1]`)
        size = split_size_or_sections
        if size < 0 or (size == 0 and n > 0):
            raise ShapeError(f"split expects a positive split size, got {size}")
        sizes = _cut(n, size) if n else [0]
    else:
        sizes = list(shape_arg((split_size_or_sections,)))
        if any(s < 0 for s in sizes) or sum(sizes) != n:
            raise ShapeError(f"split sizes {sizes} must be non-negative and add up to {n}, the size of dimension {d}")
    return _pieces(input, d, sizes)


@symbol(torch.chunk, methods=("chunk",), tags=(Tag.VIEW,))
def chunk(input, chunks, dim=0):
    """split into at most `chunks` pieces of equal size (the last may be smaller)"""
    input = expect_tensor(input, "chunk")
    d = _dim_of(input, dim, "chunk")
    if chunks <= 0:
        raise ShapeError(f"chunk expects a positive number of chunks, got {chunks}")
    n = input.shape[d]
    if n == 0:
        return (input,) * chunks  # torch gives `chunks` empty pieces
    return _pieces(input, d, _cut(n, (n + chunks - 1) // chunks))


def _cut(n, size) -> list:
    """The sizes of the pieces of `size` that cover n, the last one what is left."""
    count = pieces_of(n, size)
    return [size] * (count - 1) + [n - (count - 1) * size]


@symbol(torch.unbind, methods=("unbind",), tags=(Tag.VIEW,))
def unbind(input, dim=0):
    """the slices of input along dim, each without that dimension"""
    input = expect_tensor(input, "unbind")
    d = _dim_of(input, dim, "unbind")
    shape = input.shape[:d] + input.shape[d + 1 :]
    n = input.shape[d]
    return tuple(prims.reshape(slice_along(input, d, i, i + 1), shape) for i in range(n))


@symbol(torch.stack, autocast=Autocast(cpu=Policy.PROMOTE))
def stack(tensors, dim=0):
    """tensors of one shape joined along a new dimension, promoting dtypes"""
    tensors = [expect_tensor(t, "stack") for t in tensors]
    if not tensors:
        raise ShapeError("stack expects a non-empty sequence of tensors")
    shape = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.shape != shape:  # decided on sizes: equal where the trace holds, as eager needs
            raise ShapeError(f"stack expects tensors of one shape, got {list(shape)} at 0 and {list(t.shape)} at {i}")
    d = canonical_dim(dim, len(shape) + 1)
    dtype = result_type(*tensors)
    parts = [prims.reshape(convert(t, dtype), shape[:d] + (1,) + shape[d:]) for t in tensors]
    return parts[0] if len(parts) == 1 else prims.cat(parts, d)


@symbol(torch.unflatten, methods=("unflatten",), tags=(Tag.VIEW,))
def unflatten(input, dim, sizes):
    """dimension dim split into sizes (one may be -1)"""
    input = expect_tensor(input, "unflatten")
    d = _dim_of(input, dim, "unflatten")
    inner = infer_shape(shape_arg((sizes,)), input.shape[d])
    shape = input.shape[:d] + inner + input.shape[d + 1 :]
    return input if same_shape(shape, input.shape) else prims.reshape(input, shape)


@torch_form(methods=("repeat",))
def _repeat_method(self, *counts, repeats=None):
    return repeat(self, *shape_arg(keyword_sizes(counts, repeats, "repeats")))


def _repeat_impl(input, *sizes):
    # The sizes as one tuple: `Tensor.repeat(x)` with no sizes (a zero-dim x repeated
    # `()` times, as `x.repeat(())` or `x.tile(())` asks) is an error in torch.
    return input.repeat(sizes)


@symbol(_repeat_impl, name="repeat")
def repeat(input, *sizes):
    """input tiled sizes[i] times along each dimension (new leading ones too)"""
    input = expect_tensor(input, "repeat")
    sizes = shape_arg(sizes)
    if len(sizes) < input.ndim:
        raise ShapeError(f"repeat needs at least one count per dimension: {list(sizes)} for {list(input.shape)}")
    if any(r < 0 for r in sizes):
        raise ShapeError(f"repeat counts must be non-negative, got {list(sizes)}")
    offset = len(sizes) - input.ndim
    padded = (1,) * offset + input.shape
    # Each dimension s repeated r times is (r, s) broadcast from (1, s), then merged. Even
    # all-ones counts go this way: torch returns a copy, which must not be the input's value.
    tiled = tuple(v for r, s in zip(sizes, padded, strict=True) for v in (r, s))
    dims = tuple(2 * (offset + j) + 1 for j in range(input.ndim))
    expanded = prims.broadcast_in_dim(input, tiled, dims)
    out = prims.reshape(expanded, tuple(r * s for r, s in zip(sizes, padded, strict=True)))
    if all(r == 1 or s == 1 for r, s in zip(sizes, padded, strict=True)):
        # Then the merge needs no copy, and torch's reshape makes none: run as prims, the
        # result would be a view of the input, which a later write to it would reach.
        out = prims.clone(out)
    return out


@symbol(torch.repeat_interleave, methods=("repeat_interleave",))
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """each element repeated in place along dim (flattened without dim): `repeats` times,
    or repeats[i] times for the i-th with a tensor of repeats, giving as many as their sum
    (which the data decide, unless output_size says it); torch.repeat_interleave(repeats)
    alone is each index i repeated repeats[i] times"""
    input = expect_tensor(input, "repeat_interleave")
    if repeats is None:
        if input.ndim != 1:
            raise ShapeError(f"repeat_interleave(repeats) takes a vector of repeats, got {list(input.shape)}")
        return prims.repeat_index(_repeats_dtype(input), output_size)
    if dim is None:
        input = prims.reshape(input, (input.numel,)) if input.ndim != 1 else input
        d = 0
    else:
        d = _dim_of(input, dim, "repeat_interleave")
    if isinstance(repeats, TensorValue):
        return prims.take(input, _repeat_index(repeats, input.shape[d], output_size), d)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 0:
        raise ShapeError(f"repeat_interleave takes a non-negative int count or a tensor of counts, got {repeats!r}")
    shape = input.shape
    out_shape = shape[:d] + (shape[d] * repeats,) + shape[d + 1 :]
    if output_size is not None and output_size != out_shape[d]:
        raise ShapeError(f"repeat_interleave: output_size {output_size} differs from {out_shape[d]}")
    # (.., s, ..) broadcast to (.., s, r, ..) then merged: each element r times in a row
    # (for r = 1 too: torch returns a copy, never the input itself).
    dims = tuple(i if i <= d else i + 1 for i in range(input.ndim))
    expanded = prims.broadcast_in_dim(input, shape[: d + 1] + (repeats,) + shape[d + 1 :], dims)
    return prims.reshape(expanded, out_shape)


def _repeats_dtype(repeats: TensorValue) -> TensorValue:
    if repeats.dtype not in (dtypes.int32, dtypes.int64):
        raise ShapeError(f"repeat_interleave takes int32 or int64 repeats, got {repeats.dtype.name}")
    return repeats


def _repeat_index(repeats: TensorValue, size, output_size) -> TensorValue:
    """The index along the repeated dimension (of `size`) of each output element: i
    repeats[i] times; a single count (zero-dim or one element) is every element's."""
    repeats = _repeats_dtype(repeats)
    if repeats.ndim > 1:
        raise ShapeError(f"repeat_interleave takes repeats of at most one dimension, got {list(repeats.shape)}")
    if repeats.ndim == 0 or statically_equal(repeats.shape[0], 1):
        repeats = prims.broadcast_in_dim(repeats, (size,), tuple(range(repeats.ndim)))
    elif not (statically_equal(repeats.shape[0], size) or repeats.shape[0] == size):
        raise ShapeError(f"repeat_interleave needs as many repeats as elements along dim: {repeats.shape[0]} "
                         f"repeats for {size}")
    return prims.repeat_index(repeats, output_size)


def _triangle(input, diagonal: int, upper: bool):
    input = expect_tensor(input, "triu" if upper else "tril")
    if input.ndim < 2:
        raise ShapeError(f"{'triu' if upper else 'tril'} needs a tensor with at least 2 dimensions")
    rows, cols = input.shape[-2:]
    # Keep (i, j) where j - i >= diagonal (upper) or <= diagonal (lower): compare j with i + diagonal.
    row = prims.iota(rows, diagonal, 1, device=input.device, dtype=dtypes.int64)
    col = prims.iota(cols, 0, 1, device=input.device, dtype=dtypes.int64)
    row = prims.broadcast_in_dim(row, (rows, cols), (0,))
    col = prims.broadcast_in_dim(col, (rows, cols), (1,))
    keep = prims.ge(col, row) if upper else prims.le(col, row)
    if input.ndim > 2:
        keep = prims.broadcast_in_dim(keep, input.shape, (input.ndim - 2, input.ndim - 1))
    return prims.where(keep, input, convert(0, input.dtype))


@symbol(torch.triu, methods=("triu",))
def triu(input, diagonal=0):
    """the upper triangle of the last two dimensions (zeros below the diagonal)"""
    return _triangle(input, diagonal, upper=True)


@symbol(torch.tril, methods=("tril",))
def tril(input, diagonal=0):
    """the lower triangle of the last two dimensions (zeros above the diagonal)"""
    return _triangle(input, diagonal, upper=False)


@symbol(torch.diff, methods=("diff",))
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """differences of neighbours along dim, n times (after prepend/append)"""
    input = expect_tensor(input, "diff")
    if input.ndim == 0:
        raise ShapeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise ShapeError(f"diff: order must be non-negative but got {n}")
    d = canonical_dim(dim, input.ndim)
    if n == 0:
        return prims.clone(input)  # torch ignores prepend and append then, and still copies
    parts = [t for t in (prepend, input, append) if t is not None]
    if len(parts) > 1:
        dtype = result_type(*parts)
        parts = [convert(expect_tensor(t, "diff"), dtype) for t in parts]
        x = prims.cat(parts, d)
    else:
        x = input
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        start = [0] * x.ndim
        end = list(x.shape)
        end[d] = size - 1
        first = prims.slice(x, tuple(start), tuple(end))
        start[d] = 1
        end[d] = size
        second = prims.slice(x, tuple(start), tuple(end))
        x = prims.ne(second, first) if x.dtype == dtypes.bool8 else prims.sub(second, first)
    return prims.clone(x) if x is input else x  # an empty input: still a copy


# --- the other spellings of split ------------------------------------------------------------


@torch_form(torch.split_with_sizes, torch.unsafe_split, torch.unsafe_split_with_sizes,
            methods=("split_with_sizes", "unsafe_split", "unsafe_split_with_sizes"))
def _split_with_sizes(input, split_sizes=None, dim=0, *, split_size=None):
    # The "unsafe" spellings differ from split only for autograd: the pieces are views.
    return _split(input, split_sizes, dim, split_size=split_size)


@torch_form(torch.tensor_split, methods=("tensor_split",))
def _tensor_split(input, indices_or_sections=None, dim=0, *, sections=None, indices=None,
                  tensor_indices_or_sections=None):
    spec = _given(indices_or_sections, sections, indices, tensor_indices_or_sections)
    input = expect_tensor(input, "tensor_split")
    if input.ndim == 0:
        raise ShapeError("tensor_split expects a tensor with at least one dimension")
    return _split_at(input, canonical_dim(dim, input.ndim), spec, "tensor_split")


@torch_form(torch.hsplit, methods=("hsplit",))
def _hsplit(input, indices_or_sections=None, *, sections=None, indices=None):
    return _split_along(input, 0 if input.ndim == 1 else 1, 1, _given(indices_or_sections, sections, indices), "hsplit")


@torch_form(torch.vsplit, methods=("vsplit",))
def _vsplit(input, indices_or_sections=None, *, sections=None, indices=None):
    return _split_along(input, 0, 2, _given(indices_or_sections, sections, indices), "vsplit")


@torch_form(torch.dsplit, methods=("dsplit",))
def _dsplit(input, indices_or_sections=None, *, sections=None, indices=None):
    return _split_along(input, 2, 3, _given(indices_or_sections, sections, indices), "dsplit")


def _given(*alternatives):
    """The one of torch's alternative parameters (sections=, indices=, ...) that was given."""
    return next((v for v in alternatives if v is not None), None)


def _split_along(input, d: int, least: int, spec, op: str):
    """hsplit/vsplit/dsplit: tensor_split along a fixed dimension, whose size a number of
    sections must divide."""
    input = expect_tensor(input, op)
    if input.ndim < least:
        raise ShapeError(f"torch.{op} needs a tensor with at least {least} dimensions, got {input.ndim}")
    if isinstance(spec, int) and (spec <= 0 or input.shape[d] % spec != 0):
        raise ShapeError(f"torch.{op} attempted to split along dimension {d}, but its size {input.shape[d]} "
                         f"is not divisible by {spec}")
    return _split_at(input, d, spec, op, even=True)


def _split_at(input, d: int, spec, op: str, even: bool = False):
    """tensor_split's pieces: `spec` sections, the first size % spec of them one longer
    (all equal when `even`, as the caller checked), or cuts at the indices given (Python's
    slice rules: negative from the end, clamped)."""
    if isinstance(spec, TensorValue):
        raise ShapeError(f"{op} with a tensor of indices or sections cuts where the tensor's values say, which a "
                         "trace does not have; pass ints (or a list of ints)")
    n = input.shape[d]
    if isinstance(spec, int):
        if spec <= 0:
            raise ShapeError(f"{op}: the number of sections must be positive, got {spec}")
        if even or known("==", n % spec, 0):
            sizes = [exact_div(n, spec)] * spec
        else:
            sizes = [(n + spec - 1 - i) // spec for i in range(spec - 1)]
            sizes.append(n - sum(sizes))  # n // spec, said so that the sizes add up to n as they stand
        return split(input, sizes, d)
    if not isinstance(spec, (list, tuple)) or not all(isinstance(i, (int, Dim)) for i in spec):
        raise ShapeError(f"{op} takes a number of sections or a sequence of indices, got {spec!r}")
    cuts = [0, *(_clamped(i, n) for i in spec), n]
    if all(a <= b for a, b in zip(cuts, cuts[1:], strict=False)):
        return split(input, [b - a for a, b in zip(cuts, cuts[1:], strict=False)], d)
    # Cuts out of order give pieces that overlap or skip elements: each its own slice.
    return tuple(getitem(input, (slice(None),) * d + (slice(a, b),)) for a, b in zip(cuts, cuts[1:], strict=False))


def _clamped(index, n):
    index = index + n if index < 0 else index
    return 0 if index < 0 else (n if index > n else index)


# --- flip, roll, rot90, tile -----------------------------------------------------------------


@symbol(torch.flip)
def flip(input, dims):
    """input with its elements in reverse order along each of dims"""
    input = expect_tensor(input, "flip")
    canonical = tuple(canonical_dim(d, input.ndim) for d in shape_arg((dims,)))
    if len(set(canonical)) != len(canonical):
        raise ShapeError(f"flip: a dimension appears more than once in {list(dims)}")
    if input.ndim == 0 or not canonical:
        return prims.clone(input)  # nothing to reverse, but still a copy
    return prims.flip(input, tuple(sorted(canonical)))


@torch_form(methods=("flip",))
def _flip_method(self, *varargs, dims=None):
    return flip(self, shape_arg(varargs if dims is None else (dims,)))


@torch_form(torch.fliplr, methods=("fliplr",))
def _fliplr(input):
    if input.ndim < 2:
        raise ShapeError(f"fliplr needs a tensor with at least 2 dimensions, got {input.ndim}")
    return flip(input, (1,))


@torch_form(torch.flipud, methods=("flipud",))
def _flipud(input):
    if input.ndim < 1:
        raise ShapeError("flipud needs a tensor with at least 1 dimension")
    return flip(input, (0,))


# torch rolls by concatenating pieces: under CPU autocast, float16 and bfloat16 do not mix.
@symbol(torch.roll, methods=("roll",), autocast=Autocast(cpu=Policy.PROMOTE))
def roll(input, shifts, dims=None):
    """input's elements shifted cyclically along dims (along the flattened input without dims)"""
    input = expect_tensor(input, "roll")
    shifts = tuple(shifts) if isinstance(shifts, (list, tuple)) else (shifts,)
    dims = tuple(dims) if isinstance(dims, (list, tuple)) else (() if dims is None else (dims,))
    if not dims:
        if len(shifts) != 1:
            raise ShapeError(f"roll: shifts and dimensions must align, got {len(shifts)} shifts and no dims")
        flat = prims.reshape(input, (input.numel,)) if input.ndim != 1 else input
        out = _roll_along(flat, shifts[0], 0)
        out = out if out.ndim == input.ndim else prims.reshape(out, input.shape)
    else:
        if len(shifts) != len(dims):
            raise ShapeError(f"roll: shifts and dimensions must align, got {len(shifts)} shifts and {len(dims)} dims")
        if input.ndim == 0:
            raise ShapeError("roll: a zero-dim tensor has no dimension to roll along; leave dims out")
        out = input
        for shift, dim in zip(shifts, dims, strict=True):
            out = _roll_along(out, shift, canonical_dim(dim, input.ndim))
    return prims.clone(input) if out is input else out


def _roll_along(x, shift, d: int):
    """x rolled by `shift` along d: its last `shift` elements (modulo the size) first."""
    n = x.shape[d]
    if known("==", n, 0):
        return x
    # A shift within one turn needs no remainder, which would stay in a symbolic trace.
    if known("<=", 0, shift) and known("<", shift, n):
        s = shift
    elif known("<", shift, 0) and known("<", -shift, n):
        s = n + shift
    else:
        s = shift % n
    if known("==", s, 0):
        return x
    return prims.cat([slice_along(x, d, n - s, n, always=True), slice_along(x, d, 0, n - s, always=True)], d)


@symbol(torch.rot90, methods=("rot90",))
def rot90(input, k=1, dims=(0, 1)):
    """input turned k quarter turns in the plane of dims, from the first towards the second"""
    input = expect_tensor(input, "rot90")
    dims = tuple(dims)
    if len(dims) != 2:
        raise ShapeError(f"rot90 needs two dims, got {len(dims)}")
    if input.ndim < 2:
        raise ShapeError(f"rot90 needs a tensor with at least 2 dimensions, got {input.ndim}")
    d0, d1 = canonical_dim(dims[0], input.ndim), canonical_dim(dims[1], input.ndim)
    if d0 == d1:
        raise ShapeError(f"rot90 needs two different dims, got {list(dims)}")
    swap = list(range(input.ndim))
    swap[d0], swap[d1] = d1, d0
    k %= 4
    if k == 1:
        return prims.transpose(prims.flip(input, (d1,)), tuple(swap))
    if k == 2:
        return prims.flip(input, tuple(sorted((d0, d1))))
    if k == 3:
        return prims.transpose(prims.flip(input, (d0,)), tuple(swap))
    return prims.clone(input)


@torch_form(torch.tile, methods=("tile",))
def _tile(input, *counts, dims=None):
    dims = shape_arg(counts if dims is None else (dims,))
    # Fewer counts than dimensions: the leading dimensions are repeated once.
    return repeat(input, *((1,) * (input.ndim - len(dims)) + dims))


# --- triangle indices ------------------------------------------------------------------------


def _indices_form(sym, row, col, offset, dtype, device, layout):
    if layout not in (None, torch.strided) or not all(isinstance(v, int) for v in (row, col, offset)):
        return OPAQUE  # sparse layouts; symbolic sizes, whose count of pairs would be a guess
    return sym(row, col, offset, dtype=dtype, device=device)


def _triangle_indices(row, col, offset, dtype, device, upper: bool):
    """The (row, column) pairs of the upper (or lower) triangle of a row x col matrix, in
    row-major order, as a 2 x count tensor."""
    op = "triu_indices" if upper else "tril_indices"
    dtype, device = to_dtype(dtype) if dtype is not None else dtypes.int64, to_device(device)
    if dtype not in (dtypes.int32, dtypes.int64):
        raise ShapeError(f"{op} makes int32 or int64 indices, not {dtype.name}")
    if row < 0 or col < 0:
        raise ShapeError(f"{op}: row and col must be non-negative, got {row} and {col}")
    widths = (col - max(0, i + offset) if upper else min(col, i + offset + 1) for i in range(row))
    count = sum(max(0, w) for w in widths)
    if count == 0:
        return prims.full((2, 0), 0, device=device, dtype=dtype)
    r = prims.broadcast_in_dim(prims.iota(row, 0, 1, device=device, dtype=dtypes.int64), (row, col), (0,))
    c = prims.broadcast_in_dim(prims.iota(col, 0, 1, device=device, dtype=dtypes.int64), (row, col), (1,))
    r, c = prims.reshape(r, (row * col,)), prims.reshape(c, (row * col,))
    # (i, j) is in the triangle when j - i >= offset (upper) or <= offset (lower).
    distance = prims.sub(c, r)
    inside = prims.ge(distance, offset) if upper else prims.le(distance, offset)
    # A stable sort of the "outside" flags lists the positions inside first, in row-major order.
    outside = prims.convert_element_type(prims.logical_not(inside), dtypes.int64)
    _, order = prims.sort(outside, 0, False, True)
    positions = prims.slice(order, (0,), (count,))
    pairs = prims.cat([prims.reshape(prims.take(v, positions, 0), (1, count)) for v in (r, c)], 0)
    return convert(pairs, dtype)


def _tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
    return _indices_form(tril_indices, row, col, offset, dtype, device, layout)


def _triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
    return _indices_form(triu_indices, row, col, offset, dtype, device, layout)


@symbol(torch.tril_indices, adapter=_tril_indices)
def tril_indices(row, col, offset=0, *, dtype=None, device=None):
    """the (row, column) pairs on and below diagonal `offset` of a row x col matrix, row by row"""
    return _triangle_indices(row, col, offset, dtype, device, upper=False)


@symbol(torch.triu_indices, adapter=_triu_indices)
def triu_indices(row, col, offset=0, *, dtype=None, device=None):
    """the (row, column) pairs on and above diagonal `offset` of a row x col matrix, row by row"""
    return _triangle_indices(row, col, offset, dtype, device, upper=True)
