"""The order statistics (median, nanmedian, mode, kthvalue, quantile, nanquantile) and
their prims (median, nanmedian, mode, kthvalue), exercised through the cases' lowered traces. Ties are in the cases on purpose: the indices must be
eager's, not merely some index holding the value."""

from __future__ import annotations

import math

import pytest
import torch

from tests.ops.harness import FLOATS, X3, Case, L, T, case_adder, check_case, check_refused, rows_by_id
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable
from tracecli.passes.lower import lower

CASES: list[Case] = []
case = case_adder(CASES)

NAN = math.nan
TIES = ((2.0, 1.0, 2.0, 1.0, 3.0), (0.0, 0.0, 0.0, 0.0, 0.0), (5.0, 4.0, 4.0, 5.0, 4.0))

# --- median, nanmedian --------------------------------------------------------------------------

for _name in ("median", "nanmedian"):
    _fn = getattr(torch, _name)
    for _dtype in FLOATS + ("i64", "i32", "u8"):
        case(_name, "fn-all", _fn, T(_dtype, (3, 4), "small"))
        case(_name, "fn-dim", lambda x, f=_fn: f(x, 1), T(_dtype, (3, 5), "small"))
    case(_name, "method-keepdim", lambda x, n=_name: getattr(x, n)(dim=0, keepdim=True), X3)
    case(_name, "fields", lambda x, n=_name: getattr(x, n)(-1).values + getattr(x, n)(-1).indices, X3)
    case(_name, "ties", lambda x, f=_fn: f(x, -1), L(TIES, "f32"))
    case(_name, "ties-int", lambda x, f=_fn: f(x, 0), L(((1, 1, 2), (1, 1, 2), (3, 0, 2), (3, 0, 2)), "i64"))
    case(_name, "nan", lambda x, f=_fn: f(x, -1), L(((1.0, NAN, 3.0, 2.0), (NAN, NAN, NAN, NAN)), "f32"))
    case(_name, "nan-all", _fn, L((1.0, NAN, 3.0, 2.0), "f32"))
    case(_name, "0d", _fn, T("f32", ()))
    case(_name, "0d-dim", lambda x, f=_fn: f(x, 0), T("f32", ()))
    case(_name, "empty-all", _fn, T("f32", (0, 3)))
    case(_name, "empty-kept", lambda x, f=_fn: f(x, 1), T("f32", (0, 3)))
case("median", "even", torch.median, L((4.0, 1.0, 3.0, 2.0), "f64"))

# --- mode, kthvalue -------------------------------------------------------------------------------

for _dtype in FLOATS + ("i64", "i32", "u8", "bool"):
    case("mode", "fn", torch.mode, T(_dtype, (3, 6), "small"))
for _dtype in FLOATS + ("i64", "i32", "u8"):
    case("kthvalue", "fn", lambda x: torch.kthvalue(x, 2), T(_dtype, (3, 6), "small"))
case("mode", "method-dim", lambda x: x.mode(0, keepdim=True), T("i64", (5, 3), "small"))
case("mode", "ties", lambda x: torch.mode(x, 1), L(TIES, "f32"))
case("mode", "nan", lambda x: x.mode(), L(((NAN, 1.0, NAN), (1.0, NAN, 1.0)), "f32"))
case("mode", "fields", lambda x: x.mode(1).values * x.mode(1).indices, X3)
case("mode", "0d", lambda x: torch.mode(x), T("f32", ()))
case("mode", "empty-kept", lambda x: torch.mode(x, 1), T("f32", (0, 3)))
case("kthvalue", "method-dim", lambda x: x.kthvalue(3, dim=1, keepdim=True), X3)
case("kthvalue", "ties", lambda x: torch.kthvalue(x, 3, 1), L(TIES, "f32"))
case("kthvalue", "nan", lambda x: x.kthvalue(4), L(((1.0, NAN, 3.0, 2.0), (NAN, 0.0, NAN, 1.0)), "f32"))
case("kthvalue", "last", lambda x: x.kthvalue(x.shape[-1]), T("f32", (3, 4)))
case("kthvalue", "fields", lambda x: x.kthvalue(1, 1).values - x.kthvalue(1, 1).indices, T("f64", (3, 4)))
case("kthvalue", "0d", lambda x: torch.kthvalue(x, 1), T("f32", ()))

