"""Prims of what solves with or measures a matrix: determinants, inverses, linear solves,
least squares, the pseudo-inverse, rank, condition number and the matrix exponential.

Each is a prim of its own with torch's function as its implementation: a decomposition
into products and sums would not help a reader (these are LAPACK routines), and running
torch's own kernel gives eager's result exactly. The meta rules say what torch's kernels
do with shapes: batch dimensions broadcast where torch broadcasts them (and not where it
does not), the vector forms of a right-hand side, the dtypes LAPACK takes, the real dtype
of a complex input's magnitudes, and the shape checks torch makes.
"""

from __future__ import annotations

import math

import torch

from tracecli.core import dtypes
from tracecli.core.dims import same_shape
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import prim
from tracecli.ops.prims.linalg import LAPACK, check_matrix, check_operands, check_square, on_cuda, real_dtype
from tracecli.ops.promotion import ShapeError, broadcast_shapes

_INFO = dtypes.int32  # LAPACK's status per matrix: 0 where the factorization succeeded


def _square(name: str, A: TensorValue, allowed: frozenset = LAPACK, kinds: str | None = None) -> None:
    if kinds is None:
        check_operands(name, A, allowed=allowed)
    else:
        check_operands(name, A, allowed=allowed, kinds=kinds)
    check_square(name, A)


def _info(A: TensorValue) -> TensorType:
    return TensorType(A.shape[:-2], _INFO, A.device)


# --- determinants, inverses, the exponential -------------------------------------------


def _det_meta(A: TensorValue) -> TensorType:
    _square("linalg.det", A)
    return TensorType(A.shape[:-2], A.dtype, A.device)


def _slogdet_meta(A: TensorValue) -> tuple[TensorType, TensorType]:
    _square("linalg.slogdet", A)
    batch = A.shape[:-2]
    return TensorType(batch, A.dtype, A.device), TensorType(batch, real_dtype(A.dtype), A.device)


def _inv_meta(A: TensorValue) -> TensorType:
    _square("linalg.inv", A)
    return A.type


def _inv_ex_meta(A: TensorValue, check_errors: bool) -> tuple[TensorType, TensorType]:
    _square("linalg.inv_ex", A)
    return A.type, _info(A)


def _matrix_exp_meta(A: TensorValue) -> TensorType:
    # The one kernel here that takes half precision too.
    _square("linalg.matrix_exp", A, LAPACK | {dtypes.float16, dtypes.bfloat16},
            "float16, bfloat16, float32, float64, complex64 or complex128")
    return A.type


det = prim("det", _det_meta, torch.linalg.det, doc="the determinant of each matrix")
slogdet = prim("slogdet", _slogdet_meta, lambda A: tuple(torch.linalg.slogdet(A)),
               doc="(sign, log|det|) of each matrix")
inv = prim("inv", _inv_meta, torch.linalg.inv, doc="the inverse of each matrix; a singular one is an error")
inv_ex = prim("inv_ex", _inv_ex_meta, lambda A, check_errors: tuple(torch.linalg.inv_ex(A, check_errors=check_errors)),
              doc="(inverse, LAPACK's info) of each matrix")
matrix_exp = prim("matrix_exp", _matrix_exp_meta, torch.linalg.matrix_exp, doc="the exponential of each matrix")

# --- linear solves ------------------------------------------------------------------------


def _solve_shape(name: str, A: TensorValue, B: TensorValue, left: bool) -> tuple[int, ...]:
    """The solution's shape: torch takes B as a vector (or a batch of them) when it is 1-D
    or has A's shape without its last dimension; otherwise as matrices whose batch
    dimensions broadcast with A's."""
    check_operands(name, A, B)
    check_square(name, A)
    if B.ndim == 0:
        raise ShapeError(f"{name}: B must have at least 1 dimension")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    if vector and not left:
        raise ShapeError(f"{name}: a vector right-hand side is not supported for left=False")
    rhs = B.shape + (1,) if vector else B.shape
    n = A.shape[-1]
    if (rhs[-2] if left else rhs[-1]) != n:
        raise ShapeError(f"{name}: incompatible shapes of A {list(A.shape)} and B {list(B.shape)} for the equation "
                         f"{'AX = B' if left else 'XA = B'}")
    shape = broadcast_shapes(A.shape[:-2], rhs[:-2]) + rhs[-2:]
    return shape[:-1] if vector else shape


def _solve_meta(A: TensorValue, B: TensorValue, left: bool) -> TensorType:
    return TensorType(_solve_shape("linalg.solve", A, B, left), A.dtype, A.device)


def _solve_ex_meta(A: TensorValue, B: TensorValue, left: bool, check_errors: bool) -> tuple[TensorType, TensorType]:
    return TensorType(_solve_shape("linalg.solve_ex", A, B, left), A.dtype, A.device), _info(A)


