"""Prims of the matrix factorizations: Cholesky, LU (and its unpacking), QR (and the
Householder reflectors behind it), SVD, eigendecompositions, LDL.

As with the solvers (linalg_solvers.py), each is torch's own function: a factorization is
not unique (the signs of eigenvectors and singular vectors, the order of pivots), and only
torch's kernel on the same device gives eager's choice. The meta rules give the shapes of
every factor, the real dtype of singular values and Hermitian eigenvalues, the complex
dtype of a general matrix's eigenvalues, int32 for pivots and LAPACK's info, and the empty
tensors torch returns for the factors a mode does not compute.
"""

from __future__ import annotations

import torch

from tracecli.core import dtypes
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import prim
from tracecli.ops.prims.linalg import check_matrix, check_operands, check_square, complex_dtype, on_cuda, real_dtype
from tracecli.ops.promotion import ShapeError

_INT32 = dtypes.int32  # pivots and LAPACK's info


def _empty(like: TensorValue, dtype=None) -> TensorType:
    """The 0-element 1-D tensor torch returns for a factor it was asked not to compute."""
    return TensorType((0,), dtype or like.dtype, like.device)


def _matrices(name: str, A: TensorValue) -> tuple:
    """(batch, rows, columns, min(rows, columns)) of a batch of matrices LAPACK takes."""
    check_operands(name, A)
    check_matrix(name, A)
    m, n = A.shape[-2:]
    return A.shape[:-2], m, n, min(m, n)


# --- Cholesky -----------------------------------------------------------------------------


def _cholesky_meta(A: TensorValue, upper: bool) -> TensorType:
    check_operands("linalg.cholesky", A)
    check_square("linalg.cholesky", A)
    return A.type


def _cholesky_ex_meta(A: TensorValue, upper: bool, check_errors: bool) -> tuple[TensorType, TensorType]:
    check_operands("linalg.cholesky_ex", A)
    check_square("linalg.cholesky_ex", A)
    return A.type, TensorType(A.shape[:-2], _INT32, A.device)


cholesky = prim("cholesky", _cholesky_meta, lambda A, upper: torch.linalg.cholesky(A, upper=upper),
                doc="the Cholesky factor of each matrix; one not positive-definite is an error")
cholesky_ex = prim("cholesky_ex", _cholesky_ex_meta,
                   lambda A, upper, check_errors: tuple(torch.linalg.cholesky_ex(A, upper=upper,
                                                                                check_errors=check_errors)),
                   doc="(Cholesky factor, LAPACK's info) of each matrix")

# --- LU -------------------------------------------------------------------------------------


def _check_pivoting(name: str, A: TensorValue, pivot: bool) -> None:
    if not pivot and not on_cuda(A):
        raise ShapeError(f"{name}: LU without pivoting is not implemented on the CPU")


def _lu_meta(A: TensorValue, pivot: bool) -> tuple[TensorType, TensorType, TensorType]:
    batch, m, n, k = _matrices("linalg.lu", A)
    _check_pivoting("linalg.lu", A, pivot)
    P = TensorType(batch + (m, m), A.dtype, A.device) if pivot else _empty(A)
    return P, TensorType(batch + (m, k), A.dtype, A.device), TensorType(batch + (k, n), A.dtype, A.device)


def _lu_factor_ex_meta(A: TensorValue, pivot: bool, check_errors: bool) -> tuple[TensorType, TensorType, TensorType]:
    batch, _, _, k = _matrices("linalg.lu_factor", A)
    _check_pivoting("linalg.lu_factor", A, pivot)
    return A.type, TensorType(batch + (k,), _INT32, A.device), TensorType(batch, _INT32, A.device)


def _lu_unpack_meta(LU: TensorValue, pivots: TensorValue, unpack_data: bool,
                    unpack_pivots: bool) -> tuple[TensorType, TensorType, TensorType]:
    batch, m, n, k = _matrices("lu_unpack", LU)
    if pivots.dtype != _INT32 or pivots.shape != batch + (k,) or pivots.device != LU.device:
        raise ShapeError(f"lu_unpack: pivots must be int32 of shape {list(batch + (k,))}, got {pivots.dtype.name} "
                         f"{list(pivots.shape)}")
    P = TensorType(batch + (m, m), LU.dtype, LU.device) if unpack_pivots else _empty(LU)
    if not unpack_data:
        return P, _empty(LU), _empty(LU)
    return P, TensorType(batch + (m, k), LU.dtype, LU.device), TensorType(batch + (k, n), LU.dtype, LU.device)


