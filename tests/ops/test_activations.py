"""The activation functions: sigmoid, relu, gelu and silu, in every torch spelling,
dtype and rank, and where their formulas saturate. They decompose into elementwise
prims and have none of their own."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from tests.ops.harness import (
    EXTREMES,
    FLOATS,
    Case,
    L,
    T,
    case_adder,
    check_case,
    check_refused,
    rows_by_id,
    unary_cases,
)

CASES: list[Case] = []
case = case_adder(CASES)

unary_cases(case, {
    "sigmoid": ({"fn": torch.sigmoid, "method": lambda x: x.sigmoid(), "F": F.sigmoid,
                 "expit": torch.special.expit}, FLOATS + ("i64",), "any"),
    "relu": ({"fn": torch.relu, "F": F.relu, "method": lambda x: x.relu()}, FLOATS + ("i64",), "any"),
    "gelu": ({"F": F.gelu, "tanh": lambda x: F.gelu(x, approximate="tanh")}, FLOATS, "any"),
    "silu": ({"F": F.silu}, FLOATS, "any"),
})
for _symbol, _fn in (("sigmoid", torch.sigmoid), ("silu", F.silu), ("gelu", F.gelu)):
    for _dtype in ("f32", "f64", "f16", "bf16"):
        case(_symbol, "extremes", _fn, L(EXTREMES if _dtype != "f16" else EXTREMES[:-1], _dtype))
case("gelu", "tanh-extremes", lambda x: F.gelu(x, approximate="tanh"), L(EXTREMES, "f32"))
case("relu", "nan", torch.relu, L((math.nan, -1.0, 0.0, 2.0), "f32"))
case("silu", "complex", F.silu, T("c64", (3, 4)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


REFUSED = (
    ("relu-bool", torch.relu, T("bool", (3,))),
    ("gelu-int", F.gelu, T("i64", (3,))),
    ("silu-int", F.silu, T("i64", (3,))),
    ("gelu-complex", F.gelu, T("c64", (3,))),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(REFUSED))
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)
