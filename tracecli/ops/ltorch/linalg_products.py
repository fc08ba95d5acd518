"""Products built from matmul and elementwise ops: tensordot, inner, multi_dot (and the
deprecated chain_matmul), matrix_power, vecdot, cross; and the structured matrices
linalg.vander and linalg.diagonal, and cdist.

The decompositions are torch's own composites step for step: tensordot sums the
dimensions only one operand broadcasts, permutes and reshapes both to matrices and makes
one matrix product (a dot product when nothing else is left), multi_dot picks torch's
multiplication order, matrix_power squares and multiplies by the bits of n. So rounding
and dtypes agree with eager, and so does torch.autocast: the matrix products are the
`ltorch.matmul` op, which autocast reaches as it reaches torch's mm inside these
composites.
"""

# Parameters keep torch's names (`input`, `A`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002, N803

from __future__ import annotations

import math

import torch

from tracecli.core import dtypes
from tracecli.core.dims import same_shape
from tracecli.core.symbol import Tag
from tracecli.core.values import TensorValue
from tracecli.ops import prims
from tracecli.ops.autocast import Autocast, Policy, everywhere
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import broadcast_all, convert, expect_tensor, symbol, torch_form
from tracecli.ops.ltorch.elementwise import mul
from tracecli.ops.ltorch.linalg import dot, matmul
from tracecli.ops.ltorch.linalg_solvers import linalg_inv
from tracecli.ops.promotion import ShapeError, broadcast_shapes, canonical_dim


def _same_dtype(op: str, *tensors: TensorValue) -> None:
    for t in tensors[1:]:
        if t.dtype != tensors[0].dtype:
            raise ShapeError(f"{op} expects operands of one dtype, got {tensors[0].dtype.name} and {t.dtype.name}")


def _permuted(x, perm: tuple[int, ...]):
    return x if perm == tuple(range(x.ndim)) else prims.transpose(x, perm)


def _reshaped(x, shape: tuple):
    return x if same_shape(x.shape, shape) else prims.reshape(x, shape)


# --- tensordot and inner ---------------------------------------------------------------------