def _batched_rhs(name: str, A: TensorValue, B: TensorValue, rows_first: bool = True) -> tuple[int, ...]:
    """B's shape after its batch broadcasts with A's: B holds matrices whose rows
    (`rows_first`) or columns match A's order."""
    check_operands(name, A, B)
    check_square(name, A)
    check_matrix(name, B, "B")
    if B.shape[-2 if rows_first else -1] != A.shape[-1]:
        raise ShapeError(f"{name}: incompatible shapes of A {list(A.shape)} and B {list(B.shape)}")
    return broadcast_shapes(A.shape[:-2], B.shape[:-2]) + B.shape[-2:]


def _solve_triangular_meta(A: TensorValue, B: TensorValue, upper: bool, left: bool, unitriangular: bool) -> TensorType:
    return TensorType(_batched_rhs("linalg.solve_triangular", A, B, left), A.dtype, A.device)


def _triangular_solve_meta(b: TensorValue, A: TensorValue, upper: bool, transpose: bool,
                           unitriangular: bool) -> tuple[TensorType, TensorType]:
    shape = _batched_rhs("triangular_solve", A, b)
    return TensorType(shape, b.dtype, b.device), TensorType(shape[:-2] + A.shape[-2:], A.dtype, A.device)


def _cholesky_solve_meta(B: TensorValue, L: TensorValue, upper: bool) -> TensorType:
    return TensorType(_batched_rhs("cholesky_solve", L, B), B.dtype, B.device)


def _pivots(name: str, factors: TensorValue, pivots: TensorValue) -> None:
    if pivots.dtype != dtypes.int32:
        raise ShapeError(f"{name}: pivots must be int32, got {pivots.dtype.name}")
    if pivots.shape != factors.shape[:-1] or pivots.device != factors.device:
        raise ShapeError(f"{name}: pivots of shape {list(pivots.shape)} do not fit factors of shape "
                         f"{list(factors.shape)}")


def _lu_solve_meta(LU: TensorValue, pivots: TensorValue, B: TensorValue, left: bool, adjoint: bool) -> TensorType:
    shape = _batched_rhs("linalg.lu_solve", LU, B, left)
    _pivots("linalg.lu_solve", LU, pivots)
    return TensorType(shape, B.dtype, B.device)


def _ldl_solve_meta(LD: TensorValue, pivots: TensorValue, B: TensorValue, hermitian: bool) -> TensorType:
    shape = _batched_rhs("linalg.ldl_solve", LD, B)
    _pivots("linalg.ldl_solve", LD, pivots)
    # torch's kernel reads past its buffers (and crashes the process) when LD's batch would
    # have to broadcast: only B's batch may, into LD's (or LD is one matrix for all).
    if LD.ndim > 2 and not same_shape(shape[:-2], LD.shape[:-2]):
        raise ShapeError(f"linalg.ldl_solve: B's batch dimensions {list(B.shape[:-2])} must broadcast to LD's "
                         f"{list(LD.shape[:-2])}")
    return TensorType(shape, B.dtype, B.device)


def _cholesky_inverse_meta(L: TensorValue, upper: bool) -> TensorType:
    _square("cholesky_inverse", L)
    return L.type


solve = prim("solve", _solve_meta, lambda A, B, left: torch.linalg.solve(A, B, left=left),
             doc="X with AX = B (left) or XA = B; a singular A is an error")
solve_ex = prim("solve_ex", _solve_ex_meta,
                lambda A, B, left, check_errors: tuple(torch.linalg.solve_ex(A, B, left=left, check_errors=check_errors)),
                doc="(X, LAPACK's info) with AX = B (left) or XA = B")
solve_triangular = prim(
    "solve_triangular", _solve_triangular_meta,
    lambda A, B, upper, left, unitriangular: torch.linalg.solve_triangular(A, B, upper=upper, left=left,
                                                                          unitriangular=unitriangular),
    doc="X with AX = B (left) or XA = B for a triangular A",
)
triangular_solve = prim(
    "triangular_solve", _triangular_solve_meta,
    lambda b, A, upper, transpose, unitriangular: tuple(torch.triangular_solve(b, A, upper, transpose, unitriangular)),
    doc="(X, a copy of A) with AX = b for a triangular A",
)
cholesky_solve = prim("cholesky_solve", _cholesky_solve_meta, torch.cholesky_solve,
                      doc="X with AX = B, A given by its Cholesky factor")
cholesky_inverse = prim("cholesky_inverse", _cholesky_inverse_meta, torch.cholesky_inverse,
                        doc="the inverse of A given by its Cholesky factor")
lu_solve = prim("lu_solve", _lu_solve_meta,
                lambda LU, pivots, B, left, adjoint: torch.linalg.lu_solve(LU, pivots, B, left=left, adjoint=adjoint),
                doc="X with AX = B (left) or XA = B, A given by its LU factorization")
ldl_solve = prim("ldl_solve", _ldl_solve_meta,
                 lambda LD, pivots, B, hermitian: torch.linalg.ldl_solve(LD, pivots, B, hermitian=hermitian),
                 doc="X with AX = B, A given by its LDL factorization")

