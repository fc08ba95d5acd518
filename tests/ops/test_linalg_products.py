"""Products built from matmul: tensordot, inner, multi_dot (and chain_matmul),
matrix_power, vecdot, linalg.cross and torch.cross; the structured matrices
linalg.vander and linalg.diagonal; cdist. The vander and cdist prims are exercised
through the cases' lowered traces."""

from __future__ import annotations

import pytest
import torch

from tests.ops.harness import Case, T, case_adder, check_case, check_stays_torch_call, refusal_tests, rows_by_id
from tracecli.core.errors import TracingError
from tracecli.frontend.tracer import trace_callable

CASES: list[Case] = []
case = case_adder(CASES)

# --- tensordot and inner -------------------------------------------------------------------------

TENSORDOT = (
    ("dims-2", (2, 3, 4), (3, 4, 5), 2),
    ("dims-1", (2, 3), (3, 4), 1),
    ("dims-0", (3,), (4,), 0),
    ("full", (3, 4), (3, 4), 2),
    ("lists", (2, 3, 4), (4, 2, 5), ([0, 2], [1, 0])),
    ("negative", (2, 3, 4), (4, 3), ([-1, -2], [0, 1])),
    ("broadcast-dims", (2, 1, 3), (3, 4, 2), ([1, 2], [1, 0])),
    ("broadcast-other", (2, 4), (1, 3), ([1], [0])),
    ("to-1x1", (1, 4), (4, 1), ([1], [0])),
    ("empty", (0, 4), (4, 3), 1),
)
for _label, _sa, _sb, _dims in TENSORDOT:
    case("tensordot", _label, lambda a, b, d=_dims: torch.tensordot(a, b, dims=d), T("f32", _sa), T("f32", _sb))
for _dtype in ("f64", "i64", "i32", "bf16"):
    case("tensordot", "dtypes", lambda a, b: torch.tensordot(a, b, dims=1), T(_dtype, (2, 3)), T(_dtype, (3, 2)))
case("tensordot", "int-full", lambda a, b: torch.tensordot(a, b, dims=2), T("i32", (2, 3)), T("i32", (2, 3)))
case("tensordot", "tuple-dims", lambda a, b: torch.tensordot(a, b, dims=((1,), (0,))), T("f32", (2, 3)),
     T("f32", (3, 4)))
for _sa, _sb in (((5,), (5,)), ((2, 4), (3, 4)), ((4,), (2, 3, 4)), ((2, 1, 3), (3,))):
    case("inner", "fn", torch.inner, T("f32", _sa), T("f32", _sb))
case("inner", "0d", torch.inner, T("i64", ()), T("f32", (3,)))
case("inner", "int", torch.inner, T("i64", (2, 3)), T("i64", (3,)))
case("inner", "method", lambda a, b: a.inner(b), T("f64", (2, 3)), T("f64", (4, 3)))

# --- chains and powers ----------------------------------------------------------------------------

MULTI_DOT = (
    ((2, 3), (3, 4)),
    ((3,), (3,)),
    ((3,), (3, 4), (4,)),
    ((2, 3), (3, 5), (5, 2)),
    ((5, 2), (2, 6), (6, 3)),  # cost favours the right pair first
    ((2, 3), (3, 4), (4, 5), (5, 2)),
    ((3,), (3, 6), (6, 2), (2, 5), (5,)),
    ((0, 2), (2, 2)),
)
for _shapes in MULTI_DOT:
    case("linalg_multi_dot", "list", lambda *ts: torch.linalg.multi_dot(list(ts)), *(T("f32", s) for s in _shapes))
case("linalg_multi_dot", "tuple-int", lambda *ts: torch.linalg.multi_dot(ts), T("i64", (2, 3)), T("i64", (3, 2)),
     T("i64", (2, 2)))
