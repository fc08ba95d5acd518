"""Matrix factorizations: Cholesky (linalg.cholesky, cholesky_ex, torch.cholesky), LU
(linalg.lu, lu_factor, lu_factor_ex, torch.lu, lu_unpack), QR (linalg.qr, torch.qr,
geqrf, ormqr, householder_product / orgqr), SVD (linalg.svd, svdvals, torch.svd),
eigendecompositions (linalg.eig, eigvals, eigh, eigvalsh) and LDL (linalg.ldl_factor,
ldl_factor_ex).

Each is a prim (linalg_decompositions.py among the prims says why), returned in torch's
named tuple (`torch.return_types.linalg_svd`, ...) so `.U`, `.S`, `.Vh` read as in
eager. torch.svd is linalg.svd with V = Vh transposed, or zero matrices for U and V when
compute_uv is False. CPU autocast computes the factorizations torch lists in float32
(Cholesky, QR, SVD, the eigendecompositions, torch.lu); LU, LDL and lu_unpack run as they
are, and CUDA autocast touches none.
"""

# Parameters keep torch's names (`input`, `A`, `UPLO`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002, N803

from __future__ import annotations

import torch

from tracecli.core.values import TensorValue
from tracecli.ops import prims
from tracecli.ops.autocast import Autocast, Policy
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import expect_tensor, symbol
from tracecli.ops.promotion import ShapeError

_CPU_FP32 = Autocast(cpu=Policy.FP32)
_RETURN = torch.return_types

# --- Cholesky ---------------------------------------------------------------------------------


@symbol(torch.linalg.cholesky, autocast=_CPU_FP32)
def linalg_cholesky(A, *, upper=False):
    """L with A = L L^H (U with A = U^H U when upper); A not positive-definite is an error"""
    return prims.cholesky(expect_tensor(A, "linalg.cholesky"), bool(upper))


@symbol(torch.cholesky, methods=("cholesky",), autocast=_CPU_FP32)
def cholesky(input, upper=False):
    """the Cholesky factor, lower or upper"""
    return prims.cholesky(expect_tensor(input, "cholesky"), bool(upper))


@symbol(torch.linalg.cholesky_ex, autocast=_CPU_FP32)
def linalg_cholesky_ex(A, *, upper=False, check_errors=False):
    """(L, info): the Cholesky factor with LAPACK's status per matrix instead of an error"""
    A = expect_tensor(A, "linalg.cholesky_ex")
    return _RETURN.linalg_cholesky_ex(prims.cholesky_ex(A, bool(upper), bool(check_errors)))


# --- LU ---------------------------------------------------------------------------------------


@symbol(torch.linalg.lu)
def linalg_lu(A, *, pivot=True):
    """(P, L, U) with A = P L U"""
    return _RETURN.linalg_lu(prims.lu(expect_tensor(A, "linalg.lu"), bool(pivot)))


@symbol(torch.linalg.lu_factor)
def linalg_lu_factor(A, *, pivot=True):
    """(LU, pivots): L and U packed in one matrix; a singular matrix is an error"""
    LU, pivots, _ = prims.lu_factor_ex(expect_tensor(A, "linalg.lu_factor"), bool(pivot), True)
    return _RETURN.linalg_lu_factor((LU, pivots))


@symbol(torch.linalg.lu_factor_ex)
def linalg_lu_factor_ex(A, *, pivot=True, check_errors=False):
    """(LU, pivots, info): linalg.lu_factor with LAPACK's status per matrix"""
    A = expect_tensor(A, "linalg.lu_factor_ex")
    return _RETURN.linalg_lu_factor_ex(prims.lu_factor_ex(A, bool(pivot), bool(check_errors)))


@symbol(torch.lu, methods=("lu",), autocast=_CPU_FP32)
def lu(A, pivot=True, get_infos=False):
    """(LU, pivots), and LAPACK's info with get_infos: torch's older linalg.lu_factor"""
    LU, pivots, infos = prims.lu_factor_ex(expect_tensor(A, "lu"), bool(pivot), False)
    return _RETURN._lu_with_info((LU, pivots, infos)) if get_infos else (LU, pivots)


@symbol(torch.lu_unpack)
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) from linalg.lu_factor's packed LU and pivots (empty where not unpacked)"""
    LU_data, LU_pivots = expect_tensor(LU_data, "lu_unpack"), expect_tensor(LU_pivots, "lu_unpack")
    return _RETURN.lu_unpack(prims.lu_unpack(LU_data, LU_pivots, bool(unpack_data), bool(unpack_pivots)))


# --- QR ---------------------------------------------------------------------------------------


@symbol(torch.linalg.qr, autocast=_CPU_FP32)
def linalg_qr(A, mode="reduced"):
    """(Q, R) with A = Q R: reduced, complete, or R alone (mode 'r', Q empty)"""
    return _RETURN.linalg_qr(prims.qr(expect_tensor(A, "linalg.qr"), mode))


@symbol(torch.qr, methods=("qr",), autocast=_CPU_FP32)
def qr(input, some=True):
    """(Q, R), reduced when some, else complete"""
    return _RETURN.qr(prims.qr(expect_tensor(input, "qr"), "reduced" if some else "complete"))


