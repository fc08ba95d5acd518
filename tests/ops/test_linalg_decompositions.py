"""The matrix factorizations: Cholesky, LU (and lu_unpack), QR (geqrf, ormqr,
householder_product), SVD (torch.svd too), eigendecompositions and LDL; their prims'
meta rules against torch's kernels; the named tuples; what stays a torch call (torch.svd
of complex matrices) and what eager refuses."""

from __future__ import annotations

import pytest
import torch

from tests.ops.harness import (
    Case,
    T,
    case_adder,
    check_case,
    check_meta_matches_impl,
    check_stays_torch_call,
    refusal_tests,
    rows_by_id,
)
from tracecli.frontend.tracer import trace_callable
from tracecli.ops import prims

CASES: list[Case] = []
case = case_adder(CASES)


def _spd(a):
    """A positive-definite matrix from a random one (almost surely)."""
    return a @ a.mT


# --- Cholesky ------------------------------------------------------------------------------------------

for _dtype in ("f32", "f64"):
    case("linalg_cholesky", "fn", lambda a: torch.linalg.cholesky(_spd(a)), T(_dtype, (2, 3, 3)))
case("linalg_cholesky", "complex", lambda a: torch.linalg.cholesky(_spd(a).to(torch.complex64)), T("f32", (3, 3)))
case("linalg_cholesky", "upper", lambda a: torch.linalg.cholesky(_spd(a), upper=True), T("f32", (4, 4)))
case("linalg_cholesky", "empty", torch.linalg.cholesky, T("f32", (0, 0)))
case("cholesky", "fn", lambda a: torch.cholesky(_spd(a), True), T("f64", (3, 3)))
case("cholesky", "method", lambda a: _spd(a).cholesky(), T("f32", (2, 3, 3)))
case("linalg_cholesky_ex", "fn", lambda a: torch.linalg.cholesky_ex(_spd(a)), T("f32", (2, 3, 3)))
case("linalg_cholesky_ex", "fields", lambda a: torch.linalg.cholesky_ex(_spd(a), upper=True, check_errors=True).L,
     T("f64", (3, 3)))

# --- LU -----------------------------------------------------------------------------------------------------

for _shape in ((2, 3, 5), (2, 5, 3)):
    case("linalg_lu", "fn", torch.linalg.lu, T("f32", _shape))
    case("linalg_lu_factor", "fn", torch.linalg.lu_factor, T("f32", _shape))
    case("linalg_lu_factor_ex", "fn", torch.linalg.lu_factor_ex, T("f64", _shape))
    case(("lu_unpack", "linalg_lu_factor"), "fn", lambda a: torch.lu_unpack(*torch.linalg.lu_factor(a)), T("f64", _shape))
case("linalg_lu", "complex", lambda a: torch.linalg.lu(a).U, T("c64", (3, 3)))
case("linalg_lu_factor_ex", "fields", lambda a: torch.linalg.lu_factor_ex(a, check_errors=True).pivots, T("f32", (3, 3)))
case("lu", "fn", torch.lu, T("f32", (2, 3, 3)))
case("lu", "infos", lambda a: torch.lu(a, get_infos=True), T("f32", (4, 3)))
case("lu", "method", lambda a: a.lu()[0], T("f64", (3, 3)))
for _data, _pivots in ((False, True), (True, False), (False, False)):
    case(("lu_unpack", "linalg_lu_factor"), f"data-{_data}-pivots-{_pivots}",
         lambda a, d=_data, p=_pivots: torch.lu_unpack(*torch.linalg.lu_factor(a), unpack_data=d, unpack_pivots=p),
         T("f32", (2, 3, 3)))

# --- QR ------------------------------------------------------------------------------------------------------

for _mode in ("reduced", "complete", "r"):
    for _shape in ((5, 3), (2, 3, 5)):
        case("linalg_qr", _mode, lambda a, m=_mode: torch.linalg.qr(a, m), T("f32", _shape))