case("linalg_multi_dot", "f64", lambda a, b: torch.linalg.multi_dot([a, b]), T("f64", (2, 3)), T("f64", (3,)))
case("chain_matmul", "fn", torch.chain_matmul, T("f32", (2, 3)), T("f32", (3, 4)), T("f32", (4, 2)))
case("chain_matmul", "two", torch.chain_matmul, T("i64", (2, 3)), T("i64", (3, 4)))
case("chain_matmul", "one", torch.chain_matmul, T("f32", (2, 3)))
case("chain_matmul", "aten", lambda a, b: torch.ops.aten.chain_matmul([a, b]), T("f32", (2, 3)), T("f32", (3, 4)))
for _n in (0, 1, 2, 3, 5, 6, -1, -2, -3):
    case("linalg_matrix_power", f"n{_n}", lambda a, n=_n: torch.linalg.matrix_power(a, n), T("f64", (3, 3)))
case("linalg_matrix_power", "batch", lambda a: torch.linalg.matrix_power(a, 4), T("f32", (2, 3, 3)))
for _dtype in ("i64", "bool"):
    for _n in (0, 1):
        case("linalg_matrix_power", f"{_dtype}-n{_n}", lambda a, n=_n: torch.linalg.matrix_power(a, n), T(_dtype, (2, 2)))
case("linalg_matrix_power", "int", lambda a: torch.linalg.matrix_power(a, 3), T("i64", (3, 3)))
case("linalg_matrix_power", "torch", lambda a: torch.matrix_power(a, 2), T("f32", (2, 2)))
case("linalg_matrix_power", "method", lambda a: a.matrix_power(5), T("f32", (2, 2)))
case("linalg_matrix_power", "empty", lambda a: torch.linalg.matrix_power(a, 2), T("f32", (0, 0)))

# --- vecdot and cross -------------------------------------------------------------------------------

for _sa, _sb in (((5,), (5,)), ((2, 3), (2, 3)), ((2, 1, 3), (4, 3)), ((3,), (4, 3)), ((), ())):
    case("linalg_vecdot", "fn", torch.linalg.vecdot, T("f32", _sa), T("f32", _sb))
for _dtype in ("f64", "f16", "bf16"):
    case("linalg_vecdot", "dtypes", torch.linalg.vecdot, T(_dtype, (2, 4)), T(_dtype, (2, 4)))
case("linalg_vecdot", "dim", lambda a, b: torch.linalg.vecdot(a, b, dim=0), T("f32", (3, 2)), T("f32", (3, 2)))
case("linalg_vecdot", "1d-any-dim", lambda a, b: torch.linalg.vecdot(a, b, dim=0), T("f32", (3,)), T("f32", (3,)))
for _dtype in ("f32", "i64", "f16"):
    case("linalg_cross", "fn", torch.linalg.cross, T(_dtype, (4, 3)), T(_dtype, (4, 3)))
case("linalg_cross", "broadcast", torch.linalg.cross, T("f32", (2, 1, 3)), T("f32", (1, 4, 3)))
case("linalg_cross", "dim", lambda a, b: torch.linalg.cross(a, b, dim=0), T("f32", (3, 2)), T("f32", (3, 2)))
case("linalg_cross", "vector", torch.linalg.cross, T("f64", (3,)), T("f64", (3,)))
case("cross", "default-dim", torch.cross, T("f32", (2, 3, 3)), T("f32", (2, 3, 3)))
case("cross", "dim", lambda a, b: torch.cross(a, b, dim=-1), T("i64", (2, 3)), T("i64", (2, 3)))
case("cross", "method", lambda a, b: a.cross(b, dim=1), T("f32", (4, 3)), T("f32", (1, 3)))

# --- vander, diagonal, cdist -------------------------------------------------------------------------

for _dtype in ("f32", "i32", "u8", "c64"):
    case("linalg_vander", "fn", torch.linalg.vander, T(_dtype, (4,), "small"))
