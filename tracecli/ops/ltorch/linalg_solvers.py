"""Solving with and measuring matrices: determinants (det, slogdet, logdet), inverses
(inv, inv_ex, inverse), linear solves (solve, solve_ex, solve_triangular,
triangular_solve, cholesky_solve, lu_solve, ldl_solve), cholesky_inverse, least squares
(lstsq), pinv and pinverse, matrix_rank, cond, matrix_exp, tensorinv, tensorsolve.

Most are one prim each (linalg_solvers.py among the prims says why); logdet, tensorinv
and tensorsolve are torch's composites of them. Results that are named tuples in torch
(`torch.return_types.linalg_slogdet`, ...) are the same named tuples here.

Autocast: torch's CPU autocast computes the LAPACK-backed ops in float32 (its fp32 list,
as registered in ATen: inv, solve, the Cholesky and triangular solves, lu_solve, pinverse,
matrix_rank, cond, tensorinv, tensorsolve); CUDA's lists hold none of these. Two forms
are refused under autocast, as tracing cannot reproduce them: linalg.pinv, whose
factors torch multiplies with autocast's lower-precision matmul, and linalg.lstsq on CPU,
whose autocast path gives other results than torch.linalg.lstsq outside autocast.
"""

# Parameters keep torch's names (`input`, `A`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002, N803

from __future__ import annotations

import math

import torch

from tracecli.core import dtypes
from tracecli.core.values import TensorValue
from tracecli.ops import prims
from tracecli.ops.autocast import Autocast, Policy
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import convert, expect_tensor, symbol
from tracecli.ops.ltorch.linalg import autocast_reaches
from tracecli.ops.promotion import ShapeError, canonical_dim
from tracecli.ops.torch_bridge import FROM_TORCH

# torch's CPU autocast runs these in float32; its CUDA lists leave them alone.
_CPU_FP32 = Autocast(cpu=Policy.FP32)
_RETURN = torch.return_types


# --- determinants ---------------------------------------------------------------------------


@symbol(torch.linalg.det, aliases=(torch.det,), methods=("det",))
def linalg_det(A):
    """the determinant of each matrix"""
    return prims.det(expect_tensor(A, "linalg.det"))


@symbol(torch.linalg.slogdet)
def linalg_slogdet(A):
    """(sign, logabsdet): the determinant's sign (or phase) and the log of its magnitude"""
    return _RETURN.linalg_slogdet(prims.slogdet(expect_tensor(A, "linalg.slogdet")))


@symbol(torch.slogdet, methods=("slogdet",))
def slogdet(input):
    """(sign, logabsdet) of each matrix, as torch.slogdet names them"""
    return _RETURN.slogdet(prims.slogdet(expect_tensor(input, "slogdet")))


@symbol(torch.logdet, methods=("logdet",))
def logdet(input):
    """log(det): NaN where a real determinant is negative; log(sign) + log|det| for complex"""
    sign, logabsdet = prims.slogdet(expect_tensor(input, "logdet"))
    if sign.dtype.is_complex:
        return prims.add(prims.log(sign), convert(logabsdet, sign.dtype))
    return prims.where(prims.eq(sign, -1.0), math.nan, logabsdet)


# --- inverses -------------------------------------------------------------------------------


@symbol(torch.linalg.inv, aliases=(torch.inverse,), methods=("inverse",), autocast=_CPU_FP32)
def linalg_inv(A):
    """the inverse of each matrix (a singular one is an error)"""
    return prims.inv(expect_tensor(A, "linalg.inv"))


@symbol(torch.linalg.inv_ex, autocast=_CPU_FP32)
def linalg_inv_ex(A, *, check_errors=False):
    """(inverse, info): LAPACK's status per matrix instead of an error"""
    return _RETURN.linalg_inv_ex(prims.inv_ex(expect_tensor(A, "linalg.inv_ex"), bool(check_errors)))


@symbol(torch.cholesky_inverse, methods=("cholesky_inverse",), autocast=_CPU_FP32)
def cholesky_inverse(L, upper=False):
    """the inverse of A = L L^H (U^H U when upper) from its Cholesky factor"""
    return prims.cholesky_inverse(expect_tensor(L, "cholesky_inverse"), bool(upper))