# --- least squares ------------------------------------------------------------------------

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_meta(A: TensorValue, B: TensorValue, rcond, driver) -> tuple[TensorType, ...]:
    """(solution, residuals, rank, singular values), as each LAPACK driver fills them."""
    name = "linalg.lstsq"
    check_operands(name, A, B)
    check_matrix(name, A)
    if B.ndim < 1 or not 0 <= A.ndim - B.ndim <= 1:
        raise ShapeError(f"{name}: B must have as many dimensions as A, or one fewer; got {list(A.shape)} and "
                         f"{list(B.shape)}")
    driver = driver or ("gels" if on_cuda(A) else "gelsy")
    if driver not in _DRIVERS or (on_cuda(A) and driver != "gels"):
        raise ShapeError(f"{name}: driver {driver!r} is not one of {'gels' if on_cuda(A) else ', '.join(_DRIVERS)}")
    vector = B.ndim == A.ndim - 1
    rhs = B.shape + (1,) if vector else B.shape
    m, n = A.shape[-2:]
    if rhs[-2] != m:
        raise ShapeError(f"{name}: A has {m} rows and B {rhs[-2]}")
    batch = broadcast_shapes(A.shape[:-2], rhs[:-2])
    k = rhs[-1]
    real = real_dtype(A.dtype)
    empty = TensorType((0,), real, A.device)
    residuals = empty
    if m > n and driver != "gelsy":
        if driver != "gels":
            # These drivers return residuals only where every matrix has full rank.
            raise ShapeError(f"{name}: with driver {driver!r} and more rows than columns, whether the residuals are "
                             "returned depends on the ranks of the matrices, which tracing does not know")
        residuals = TensorType(batch + (k,), real, A.device)
    rank = TensorType((0,) if driver == "gels" else A.shape[:-2], dtypes.int64, A.device)
    values = TensorType(A.shape[:-2] + (min(m, n),), real, A.device) if driver in ("gelsd", "gelss") else empty
    solution = TensorType(batch + ((n,) if vector else (n, k)), A.dtype, A.device)
    return solution, residuals, rank, values


lstsq = prim("lstsq", _lstsq_meta,
             lambda A, B, rcond, driver: tuple(torch.linalg.lstsq(A, B, rcond, driver=driver)),
             doc="(solution, residuals, rank, singular values) of min |AX - B|")

# --- pseudo-inverse, rank, condition --------------------------------------------------------


def _tolerance_batch(name: str, A: TensorValue, *tolerances) -> tuple[int, ...]:
    """Batch dimensions of the result: A's, broadcast with tolerance tensors (one value per
    matrix)."""
    batch = A.shape[:-2]
    for tol in tolerances:
        if isinstance(tol, TensorValue):
            if tol.dtype.is_complex or tol.device != A.device:
                raise ShapeError(f"{name}: a tolerance must be a real tensor on A's device, got {tol.dtype.name} "
                                 f"on {tol.device}")
            batch = broadcast_shapes(batch, tol.shape)
    return batch


def _pinv_meta(A: TensorValue, atol, rtol, hermitian: bool) -> TensorType:
    check_operands("linalg.pinv", A)
    (check_square if hermitian else check_matrix)("linalg.pinv", A)
    batch = _tolerance_batch("linalg.pinv", A, atol, rtol)
    return TensorType(batch + (A.shape[-1], A.shape[-2]), A.dtype, A.device)


def _matrix_rank_meta(A: TensorValue, atol, rtol, hermitian: bool) -> TensorType:
    check_operands("linalg.matrix_rank", A)
    (check_square if hermitian else check_matrix)("linalg.matrix_rank", A)
    return TensorType(_tolerance_batch("linalg.matrix_rank", A, atol, rtol), dtypes.int64, A.device)


# The norms cond takes; the singular value ones (None, 2, -2) take any matrix, the others
# square ones (they invert it).
_SINGULAR_VALUE_NORMS = (None, 2, -2)
_INVERSE_NORMS = (1, -1, math.inf, -math.inf, "fro", "nuc")


def _cond_meta(A: TensorValue, p) -> TensorType:
    check_operands("linalg.cond", A)
    if isinstance(p, bool) or not (p in _SINGULAR_VALUE_NORMS or p in _INVERSE_NORMS):
        raise ShapeError(f"linalg.cond: {p!r} is not a norm it takes (None, 2, -2, 1, -1, inf, -inf, 'fro', 'nuc')")
    (check_matrix if p in _SINGULAR_VALUE_NORMS else check_square)("linalg.cond", A)
    return TensorType(A.shape[:-2], real_dtype(A.dtype), A.device)


pinv = prim("pinv", _pinv_meta,
            lambda A, atol, rtol, hermitian: torch.linalg.pinv(A, atol=atol, rtol=rtol, hermitian=hermitian),
            doc="the pseudo-inverse of each matrix")
matrix_rank = prim(
    "matrix_rank", _matrix_rank_meta,
    lambda A, atol, rtol, hermitian: torch.linalg.matrix_rank(A, atol=atol, rtol=rtol, hermitian=hermitian),
    doc="the number of singular values of each matrix above the tolerance",
)
cond = prim("cond", _cond_meta, torch.linalg.cond, doc="the condition number of each matrix in the norm p")