case("linalg_qr", "complex", lambda a: torch.linalg.qr(a).Q, T("c64", (3, 2)))
case("linalg_qr", "empty", torch.linalg.qr, T("f32", (3, 0)))
case("qr", "fn", torch.qr, T("f64", (4, 3)))
case("qr", "complete", lambda a: torch.qr(a, some=False), T("f32", (4, 3)))
case("qr", "method", lambda a: a.qr().R, T("f32", (2, 3, 4)))
for _shape in ((5, 3), (2, 3, 5)):
    case("geqrf", "fn", torch.geqrf, T("f32", _shape))
case("geqrf", "method", lambda a: a.geqrf().tau, T("f64", (4, 4)))
for _left in (True, False):
    for _transpose in (True, False):
        case(("ormqr", "geqrf"), f"left-{_left}-transpose-{_transpose}",
             lambda a, c, s=_left, t=_transpose: torch.ormqr(*torch.geqrf(a), c, left=s, transpose=t),
             T("f32", (2, 4, 3)), T("f32", (2, 4, 4)))
case(("ormqr", "geqrf"), "method", lambda a, c: a.ormqr(torch.geqrf(a).tau, c), T("f64", (4, 3)), T("f64", (4, 2)))
case(("linalg_householder_product", "geqrf"), "fn", lambda a: torch.linalg.householder_product(*torch.geqrf(a)),
     T("f32", (2, 5, 3)))
case("linalg_householder_product", "fewer-reflectors", torch.linalg.householder_product, T("f64", (4, 3)),
     T("f64", (2,)))
case("linalg_householder_product", "orgqr", torch.orgqr, T("f32", (4, 3)), T("f32", (3,)))
case("linalg_householder_product", "method", lambda a, t: a.orgqr(t), T("f32", (2, 4, 2)), T("f32", (2, 2)))

# --- SVD -------------------------------------------------------------------------------------------------------

for _full in (True, False):
    for _shape in ((2, 5, 3), (3, 5)):
        case("linalg_svd", f"full-{_full}", lambda a, f=_full: torch.linalg.svd(a, full_matrices=f), T("f32", _shape))
case("linalg_svd", "complex", lambda a: torch.linalg.svd(a, full_matrices=False), T("c64", (3, 2)))
case("linalg_svd", "fields", lambda a: torch.linalg.svd(a).S, T("f64", (4, 3)))
case("linalg_svd", "empty", torch.linalg.svd, T("f32", (0, 0)))
for _dtype in ("f32", "f64", "c64"):
    case("linalg_svdvals", "fn", torch.linalg.svdvals, T(_dtype, (2, 4, 3)))
for _some in (True, False):
    case("svd", f"some-{_some}", lambda a, s=_some: torch.svd(a, some=s), T("f32", (2, 5, 3)))
case("svd", "no-uv", lambda a: torch.svd(a, compute_uv=False), T("f64", (4, 3)))
case("svd", "no-uv-complex", lambda a: torch.svd(a, compute_uv=False), T("c64", (2, 3)))
case("svd", "method", lambda a: a.svd().V, T("f32", (3, 4)))

# --- eigendecompositions --------------------------------------------------------------------------------------

for _dtype in ("f32", "f64", "c64"):
    case("linalg_eig", "fn", torch.linalg.eig, T(_dtype, (2, 3, 3)))
    case("linalg_eigvals", "fn", torch.linalg.eigvals, T(_dtype, (3, 3)))
    case("linalg_eigh", "fn", torch.linalg.eigh, T(_dtype, (2, 3, 3)))
    case("linalg_eigvalsh", "fn", torch.linalg.eigvalsh, T(_dtype, (3, 3)))
