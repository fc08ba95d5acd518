"""Solving with and measuring matrices: det, slogdet, logdet, inv, inv_ex, inverse,
cholesky_inverse, matrix_exp, solve, solve_ex, solve_triangular, triangular_solve,
cholesky_solve, lu_solve, ldl_solve, lstsq, pinv, pinverse, matrix_rank, cond,
tensorinv, tensorsolve; their prims' meta rules against torch's kernels on the shapes
torch broadcasts; the named tuples; autocast; and what eager refuses."""

from __future__ import annotations

import math

import pytest
import torch

from tests.ops.harness import Case, T, case_adder, check_case, check_meta_matches_impl, refusal_tests
from tracecli.core.errors import TracingError
from tracecli.core.pytree import tree_leaves
from tracecli.executors import compile_for
from tracecli.frontend.tracer import trace_callable
from tracecli.jobs.compare import compare_outputs, working_dtypes
from tracecli.ops import prims

CASES: list[Case] = []
case = case_adder(CASES)


def _spd(a):
    """A positive-definite matrix from a random one (almost surely)."""
    return a @ a.mT


# --- determinants, inverses, the exponential ----------------------------------------------------

for _dtype in ("f32", "f64", "c64"):
    case("linalg_det", "fn", torch.linalg.det, T(_dtype, (3, 3)))
    case("linalg_slogdet", "fn", torch.linalg.slogdet, T(_dtype, (2, 3, 3)))
    case("logdet", "fn", torch.logdet, T(_dtype, (2, 3, 3)))
    case("linalg_inv", "fn", torch.linalg.inv, T(_dtype, (2, 3, 3)))
    case("linalg_matrix_exp", "fn", torch.linalg.matrix_exp, T(_dtype, (3, 3)))
case("linalg_det", "torch.det", torch.det, T("f32", (2, 4, 4)))
case("linalg_det", "method", lambda a: a.det(), T("f64", (2, 2)))
case("linalg_det", "empty", torch.linalg.det, T("f32", (2, 0, 0)))
case("linalg_slogdet", "fields", lambda a: torch.linalg.slogdet(a).logabsdet, T("f32", (3, 3)))
case("slogdet", "fn", torch.slogdet, T("f32", (3, 3)))
case("slogdet", "method", lambda a: a.slogdet().sign, T("f64", (2, 2, 2)))
case("logdet", "method", lambda a: a.logdet(), T("f32", (4, 4)))
case("linalg_inv", "inverse", torch.inverse, T("f32", (3, 3)))
case("linalg_inv", "method", lambda a: a.inverse(), T("f64", (2, 2)))
case("linalg_inv", "empty", torch.linalg.inv, T("f32", (0, 0)))
case("linalg_inv_ex", "fn", torch.linalg.inv_ex, T("f32", (2, 3, 3)))
case("linalg_inv_ex", "fields", lambda a: torch.linalg.inv_ex(a, check_errors=True).inverse, T("f64", (3, 3)))
case("linalg_matrix_exp", "torch", torch.matrix_exp, T("f32", (2, 3, 3)))
case("linalg_matrix_exp", "method", lambda a: a.matrix_exp(), T("f32", (2, 2)))
for _dtype in ("bf16", "f16"):
    case("linalg_matrix_exp", "half", torch.linalg.matrix_exp, T(_dtype, (3, 3)))
for _upper in (False, True):
    case("cholesky_inverse", f"upper-{_upper}",
         lambda a, u=_upper: torch.cholesky_inverse(torch.linalg.cholesky(_spd(a), upper=u), upper=u),
         T("f64", (2, 3, 3)))
case("cholesky_inverse", "method", lambda a: torch.linalg.cholesky(_spd(a)).cholesky_inverse(), T("f32", (3, 3)))

# --- linear solves ---------------------------------------------------------------------------------