case("linalg_vander", "N", lambda x: torch.linalg.vander(x, N=3), T("f32", (2, 5)))
case("linalg_vander", "0d", lambda x: torch.linalg.vander(x, N=2), T("f32", ()))
case("linalg_vander", "empty", lambda x: torch.linalg.vander(x, N=3), T("f32", (0,)))
for _offset in (1, -1, -4):
    case("linalg_diagonal", f"offset{_offset}", lambda a, k=_offset: torch.linalg.diagonal(a, offset=k),
         T("f32", (3, 4)))
case("linalg_diagonal", "batch", torch.linalg.diagonal, T("i64", (2, 3, 3)))
case("linalg_diagonal", "dims", lambda a: torch.linalg.diagonal(a, dim1=0, dim2=2, offset=1), T("f32", (3, 2, 4)))
case("linalg_diagonal", "reversed-dims", lambda a: torch.linalg.diagonal(a, dim1=-1, dim2=0), T("bool", (3, 2, 4)))
case("linalg_diagonal", "empty", torch.linalg.diagonal, T("f32", (2, 0, 3)))


def _diagonal_follows_writes(a):
    d = torch.linalg.diagonal(a)
    a.mul_(2)
    return d + 1


case(("linalg_diagonal", "mul_"), "view-of-written", _diagonal_follows_writes, T("f32", (3, 3)))
for _sa, _sb in (((4, 3), (5, 3)), ((2, 4, 3), (2, 5, 3)), ((2, 1, 4, 2), (3, 5, 2))):
    case("cdist", "fn", torch.cdist, T("f32", _sa), T("f32", _sb))
for _p in (0.0, 3.0, float("inf")):
    case("cdist", f"p{_p}", lambda a, b, p=_p: torch.cdist(a, b, p=p), T("f64", (3, 2)), T("f64", (4, 2)))
