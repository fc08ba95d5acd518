"""The reductions (sum, prod, nansum, mean, nanmean, count_nonzero, amax, amin, aminmax,
var, std, var_mean, std_mean, logsumexp, all, any, trace), softmax and log_softmax, and
the scans (cumsum, cumprod, logcumsumexp, cummax, cummin), with their prims (sum, prod,
amax, amin, var, cumsum, cumprod, logcumsumexp, cummax, cummin), exercised through the
cases' lowered traces."""

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

# --- prod, nansum, nanmean, count_nonzero ----------------------------------------------------

NAN, INF = math.nan, math.inf

for _dtype in FLOATS + ("i64", "i32", "u8", "bool"):
    case("prod", "fn-all", torch.prod, T(_dtype, (2, 3)))
    case("prod", "method-dim", lambda x: x.prod(1), T(_dtype, (3, 4)))
    case("nansum", "fn-all", torch.nansum, T(_dtype, (2, 3, 4)))
    case("count_nonzero", "fn", torch.count_nonzero, T(_dtype, (3, 4)))
case("prod", "keepdim", lambda x: torch.prod(x, -1, keepdim=True), T("f32", (2, 3, 4)))
case("prod", "dtype", lambda x: x.prod(0, dtype=torch.float64), T("f32", (3, 4)))
case("prod", "dtype-int", lambda x: torch.prod(x, dtype=torch.int32), T("bool", (3, 4)))
case("prod", "dtype-bool", lambda x: x.prod(1, dtype=torch.bool), L(((True, False, True), (True, True, True)), "bool"))
case("prod", "0d", lambda x: x.prod(0, keepdim=True), T("f32", ()))
case("prod", "empty", torch.prod, T("i32", (0, 3)))
case("prod", "empty-dim", lambda x: x.prod(0), T("f32", (0, 3)))
case("prod", "wraps", lambda x: x.prod(), L((2**40, 2**30, 3), "i64"))
case("nansum", "nan", lambda x: x.nansum(-1), L(((1.0, NAN, 2.5), (NAN, NAN, NAN)), "f32"))
case("nansum", "keepdim", lambda x: torch.nansum(x, (0, 2), keepdim=True), T("f16", (2, 3, 4)))
case("nansum", "dtype", lambda x: torch.nansum(x, dtype=torch.float64), L((1.5, NAN, -2.25), "f32"))
case("nansum", "dtype-int", lambda x: x.nansum(dtype=torch.int64), L((1.5, NAN, -2.75, 4.0), "f32"))
case("nansum", "0d", lambda x: x.nansum(0), L(NAN, "f32"))
for _dtype in FLOATS:
    case("nanmean", "fn-all", torch.nanmean, T(_dtype, (2, 3, 4)))
case("nanmean", "nan", lambda x: x.nanmean(1), L(((1.0, NAN, 2.5), (NAN, NAN, NAN)), "f32"))
case("nanmean", "keepdim", lambda x: torch.nanmean(x, -1, keepdim=True), L(((NAN, 2.0), (1.0, 4.0)), "f64"))
case("nanmean", "dtype", lambda x: x.nanmean(dtype=torch.float32), L((NAN, 0.5, 0.25), "bf16"))
case("nanmean", "empty", lambda x: x.nanmean(0), T("f32", (0, 3)))
case("count_nonzero", "dim", lambda x: torch.count_nonzero(x, dim=1), L(((0.0, NAN, 2.0), (0.0, -0.0, 1.0)), "f32"))
case("count_nonzero", "dims", lambda x: x.count_nonzero((0, -1)), T("i64", (2, 3, 4), "small"))
case("count_nonzero", "0d", lambda x: x.count_nonzero(0), L(0.0, "f32"))
case("count_nonzero", "complex", torch.count_nonzero, T("c64", (3,)))

# --- torch.max(x) and x.min() over every element (a kernel of their own) ----------------------------
_SIGNED_ZEROS = ((-0.0, -0.0, -0.0, -0.0), (-0.0, -0.0, -0.0, -0.0), (-0.0, 0.0, -0.0, -0.0), (-0.0, 0.0, 0.0, 0.0))
for _name, _fn in (("max_all", torch.max), ("min_all", torch.min)):
    case(_name, "fn", _fn, T("f32", (3, 4)))
    case(_name, "method", lambda x, n=_name[:3]: getattr(x, n)(), T("f32", (2, 3, 4)))
    for _dtype in ("i64", "u8", "bool", "f16", "bf16"):
        case(_name, "fn", _fn, T(_dtype, (4, 3)))
    case(_name, "0d", _fn, T("f32", ()))
    case(_name, "nan", _fn, L(((1.0, NAN, 3.0, NAN), (2.0, 1.0, 0.0, 1.0)), "f32"))
    case(_name, "signed-zeros", _fn, L(_SIGNED_ZEROS, "f32"))