@symbol(torch.geqrf, methods=("geqrf",), autocast=_CPU_FP32)
def geqrf(input):
    """(a, tau): QR as Householder reflectors, as LAPACK's geqrf packs it"""
    return _RETURN.geqrf(prims.geqrf(expect_tensor(input, "geqrf")))


@symbol(torch.ormqr, methods=("ormqr",), autocast=_CPU_FP32)
def ormqr(input, tau, other, left=True, transpose=False):
    """other multiplied by the Q of geqrf's reflectors (Q^H when transpose), from the left or right"""
    input, tau, other = (expect_tensor(t, "ormqr") for t in (input, tau, other))
    return prims.ormqr(input, tau, other, bool(left), bool(transpose))


@symbol(torch.linalg.householder_product, aliases=(torch.orgqr,), methods=("orgqr",), autocast=_CPU_FP32)
def linalg_householder_product(A, tau):
    """the first columns of the product of the Householder reflectors in A and tau"""
    A, tau = expect_tensor(A, "linalg.householder_product"), expect_tensor(tau, "linalg.householder_product")
    return prims.householder_product(A, tau)


# --- SVD --------------------------------------------------------------------------------------


@symbol(torch.linalg.svd, autocast=_CPU_FP32)
def linalg_svd(A, full_matrices=True, *, driver=None):
    """(U, S, Vh) with A = U diag(S) Vh, singular values descending"""
    return _RETURN.linalg_svd(prims.svd(expect_tensor(A, "linalg.svd"), bool(full_matrices), driver))


@symbol(torch.linalg.svdvals, autocast=_CPU_FP32)
def linalg_svdvals(A, *, driver=None):
    """the singular values of each matrix, descending"""
    return prims.svdvals(expect_tensor(A, "linalg.svdvals"), driver)


def _svd(input, some=True, compute_uv=True):
    # V = Vh^H: for complex matrices a conjugation, which no prim here does.
    if compute_uv and isinstance(input, TensorValue) and input.dtype.is_complex:
        return OPAQUE
    return svd(input, some, compute_uv)


@symbol(torch.svd, methods=("svd",), adapter=_svd, autocast=_CPU_FP32)
def svd(input, some=True, compute_uv=True):
    """(U, S, V) with input = U diag(S) V^T; U and V zero matrices when not compute_uv"""
    input = expect_tensor(input, "svd")
    if not compute_uv:
        S = prims.svdvals(input, None)
        batch, (m, n) = input.shape[:-2], input.shape[-2:]
        U = prims.full(batch + (m, m), 0, device=input.device, dtype=input.dtype)
        V = prims.full(batch + (n, n), 0, device=input.device, dtype=input.dtype)
        return _RETURN.svd((U, S, V))
    if input.dtype.is_complex:
        raise ShapeError("torch.svd of complex matrices is not modelled (V conjugates Vh)")
    U, S, Vh = prims.svd(input, not some, None)
    order = tuple(range(Vh.ndim - 2)) + (Vh.ndim - 1, Vh.ndim - 2)
    return _RETURN.svd((U, S, prims.transpose(Vh, order)))


# --- eigendecompositions ----------------------------------------------------------------------


@symbol(torch.linalg.eig, autocast=_CPU_FP32)
def linalg_eig(A):
    """(eigenvalues, eigenvectors), complex even for a real matrix"""
    return _RETURN.linalg_eig(prims.eig(expect_tensor(A, "linalg.eig")))


@symbol(torch.linalg.eigvals, autocast=_CPU_FP32)
def linalg_eigvals(A):
    """the eigenvalues of each matrix, complex"""
    return prims.eigvals(expect_tensor(A, "linalg.eigvals"))


@symbol(torch.linalg.eigh, autocast=_CPU_FP32)
def linalg_eigh(A, UPLO="L"):
    """(eigenvalues, eigenvectors) of Hermitian matrices: eigenvalues real, ascending"""
    return _RETURN.linalg_eigh(prims.eigh(expect_tensor(A, "linalg.eigh"), UPLO))


@symbol(torch.linalg.eigvalsh, autocast=_CPU_FP32)
def linalg_eigvalsh(A, UPLO="L"):
    """the eigenvalues of Hermitian matrices: real, ascending"""
    return prims.eigvalsh(expect_tensor(A, "linalg.eigvalsh"), UPLO)


# --- LDL --------------------------------------------------------------------------------------


@symbol(torch.linalg.ldl_factor)
def linalg_ldl_factor(A, *, hermitian=False):
    """(LD, pivots): the LDL factorization of symmetric (Hermitian) matrices, packed"""
    LD, pivots, _ = prims.ldl_factor_ex(expect_tensor(A, "linalg.ldl_factor"), bool(hermitian), True)
    return _RETURN.linalg_ldl_factor((LD, pivots))


@symbol(torch.linalg.ldl_factor_ex)
def linalg_ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """(LD, pivots, info): linalg.ldl_factor with LAPACK's status per matrix"""
    A = expect_tensor(A, "linalg.ldl_factor_ex")
    return _RETURN.linalg_ldl_factor_ex(prims.ldl_factor_ex(A, bool(hermitian), bool(check_errors)))