case("cdist", "mm", lambda a, b: torch.cdist(a, b, compute_mode="use_mm_for_euclid_dist"), T("f32", (3, 2)),
     T("f32", (4, 2)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


def test_tensordot_picks_torchs_products():
    """A contraction over everything is a dot product; anything else one matrix product."""
    trace = trace_callable(lambda a, b: (torch.tensordot(a, b, dims=2), torch.tensordot(a, b, dims=([1], [1]))),
                           (torch.randn(2, 3), torch.randn(2, 3)), name="fn").trace
    assert [[s.symbol.qualname for s in b.subsymbols if s.symbol.namespace == "ltorch"] for b in trace.bsyms] == [
        ["ltorch.dot"], ["ltorch.matmul"]]


def test_multi_dot_multiplies_in_torchs_order():
    shapes = ((5, 2), (2, 6), (6, 3))  # (a*c)*(b+d) = 90 > (b*d)*(a+c) = 66: the right pair first
    trace = trace_callable(lambda a, b, c: torch.linalg.multi_dot([a, b, c]), tuple(torch.randn(s) for s in shapes),
                           name="fn").trace
    products = [s for s in trace.bsyms[0].subsymbols if s.symbol.qualname == "ltorch.matmul"]
    assert [p.args[0].shape for p in products] == [(2, 6), (5, 2)]


def test_a_write_through_linalg_diagonal_is_refused():
    # Eager writes a's diagonal; tracing has no way to put the view back into a.
    def f(a):
        torch.linalg.diagonal(a).add_(1)
        return a

    with pytest.raises(TracingError, match="linalg_diagonal"):
        trace_callable(f, (torch.randn(3, 3),), name="fn")


OPAQUE_FORMS = (
    ("vecdot-complex", lambda a: torch.linalg.vecdot(a, a), T("c64", (2, 3)), "torch.linalg.vecdot"),
)


@pytest.mark.parametrize(("fn", "arg", "opaque"), rows_by_id(OPAQUE_FORMS))
def test_unmodelled_forms_stay_torch_calls(fn, arg, opaque):
    check_stays_torch_call(fn, (arg,), opaque)


def _m(*shape, dtype=torch.float32):
    return torch.ones(shape, dtype=dtype)


REFUSED_CLEARLY = (
    ("tensordot-dtypes", lambda a, b: torch.tensordot(a, b, dims=1), (_m(2, 3), _m(3, 2, dtype=torch.float64)), "dtype"),
    ("tensordot-sizes", lambda a, b: torch.tensordot(a, b, dims=1), (_m(2, 3), _m(2, 2)), "differ"),
    ("tensordot-repeated", lambda a, b: torch.tensordot(a, b, dims=([0, 0], [1, 1])), (_m(3, 3), _m(3, 3)),
     "more than once"),
    ("tensordot-lengths", lambda a, b: torch.tensordot(a, b, dims=([0], [1, 0])), (_m(3, 3), _m(3, 3)), "length"),
    ("tensordot-too-many", lambda a, b: torch.tensordot(a, b, dims=3), (_m(3, 3), _m(3, 3)), "dims"),
    ("tensordot-bool", lambda a, b: torch.tensordot(a, b, dims=1), (_m(2, 2, dtype=torch.bool),) * 2, "bool"),
    ("inner-sizes", torch.inner, (_m(3, 2), _m(3)), "last dimension"),
    ("multi_dot-one", lambda a: torch.linalg.multi_dot([a]), (_m(2, 2),), "at least 2"),
    ("multi_dot-3d", lambda a, b: torch.linalg.multi_dot([a, b, a]), (_m(3), _m(3, 3, 3)), "2-D"),
    ("multi_dot-sizes", lambda a, b: torch.linalg.multi_dot([a, b]), (_m(2, 3), _m(2, 3)), "cannot be multiplied"),
    ("multi_dot-dtypes", lambda a, b: torch.linalg.multi_dot([a, b]), (_m(2, 3), _m(3, 2, dtype=torch.float64)),
     "dtype"),
    ("chain_matmul-vector", torch.chain_matmul, (_m(3), _m(3)), "2-D"),
    ("matrix_power-square", lambda a: torch.linalg.matrix_power(a, 2), (_m(2, 3),), "square"),
    ("matrix_power-int-inverse", lambda a: torch.linalg.matrix_power(a, -1), (_m(2, 2, dtype=torch.int64),), "int64"),
    ("matrix_power-bool", lambda a: torch.linalg.matrix_power(a, 2), (_m(2, 2, dtype=torch.bool),), "bool"),
    ("vecdot-int", torch.linalg.vecdot, (_m(3, dtype=torch.int64),) * 2, "floating point"),
    ("vecdot-dtypes", torch.linalg.vecdot, (_m(2, 3), _m(2, 3, dtype=torch.float64)), "dtype"),
    ("cross-ranks", torch.linalg.cross, (_m(2, 3), _m(3)), "number of dimensions"),
    ("cross-size", torch.linalg.cross, (_m(2, 4), _m(2, 4)), "length 3"),
    ("cross-dtypes", torch.linalg.cross, (_m(3), _m(3, dtype=torch.float64)), "dtype"),
    ("cross-bool", torch.linalg.cross, (_m(3, dtype=torch.bool),) * 2, "bool"),
    ("cross-no-size-3", torch.cross, (_m(2, 4), _m(2, 4)), "size 3"),
    ("vander-N", lambda x: torch.linalg.vander(x, N=1), (_m(3),), "greater than 1"),
    ("vander-bool", torch.linalg.vander, (_m(3, dtype=torch.bool),), "bool"),
    ("vander-half", torch.linalg.vander, (_m(3, dtype=torch.float16),), "float16"),
    ("diagonal-same-dims", lambda a: torch.linalg.diagonal(a, dim1=0, dim2=0), (_m(2, 3),), "both"),
    ("cdist-columns", torch.cdist, (_m(2, 3), _m(2, 4)), "rows"),
    ("cdist-int", torch.cdist, (_m(2, 3, dtype=torch.int64),) * 2, "int64"),
    ("cdist-negative-p", lambda a: torch.cdist(a, a, p=-1.0), (_m(2, 3),), "non-negative"),
)


test_refused_with_a_clear_error, test_eager_refuses_them_too = refusal_tests(REFUSED_CLEARLY)