@symbol(torch.linalg.matrix_exp, aliases=(torch.matrix_exp,), methods=("matrix_exp",))
def linalg_matrix_exp(A):
    """the matrix exponential of each matrix"""
    A = expect_tensor(A, "linalg.matrix_exp")
    device = A.device.split(":", 1)[0]
    if A.dtype in (dtypes.float16, dtypes.bfloat16) and device in ("cpu", "cuda") and torch.is_autocast_enabled(device):
        # The kernel's own concatenations meet autocast: on CPU another half dtype than the
        # autocast one is refused there, on CUDA any (torch fails inside the kernel).
        if device == "cuda" or A.dtype != FROM_TORCH[torch.get_autocast_dtype(device)]:
            raise ShapeError(f"linalg.matrix_exp of a {A.dtype.name} matrix under this autocast fails in torch's own "
                             "kernel; convert it to float32 first")
    return prims.matrix_exp(A)


# --- linear solves --------------------------------------------------------------------------


def _operands(op: str, *tensors):
    return tuple(expect_tensor(t, op) for t in tensors)


@symbol(torch.linalg.solve, autocast=_CPU_FP32)
def linalg_solve(A, B, *, left=True):
    """X with A X = B (X A = B when not left); B may be a vector or a batch of them"""
    return prims.solve(*_operands("linalg.solve", A, B), bool(left))


@symbol(torch.linalg.solve_ex)
def linalg_solve_ex(A, B, *, left=True, check_errors=False):
    """(X, info): linalg.solve with LAPACK's status per matrix instead of an error"""
    A, B = _operands("linalg.solve_ex", A, B)
    return _RETURN.linalg_solve_ex(prims.solve_ex(A, B, bool(left), bool(check_errors)))


@symbol(torch.linalg.solve_triangular)
def linalg_solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with A X = B (X A = B when not left) for triangular A"""
    A, B = _operands("linalg.solve_triangular", A, B)
    return prims.solve_triangular(A, B, bool(upper), bool(left), bool(unitriangular))


@symbol(torch.triangular_solve, methods=("triangular_solve",), autocast=_CPU_FP32)
def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """(solution, cloned_coefficient): X with A X = b (A^T X = b when transpose)"""
    b, A = _operands("triangular_solve", b, A)
    return _RETURN.triangular_solve(prims.triangular_solve(b, A, bool(upper), bool(transpose), bool(unitriangular)))


@symbol(torch.cholesky_solve, methods=("cholesky_solve",), autocast=_CPU_FP32)
def cholesky_solve(B, L, upper=False):
    """X with A X = B, A given by its Cholesky factor"""
    B, L = _operands("cholesky_solve", B, L)
    return prims.cholesky_solve(B, L, bool(upper))


@symbol(torch.linalg.lu_solve)
def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """X with A X = B (X A = B when not left; A^H when adjoint), A given by linalg.lu_factor"""
    LU, pivots, B = _operands("linalg.lu_solve", LU, pivots, B)
    return prims.lu_solve(LU, pivots, B, bool(left), bool(adjoint))


@symbol(torch.lu_solve, methods=("lu_solve",), autocast=_CPU_FP32)
def lu_solve(b, LU_data, LU_pivots):
    """X with A X = b, A given by torch.lu"""
    b, LU_data, LU_pivots = _operands("lu_solve", b, LU_data, LU_pivots)
    return prims.lu_solve(LU_data, LU_pivots, b, True, False)


@symbol(torch.linalg.ldl_solve)
def linalg_ldl_solve(LD, pivots, B, *, hermitian=False):
    """X with A X = B, A given by linalg.ldl_factor"""
    LD, pivots, B = _operands("linalg.ldl_solve", LD, pivots, B)
    return prims.ldl_solve(LD, pivots, B, bool(hermitian))


@symbol(torch.linalg.lstsq, autocast=_CPU_FP32)
def linalg_lstsq(A, B, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values) of min |A X - B|, as the driver fills them"""
    A, B = _operands("linalg.lstsq", A, B)
    if autocast_reaches(A, "cpu") or autocast_reaches(B, "cpu"):
        raise ShapeError("linalg.lstsq under CPU autocast is not modelled: torch's autocast path computes it "
                         "differently from torch.linalg.lstsq; call it outside the autocast region")
    return _RETURN.linalg_lstsq(prims.lstsq(A, B, rcond, driver))


# --- pseudo-inverse, rank, condition --------------------------------------------------------------


def _pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    # torch's older form linalg.pinv(A, rcond): rcond is the relative tolerance.
    if rcond is not None:
        if atol is not None or rtol is not None:
            raise ShapeError("linalg.pinv takes rcond or atol/rtol, not both")
        rtol = rcond
    return linalg_pinv(A, atol=atol, rtol=rtol, hermitian=hermitian)


