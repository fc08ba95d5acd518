"""Data-movement ltorch symbols: split, chunk, unbind, stack, unflatten, repeat,
repeat_interleave, diff, and the triangle masks triu/tril."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import torch

from tracecli.core import dtypes
from tracecli.core.dims import same_shape
from tracecli.core.symbol import Tag
from tracecli.core.values import TensorValue
from tracecli.ops import prims
from tracecli.ops.autocast import Autocast, Policy
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import convert, expect_tensor, pieces_of, shape_arg, symbol, torch_form
from tracecli.ops.ltorch.indexing import slice_along
from tracecli.ops.promotion import ShapeError, canonical_dim, infer_shape, result_type


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
    if isinstance(split_size_or_sections, int):
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
def _repeat_method(self, *sizes):
    return repeat(self, *shape_arg(sizes))


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
    return prims.reshape(expanded, tuple(r * s for r, s in zip(sizes, padded, strict=True)))


def _repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if isinstance(repeats, TensorValue) and output_size is None:
        raise ShapeError(
            "repeat_interleave with tensor repeats gives a size that depends on their values, which a trace "
            "does not have; pass output_size= (or repeat by an int)"
        )
    if not isinstance(repeats, int):
        return OPAQUE  # tensor repeats with output_size: torch computes the values
    return repeat_interleave(input, repeats, dim, output_size=output_size)


@symbol(torch.repeat_interleave, methods=("repeat_interleave",), adapter=_repeat_interleave)
def repeat_interleave(input, repeats, dim=None, *, output_size=None):
    """each element repeated `repeats` times in place along dim (flattened without dim)"""
    input = expect_tensor(input, "repeat_interleave")
    if not isinstance(repeats, int) or repeats < 0:
        raise ShapeError(f"repeat_interleave takes a non-negative int count here, got {repeats!r}")
    if dim is None:
        input = prims.reshape(input, (input.numel,)) if input.ndim != 1 else input
        d = 0
    else:
        d = _dim_of(input, dim, "repeat_interleave")
    shape = input.shape
    out_shape = shape[:d] + (shape[d] * repeats,) + shape[d + 1 :]
    if output_size is not None and output_size != out_shape[d]:
        raise ShapeError(f"repeat_interleave: output_size {output_size} differs from {out_shape[d]}")
    # (.., s, ..) broadcast to (.., s, r, ..) then merged: each element r times in a row
    # (for r = 1 too: torch returns a copy, never the input itself).
    dims = tuple(i if i <= d else i + 1 for i in range(input.ndim))
    expanded = prims.broadcast_in_dim(input, shape[: d + 1] + (repeats,) + shape[d + 1 :], dims)
    return prims.reshape(expanded, out_shape)


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