SOLVE = (
    ("vector", (3, 3), (3,)),
    ("matrix", (3, 3), (3, 2)),
    ("batch-vectors", (2, 3, 3), (2, 3)),
    ("batch-of-one-matrix", (2, 3, 3), (3, 3)),
    ("broadcast", (2, 1, 3, 3), (4, 3, 2)),
    ("vector-broadcast", (2, 3, 3), (3,)),
)
for _label, _sa, _sb in SOLVE:
    case("linalg_solve", _label, torch.linalg.solve, T("f32", _sa), T("f32", _sb))
for _label, _sa, _sb in SOLVE[1::2]:
    case("linalg_solve_ex", _label, torch.linalg.solve_ex, T("f64", _sa), T("f64", _sb))
case("linalg_solve", "right", lambda a, b: torch.linalg.solve(a, b, left=False), T("f32", (3, 3)), T("f32", (2, 3)))
case("linalg_solve", "complex", torch.linalg.solve, T("c64", (3, 3)), T("c64", (3, 2)))
case("linalg_solve_ex", "right", lambda a, b: torch.linalg.solve_ex(a, b, left=False, check_errors=True).result,
     T("f32", (2, 3, 3)), T("f32", (4, 3)))
for _upper in (False, True):
    for _left in (False, True):
        case("linalg_solve_triangular", f"upper-{_upper}-left-{_left}",
             lambda a, b, u=_upper, s=_left: torch.linalg.solve_triangular(a, b, upper=u, left=s, unitriangular=not u),
             T("f32", (2, 3, 3)), T("f32", (3, 3)))
case("linalg_solve_triangular", "broadcast", lambda a, b: torch.linalg.solve_triangular(a, b, upper=True),
     T("f64", (2, 1, 3, 3)), T("f64", (4, 3, 2)))
for _flags in ((True, False, False), (False, True, False), (True, True, True)):
    case("triangular_solve", "flags-" + "-".join(map(str, _flags)),
         lambda b, a, f=_flags: torch.triangular_solve(b, a, *f), T("f32", (2, 3, 2)), T("f32", (3, 3)))
case("triangular_solve", "method", lambda b, a: b.triangular_solve(a).solution, T("f64", (4, 3, 2)),
     T("f64", (2, 1, 3, 3)))
for _upper in (False, True):
    case("cholesky_solve", f"upper-{_upper}",
         lambda b, a, u=_upper: torch.cholesky_solve(b, torch.linalg.cholesky(_spd(a), upper=u), upper=u),
         T("f32", (4, 1, 3, 2)), T("f32", (2, 3, 3)))
case("cholesky_solve", "method", lambda b, a: b.cholesky_solve(torch.linalg.cholesky(_spd(a))), T("f64", (3, 1)),
     T("f64", (3, 3)))
for _left in (False, True):
    for _adjoint in (False, True):
        case("linalg_lu_solve", f"left-{_left}-adjoint-{_adjoint}",
             lambda a, b, s=_left, j=_adjoint: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b, left=s, adjoint=j),
             T("f32", (2, 3, 3)), T("f32", (4, 1, 3, 3)))
case("lu_solve", "fn", lambda b, a: torch.lu_solve(b, *torch.lu(a)), T("f32", (2, 3, 2)), T("f32", (2, 3, 3)))
case("lu_solve", "method", lambda b, a: b.lu_solve(*torch.linalg.lu_factor(a)), T("f64", (3, 1)), T("f64", (3, 3)))
for _hermitian in (False, True):
    case("linalg_ldl_solve", f"hermitian-{_hermitian}",
         lambda a, b, h=_hermitian: torch.linalg.ldl_solve(*torch.linalg.ldl_factor(_spd(a), hermitian=h), b,
                                                           hermitian=h), T("f64", (2, 3, 3)), T("f64", (3, 2)))

# --- least squares -----------------------------------------------------------------------------------