@symbol(torch.linalg.pinv, adapter=_pinv)
def linalg_pinv(A, *, atol=None, rtol=None, hermitian=False):
    """the pseudo-inverse of each matrix: singular values below max(atol, rtol * the
    largest) count as zero"""
    A = expect_tensor(A, "linalg.pinv")
    if autocast_reaches(A, "cpu", "cuda"):
        raise ShapeError("linalg.pinv under torch.autocast is not modelled: torch multiplies its factors with "
                         "autocast's lower-precision matmul; call it outside the autocast region or in float64")
    return prims.pinv(A, atol, rtol, bool(hermitian))


@symbol(torch.pinverse, methods=("pinverse",), autocast=_CPU_FP32)
def pinverse(input, rcond=1e-15):
    """the pseudo-inverse, singular values below rcond times the largest counting as zero"""
    input = expect_tensor(input, "pinverse")
    # CPU autocast computes it in float32 (the policy above); CUDA's has none, and reaches
    # the matmul inside linalg.pinv as for linalg.pinv itself.
    if autocast_reaches(input, "cuda"):
        raise ShapeError("pinverse under CUDA autocast is not modelled: torch multiplies its factors with "
                         "autocast's lower-precision matmul; call it outside the autocast region or in float64")
    return prims.pinv(input, 0.0, rcond, False)


def _matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    # torch's older form matrix_rank(A, tol): an absolute tolerance.
    if tol is not None:
        if atol is not None or rtol is not None:
            raise ShapeError("linalg.matrix_rank takes tol or atol/rtol, not both")
        if isinstance(tol, TensorValue):
            return OPAQUE  # torch pairs it with a zero tensor of tol's own dtype
        atol, rtol = tol, 0.0
    return linalg_matrix_rank(A, atol=atol, rtol=rtol, hermitian=hermitian)


@symbol(torch.linalg.matrix_rank, adapter=_matrix_rank, autocast=_CPU_FP32)
def linalg_matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """the number of singular values above max(atol, rtol * the largest)"""
    return prims.matrix_rank(expect_tensor(A, "linalg.matrix_rank"), atol, rtol, bool(hermitian))


@symbol(torch.linalg.cond, autocast=_CPU_FP32)
def linalg_cond(A, p=None):
    """the condition number of each matrix in the norm p (the 2-norm by default)"""
    return prims.cond(expect_tensor(A, "linalg.cond"), p)


# --- tensor equations ---------------------------------------------------------------------------


@symbol(torch.linalg.tensorinv, autocast=_CPU_FP32)
def linalg_tensorinv(A, ind=2):
    """the tensor inverse: A as a matrix of its first ind dimensions by the rest, inverted,
    in shape A.shape[ind:] + A.shape[:ind]"""
    A = expect_tensor(A, "linalg.tensorinv")
    if isinstance(ind, bool) or not isinstance(ind, int) or not 0 < ind <= A.ndim:
        raise ShapeError(f"linalg.tensorinv expects 0 < ind <= {A.ndim}, got {ind!r}")
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise ShapeError(f"linalg.tensorinv: prod(A.shape[ind:]) = {cols} must equal prod(A.shape[:ind]) = {rows}")
    inverse = linalg_inv(prims.reshape(A, (rows, rows)))
    return prims.reshape(inverse, A.shape[ind:] + A.shape[:ind])


@symbol(torch.linalg.tensorsolve, autocast=_CPU_FP32)
def linalg_tensorsolve(A, B, dims=None):
    """X with tensordot(A, X, X.ndim) = B: dims of A moved last, then a linear solve"""
    A, B = _operands("linalg.tensorsolve", A, B)
    if dims is not None:
        moved = [canonical_dim(d, A.ndim) for d in dims]
        if len(set(moved)) != len(moved):
            raise ShapeError(f"linalg.tensorsolve: a dimension repeats in dims {list(dims)}")
        order = tuple(i for i in range(A.ndim) if i not in moved) + tuple(moved)
        if order != tuple(range(A.ndim)):
            A = prims.transpose(A, order)
    if B.ndim > A.ndim:
        raise ShapeError(f"linalg.tensorsolve: B {list(B.shape)} has more dimensions than A {list(A.shape)}")
    result_shape = A.shape[B.ndim :]
    size = math.prod(result_shape)
    if size != math.prod(B.shape) or math.prod(A.shape[: B.ndim]) != size:
        raise ShapeError(f"linalg.tensorsolve: A {list(A.shape)} is no square system for B {list(B.shape)}")
    flat_b = B if B.ndim == 1 else prims.reshape(B, (size,))
    solution = linalg_solve(prims.reshape(A, (size, size)), flat_b)
    return prims.reshape(solution, result_shape) if result_shape != solution.shape else solution
