"""The reductions (sum, mean, amax, amin, var, all, any), softmax and log_softmax, and
cumsum, with their prims (sum, amax, amin, var, cumsum), exercised through the cases'
lowered traces."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from tests.ops.harness import (
    FLOATS,
    SHAPES,
    X3,
    Case,
    L,
    T,
    case_adder,
    check_case,
    check_refused,
    check_stays_torch_call,
    rows_by_id,
)

CASES: list[Case] = []
case = case_adder(CASES)

# --- sum, mean, amax, amin, var -------------------------------------------------------------

for _shape in SHAPES:
    case("sum", "fn", torch.sum, T("f32", _shape))
    case("mean", "fn", torch.mean, T("f32", _shape))
    case("amax", "fn", torch.amax, T("f32", _shape))
    case("amin", "fn", torch.amin, T("f32", _shape))
    if math.prod(_shape) > 1:  # one element has no unbiased variance
        case("var", "fn", torch.var, T("f64", _shape))
for _dtype in FLOATS + ("i64", "i32", "u8", "bool"):
    case("sum", "method-dim", lambda x: x.sum(1), T(_dtype, (3, 4)))
    case("sum", "fn-all", torch.sum, T(_dtype, (2, 3, 4)))
    case("amax", "method-dim", lambda x: x.amax(-1), T(_dtype, (3, 4)))
    case("amin", "fn-dims", lambda x: torch.amin(x, (0, 2), keepdim=True), T(_dtype, (2, 3, 4)))
for _dtype in FLOATS:
    case("mean", "method-dim", lambda x: x.mean(-1, keepdim=True), T(_dtype, (3, 4)))
    case("mean", "fn-all", torch.mean, T(_dtype, (2, 3, 4)))
    case("var", "method-dim", lambda x: x.var(1), T(_dtype, (3, 4)))
    case("var", "fn-all", torch.var, T(_dtype, (2, 3, 4)))
    case("softmax", "F", lambda x: F.softmax(x, dim=-1), T(_dtype, (3, 4)))
    case("log_softmax", "F", lambda x: F.log_softmax(x, dim=-1), T(_dtype, (3, 4)))
case("sum", "keepdim", lambda x: x.sum(dim=(0, -1), keepdim=True), T("f32", (2, 3, 4)))
case("sum", "dtype", lambda x: x.sum(1, dtype=torch.float64), T("f32", (3, 4)))
case("sum", "dtype", lambda x: torch.sum(x, dtype=torch.float32), T("i64", (3, 4)))
case("sum", "dtype", lambda x: x.sum(-1, dtype=torch.int32), T("bool", (3, 4)))
case("sum", "0d-dim", lambda x: x.sum(0), T("f32", ()))
case("sum", "0d-dim", lambda x: x.sum(-1, keepdim=True), T("i64", ()))
case("mean", "dims", lambda x: torch.mean(x, (0, 2)), T("f32", (2, 3, 4)))
case("mean", "dtype", lambda x: x.mean(dtype=torch.float64), T("f32", (3, 4)))
case("mean", "dtype", lambda x: x.mean(1, dtype=torch.float32), T("f16", (3, 4)))
case("mean", "0d-dim", lambda x: x.mean(0), T("f32", ()))
case("amax", "0d", lambda x: x.amax(0, keepdim=True), T("f32", ()))
case("var", "unbiased-false", lambda x: x.var(1, unbiased=False), T("f32", (3, 4)))
case("var", "correction", lambda x: torch.var(x, dim=(0, 2), correction=0, keepdim=True), T("f32", (2, 3, 4)))
case("var", "legacy-positional", lambda x: torch.var(x, False), T("f32", (3, 4)))
case("var", "keepdim", lambda x: x.var(-1, keepdim=True), T("f64", (2, 3, 4)))
case("var", "correction-2", lambda x: x.var(0, correction=2), T("f32", (5, 3)))

# --- softmax, log_softmax --------------------------------------------------------------------

for _shape, _dim in (((), 0), ((5,), 0), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), 1), ((2, 3, 4), -1)):
    case("softmax", f"fn-dim{_dim}", lambda x, d=_dim: torch.softmax(x, d), T("f32", _shape))
    case("log_softmax", f"fn-dim{_dim}", lambda x, d=_dim: torch.log_softmax(x, d), T("f32", _shape))
case("softmax", "method", lambda x: x.softmax(-1), T("f32", (2, 3, 4)))
case("softmax", "dtype", lambda x: torch.softmax(x, -1, dtype=torch.float32), T("f16", (3, 4)))
case("softmax", "F-dtype", lambda x: F.softmax(x, 0, dtype=torch.float64), T("f32", (3, 4)))
case("log_softmax", "method", lambda x: x.log_softmax(dim=1), T("f32", (2, 3, 4)))
case("log_softmax", "dtype", lambda x: F.log_softmax(x, -1, dtype=torch.float64), T("bf16", (3, 4)))
case("softmax", "large", lambda x: torch.softmax(x * 1000, -1), T("f32", (3, 4)))
case("softmax", "special", lambda x: torch.special.softmax(x, -1), T("f32", (3, 4)))
case("log_softmax", "special", lambda x: torch.special.log_softmax(x, 0, dtype=torch.float64), T("f32", (3, 4)))

# --- all, any ----------------------------------------------------------------------------------

for dtype in ("f32", "i64", "bool"):
    case("all", "full", torch.all, T(dtype, (3, 4)))
    case("all", "dim", lambda x: x.all(dim=1), T(dtype, (3, 4)))
    case("any", "full", lambda x: x.any(), T(dtype, (3, 4)))
    case("any", "keepdim", lambda x: torch.any(x, 0, keepdim=True), T(dtype, (3, 4)))
case("all", "u8", torch.all, T("u8", (3, 4)))
case("any", "literal", lambda x: x.any(-1), L(((0.0, 0.0), (0.0, 1.0)), "f32"))

# --- cumsum ---------------------------------------------------------------------------------------------------

for _dtype in FLOATS + ("i64", "i32", "u8", "bool"):
    case("cumsum", "fn", lambda x: torch.cumsum(x, 0), T(_dtype, (5, 3)))
case("cumsum", "method", lambda x: x.cumsum(-1), X3)
case("cumsum", "dim-kw", lambda x: x.cumsum(dim=1), T("i64", (3, 4)))
case("cumsum", "dtype", lambda x: torch.cumsum(x, 1, dtype=torch.float64), T("f32", (3, 4)))
case("cumsum", "dtype-half", lambda x: x.cumsum(0, dtype=torch.float16), T("i32", (6,)))
case("cumsum", "0d", lambda x: x.cumsum(0), T("f32", ()))
case("cumsum", "long-half", lambda x: x.cumsum(0), L((0.1,) * 300, "bf16"))
case(("cumsum", "sub"), "position-ids", lambda m: m.long().cumsum(-1) - 1, T("bool", (2, 6)))

# --- edge values and sizes ----------------------------------------------------------------------------------------

for _shape in ((0,), (2, 0)):
    case("sum", "empty", torch.sum, T("f32", _shape))
    case("mean", "empty-dim", lambda x: x.mean(-1), T("f32", _shape))
    case("softmax", "empty", lambda x: torch.softmax(x, 0), T("f32", _shape))
case("amax", "empty-kept-dim", lambda x: x.amax(1), T("f32", (0, 3)))
case("softmax", "masked", lambda x: torch.softmax(x, -1),
     L(((0.0, -math.inf, 1.0), (-math.inf, -math.inf, -math.inf)), "f32"))
case("log_softmax", "masked", lambda x: torch.log_softmax(x, -1), L(((0.0, -math.inf, 1.0),), "f32"))
case("mean", "int-with-dtype", lambda x: x.mean(dtype=torch.float32), T("i64", (3, 4)))
case("sum", "dim-none", lambda x: x.sum(dim=None), T("f32", (3, 4)))
case("mean", "complex", lambda x: x.mean(0), T("c64", (3, 4)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


OPAQUE_FORMS = (
    ("var-complex", lambda x: x.var(0), T("c64", (3, 4)), "torch.Tensor.var"),
)


@pytest.mark.parametrize(("fn", "arg", "opaque"), rows_by_id(OPAQUE_FORMS))
def test_unmodelled_forms_stay_torch_calls(fn, arg, opaque):
    assert check_stays_torch_call(fn, (arg,), opaque) == [opaque]


REFUSED = (
    ("mean-int", torch.mean, T("i64", (3,))),
    ("softmax-int", lambda x: x.softmax(0), T("i64", (3,))),
    ("amax-empty", lambda x: x.amax(0), T("f32", (0, 3))),
    ("amax-complex", lambda x: x.amax(), T("c64", (3,))),
    ("softmax-complex", lambda x: x.softmax(0), T("c64", (3,))),
    ("cumsum-dim", lambda x: x.cumsum(2), T("f32", (3, 4))),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(REFUSED))
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)
