"""The selection ops: max and min along a dim, argmax, argmin, sort, argsort and topk,
and their prims (argmax, argmin, sort, topk), exercised through the cases' lowered
traces. Results with `.values` / `.indices` keep torch's named-tuple types."""

from __future__ import annotations

import math

import pytest
import torch

from tests.ops.harness import X3, Case, L, T, case_adder, check_case, check_refused, rows_by_id
from tracecli.frontend.tracer import trace_callable

CASES: list[Case] = []
case = case_adder(CASES)

NAN = math.nan

# --- max/min along a dim, argmax/argmin, sort, argsort, topk ---------------------------------------------

for _name in ("max", "min"):
    _fn = getattr(torch, _name)
    case(_name, "fn", lambda x, f=_fn: f(x, 1), T("f32", (3, 4)))
    case(_name, "method-keepdim", lambda x, n=_name: getattr(x, n)(dim=-1, keepdim=True), X3)
    case(_name, "values", lambda x, n=_name: getattr(x, n)(0).values, T("f32", (3, 4)))
    case(_name, "indices", lambda x, n=_name: getattr(x, n)(0).indices, T("f32", (3, 4)))
    case(_name, "unpacked", lambda x, n=_name: getattr(x, n)(1)[1] * 2, T("i64", (3, 4)))
    for _dtype in ("i64", "bool", "f16", "bf16"):
        case(_name, "fn", lambda x, f=_fn: f(x, 0), T(_dtype, (4, 3)))
    case(_name, "0d", lambda x, f=_fn: f(x, 0), T("f32", ()))
    case(_name, "ties", lambda x, f=_fn: f(x, 0), L((3.0, 1.0, 3.0, 1.0), "f32"))
    case(_name, "nan", lambda x, f=_fn: f(x, -1), L(((1.0, NAN, 3.0, NAN), (2.0, 1.0, 0.0, 1.0)), "f32"))
    case(_name, "empty-kept", lambda x, f=_fn: f(x, 1), T("f32", (0, 3)))
for _name in ("argmax", "argmin"):
    _fn = getattr(torch, _name)
    case(_name, "fn-all", _fn, T("f32", (3, 4)))
    case(_name, "method-dim", lambda x, n=_name: getattr(x, n)(dim=1), X3)
    case(_name, "keepdim", lambda x, f=_fn: f(x, -1, keepdim=True), T("f32", (3, 4)))
    case(_name, "all-keepdim", lambda x, f=_fn: f(x, keepdim=True), T("f32", (3, 4)))
    for _dtype in ("i64", "f16", "bf16", "u8"):
        case(_name, "fn", lambda x, f=_fn: f(x, 0), T(_dtype, (4, 3)))
    case(_name, "0d", _fn, T("f32", ()))
    case(_name, "ties", _fn, L((1, 3, 3, 0, 0), "i64"))
    case(_name, "nan", _fn, L((1.0, NAN, 3.0), "f32"))
case("sort", "fn", torch.sort, T("f32", (3, 4)))
case("sort", "method-descending", lambda x: x.sort(dim=0, descending=True), X3)
case("sort", "positional", lambda x: torch.sort(x, 0, True), T("f32", (4, 3)))
case("sort", "stable", lambda x: torch.sort(x, stable=True), L((2, 1, 2, 1, 0, 2), "i64"))
case("sort", "stable-descending", lambda x: x.sort(stable=True, descending=True, dim=-1), L((2, 1, 2, 1, 0), "i64"))
case("sort", "values", lambda x: x.sort().values, T("bf16", (2, 5)))
case("sort", "bool", lambda x: torch.sort(x, stable=True), T("bool", (6,)))
case("sort", "0d", torch.sort, T("f32", ()))
case("argsort", "fn", torch.argsort, T("f32", (3, 4)))
case("argsort", "method", lambda x: x.argsort(dim=0, descending=True), T("f64", (4, 3)))
case("argsort", "stable", lambda x: torch.argsort(x, stable=True), L((3, 1, 3, 1), "i64"))
case("topk", "fn", lambda x: torch.topk(x, 2), T("f32", (3, 5)))
case("topk", "method-dim", lambda x: x.topk(1, dim=0), X3)
case("topk", "smallest", lambda x: x.topk(3, largest=False), T("f32", (2, 6)))
case("topk", "unsorted-values", lambda x: torch.topk(x, 2, sorted=False).values.sort().values, T("f32", (3, 5)))
case("topk", "indices", lambda x: x.topk(2, -1).indices, T("i64", (3, 5)))
case("topk", "all", lambda x: x.topk(4), T("f16", (2, 4)))
case("topk", "none", lambda x: x.topk(0), T("bf16", (2, 4)))
case("topk", "0d", lambda x: torch.topk(x, 1), T("f32", ()))
case("sort", "msort", torch.msort, T("f32", (4, 3)))
case("sort", "method-msort", lambda x: x.msort(), L((3, 1, 3, 1, 0), "i64"))
case("sort", "msort-0d", torch.msort, T("f32", ()))
case(("argsort", "take_along_dim"), "sorted", lambda x: x.take_along_dim(x.argsort(dim=1), dim=1), T("f32", (3, 5)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


def test_named_tuples_reach_user_code():
    """`.values` / `.indices` work on traced results because they have torch's types."""
    seen = {}

    def fn(x):
        for name, result in (("max", x.max(1)), ("min", torch.min(x, 0)), ("sort", x.sort()), ("topk", x.topk(2))):
            seen[name] = type(result)
        return x

    trace_callable(fn, (torch.zeros(3, 4),))
    assert seen == {
        "max": torch.return_types.max, "min": torch.return_types.min, "sort": torch.return_types.sort,
        "topk": torch.return_types.topk,
    }


def test_max_and_min_of_all_elements_are_amax_and_amin():
    """torch.max(x) and x.min() reduce every element: the reductions family's amax and
    amin (its test module has their cases)."""
    program = trace_callable(lambda x: (torch.max(x), x.min()), (torch.zeros(3, 4),))
    assert [b.symbol.qualname for b in program.trace.bsyms] == ["ltorch.amax", "ltorch.amin"]


REFUSED = (
    ("max-dim", lambda x: x.max(2), T("f32", (3, 4))),
    ("max-empty", lambda x: x.max(0), T("f32", (0, 4))),
    ("argmax-bool", lambda x: x.argmax(), T("bool", (3,))),
    ("argmin-empty", lambda x: x.argmin(), T("f32", (0,))),
    ("topk-k", lambda x: x.topk(5), T("f32", (3, 4))),
    ("topk-bool", lambda x: x.topk(1), T("bool", (3, 4))),
    ("sort-complex", lambda x: x.sort(), T("c64", (3,))),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(REFUSED))
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)
