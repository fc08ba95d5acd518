"""Joining tensors into new ones: hstack, vstack, dstack, column_stack, block_diag,
cartesian_prod, combinations and kron. (meshgrid, whose results are views, is in
shapes.py.)"""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch

from tracecli.core import dtypes
from tracecli.core.dims import exact_div, same_shape
from tracecli.ops import prims
from tracecli.ops.autocast import Autocast, Policy
from tracecli.ops.ltorch._base import convert, expect_tensor, symbol
from tracecli.ops.ltorch.elementwise import mul
from tracecli.ops.promotion import ShapeError, canonical_dim, result_type


def _joined(tensors, dim: int, shape_of, op: str):
    """The tensors, each reshaped by shape_of, concatenated along dim with dtypes promoted:
    always a new tensor, as torch's."""
    tensors = [expect_tensor(t, op) for t in tensors]
    if not tensors:
        raise ShapeError(f"{op} expects a non-empty sequence of tensors")
    dtype = result_type(*tensors)
    parts = []
    for t in tensors:
        shape = shape_of(t)
        t = convert(t, dtype)
        parts.append(t if same_shape(shape, t.shape) else prims.reshape(t, shape))
    if len(parts) == 1:
        return parts[0] if parts[0] is not tensors[0] else prims.clone(parts[0])
    d = canonical_dim(dim, parts[0].ndim)
    return prims.cat(parts, d)


def _at_least_rank(t, rank: int) -> tuple:
    """The shape torch.atleast_{1,2,3}d gives t."""
    if t.ndim >= rank:
        return t.shape
    return {0: (1,) * rank, 1: (1,) + t.shape + (1,) * (rank - 2), 2: t.shape + (1,)}[t.ndim]


@symbol(torch.hstack, autocast=Autocast(cpu=Policy.PROMOTE))
def hstack(tensors):
    """tensors joined along their second dimension (the first for vectors)"""
    vectors = all(expect_tensor(t, "hstack").ndim <= 1 for t in tensors)
    return _joined(tensors, 0 if vectors else 1, lambda t: _at_least_rank(t, 1), "hstack")


@symbol(torch.vstack, aliases=(torch.row_stack,), autocast=Autocast(cpu=Policy.PROMOTE))
def vstack(tensors):
    """tensors joined along their first dimension, vectors as rows"""
    return _joined(tensors, 0, lambda t: _at_least_rank(t, 2), "vstack")


@symbol(torch.dstack, autocast=Autocast(cpu=Policy.PROMOTE))
def dstack(tensors):
    """tensors joined along their third dimension (vectors as (1, n, 1), matrices as (m, n, 1))"""
    return _joined(tensors, 2, lambda t: _at_least_rank(t, 3), "dstack")


@symbol(torch.column_stack, autocast=Autocast(cpu=Policy.PROMOTE))
def column_stack(tensors):
    """tensors joined along their second dimension, vectors as columns"""
    return _joined(tensors, 1, lambda t: (t.numel, 1) if t.ndim <= 1 else t.shape, "column_stack")