lu = prim("lu", _lu_meta, lambda A, pivot: tuple(torch.linalg.lu(A, pivot=pivot)), doc="(P, L, U) with A = PLU")
lu_factor_ex = prim(
    "lu_factor_ex", _lu_factor_ex_meta,
    lambda A, pivot, check_errors: tuple(torch.linalg.lu_factor_ex(A, pivot=pivot, check_errors=check_errors)),
    doc="(LU, pivots, LAPACK's info): L and U packed in one matrix",
)
lu_unpack = prim(
    "lu_unpack", _lu_unpack_meta,
    lambda LU, pivots, unpack_data, unpack_pivots: tuple(torch.lu_unpack(LU, pivots, unpack_data, unpack_pivots)),
    doc="(P, L, U) from a packed LU factorization",
)

# --- QR and Householder reflectors -------------------------------------------------------------

_QR_MODES = ("reduced", "complete", "r")


def _qr_meta(A: TensorValue, mode: str) -> tuple[TensorType, TensorType]:
    batch, m, n, k = _matrices("linalg.qr", A)
    if mode not in _QR_MODES:
        raise ShapeError(f"linalg.qr: mode {mode!r} is not one of 'reduced', 'complete', 'r'")
    if mode == "r":
        return _empty(A), TensorType(batch + (k, n), A.dtype, A.device)
    rows = m if mode == "complete" else k
    return TensorType(batch + (m, rows), A.dtype, A.device), TensorType(batch + (rows, n), A.dtype, A.device)


def _geqrf_meta(A: TensorValue) -> tuple[TensorType, TensorType]:
    batch, _, _, k = _matrices("geqrf", A)
    return A.type, TensorType(batch + (k,), A.dtype, A.device)


def _reflectors(name: str, A: TensorValue, tau: TensorValue) -> None:
    check_operands(name, A, tau)
    check_matrix(name, A)
    if tau.ndim != A.ndim - 1 or tau.shape[:-1] != A.shape[:-2] or tau.shape[-1] > A.shape[-1]:
        raise ShapeError(f"{name}: tau of shape {list(tau.shape)} does not fit reflectors of shape {list(A.shape)}")


def _householder_product_meta(A: TensorValue, tau: TensorValue) -> TensorType:
    _reflectors("linalg.householder_product", A, tau)
    if A.shape[-2] < A.shape[-1]:
        raise ShapeError(f"linalg.householder_product: A must have at least as many rows as columns, got "
                         f"{list(A.shape)}")
    return A.type


def _ormqr_meta(A: TensorValue, tau: TensorValue, C: TensorValue, left: bool, transpose: bool) -> TensorType:
    _reflectors("ormqr", A, tau)
    check_operands("ormqr", A, C)
    if C.ndim != A.ndim or C.shape[:-2] != A.shape[:-2] or C.shape[-2 if left else -1] != A.shape[-2]:
        raise ShapeError(f"ormqr: other of shape {list(C.shape)} does not fit reflectors of shape {list(A.shape)}")
    return C.type


qr = prim("qr", _qr_meta, lambda A, mode: tuple(torch.linalg.qr(A, mode)), doc="(Q, R) with A = QR")
geqrf = prim("geqrf", _geqrf_meta, lambda A: tuple(torch.geqrf(A)),
             doc="(reflectors, tau): QR as LAPACK's geqrf packs it")
householder_product = prim("householder_product", _householder_product_meta, torch.linalg.householder_product,
                           doc="the first columns of the product of Householder reflectors")
ormqr = prim("ormqr", _ormqr_meta, torch.ormqr, doc="C multiplied by the Q of Householder reflectors")

# --- SVD ----------------------------------------------------------------------------------------

_SVD_DRIVERS = ("gesvd", "gesvdj", "gesvda")


