"""The matrix products: matmul (and mm, bmm), linear, addmm, baddbmm, outer, mv, dot,
vdot, addmv, addr, addbmm (with their in-place twins) and einsum, and the matmul prim,
exercised through the cases' lowered traces. Einsum equations ltorch does not model, and
complex vdot, stay torch calls."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from tests.ops.harness import (
    DT,
    Case,
    L,
    T,
    case_adder,
    check_case,
    check_refused,
    check_stays_torch_call,
    module,
    rows_by_id,
)
from tracecli.core.errors import TracingError
from tracecli.executors import compile_for
from tracecli.frontend.tracer import trace_callable
from tracecli.jobs.compare import compare_outputs, working_dtypes

CASES: list[Case] = []
case = case_adder(CASES)

NAN, INF = math.nan, math.inf

# --- matrix products ---------------------------------------------------------------------------------

MATMUL_SHAPES = (
    ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5)), ((2, 3, 4), (4, 5)),
    ((4,), (2, 4, 5)), ((2, 3, 4), (4,)), ((2, 1, 3, 4), (5, 4, 2)), ((2, 3, 4), (2, 4, 5)),
)
for _sa, _sb in MATMUL_SHAPES:
    case("matmul", "op", lambda a, b: a @ b, T("f32", _sa), T("f32", _sb))
for _dtype in ("f64", "i64", "f16", "bf16"):
    case("matmul", "op", lambda a, b: a @ b, T(_dtype, (3, 4)), T(_dtype, (4, 5)))
case("matmul", "fn", torch.matmul, T("f32", (2, 3, 4)), T("f32", (4, 5)))
case("matmul", "method", lambda a, b: a.matmul(b), T("f64", (3, 4)), T("f64", (4,)))
for _shape in ((4,), (3, 4), (2, 3, 4)):
    case("linear", "F", lambda x, w, b: F.linear(x, w, b), T("f32", _shape), T("f32", (5, 4)), T("f32", (5,)))
    case("linear", "F-nobias", lambda x, w: F.linear(x, w), T("f32", _shape), T("f32", (5, 4)))
for _dtype in ("f64", "bf16", "f16"):
    case("linear", "F", lambda x, w, b: F.linear(x, w, b), T(_dtype, (3, 4)), T(_dtype, (5, 4)), T(_dtype, (5,)))
case("linear", "vector-weight", lambda x, w: F.linear(x, w), T("f32", (3, 4)), T("f32", (4,)))
case("linear", "0d-bias", lambda x, w, b: F.linear(x, w, b), T("f32", (3, 4)), T("f32", (5, 4)), T("f32", ()))
case("matmul", "mm", torch.mm, T("f32", (3, 4)), T("f32", (4, 5)))
case("matmul", "mm-method", lambda a, b: a.mm(b), T("f64", (3, 4)), T("f64", (4, 2)))
case("matmul", "bmm", torch.bmm, T("f32", (2, 3, 4)), T("f32", (2, 4, 5)))
case("matmul", "bmm-method", lambda a, b: a.bmm(b), T("f32", (2, 3, 4)), T("f32", (2, 4, 5)))
case("matmul", "empty-inner", lambda a, b: a @ b, T("f32", (3, 0)), T("f32", (0, 4)))

# --- addmm, baddbmm, outer -------------------------------------------------------------------------------------

for _dtype in ("f32", "f64", "f16", "bf16", "i64"):
    case("addmm", "fn", torch.addmm, T(_dtype, (3,)), T(_dtype, (2, 4)), T(_dtype, (4, 3)))
    case("baddbmm", "fn", torch.baddbmm, T(_dtype, (2, 3, 5)), T(_dtype, (2, 3, 4)), T(_dtype, (2, 4, 5)))
case("addmm", "2d-input", lambda b, m1, m2: b.addmm(m1, m2), T("f32", (2, 3)), T("f32", (2, 4)), T("f32", (4, 3)))
case("addmm", "beta-alpha", lambda b, m1, m2: torch.addmm(b, m1, m2, beta=0.5, alpha=2.0), T("f32", (2, 1)),
     T("f32", (2, 4)), T("f32", (4, 3)))
case("addmm", "int-alpha", lambda b, m1, m2: torch.addmm(b, m1, m2, alpha=2, beta=3), T("i64", (3,)),
     T("i64", (2, 4)), T("i64", (4, 3)))
case("addmm", "beta-zero", lambda b, m1, m2: torch.addmm(b, m1, m2, beta=0), L((NAN, 1.0, INF), "f32"),
     T("f32", (2, 4)), T("f32", (4, 3)))
case("addmm", "0d-input", torch.addmm, T("f32", ()), T("f32", (2, 4)), T("f32", (4, 3)))
case("baddbmm", "broadcast-input", lambda b, b1, b2: torch.baddbmm(b, b1, b2, alpha=0.125), T("f32", (1, 5)),
     T("f32", (2, 3, 4)), T("f32", (2, 4, 5)))
case("baddbmm", "method", lambda b, b1, b2: b.baddbmm(b1, b2, beta=0.0, alpha=0.5), T("f32", (2, 3, 5)),
     T("f32", (2, 3, 4)), T("f32", (2, 4, 5)))
for _a, _b in (("f32", "f32"), ("i64", "f32"), ("bool", "bool"), ("f16", "f16"), ("i64", "i64")):
    case("outer", "fn", torch.outer, T(_a, (3,)), T(_b, (4,)))
case("outer", "method", lambda a, b: a.outer(b), T("f32", (3,)), T("f64", (2,)))
case("outer", "ger", torch.ger, T("f32", (3,)), T("f32", (2,)))

# --- mv, dot, vdot, addmv, addr, addbmm -------------------------------------------------------------

for _dtype in ("f32", "i64", "i32", "bf16"):
    case("mv", "fn", torch.mv, T(_dtype, (3, 4)), T(_dtype, (4,)))
    case("dot", "fn", torch.dot, T(_dtype, (5,)), T(_dtype, (5,)))
    case("addmv", "fn", torch.addmv, T(_dtype, (3,)), T(_dtype, (3, 4)), T(_dtype, (4,)))
case("mv", "method", lambda m, v: m.mv(v), T("f32", (2, 3)), T("f32", (3,)))
case("mv", "empty-inner", torch.mv, T("f32", (3, 0)), T("f32", (0,)))
case("dot", "method", lambda a, b: a.dot(b), T("f64", (4,)), T("f64", (4,)))
case("dot", "empty", torch.dot, T("f32", (0,)), T("f32", (0,)))
for _dtype in ("f32", "i64", "bf16"):
    case("vdot", "fn", torch.vdot, T(_dtype, (4,)), T(_dtype, (4,)))
case("vdot", "method", lambda a, b: a.vdot(b), T("f32", (3,)), T("f32", (3,)))
case("addmv", "beta-alpha", lambda x, m, v: torch.addmv(x, m, v, beta=0.5, alpha=-2.0), T("f32", (1,)),
     T("f32", (3, 4)), T("f32", (4,)))
case("addmv", "0d-input", torch.addmv, T("f32", ()), T("f32", (3, 4)), T("f32", (4,)))
case("addmv", "beta-zero", lambda x, m, v: torch.addmv(x, m, v, beta=0), L((NAN, INF, 1.0), "f32"), T("f32", (3, 2)),
     T("f32", (2,)))
case("addmv", "int-float-scalars", lambda x, m, v: torch.addmv(x, m, v, beta=0.2, alpha=0.6), T("i64", (3,)),
     T("i64", (3, 2)), T("i64", (2,)))
case("addmv", "method", lambda x, m, v: x.addmv(m, v, alpha=3), T("f32", (3,)), T("f32", (3, 4)), T("f32", (4,)))
case("addmv", "inplace", lambda x, m, v: x.clone().addmv_(m, v, beta=2), T("f32", (3,)), T("f32", (3, 4)),
     T("f32", (4,)))
for _dtypes in (("f32",) * 3, ("i64",) * 3, ("bf16",) * 3, ("i64", "f32", "i32"), ("f32", "f64", "i64"), ("bool",) * 3,
                ("bool", "i64", "bool")):
    case("addr", "fn", torch.addr, T(_dtypes[0], (3, 4)), T(_dtypes[1], (3,)), T(_dtypes[2], (4,)))
case("addr", "scalars", lambda x, a, b: torch.addr(x, a, b, beta=0.6, alpha=0.2), T("f32", (3, 4)), T("f32", (3,)),
     T("f32", (4,)))
for _dtype in ("bf16", "f16"):
    case("addr", "half-scalars", lambda x, a, b: torch.addr(x, a, b, beta=0.6, alpha=0.2), T(_dtype, (5, 6)),
         T(_dtype, (5,)), T(_dtype, (6,)))
case("addr", "int-scalars", lambda x, a, b: torch.addr(x, a, b, beta=3, alpha=-2), T("i32", (3, 4)), T("i32", (3,)),
     T("i32", (4,)))
case("addr", "broadcast-input", torch.addr, T("f32", (4,)), T("f32", (3,)), T("f32", (4,)))
case("addr", "0d-input", torch.addr, T("f32", ()), T("f32", (3,)), T("f32", (4,)))
case("addr", "beta-zero", lambda x, a, b: torch.addr(x, a, b, beta=0), L((NAN, INF), "f32"), T("f32", (3,)),
     T("f32", (2,)))
for _beta, _alpha in ((False, True), (True, False), (False, False), (True, 2)):
    case("addr", f"bool-{_beta}-{_alpha}", lambda x, a, b, s=_beta, t=_alpha: torch.addr(x, a, b, beta=s, alpha=t),
         T("bool", (3, 4)), T("bool", (3,)), T("bool", (4,)))
case("addr", "method", lambda x, a, b: x.addr(a, b, alpha=0.5), T("f64", (2, 3)), T("f64", (2,)), T("f64", (3,)))
case("addr", "inplace", lambda x, a, b: x.clone().addr_(a, b), T("f32", (2, 3)), T("f32", (2,)), T("f32", (3,)))
for _dtype in ("f32", "i64", "bf16", "f16"):
    case("addbmm", "fn", torch.addbmm, T(_dtype, (3, 5)), T(_dtype, (4, 3, 2)), T(_dtype, (4, 2, 5)))
case("addbmm", "scalars", lambda x, a, b: torch.addbmm(x, a, b, beta=0.5, alpha=2.0), T("f32", (5,)),
     T("f32", (2, 3, 4)), T("f32", (2, 4, 5)))
case("addbmm", "half-scalars", lambda x, a, b: torch.addbmm(x, a, b, beta=0.6, alpha=0.2), T("f16", (3, 5)),
     T("f16", (3, 3, 4)), T("f16", (3, 4, 5)))
case("addbmm", "beta-zero", lambda x, a, b: torch.addbmm(x, a, b, beta=0), L((NAN, INF), "f32"),
     T("f32", (2, 3, 4)), T("f32", (2, 4, 2)))
case("addbmm", "empty-batch", lambda x, a, b: torch.addbmm(x, a, b, beta=2.0), T("f32", (3, 2)), T("f32", (0, 3, 4)),
     T("f32", (0, 4, 2)))
case("addbmm", "method", lambda x, a, b: x.addbmm(a, b), T("f32", (3, 5)), T("f32", (2, 3, 4)), T("f32", (2, 4, 5)))
case("addbmm", "inplace", lambda x, a, b: x.clone().addbmm_(a, b, alpha=0.5), T("f32", (3, 5)), T("f32", (2, 3, 4)),
     T("f32", (2, 4, 5)))

# --- bilinear ----------------------------------------------------------------------------------------------

for _s1, _s2 in (((2, 3), (2, 4)), ((3,), (4,)), ((2, 5, 3), (2, 5, 4)), ((0, 3), (0, 4))):
    case("bilinear", "F", F.bilinear, T("f32", _s1), T("f32", _s2), T("f32", (5, 3, 4)), T("f32", (5,)))
for _dtype in ("i64", "f16", "bf16"):
    case("bilinear", "F", F.bilinear, T(_dtype, (2, 3)), T(_dtype, (2, 4)), T(_dtype, (5, 3, 4)), T(_dtype, (5,)))
case("bilinear", "no-bias", lambda a, b, w: F.bilinear(a, b, w), T("f32", (2, 3)), T("f32", (2, 4)), T("f32", (5, 3, 4)))
case("bilinear", "module", module(lambda: torch.nn.Bilinear(3, 4, 2)), T("f32", (6, 3)), T("f32", (6, 4)))

# The in-place forms run outside autocast's policies, as torch's do.


def _in_place_under_autocast(x, m, v):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return x.clone().addmv_(m, v), m.clone().addr_(x, v)


case(("addmv", "addr"), "in-place-under-autocast", _in_place_under_autocast, T("f32", (3,)), T("f32", (3, 4)),
     T("f32", (4,)))

# --- einsum ----------------------------------------------------------------------------------------------------

EINSUM = (
    ("ij,jk->ik", ((2, 3), (3, 4))),
    ("bij,bjk->bik", ((2, 3, 4), (2, 4, 5))),
    ("bhqd,bhkd->bhqk", ((2, 2, 3, 4), (2, 2, 5, 4))),
    ("ij,kj->ik", ((2, 3), (4, 3))),
    ("i,j->ij", ((3,), (4,))),
    ("bi,bj->bij", ((2, 3), (2, 4))),
    ("ij,ij->ij", ((2, 3), (2, 3))),
    ("ij,ij->i", ((2, 3), (2, 3))),
    ("i,i->", ((5,), (5,))),
    ("ij,jk->", ((2, 3), (3, 4))),
    ("ijk,jl->il", ((2, 3, 4), (3, 5))),
    ("ij,j->i", ((2, 3), (3,))),
    ("j,jk->k", ((3,), (3, 4))),
    ("bij,bjk->bki", ((2, 3, 4), (2, 4, 5))),
    ("...ij,...jk->...ik", ((2, 1, 2, 3), (4, 3, 5))),
    ("bij,bjk->bik", ((1, 3, 4), (2, 4, 5))),
    ("ij,jk", ((2, 3), (3, 4))),
    ("ba,ca", ((2, 3), (4, 3))),
    ("ij->ji", ((2, 3),)),
    ("ij->i", ((2, 3),)),
    ("ij->", ((2, 3),)),
    ("bij->bj", ((2, 3, 4),)),
    ("...i->...", ((2, 3, 4),)),
    ("ba", ((2, 3),)),
)
for _equation, _shapes in EINSUM:
    case("einsum", _equation,
         lambda *ops, e=_equation: torch.einsum(e, *ops), *(T("f32", s) for s in _shapes))
for _dtype in ("f64", "f16", "bf16", "i64"):
    case("einsum", "ij,jk->ik", lambda a, b: torch.einsum("ij,jk->ik", a, b), T(_dtype, (2, 3)), T(_dtype, (3, 4)))
for _dtype in ("i32", "bool", "u8"):
    case("einsum", "int-ij->i", lambda a: torch.einsum("ij->i", a), T(_dtype, (2, 3)))
    case("einsum", "int-i,j->ij", lambda a, b: torch.einsum("i,j->ij", a, b), T(_dtype, (2,)), T(_dtype, (3,)))
case("einsum", "list", lambda a, b: torch.einsum("ij,jk->ik", [a, b]), T("f32", (2, 3)), T("f32", (3, 4)))
case("einsum", "spaces", lambda a, b: torch.einsum("b i d, b j d -> b i j", a, b), T("f32", (2, 3, 4)),
     T("f32", (2, 5, 4)))
# torch turns the sublist form into an equation before dispatching.
case("einsum", "sublists", lambda a, b: torch.einsum(a, [0, 1], b, [1, 2], [0, 2]), T("f32", (2, 3)),
     T("f32", (3, 4)))
case("einsum", "upper-case", lambda a, b: torch.einsum("iJ,Jk->ik", a, b), T("f32", (2, 3)), T("f32", (3, 4)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_bilinear_under_cpu_autocast_matches_eager(dtype):
    """torch's kernel makes its products with bmm, which CPU autocast reaches: so do the
    trace's matmul ops, the result coming back in the inputs' dtype."""
    def f(a, b, w, bias):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return F.bilinear(a, b, w, bias)

    gen = torch.Generator().manual_seed(0)
    args = tuple(T(dtype, s).make(gen) for s in ((4, 3), (4, 2), (5, 3, 2), (5,)))
    trace = trace_callable(f, args, name="fn").trace
    expected, actual = f(*args), compile_for(trace, "torch")(*args)
    assert expected.dtype == actual.dtype == DT[dtype]
    assert all(c.match for c in compare_outputs(["y"], expected, actual, working_dtypes(trace)))


def test_integer_matmul_on_cuda_is_torchs_error():
    # cuBLAS has no integer matrix product: torch refuses it on CUDA, so does tracing.
    with pytest.raises(TracingError, match="CUDA"):
        trace_callable(lambda a: a @ a, (torch.ones(2, 2, dtype=torch.int64),), name="fn", device="cuda:0")


def test_mm_of_batches_is_torchs_error():
    with pytest.raises(TracingError, match="mm"):
        trace_callable(lambda a, b: torch.mm(a, b), (torch.zeros(2, 3, 4), torch.zeros(4, 5)), name="fn")


OPAQUE_FORMS = (
    ("einsum-three-operands", lambda a: torch.einsum("ij,jk,kl->il", a, a.T, a), T("f32", (3, 3)), "torch.einsum"),
    ("einsum-diagonal", lambda a: torch.einsum("ii->i", a), T("f32", (3, 3)), "torch.einsum"),
    ("einsum-int-one-sided-sum", lambda a: torch.einsum("ij,ik->i", a, a), T("i32", (3, 3)), "torch.einsum"),
    ("vdot-complex", lambda a: torch.vdot(a, a), T("c64", (3,)), "torch.vdot"),
)


@pytest.mark.parametrize(("fn", "arg", "opaque"), rows_by_id(OPAQUE_FORMS))
def test_unmodelled_forms_stay_torch_calls(fn, arg, opaque):
    check_stays_torch_call(fn, (arg,), opaque)


REFUSED = (
    ("linear-bias-dtype", lambda x: F.linear(x, torch.ones(2, 3), torch.ones(2, dtype=torch.float64)), T("f32", (3,))),
    ("addmm-dtypes", lambda x: torch.addmm(x, torch.ones(2, 4), torch.ones(4, 3)), T("f64", (3,))),
    ("addmm-shapes", lambda x: torch.addmm(x, torch.ones(2, 4), torch.ones(3, 3)), T("f32", (3,))),
    ("addmm-input-shape", lambda x: torch.addmm(x, torch.ones(2, 4), torch.ones(4, 3)), T("f32", (2,))),
    ("addmm-bool", lambda x: torch.addmm(x, x, x), T("bool", (2, 2))),
    ("baddbmm-batch", lambda x: torch.baddbmm(x, torch.ones(2, 3, 4), torch.ones(3, 4, 5)), T("f32", (5,))),
    ("outer-2d", lambda x: torch.outer(x, x), T("f32", (3, 4))),
    ("einsum-sizes", lambda x: torch.einsum("ij,jk->ik", x, x), T("f32", (3, 4))),
    ("einsum-dtypes", lambda x: torch.einsum("ij,jk->ik", x, x.T.double()), T("f32", (3, 4))),
    ("einsum-bool-contraction", lambda x: torch.einsum("ij,jk->ik", x, x.T), T("bool", (3, 4))),
    ("einsum-operand-count", lambda x: torch.einsum("ij,jk->ik", x), T("f32", (3, 4))),
    ("einsum-rank", lambda x: torch.einsum("ijk->i", x), T("f32", (3, 4))),
    ("einsum-output-label", lambda x: torch.einsum("ij->k", x), T("f32", (3, 4))),
    ("einsum-subscript", lambda x: torch.einsum("i1->i", x), T("f32", (3, 4))),
    ("matmul-bool", lambda x: x @ x, T("bool", (3, 3))),
    ("mv-dtypes", lambda x: torch.mv(x, torch.ones(4, dtype=torch.float64)), T("f32", (3, 4))),
    ("mv-shapes", lambda x: torch.mv(x, torch.ones(3)), T("f32", (3, 4))),
    ("mv-vector", lambda x: torch.mv(x, x), T("f32", (3,))),
    ("dot-2d", lambda x: torch.dot(x, x), T("f32", (2, 2))),
    ("dot-dtypes", lambda x: torch.dot(x, x.double()), T("f32", (3,))),
    ("dot-bool", lambda x: torch.dot(x, x), T("bool", (3,))),
    ("addmv-dtypes", lambda x: torch.addmv(x, torch.ones(3, 4), torch.ones(4)), T("f64", (3,))),
    ("addmv-2d-input", lambda x: torch.addmv(x, torch.ones(3, 4), torch.ones(4)), T("f32", (3, 3))),
    ("addr-int-float-beta", lambda x: torch.addr(x, x[0], x[:, 0], beta=0.5), T("i64", (3, 3))),
    ("addr-bool-alpha-on-float", lambda x: torch.addr(x, x[0], x[:, 0], alpha=True), T("f32", (3, 3))),
    ("addr-input-shape", lambda x: torch.addr(x, torch.ones(2), torch.ones(3)), T("f32", (3, 3))),
    ("addbmm-batches", lambda x: torch.addbmm(x, torch.ones(2, 3, 4), torch.ones(3, 4, 5)), T("f32", (3, 5))),
    ("addbmm-dtypes", lambda x: torch.addbmm(x, torch.ones(2, 3, 4), torch.ones(2, 4, 5)), T("f64", (3, 5))),
    ("bilinear-dtypes", lambda x: F.bilinear(x, x, torch.ones(2, 3, 3, dtype=torch.float64)), T("f32", (2, 3))),
    ("bilinear-batch", lambda x: F.bilinear(x, x[:1], torch.ones(2, 3, 3)), T("f32", (2, 3))),
    ("bilinear-weight", lambda x: F.bilinear(x, x, torch.ones(2, 4, 3)), T("f32", (2, 3))),
    ("bilinear-bias", lambda x: F.bilinear(x, x, torch.ones(2, 3, 3), torch.ones(1, 2)), T("f32", (2, 3))),
    ("bilinear-bool", lambda x: F.bilinear(x, x, torch.ones(2, 3, 3, dtype=torch.bool)), T("bool", (2, 3))),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(REFUSED))
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)