def _unpacked(sym):
    """torch's `f(*tensors)` spelled with one list, as torch.ops.aten's overloads take them."""

    def adapter(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            tensors = tuple(tensors[0])
        return sym(*tensors)

    return adapter


def _block_diag(*tensors):
    return _unpacked(block_diag)(*tensors)


def _cartesian_prod(*tensors):
    return _unpacked(cartesian_prod)(*tensors)


@symbol(torch.block_diag, adapter=_block_diag)
def block_diag(*tensors):
    """a matrix with the tensors (as matrices) along its diagonal, zeros elsewhere"""
    mats = [expect_tensor(t, "block_diag") for t in tensors]
    if not mats:
        raise ShapeError("block_diag of no tensors is left to torch")
    if any(t.ndim > 2 for t in mats):
        raise ShapeError("block_diag: input tensors must have 2 or fewer dimensions")
    if len({t.device for t in mats}) > 1:
        raise ShapeError("block_diag: all tensors must be on the same device")
    dtype = result_type(*mats)
    mats = [prims.reshape(t, {0: (1, 1), 1: (1,) + t.shape}[t.ndim]) if t.ndim < 2 else t for t in mats]
    width = sum(t.shape[1] for t in mats)
    rows, left = [], 0
    for t in mats:
        cols = t.shape[1]
        # Each block is its rows of the result: zeros to its left and right.
        rows.append(prims.pad(convert(t, dtype), convert(0, dtype), ((0, 0), (left, width - left - cols))))
        left += cols
    return rows[0] if len(rows) == 1 else prims.cat(rows, 0)


@symbol(torch.cartesian_prod, adapter=_cartesian_prod)
def cartesian_prod(*tensors):
    """every combination of one element from each vector, as the rows of a matrix"""
    tensors = [expect_tensor(t, "cartesian_prod") for t in tensors]
    if any(t.ndim != 1 for t in tensors):
        raise ShapeError("cartesian_prod expects 1-d tensors")
    if len(tensors) == 1:
        return tensors[0]  # torch returns the tensor itself
    if len({t.dtype for t in tensors}) > 1:
        raise ShapeError("cartesian_prod expects all tensors to have the same dtype")
    shape = tuple(t.shape[0] for t in tensors)
    count = math.prod(shape)
    columns = [prims.reshape(prims.broadcast_in_dim(t, shape, (i,)), (count, 1)) for i, t in enumerate(tensors)]
    return prims.cat(columns, 1)


@symbol(torch.kron, methods=("kron",))
def kron(input, other):
    """the Kronecker product: every element of input times all of other, as blocks"""
    a, b = expect_tensor(input, "kron"), expect_tensor(other, "kron")
    rank = max(a.ndim, b.ndim)
    a_shape = (1,) * (rank - a.ndim) + a.shape
    b_shape = (1,) * (rank - b.ndim) + b.shape
    # As torch computes it: a as (a0, 1, a1, 1, ...) times b as (1, b0, 1, b1, ...), merged in pairs.
    a_view = prims.reshape(a, tuple(v for s in a_shape for v in (s, 1)))
    b_view = prims.reshape(b, tuple(v for s in b_shape for v in (1, s)))
    product = mul.decomposition(a_view, b_view)
    return prims.reshape(product, tuple(s * t for s, t in zip(a_shape, b_shape, strict=True)))


# torch stacks the chosen elements: under CPU autocast, float16 and bfloat16 do not mix.
@symbol(torch.combinations, autocast=Autocast(cpu=Policy.PROMOTE))
def combinations(input, r=2, with_replacement=False):
    """the r-element combinations of a vector's elements (an element repeated too, if
    with_replacement), as rows in lexicographic order of their positions"""
    input = expect_tensor(input, "combinations")
    if input.ndim != 1:
        raise ShapeError(f"combinations expects a 1-d tensor, got shape {list(input.shape)}")
    if r < 0:
        raise ShapeError(f"combinations expects a non-negative r, got {r}")
    if r == 0:
        return prims.full((0,), convert(0, input.dtype), device=input.device, dtype=input.dtype)
    n = input.shape[0]
    # How many: n choose r, or (n + r - 1) choose r with repeats, as a polynomial in n.
    count = exact_div(math.prod(n + i if with_replacement else n - i for i in range(r)), math.factorial(r))
    # Every r-tuple of positions, row-major; those in order (strictly, or with repeats) are
    # the combinations, listed first, in order, by a stable sort of the "out of order" flags.
    grid = (n,) * r
    places = prims.iota(n, 0, 1, device=input.device, dtype=dtypes.int64)
    positions = [prims.reshape(prims.broadcast_in_dim(places, grid, (j,)), (n**r,)) for j in range(r)]
    in_order = None
    for a, b in zip(positions, positions[1:], strict=False):
        step = prims.le(a, b) if with_replacement else prims.lt(a, b)
        in_order = step if in_order is None else prims.bitwise_and(in_order, step)
    if in_order is not None:
        out_of_order = prims.convert_element_type(prims.logical_not(in_order), dtypes.int64)
        _, order = prims.sort(out_of_order, 0, False, True)
        chosen = prims.slice(order, (0,), (count,))
        positions = [prims.take(p, chosen, 0) for p in positions]
    columns = [prims.reshape(prims.take(input, p, 0), (count, 1)) for p in positions]
    return columns[0] if len(columns) == 1 else prims.cat(columns, 1)