case("linalg_eig", "fields", lambda a: torch.linalg.eig(a).eigenvectors, T("f32", (4, 4)))
case("linalg_eig", "empty", torch.linalg.eig, T("f32", (0, 0)))
for _uplo in ("U", "l"):
    case("linalg_eigh", _uplo, lambda a, u=_uplo: torch.linalg.eigh(a, UPLO=u).eigenvalues, T("f32", (3, 3)))
    case("linalg_eigvalsh", _uplo, lambda a, u=_uplo: torch.linalg.eigvalsh(a, u), T("f64", (2, 3, 3)))

# --- LDL -------------------------------------------------------------------------------------------------------

for _hermitian in (False, True):
    case("linalg_ldl_factor", f"hermitian-{_hermitian}", lambda a, h=_hermitian: torch.linalg.ldl_factor(_spd(a), hermitian=h),
         T("f64", (2, 3, 3)))
    case("linalg_ldl_factor_ex", f"hermitian-{_hermitian}",
         lambda a, h=_hermitian: torch.linalg.ldl_factor_ex(_spd(a), hermitian=h), T("f64", (3, 3)))
case("linalg_ldl_factor", "complex", lambda a: torch.linalg.ldl_factor(_spd(a)).LD, T("c64", (3, 3)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


def test_results_are_torchs_named_tuples():
    def f(a):
        results = {
            "linalg_cholesky_ex": torch.linalg.cholesky_ex(a), "linalg_lu": torch.linalg.lu(a),
            "linalg_lu_factor": torch.linalg.lu_factor(a), "linalg_lu_factor_ex": torch.linalg.lu_factor_ex(a),
            "_lu_with_info": torch.lu(a, get_infos=True), "linalg_qr": torch.linalg.qr(a), "qr": torch.qr(a),
            "geqrf": torch.geqrf(a), "linalg_svd": torch.linalg.svd(a), "svd": torch.svd(a),
            "linalg_eig": torch.linalg.eig(a), "linalg_eigh": torch.linalg.eigh(a),
            "linalg_ldl_factor": torch.linalg.ldl_factor(a), "linalg_ldl_factor_ex": torch.linalg.ldl_factor_ex(a),
            "lu_unpack": torch.lu_unpack(*torch.linalg.lu_factor(a)),
        }
        for name, result in results.items():
            assert type(result) is getattr(torch.return_types, name), (type(result), name)
        assert type(torch.lu(a)) is tuple
        return results["linalg_svd"].Vh, results["linalg_eigh"].eigenvectors, results["lu_unpack"].P

    trace_callable(f, (torch.randn(3, 3),), name="fn")


OPAQUE_FORMS = (
    ("svd-complex", torch.svd, T("c64", (3, 2)), "torch.svd"),
)


@pytest.mark.parametrize(("fn", "arg", "opaque"), rows_by_id(OPAQUE_FORMS))
def test_unmodelled_forms_stay_torch_calls(fn, arg, opaque):
    check_stays_torch_call(fn, (arg,), opaque)


# --- the prims' meta rules against torch's kernels -------------------------------------------------------------



def _matrices(*shape, dtype=torch.float64):
    return torch.rand(shape, dtype=dtype) + shape[-1] * torch.eye(shape[-1], dtype=dtype)


def _rand(*shape, dtype=torch.float64):
    return torch.rand(shape, dtype=dtype)


_c = torch.complex128
META = {
    "cholesky": [(_matrices(2, 3, 3), True), (_matrices(0, 3, 3, dtype=_c), False)],
    "cholesky_ex": [(_matrices(2, 3, 3), False, False)],
    "lu": [(_rand(2, 3, 5), True), (_rand(5, 3, dtype=_c), True)],
    "lu_factor_ex": [(_rand(2, 5, 3), True, False), (_rand(3, 5), True, True)],
    "lu_unpack": [(*torch.linalg.lu_factor(_rand(2, 5, 3)), d, p) for d in (True, False) for p in (True, False)],
    "qr": [(_rand(*s), m) for s in ((2, 5, 3), (3, 5), (0, 2)) for m in ("reduced", "complete", "r")],
    "geqrf": [(_rand(2, 5, 3),), (_rand(3, 5, dtype=_c),)],
    "ormqr": [(*torch.geqrf(_rand(2, 5, 3)), _rand(2, 5, 4), True, False),
              (*torch.geqrf(_rand(2, 5, 3)), _rand(2, 4, 5), False, True)],
    "householder_product": [(_rand(2, 5, 3), _rand(2, 2)), (_rand(4, 4, dtype=_c), _rand(4, dtype=_c))],
    "svd": [(_rand(*s, dtype=d), f, None) for s in ((2, 5, 3), (3, 5)) for f in (True, False) for d in (torch.float64, _c)],
    "svdvals": [(_rand(2, 3, 5, dtype=_c), None)],
    "eig": [(_rand(2, 3, 3),), (_rand(3, 3, dtype=torch.float32),), (_rand(3, 3, dtype=_c),)],
    "eigvals": [(_rand(2, 3, 3, dtype=torch.float32),)],
    "eigh": [(_rand(2, 3, 3, dtype=_c), "U"), (_rand(3, 3), "L")],
    "eigvalsh": [(_rand(2, 3, 3, dtype=_c), "L")],
    "ldl_factor_ex": [(_matrices(2, 3, 3), False, False), (_matrices(3, 3, dtype=_c), True, False)],
}


@pytest.mark.parametrize("name", sorted(META))
def test_factorization_meta_matches_impl(name):
    check_meta_matches_impl(prims.ALL[name], META[name])


# --- refusals --------------------------------------------------------------------------------------------------


def _m(*shape, dtype=torch.float32):
    return torch.ones(shape, dtype=dtype)


REFUSED_CLEARLY = (
    ("cholesky-int", torch.linalg.cholesky, (_m(3, 3, dtype=torch.int64),), "int64"),
    ("cholesky-rectangular", torch.linalg.cholesky, (_m(3, 4),), "square"),
    ("lu-no-pivoting-cpu", lambda a: torch.linalg.lu(a, pivot=False), (_m(3, 3),), "pivoting"),
    ("lu_factor-half", torch.linalg.lu_factor, (_m(3, 3, dtype=torch.float16),), "float16"),
    # int64 pivots: eager's check is deterministic; too few pivots it reads past their end.
    ("lu_unpack-pivots", lambda a: torch.lu_unpack(a, torch.ones(3, dtype=torch.int64)), (_m(3, 3),), "pivots"),
    ("qr-mode", lambda a: torch.linalg.qr(a, "x"), (_m(3, 3),), "mode"),
    ("qr-vector", torch.linalg.qr, (_m(3),), "2 dimensions"),
    ("ormqr-ranks", lambda a: torch.ormqr(a, torch.ones(3), torch.ones(4, 2)), (_m(2, 4, 3),), "does not fit"),
    ("householder-wide", torch.linalg.householder_product, (_m(3, 5), _m(3)), "rows"),
    ("householder-tau", torch.linalg.householder_product, (_m(5, 3), _m(2, 3)), "tau"),
    ("svd-driver-cpu", lambda a: torch.linalg.svd(a, driver="gesvd"), (_m(3, 3),), "driver"),
    ("svdvals-int", torch.linalg.svdvals, (_m(3, 3, dtype=torch.int32),), "int32"),
    ("eig-rectangular", torch.linalg.eig, (_m(3, 2),), "square"),
    ("eigh-uplo", lambda a: torch.linalg.eigh(a, UPLO="X"), (_m(3, 3),), "UPLO"),
    ("eigvalsh-half", torch.linalg.eigvalsh, (_m(3, 3, dtype=torch.bfloat16),), "bfloat16"),
    ("ldl_factor-rectangular", torch.linalg.ldl_factor, (_m(3, 2),), "square"),
)


test_refused_with_a_clear_error, test_eager_refuses_them_too = refusal_tests(REFUSED_CLEARLY)