# --- amax/amin of all elements, aminmax (torch.max(x) and x.min(): test_selection) -------------------

for _dtype in ("f32", "bf16", "i64", "u8", "bool"):
    case("amax", "every", torch.amax, T(_dtype, (3, 4)))
    case("amin", "method-every", lambda x: x.amin(), T(_dtype, (3, 4)))
    case("aminmax", "fn", torch.aminmax, T(_dtype, (3, 4)))
case("amax", "every-0d", torch.amax, T("f32", ()))
case("amin", "every-nan", lambda x: x.amin(), L((1.0, NAN, -3.0), "f32"))
case("aminmax", "dim", lambda x: torch.aminmax(x, dim=-1), X3)
case("aminmax", "keepdim", lambda x: x.aminmax(dim=0, keepdim=True), T("i32", (3, 4)))
case("aminmax", "all-keepdim", lambda x: torch.aminmax(x, keepdim=True), T("f32", (3, 4)))
case("aminmax", "fields", lambda x: torch.aminmax(x, dim=1).max - x.aminmax(dim=1).min, T("f64", (3, 4)))
case("aminmax", "0d", lambda x: torch.aminmax(x, dim=0), T("f32", ()))
case("aminmax", "empty-kept", lambda x: x.aminmax(dim=1), T("f32", (0, 3)))
case("aminmax", "nan", torch.aminmax, L((1.0, NAN, -3.0), "f32"))

# --- std, var_mean, std_mean -------------------------------------------------------------------------------

for _dtype in FLOATS:
    case("std", "method-dim", lambda x: x.std(1), T(_dtype, (3, 4)))
    case("var_mean", "fn-all", torch.var_mean, T(_dtype, (2, 3, 4)))
    case("std_mean", "fn-dim", lambda x: torch.std_mean(x, -1), T(_dtype, (3, 4)))
case("std", "fn-all", torch.std, T("f64", (2, 3, 4)))
case("std", "unbiased-false", lambda x: x.std(0, unbiased=False, keepdim=True), T("f32", (3, 4)))
case("std", "legacy-positional", lambda x: torch.std(x, False), T("f32", (3, 4)))
case("std", "positional", lambda x: torch.std(x, (0, 2), True, True), X3)
case("std", "correction", lambda x: x.std(dim=-1, correction=0), T("f32", (3, 4)))
case("std", "one-element", lambda x: x.std(), T("f32", (1,)))
case("var_mean", "correction", lambda x: torch.var_mean(x, (0, 2), correction=2, keepdim=True), X3)
case("var_mean", "legacy", lambda x: torch.var_mean(x, 1, False, True), T("f32", (3, 4)))
case("var_mean", "0d", lambda x: torch.var_mean(x, 0, correction=0), T("f32", ()))
case("var_mean", "empty", lambda x: torch.var_mean(x, 0), T("f32", (0, 3)))
case("std_mean", "unbiased", lambda x: torch.std_mean(x, unbiased=False), T("f32", (5,)))
case("std_mean", "unpacked", lambda x: (lambda s, m: (x - m) / s)(*torch.std_mean(x, 1, keepdim=True)),
     T("f32", (3, 4)))

# --- logsumexp -----------------------------------------------------------------------------------------------

for _dtype in FLOATS + ("i64", "bool"):
    case("logsumexp", "fn", lambda x: torch.logsumexp(x, 1), T(_dtype, (3, 4)))
case("logsumexp", "method-dims", lambda x: x.logsumexp((0, 2), keepdim=True), X3)
case("logsumexp", "special", lambda x: torch.special.logsumexp(x, -1), T("f32", (2, 5)))
case("logsumexp", "large", lambda x: torch.logsumexp(x * 1000, -1), T("f32", (3, 4)))
case("logsumexp", "infinite", lambda x: x.logsumexp(-1),
     L(((INF, 1.0), (-INF, -INF), (-INF, 2.0), (NAN, 1.0), (INF, -INF)), "f32"))