LSTSQ = (
    ("tall", (5, 3), (5, 2)),
    ("wide", (3, 5), (3, 2)),
    ("square", (3, 3), (3, 1)),
    ("vector", (5, 3), (5,)),
    ("batch-vectors", (2, 5, 3), (2, 5)),
    ("broadcast", (2, 1, 5, 3), (1, 4, 5, 2)),
)
for _label, _sa, _sb in LSTSQ:
    case("linalg_lstsq", f"{_label}-gels", lambda a, b: torch.linalg.lstsq(a, b, driver="gels"), T("f64", _sa),
         T("f64", _sb))
for _label, _sa, _sb in LSTSQ[::2]:
    case("linalg_lstsq", f"{_label}-gelsy", lambda a, b: torch.linalg.lstsq(a, b, driver="gelsy"), T("f64", _sa),
         T("f64", _sb))
# In float64: CPU autocast leaves it alone (lstsq of float32 is refused under CPU autocast).
for _driver in ("gelsd", "gelss"):
    case("linalg_lstsq", f"wide-{_driver}", lambda a, b, d=_driver: torch.linalg.lstsq(a, b, driver=d),
         T("f64", (2, 3, 5)), T("f64", (2, 3, 2)))
case("linalg_lstsq", "default", lambda a, b: torch.linalg.lstsq(a, b).solution, T("f64", (4, 3)), T("f64", (4, 2)))
case("linalg_lstsq", "rcond", lambda a, b: torch.linalg.lstsq(a, b, 1e-3).rank, T("f64", (4, 3)), T("f64", (4, 2)))
case("linalg_lstsq", "complex", lambda a, b: torch.linalg.lstsq(a, b, driver="gelsd"), T("c64", (3, 4)),
     T("c64", (3, 2)))

# --- pseudo-inverse, rank, condition ---------------------------------------------------------------------

# pinv in float64: autocast leaves it alone (in float32 it is refused under autocast).
for _shape in ((3, 3), (2, 5, 3), (3, 0)):
    case("linalg_pinv", "fn", torch.linalg.pinv, T("f64", _shape))
    case("linalg_matrix_rank", "fn", torch.linalg.matrix_rank, T("f32", _shape))
case("linalg_pinv", "tolerances", lambda a: torch.linalg.pinv(a, atol=0.5, rtol=0.1), T("f64", (4, 3)))
case("linalg_pinv", "tensor-rtol", lambda a, r: torch.linalg.pinv(a, rtol=r), T("f64", (2, 4, 3)), T("f64", (3, 1), "pos"))
case("linalg_pinv", "rcond", lambda a: torch.linalg.pinv(a, 0.2), T("f64", (4, 3)))
case("linalg_pinv", "hermitian", lambda a: torch.linalg.pinv(_spd(a), hermitian=True), T("f64", (2, 3, 3)))
case("linalg_pinv", "complex", torch.linalg.pinv, T("c64", (3, 2)))
case("pinverse", "fn", torch.pinverse, T("f32", (3, 4)))
case("pinverse", "method", lambda a: a.pinverse(rcond=0.3), T("f64", (2, 4, 3)))
case("linalg_matrix_rank", "tolerances", lambda a: torch.linalg.matrix_rank(a, atol=1.0, rtol=0.5), T("f32", (4, 4)))
case("linalg_matrix_rank", "tensor-atol", lambda a, t: torch.linalg.matrix_rank(a, atol=t), T("f32", (2, 4, 4)),
     T("f32", (3, 1), "pos"))
case("linalg_matrix_rank", "tol", lambda a: torch.linalg.matrix_rank(a, 2.0), T("f64", (4, 4)))
case("linalg_matrix_rank", "hermitian", lambda a: torch.linalg.matrix_rank(a, hermitian=True), T("f64", (3, 3)))
for _p in (None, -2, 1, -math.inf, "fro", "nuc"):
    case("linalg_cond", f"p{_p}", lambda a, p=_p: torch.linalg.cond(a, p), T("f32", (2, 3, 3)))