# --- quantile, nanquantile ------------------------------------------------------------------------

for _name in ("quantile", "nanquantile"):
    _fn = getattr(torch, _name)
    for _how in ("linear", "lower", "higher", "midpoint", "nearest"):
        case(_name, f"{_how}", lambda x, f=_fn, h=_how: f(x, 0.3, dim=1, interpolation=h), T("f32", (3, 6)))
        case(_name, f"{_how}-q-tensor", lambda x, q, f=_fn, h=_how: f(x, q, interpolation=h), T("f64", (3, 5)),
             L((0.0, 0.25, 0.5, 0.7, 1.0), "f64"))
    case(_name, "fn-all", lambda x, f=_fn: f(x, 0.75), X3)
    case(_name, "method-keepdim", lambda x, n=_name: getattr(x, n)(0.5, dim=-1, keepdim=True), X3)
    case(_name, "all-keepdim", lambda x, f=_fn: f(x, 0.1, keepdim=True), T("f32", (3, 4)))
    case(_name, "q-0d", lambda x, q, f=_fn: f(x, q, 0), T("f32", (5, 3)), L(0.4, "f32"))
    case(_name, "q-tensor-dim", lambda x, q, f=_fn: f(x, q, dim=0, keepdim=True), X3, L((0.5, 0.9), "f32"))
    case(_name, "nan", lambda x, f=_fn: f(x, 0.5, -1),
         L(((1.0, NAN, 3.0, 2.0), (NAN, NAN, NAN, NAN), (4.0, 0.0, 1.0, 3.0)), "f32"))
    case(_name, "0d", lambda x, f=_fn: f(x, 0.2), T("f32", ()))
    case(_name, "0d-dim", lambda x, f=_fn: f(x, 0.2, 0, True), T("f64", ()))
case("quantile", "ties", lambda x: torch.quantile(x, 0.6, dim=1, interpolation="nearest"), L(TIES, "f32"))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


REFUSED = (
    ("median-bool", torch.median, T("bool", (3,))),
    ("median-empty-dim", lambda x: x.median(0), T("f32", (0, 3))),
    ("nanmedian-complex", lambda x: x.nanmedian(0), T("c64", (3,))),
    ("mode-empty", torch.mode, T("f32", (0,))),
    ("kthvalue-k", lambda x: x.kthvalue(5), T("f32", (3, 4))),
    ("kthvalue-zero", lambda x: x.kthvalue(0), T("f32", (3, 4))),
    ("kthvalue-bool", lambda x: x.kthvalue(1), T("bool", (3, 4))),
    ("kthvalue-dim", lambda x: x.kthvalue(1, 2), T("f32", (3, 4))),
    ("quantile-int", lambda x: x.quantile(0.5), T("i64", (3, 4))),
    ("quantile-half", lambda x: x.quantile(0.5), T("f16", (3, 4))),
    ("quantile-q", lambda x: x.quantile(1.5), T("f32", (3, 4))),
    ("quantile-empty", lambda x: x.quantile(0.5), T("f32", (0, 4))),
    ("nanquantile-interpolation", lambda x: x.nanquantile(0.5, interpolation="cubic"), T("f32", (3, 4))),
    ("nanquantile-q-dtype", lambda x: x.nanquantile(torch.tensor([0.5], dtype=torch.float64)), T("f32", (3, 4))),
    ("nanquantile-q-2d", lambda x: x.nanquantile(torch.full((1, 1), 0.5)), T("f32", (3, 4))),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(REFUSED))
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)


def test_quantile_checks_a_tensor_q_at_run_time_as_eager_does():
    """Eager checks the values of a q tensor on CPU; so does the trace, at both levels."""
    x = torch.rand(3, 4)
    program = trace_callable(lambda x, q: torch.quantile(x, q, dim=1), (x, torch.tensor([0.5])), name="fn")
    for trace in (program.trace, lower(program.trace).trace):
        run = compile_trace(trace)
        torch.testing.assert_close(run(x, torch.tensor([0.2])), torch.quantile(x, torch.tensor([0.2]), dim=1))
        for q in (torch.tensor([1.5]), torch.tensor([-0.1])):
            with pytest.raises(RuntimeError):
                torch.quantile(x, q, dim=1)
            with pytest.raises(RuntimeError):
                run(x, q)