def _contracted(dims, ndim_a: int, ndim_b: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """torch.tensordot's `dims`: a count of trailing/leading dimensions, or two lists."""
    if isinstance(dims, int):
        if dims < 0 or dims > min(ndim_a, ndim_b):
            raise ShapeError(f"tensordot expects 0 <= dims <= {min(ndim_a, ndim_b)}, got dims={dims}")
        return tuple(range(-dims, 0)), tuple(range(dims))
    if not isinstance(dims, (tuple, list)) or len(dims) != 2 or not all(isinstance(d, (tuple, list)) for d in dims):
        raise ShapeError(f"tensordot expects dims to be an int or two lists of dimensions, got {dims!r}")
    return tuple(dims[0]), tuple(dims[1])


def _tensordot(a, b, dims=2):
    if isinstance(dims, TensorValue):
        return OPAQUE  # dims held in a tensor: its values decide the shapes
    dims_a, dims_b = _contracted(dims, getattr(a, "ndim", 0), getattr(b, "ndim", 0))
    return tensordot(a, b, (dims_a, dims_b))


def _canonical_list(dims: tuple, ndim: int) -> list[int]:
    out = [canonical_dim(d, ndim) for d in dims]
    if len(set(out)) != len(out):
        raise ShapeError(f"tensordot: a dimension appears more than once in {list(dims)}")
    return out


@symbol(torch.tensordot, adapter=_tensordot, autocast=Autocast(cuda=Policy.PROMOTE))
def tensordot(a, b, dims=2):
    """the contraction of a and b over the dimension lists dims"""
    a, b = expect_tensor(a, "tensordot"), expect_tensor(b, "tensordot")
    _same_dtype("tensordot", a, b)
    if a.dtype == dtypes.bool8:
        raise ShapeError("tensordot is not implemented for bool tensors")
    dims_a, dims_b = _contracted(dims, a.ndim, b.ndim)
    if len(dims_a) != len(dims_b):
        raise ShapeError(f"tensordot: the dimension lists {list(dims_a)} and {list(dims_b)} differ in length")
    dims_a, dims_b = _canonical_list(dims_a, a.ndim), _canonical_list(dims_b, b.ndim)
    t1, t2, csize = a, b, 1
    for da, db in zip(dims_a, dims_b, strict=True):
        s1, s2 = a.shape[da], b.shape[db]
        # A size-1 dimension against a larger one broadcasts: it is summed out first.
        if s2 == 1:
            t1 = _reshaped(prims.sum(t1, (da,)), t1.shape[:da] + (1,) + t1.shape[da + 1 :])
        elif s1 == 1:
            t2 = _reshaped(prims.sum(t2, (db,)), t2.shape[:db] + (1,) + t2.shape[db + 1 :])
        elif s1 != s2:
            raise ShapeError(f"tensordot: contracted dimensions differ, {s1} in dim {da} and {s2} in dim {db}")
        else:
            csize *= s1
    free_a = [i for i in range(a.ndim) if i not in dims_a]
    free_b = [i for i in range(b.ndim) if i not in dims_b]
    size1 = math.prod(t1.shape[i] for i in free_a)
    size2 = math.prod(t2.shape[i] for i in free_b)
    rsizes = tuple(t1.shape[i] for i in free_a) + tuple(t2.shape[i] for i in free_b)
    t1 = _permuted(t1, tuple(free_a + dims_a))
    t2 = _permuted(t2, tuple(dims_b + free_b))
    if size1 == 1 and size2 == 1:
        # Nothing but the contraction is left: torch takes a dot product.
        return _reshaped(dot(_reshaped(t1, (csize,)), _reshaped(t2, (csize,))), rsizes)
    return _reshaped(matmul(_reshaped(t1, (size1, csize)), _reshaped(t2, (csize, size2))), rsizes)


@symbol(torch.inner, methods=("inner",))
def inner(input, other):
    """sums of products over the last dimension of both (a product with a 0-d operand)"""
    input, other = expect_tensor(input, "inner"), expect_tensor(other, "inner")
    if input.ndim == 0 or other.ndim == 0:
        return mul(input, other)
    if input.shape[-1] != other.shape[-1]:
        raise ShapeError(f"inner: the last dimensions differ, {list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ((-1,), (-1,)))


# --- chains of products ------------------------------------------------------------------------


def _chain_order(sizes: list) -> list[list[int]]:
    """torch's matrix chain order (Cormen et al.'s dynamic program): split[i][j] is where
    the product of matrices i..j is cut, matrix i being sizes[i] x sizes[i + 1]."""
    n = len(sizes) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            best = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if best is None or q < best:
                    best, split[i][j] = q, k
            cost[i][j] = best
    return split


def _chain(matrices: list, split: list[list[int]], i: int, j: int):
    if i == j:
        return matrices[i]
    return matmul(_chain(matrices, split, i, split[i][j]), _chain(matrices, split, split[i][j] + 1, j))


@symbol(torch.linalg.multi_dot, autocast=Autocast(cuda=Policy.LOWER))
def linalg_multi_dot(tensors):
    """the product of a chain of matrices (the first and last may be vectors), in the
    order torch picks for the fewest multiplications"""
    tensors = [expect_tensor(t, "linalg.multi_dot") for t in tensors]
    n = len(tensors)
    if n < 2:
        raise ShapeError(f"linalg.multi_dot expects at least 2 tensors, got {n}")
    first, last = tensors[0], tensors[-1]
    if first.ndim not in (1, 2) or last.ndim not in (1, 2):
        raise ShapeError("linalg.multi_dot: the first and last tensors must be 1-D or 2-D")
    if any(t.ndim != 2 for t in tensors[1:-1]):
        raise ShapeError("linalg.multi_dot: the tensors between the first and the last must be 2-D")
    _same_dtype("linalg.multi_dot", *tensors)
    out_shape = first.shape[:1] if first.ndim == 2 else ()
    out_shape += last.shape[1:] if last.ndim == 2 else ()
    matrices = list(tensors)
    if first.ndim == 1:
        matrices[0] = prims.reshape(first, (1, first.shape[0]))
    if last.ndim == 1:
        matrices[-1] = prims.reshape(last, (last.shape[0], 1))
    for i in range(1, n):
        if matrices[i - 1].shape[1] != matrices[i].shape[0]:
            raise ShapeError(f"linalg.multi_dot: tensors {i - 1} and {i} of shapes {list(tensors[i - 1].shape)} and "
                             f"{list(tensors[i].shape)} cannot be multiplied")
    if n == 2:
        out = matmul(*matrices)
    elif n == 3:
        a, b = matrices[0].shape
        c, d = matrices[2].shape
        if (a * c) * (b + d) > (b * d) * (a + c):
            out = matmul(matrices[0], matmul(matrices[1], matrices[2]))
        else:
            out = matmul(matmul(matrices[0], matrices[1]), matrices[2])
    else:
        sizes = [m.shape[0] for m in matrices] + [matrices[-1].shape[1]]
        out = _chain(matrices, _chain_order(sizes), 0, n - 1)
    return _reshaped(out, out_shape)


def _chain_matmul(*matrices):
    # torch.ops.aten.chain_matmul takes the matrices as one list.
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    return chain_matmul(*matrices)


# Its own op for CUDA autocast, whose policy casts even the one matrix it copies.
@symbol(torch.chain_matmul, adapter=_chain_matmul, autocast=Autocast(cuda=Policy.LOWER))
def chain_matmul(*matrices):
    """linalg.multi_dot of 2-D matrices (a copy of a single one): torch's deprecated spelling"""
    if not matrices:
        raise ShapeError("chain_matmul expects one or more matrices")
    for m in matrices:
        if expect_tensor(m, "chain_matmul").ndim != 2:
            raise ShapeError(f"chain_matmul expects 2-D tensors, got {list(m.shape)}")
    return prims.clone(matrices[0]) if len(matrices) == 1 else linalg_multi_dot(list(matrices))


def _eye_like(A):
    """The identity matrix in A's dtype, repeated over A's batch."""
    n = A.shape[-1]
    index = prims.iota(n, 0, 1, device=A.device, dtype=dtypes.int64)
    rows = prims.broadcast_in_dim(index, (n, n), (0,))
    cols = prims.broadcast_in_dim(index, (n, n), (1,))
    eye = convert(prims.eq(rows, cols), A.dtype)
    return eye if A.ndim == 2 else prims.broadcast_in_dim(eye, A.shape, (A.ndim - 2, A.ndim - 1))


@symbol(torch.linalg.matrix_power, methods=("matrix_power",))
def linalg_matrix_power(A, n):
    """A multiplied by itself n times (the inverse's power for negative n), by torch's
    squarings"""
    A = expect_tensor(A, "linalg.matrix_power")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ShapeError(f"linalg.matrix_power expects batches of square matrices, got {list(A.shape)}")
    if isinstance(n, bool) or not isinstance(n, int):
        raise ShapeError(f"linalg.matrix_power expects an integer power, got {n!r}")
    if n == 0:
        return _eye_like(A)
    if n == 1:
        return prims.clone(A)  # a new tensor, as torch returns
    if n == -1:
        return linalg_inv(A)
    a, n = (linalg_inv(A), -n) if n < 0 else (A, n)
    if n == 2:
        return matmul(a, a)
    if n == 3:
        return matmul(matmul(a, a), a)
    # The bits of n from the lowest: z runs through a, a^2, a^4, ...
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = a if z is None else matmul(z, z)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


@torch_form(torch.matrix_power)
def _matrix_power(input, n):
    return linalg_matrix_power(input, n)


# --- vector products ----------------------------------------------------------------------------


def _vecdot(x, y, *, dim=-1):
    # Complex vectors are conjugated first: no prim here conjugates.
    if any(isinstance(t, TensorValue) and t.dtype.is_complex for t in (x, y)):
        return OPAQUE
    return linalg_vecdot(x, y, dim=dim)


@symbol(torch.linalg.vecdot, adapter=_vecdot, autocast=everywhere(Policy.LOWER))
def linalg_vecdot(x, y, *, dim=-1):
    """the sum of x * y along dim, broadcasting (real tensors here)"""
    x, y = expect_tensor(x, "linalg.vecdot"), expect_tensor(y, "linalg.vecdot")
    if not x.dtype.is_float:
        raise ShapeError(f"linalg.vecdot expects floating point tensors, got {x.dtype.name}")
    _same_dtype("linalg.vecdot", x, y)
    if x.ndim == 1 and y.ndim == 1:
        return prims.matmul(x, y)  # torch's vdot, whatever dim says
    x, y = broadcast_all(x, y)
    return prims.sum(prims.mul(x, y), (canonical_dim(dim, x.ndim),))


def _cross(op: str, input, other, dim: int):
    """(a1 b2 - a2 b1, a2 b0 - a0 b2, a0 b1 - a1 b0) along dim, as torch's kernel computes it."""
    if input.ndim != other.ndim:
        raise ShapeError(f"{op}: the inputs must have the same number of dimensions, got {list(input.shape)} and "
                         f"{list(other.shape)}")
    _same_dtype(op, input, other)
    if input.dtype == dtypes.bool8:
        raise ShapeError(f"{op} is not implemented for bool tensors")
    d = canonical_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise ShapeError(f"{op}: dimension {dim} must have length 3 in both inputs, got {list(input.shape)} and "
                         f"{list(other.shape)}")
    shape = broadcast_shapes(input.shape, other.shape)
    a, b = broadcast_all(input, other)

    def part(x, i):
        return prims.slice(x, (0,) * d + (i,) + (0,) * (x.ndim - d - 1), shape[:d] + (i + 1,) + shape[d + 1 :])

    a0, a1, a2 = (part(a, i) for i in range(3))
    b0, b1, b2 = (part(b, i) for i in range(3))
    products = ((a1, b2, a2, b1), (a2, b0, a0, b2), (a0, b1, a1, b0))
    return prims.cat([prims.sub(prims.mul(p, q), prims.mul(r, s)) for p, q, r, s in products], d)


@symbol(torch.linalg.cross)
def linalg_cross(input, other, *, dim=-1):
    """the cross product of 3-vectors along dim, broadcasting"""
    input, other = expect_tensor(input, "linalg.cross"), expect_tensor(other, "linalg.cross")
    return _cross("linalg.cross", input, other, dim)


@symbol(torch.cross, methods=("cross",), autocast=Autocast(cuda=Policy.PROMOTE))
def cross(input, other, dim=None):
    """the cross product of 3-vectors along dim (without one: input's first of size 3)"""
    input, other = expect_tensor(input, "cross"), expect_tensor(other, "cross")
    if dim is None:
        # The first dimension of size 3, asked in order as torch asks (a symbolic size
        # compared with 3 is a guard: only those before the one found are asked).
        dim = next((i for i, size in enumerate(input.shape) if size == 3), None)
        if dim is None:
            raise ShapeError(f"cross: no dimension of size 3 in {list(input.shape)}")
    return _cross("linalg.cross", input, other, dim)


# --- structured matrices -------------------------------------------------------------------------


@symbol(torch.linalg.vander)
def linalg_vander(x, N=None):
    """the Vandermonde matrix: x**0, x**1, ..., x**(N-1) along a new last dimension"""
    return prims.vander(expect_tensor(x, "linalg.vander"), N)


# A view of A, as in torch: a later write to A shows in it (and a write through it is refused).
@symbol(torch.linalg.diagonal, tags=(Tag.VIEW,))
def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """the diagonal (offset above the main one when positive) of the dims dim1, dim2,
    as a last dimension: a strided slice of the flattened matrices"""
    A = expect_tensor(A, "linalg.diagonal")
    d1, d2 = canonical_dim(dim1, A.ndim), canonical_dim(dim2, A.ndim)
    if d1 == d2:
        raise ShapeError(f"linalg.diagonal: dim1 and dim2 are both {d1}")
    others = tuple(i for i in range(A.ndim) if i not in (d1, d2))
    x = _permuted(A, others + (d1, d2))
    batch, (n, m) = x.shape[:-2], x.shape[-2:]
    # Element (i, i + offset) sits at i * (m + 1) + offset of the flattened matrix.
    length = max(min(n, m - offset), 0) if offset >= 0 else max(min(n + offset, m), 0)
    start = offset if offset >= 0 else -offset * m
    flat = _reshaped(x, batch + (n * m,))
    if length == 0:
        return prims.slice(flat, (0,) * flat.ndim, batch + (0,))
    stop = start + (length - 1) * (m + 1) + 1
    return prims.slice(flat, (0,) * len(batch) + (start,), batch + (stop,), (1,) * len(batch) + (m + 1,))


@symbol(torch.cdist, autocast=everywhere(Policy.FP32))
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """the p-norm distance between each row of x1 and each row of x2"""
    x1, x2 = expect_tensor(x1, "cdist"), expect_tensor(x2, "cdist")
    return prims.cdist(x1, x2, p, compute_mode)