case("linalg_cond", "rectangular", torch.linalg.cond, T("f64", (4, 2)))
case("linalg_cond", "complex", torch.linalg.cond, T("c64", (3, 3)))

# --- tensor equations ---------------------------------------------------------------------------------------

case("linalg_tensorinv", "ind-2", torch.linalg.tensorinv, T("f32", (4, 3, 6, 2)))
case("linalg_tensorinv", "ind-1", lambda a: torch.linalg.tensorinv(a, ind=1), T("f64", (6, 2, 3)))
case("linalg_tensorsolve", "fn", torch.linalg.tensorsolve, T("f32", (2, 3, 6)), T("f32", (2, 3)))
case("linalg_tensorsolve", "dims", lambda a, b: torch.linalg.tensorsolve(a, b, dims=(1,)), T("f64", (2, 6, 3)),
     T("f64", (2, 3)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


def test_results_are_torchs_named_tuples():
    def f(a, b):
        results = (torch.linalg.slogdet(a), torch.slogdet(a), torch.linalg.inv_ex(a), torch.linalg.solve_ex(a, b),
                   torch.triangular_solve(b, a), torch.linalg.lstsq(a, b))
        names = ["linalg_slogdet", "slogdet", "linalg_inv_ex", "linalg_solve_ex", "triangular_solve", "linalg_lstsq"]
        for result, name in zip(results, names, strict=True):
            assert type(result) is getattr(torch.return_types, name), (type(result), name)
        return results[0].logabsdet, results[3].info, results[4].cloned_coefficient, results[5].rank

    trace_callable(f, (torch.randn(3, 3), torch.randn(3, 2)), name="fn")


# --- autocast ----------------------------------------------------------------------------------------------

AUTOCAST = (
    ("inv-f32-policy", torch.linalg.inv, T("bf16", (3, 3))),
    ("solve-f32-policy", lambda a: torch.linalg.solve(a, a[..., :1]), T("bf16", (3, 3))),
    ("cond-f32-policy", torch.linalg.cond, T("bf16", (3, 3))),
    ("tensorinv-f32-policy", torch.linalg.tensorinv, T("f32", (2, 2, 4))),
    ("det-as-is", torch.linalg.det, T("f32", (3, 3))),
    ("pinv-float64", torch.linalg.pinv, T("f64", (3, 2))),
    ("matrix_exp-bf16", torch.linalg.matrix_exp, T("bf16", (3, 3))),
)


@pytest.mark.parametrize(("fn", "arg"), [pytest.param(fn, arg, id=label) for label, fn, arg in AUTOCAST])
def test_under_cpu_autocast(fn, arg):
    """torch's policy for the op: the trace, run without autocast, gives eager's dtypes and values."""
    def f(a):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return fn(a)

    x = arg.make(torch.Generator().manual_seed(0))
    trace = trace_callable(f, (x,), name="fn").trace
    expected = f(x)
    actual = compile_for(trace, "torch")(x)
    names = [leaf.name for leaf in tree_leaves(trace.output)]
    assert all(c.match for c in compare_outputs(names, expected, actual, working_dtypes(trace)))


@pytest.mark.parametrize(("fn", "device"), [(torch.linalg.pinv, "cpu"), (torch.linalg.pinv, "cuda"),
                                           (lambda a: torch.linalg.lstsq(a, a).solution, "cpu"),
                                           (torch.pinverse, "cuda"), (lambda a: torch.linalg.matrix_exp(a.half()), "cpu")],
                         ids=["pinv", "pinv-cuda", "lstsq", "pinverse-cuda", "matrix_exp-mixed-halves"])
def test_refused_under_autocast(fn, device):
    """Forms whose autocast results tracing cannot reproduce (tracing for CUDA needs no GPU)."""
    def f(a):
        with torch.autocast(device, dtype=torch.bfloat16):
            return fn(a)

    with pytest.raises(TracingError, match="autocast"):
        trace_callable(f, (torch.randn(3, 3),), name="fn", device="cuda:0" if device == "cuda" else None)


# --- the prims' meta rules against torch's kernels --------------------------------------------------------



def _matrices(*shape, dtype=torch.float64):
    """Invertible (diagonally dominant) matrices."""
    return torch.rand(shape, dtype=dtype) + shape[-1] * torch.eye(shape[-1], dtype=dtype)


def _lu(*shape):
    return torch.linalg.lu_factor(_matrices(*shape))


def _ldl(*shape):
    return torch.linalg.ldl_factor(_matrices(*shape))


# (prim, arguments): tensors among them are given to the meta rule as values.
META = {
    "solve": [(_matrices(*a), torch.rand(b, dtype=torch.float64), left) for a, b, left in (
        ((3, 3), (3,), True), ((2, 3, 3), (2, 3), True), ((2, 3, 3), (3, 3), True), ((2, 1, 3, 3), (4, 3, 1), True),
        ((3, 3), (2, 3), False), ((2, 3, 3), (4, 1, 5, 3), False), ((0, 3, 3), (3,), True))],
    "solve_ex": [(_matrices(2, 1, 3, 3), torch.rand(4, 3, 2, dtype=torch.float64), True, False),
                 (_matrices(2, 3, 3), torch.rand(2, 3, dtype=torch.float64), True, False)],
    "solve_triangular": [(_matrices(2, 1, 3, 3), torch.rand(4, 3, 2, dtype=torch.float64), True, True, False),
                         (_matrices(3, 3), torch.rand(2, 5, 3, dtype=torch.float64), False, False, True)],
    "triangular_solve": [(torch.rand(4, 3, 2, dtype=torch.float64), _matrices(2, 1, 3, 3), True, False, False)],
    "cholesky_solve": [(torch.rand(4, 1, 3, 2, dtype=torch.float64), _matrices(2, 3, 3), False)],
    "lu_solve": [(*_lu(2, 3, 3), torch.rand(4, 1, 3, 2, dtype=torch.float64), True, False),
                 (*_lu(3, 3), torch.rand(2, 5, 3, dtype=torch.float64), False, True)],
    "ldl_solve": [(*_ldl(2, 3, 3), torch.rand(3, 2, dtype=torch.float64), False),
                  (*_ldl(3, 3), torch.rand(2, 3, 2, dtype=torch.float64), False)],
    "lstsq": [(torch.rand(a, dtype=torch.float64), torch.rand(b, dtype=torch.float64), None, driver)
              for driver in ("gels", "gelsy", "gelsd", "gelss")
              for a, b in (((2, 1, 3, 5), (1, 4, 3, 2)), ((2, 4, 3), (2, 4)), ((4, 3), (4,)), ((3, 3), (3, 2)))
              if not (driver in ("gelsd", "gelss") and a[-2] > a[-1])],
    "pinv": [(torch.rand(2, 4, 3, dtype=torch.float64), None, torch.rand(5, 1, dtype=torch.float64), False),
             (_matrices(2, 3, 3), torch.tensor(0.1), 0.5, True)],
    "matrix_rank": [(torch.rand(2, 4, 3, dtype=torch.float64), torch.rand(5, 1), None, False)],
    "cond": [(torch.rand(2, 4, 3, dtype=torch.float64), None), (_matrices(3, 3), "fro")],
    "det": [(_matrices(2, 0, 0),)],
    "slogdet": [(_matrices(2, 3, 3).to(torch.complex128),)],
    "inv_ex": [(_matrices(2, 3, 3), False)],
    "cholesky_inverse": [(_matrices(2, 3, 3), True)],
}


@pytest.mark.parametrize("name", sorted(META))
def test_solver_meta_matches_impl(name):
    check_meta_matches_impl(prims.ALL[name], META[name])


# --- refusals --------------------------------------------------------------------------------------------------


def _m(*shape, dtype=torch.float32):
    return torch.ones(shape, dtype=dtype)


_I3 = torch.eye(3)

REFUSED_CLEARLY = (
    ("det-int", torch.linalg.det, (_m(3, 3, dtype=torch.int64),), "int64"),
    ("det-half", torch.linalg.det, (_m(3, 3, dtype=torch.float16),), "float16"),
    ("det-rectangular", torch.linalg.det, (_m(3, 4),), "square"),
    ("det-vector", torch.linalg.det, (_m(3),), "2 dimensions"),
    ("inv-rectangular", torch.linalg.inv, (_m(2, 3),), "square"),
    ("matrix_exp-int", torch.linalg.matrix_exp, (_m(2, 2, dtype=torch.int64),), "int64"),
    ("solve-dtypes", torch.linalg.solve, (_I3, _m(3, dtype=torch.float64)), "dtype"),
    ("solve-rows", torch.linalg.solve, (_I3, _m(1, 3)), "incompatible"),
    ("solve-right-vector", lambda a, b: torch.linalg.solve(a, b, left=False), (_I3, _m(3)), "vector"),
    ("solve_triangular-vector", lambda a, b: torch.linalg.solve_triangular(a, b, upper=True), (_I3, _m(3)),
     "2 dimensions"),
    ("triangular_solve-vector", torch.triangular_solve, (_m(3), _I3), "2 dimensions"),
    ("cholesky_solve-dtypes", torch.cholesky_solve, (_m(3, 1, dtype=torch.float64), _I3), "dtype"),
    ("lu_solve-pivots-dtype", lambda a, b: torch.linalg.lu_solve(a, torch.ones(3, dtype=torch.int64), b), (_I3, _m(3, 1)),
     "int32"),
    ("lstsq-rows", torch.linalg.lstsq, (_m(4, 3), _m(5, 2)), "rows"),
    ("lstsq-ranks", torch.linalg.lstsq, (_m(4, 3), _m(2, 4, 2)), "dimensions"),
    ("lstsq-driver", lambda a, b: torch.linalg.lstsq(a, b, driver="foo"), (_m(4, 3), _m(4, 2)), "driver"),
    ("lstsq-int", torch.linalg.lstsq, (_m(4, 3, dtype=torch.int64),) * 2, "int64"),
    ("pinv-int", torch.linalg.pinv, (_m(4, 3, dtype=torch.int64),), "int64"),
    ("pinv-hermitian-rectangular", lambda a: torch.linalg.pinv(a, hermitian=True), (_m(4, 3),), "square"),
    ("pinv-complex-tolerance", lambda a: torch.linalg.pinv(a, atol=torch.tensor(1j)), (_m(3, 3),), "real"),
    ("cond-norm", lambda a: torch.linalg.cond(a, 3), (_I3,), "norm"),
    ("cond-rectangular", lambda a: torch.linalg.cond(a, "fro"), (_m(4, 3),), "square"),
    ("tensorinv-ind", lambda a: torch.linalg.tensorinv(a, ind=0), (_m(4, 2, 2),), "ind"),
    ("tensorinv-sizes", lambda a: torch.linalg.tensorinv(a, ind=1), (_m(4, 2, 3),), "prod"),
    ("tensorsolve-sizes", torch.linalg.tensorsolve, (_m(2, 3, 4), _m(2, 3)), "square"),
)

# eager has no error for these, or fails at run time: tracing refuses them up front.
OURS_ONLY = (
    ("lstsq-gelsd-tall", lambda a, b: torch.linalg.lstsq(a, b, driver="gelsd"), (_m(4, 3), _m(4, 2)), "ranks"),
    ("ldl_solve-batch-broadcast", lambda a, b: torch.linalg.ldl_solve(*torch.linalg.ldl_factor(a), b),
     (_matrices(1, 3, 3).float(), _m(2, 3, 2)), "broadcast"),
)


test_refused_with_a_clear_error, test_eager_refuses_them_too = refusal_tests(REFUSED_CLEARLY, ours_only=OURS_ONLY)