case("logsumexp", "0d", lambda x: torch.logsumexp(x, 0), T("f32", ()))
case("logsumexp", "empty", lambda x: torch.logsumexp(x, 1), T("f32", (2, 0)))
case("logsumexp", "empty-kept", lambda x: torch.logsumexp(x, 0, keepdim=True), T("f32", (2, 0)))
case("logsumexp", "all-keepdim", lambda x: torch.logsumexp(x, (), keepdim=True), T("f32", (3, 4)))

# --- trace -----------------------------------------------------------------------------------------------

for _dtype in ("f32", "f64", "f16", "bf16", "i64", "i32", "u8", "c64"):
    case("trace", "fn", torch.trace, T(_dtype, (3, 4)))
case("trace", "method-tall", lambda x: x.trace(), T("f32", (5, 2)))
case("trace", "nan-off-diagonal", torch.trace, L(((1.0, NAN), (INF, 2.0)), "f32"))
case("trace", "empty", torch.trace, T("f32", (0, 3)))

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

# --- cumprod, logcumsumexp, cummax, cummin -------------------------------------------------------------------

for _dtype in FLOATS + ("i64", "i32", "u8", "bool"):
    case("cumprod", "fn", lambda x: torch.cumprod(x, 0), T(_dtype, (5, 3)))
for _dtype in FLOATS + ("i64", "u8", "bool"):
    case("cummax", "fn", lambda x: torch.cummax(x, 0), T(_dtype, (5, 3), "small"))
    case("cummin", "method", lambda x: x.cummin(-1), T(_dtype, (3, 5), "small"))
for _dtype in FLOATS + ("c64",):
    case("logcumsumexp", "fn", lambda x: torch.logcumsumexp(x, 0), T(_dtype, (5, 3)))
case("cumprod", "method", lambda x: x.cumprod(-1), X3)
case("cumprod", "dtype", lambda x: torch.cumprod(x, 1, dtype=torch.float64), T("f32", (3, 4)))
case("cumprod", "0d", lambda x: x.cumprod(0), T("f32", ()))
case("cumprod", "empty", lambda x: x.cumprod(0), T("f32", (0, 3)))
case(("cumprod", "copy_"), "inplace", lambda x: x.clone().cumprod_(1), T("f32", (3, 4)))
case("logcumsumexp", "method", lambda x: x.logcumsumexp(dim=-1), X3)
case("logcumsumexp", "spread", lambda x: x.logcumsumexp(0), L((-1000.0, 0.0, -INF, INF, NAN, 1.0), "f32"))
case("logcumsumexp", "0d", lambda x: torch.logcumsumexp(x, -1), T("f32", ()))
for _name in ("cummax", "cummin"):
    _fn = getattr(torch, _name)
    case(_name, "ties-nan", lambda x, f=_fn: f(x, 0), L((1.0, 3.0, 3.0, NAN, 2.0, NAN, 0.0, 0.0), "f32"))
    case(_name, "ties", lambda x, f=_fn: f(x, -1), L(((2, 2, 1, 1, 3, 3), (0, 0, 0, 0, 0, 0)), "i64"))
    case(_name, "fields", lambda x, n=_name: getattr(x, n)(1).values * getattr(x, n)(1).indices, X3)
    case(_name, "0d", lambda x, f=_fn: f(x, 0), T("f32", ()))
    case(_name, "empty", lambda x, f=_fn: f(x, 0), T("f32", (0, 3)))

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
    ("std-complex", lambda x: torch.std(x), T("c64", (3, 4)), "torch.std"),
    ("var_mean-complex", lambda x: torch.var_mean(x, 1), T("c64", (3, 4)), "torch.var_mean"),
    ("logsumexp-complex", lambda x: x.logsumexp(0), T("c64", (3, 4)), "torch.Tensor.logsumexp"),
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
    ("std-int", torch.std, T("i64", (3, 4))),
    ("nanmean-int", torch.nanmean, T("i64", (3,))),
    ("logsumexp-dims", lambda x: x.logsumexp(()), T("f32", (3, 4))),
    ("logcumsumexp-int", lambda x: x.logcumsumexp(0), T("i64", (3,))),
    ("trace-vector", torch.trace, T("f32", (3,))),
    ("trace-bool", torch.trace, T("bool", (3, 3))),
    ("max-empty-all", lambda x: x.max(), T("f32", (0, 3))),
    ("aminmax-empty", torch.aminmax, T("f32", (0,))),
    ("cummax-complex", lambda x: x.cummax(0), T("c64", (3,))),
    ("count_nonzero-repeated", lambda x: x.count_nonzero((0, 0)), T("f32", (3, 4))),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(REFUSED))
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)