def _check_svd_driver(A: TensorValue, driver) -> None:
    # cuSOLVER's choice of algorithm: torch refuses `driver=` elsewhere.
    if driver is not None and (not on_cuda(A) or driver not in _SVD_DRIVERS):
        raise ShapeError(f"linalg.svd: driver={driver!r} is only taken on CUDA, one of {', '.join(_SVD_DRIVERS)}")


def _svd_meta(A: TensorValue, full_matrices: bool, driver) -> tuple[TensorType, TensorType, TensorType]:
    batch, m, n, k = _matrices("linalg.svd", A)
    _check_svd_driver(A, driver)
    U = TensorType(batch + (m, m if full_matrices else k), A.dtype, A.device)
    Vh = TensorType(batch + (n if full_matrices else k, n), A.dtype, A.device)
    return U, TensorType(batch + (k,), real_dtype(A.dtype), A.device), Vh


def _svdvals_meta(A: TensorValue, driver) -> TensorType:
    batch, _, _, k = _matrices("linalg.svdvals", A)
    _check_svd_driver(A, driver)
    return TensorType(batch + (k,), real_dtype(A.dtype), A.device)


svd = prim("svd", _svd_meta,
           lambda A, full_matrices, driver: tuple(torch.linalg.svd(A, full_matrices, driver=driver)),
           doc="(U, S, Vh) with A = U diag(S) Vh")
svdvals = prim("svdvals", _svdvals_meta, lambda A, driver: torch.linalg.svdvals(A, driver=driver),
               doc="the singular values of each matrix, in descending order")

# --- eigendecompositions --------------------------------------------------------------------------


def _eig_meta(A: TensorValue) -> tuple[TensorType, TensorType]:
    check_operands("linalg.eig", A)
    check_square("linalg.eig", A)
    dtype = complex_dtype(A.dtype)  # a real matrix may have complex eigenvalues
    return TensorType(A.shape[:-1], dtype, A.device), TensorType(A.shape, dtype, A.device)


def _eigvals_meta(A: TensorValue) -> TensorType:
    return _eig_meta(A)[0]


def _check_uplo(UPLO) -> None:
    if not isinstance(UPLO, str) or UPLO.upper() not in ("L", "U"):
        raise ShapeError(f"linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}")


def _eigh_meta(A: TensorValue, UPLO: str) -> tuple[TensorType, TensorType]:  # noqa: N803 - torch's name
    check_operands("linalg.eigh", A)
    check_square("linalg.eigh", A)
    _check_uplo(UPLO)
    return TensorType(A.shape[:-1], real_dtype(A.dtype), A.device), A.type


def _eigvalsh_meta(A: TensorValue, UPLO: str) -> TensorType:  # noqa: N803 - torch's name
    return _eigh_meta(A, UPLO)[0]


eig = prim("eig", _eig_meta, lambda A: tuple(torch.linalg.eig(A)), doc="(eigenvalues, eigenvectors), complex")
eigvals = prim("eigvals", _eigvals_meta, torch.linalg.eigvals, doc="the eigenvalues of each matrix, complex")
eigh = prim("eigh", _eigh_meta, lambda A, UPLO: tuple(torch.linalg.eigh(A, UPLO)),  # noqa: N803
            doc="(eigenvalues, eigenvectors) of each Hermitian matrix, eigenvalues ascending")
eigvalsh = prim("eigvalsh", _eigvalsh_meta, lambda A, UPLO: torch.linalg.eigvalsh(A, UPLO),  # noqa: N803
                doc="the eigenvalues of each Hermitian matrix, ascending")

# --- LDL ------------------------------------------------------------------------------------------


def _ldl_factor_ex_meta(A: TensorValue, hermitian: bool,
                        check_errors: bool) -> tuple[TensorType, TensorType, TensorType]:
    check_operands("linalg.ldl_factor", A)
    check_square("linalg.ldl_factor", A)
    return A.type, TensorType(A.shape[:-1], _INT32, A.device), TensorType(A.shape[:-2], _INT32, A.device)


ldl_factor_ex = prim(
    "ldl_factor_ex", _ldl_factor_ex_meta,
    lambda A, hermitian, check_errors: tuple(torch.linalg.ldl_factor_ex(A, hermitian=hermitian,
                                                                        check_errors=check_errors)),
    doc="(LD, pivots, LAPACK's info): the LDL factorization as LAPACK's sytrf packs it",
)
