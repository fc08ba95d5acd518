"""The unary maths beyond the basics: rounding (with decimals), signs, tests of special
values, nan_to_num, the inverse and hyperbolic trigonometric functions, logarithms and
exponentials in other bases, square, angles, sinc and logit, in each torch spelling
(functions, methods, aliases, in-place twins) and every dtype eager takes, with the
values where they are delicate (halves, signed zeros, NaN, infinities, domain edges).
They decompose into elementwise prims (tests/ops/test_elementwise.py checks those)."""

from __future__ import annotations

import math

import pytest
import torch

from tests.ops.harness import (
    FLOATS,
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

NAN, INF = math.nan, math.inf
SPECIAL = (NAN, -NAN, INF, -INF, 0.0, -0.0, 1.5, -2.5)  # for tests of special values
HALVES = (0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 1e-3, -7.25)  # where rounding modes differ
MINUS_ONE_TO_ONE = (-1.0, -0.999, -0.5, 0.0, 0.25, 0.75, 0.999, 1.0)


def unary(symbol: str, forms: dict, dtypes: tuple, domain: str = "any") -> None:
    """The first form at rank 3 and 0 in float32 and on every dtype eager supports, a
    half-precision input of 64 elements (torch's vectorised loop), the other forms once."""
    first_form, first = next(iter(forms.items()))
    case(symbol, first_form, first, T("f32", (2, 3, 4), domain))
    case(symbol, first_form, first, T("f32", (), domain))
    for dtype in dtypes:
        if dtype != "f32":
            case(symbol, first_form, first, T(dtype, (3, 4), domain))
    if "f16" in dtypes:
        case(symbol, first_form, first, T("f16", (64,), domain))
    for form, fn in list(forms.items())[1:]:
        case(symbol, form, fn, T("bf16" if "bf16" in dtypes else dtypes[0], (5,), domain))


INTS = ("i64", "u8")

# --- rounding --------------------------------------------------------------------------------

unary("floor", {"fn": torch.floor, "method": lambda x: x.floor(), "inplace": lambda x: x.floor_()}, FLOATS + INTS)
unary("ceil", {"fn": torch.ceil, "method": lambda x: x.ceil(), "inplace": lambda x: torch.ceil_(x)}, FLOATS + INTS)
unary("trunc", {"fn": torch.trunc, "fix": torch.fix, "method": lambda x: x.trunc(), "fix-method": lambda x: x.fix(),
                "inplace": lambda x: x.fix_()}, FLOATS + INTS)
unary("round", {"fn": torch.round, "method": lambda x: x.round(), "special": torch.special.round,
                "inplace": lambda x: x.round_()}, FLOATS + ("i64",))
unary("frac", {"fn": torch.frac, "method": lambda x: x.frac(), "inplace": lambda x: x.frac_()}, FLOATS)
for _fn in (torch.floor, torch.ceil, torch.trunc, torch.round, torch.frac):
    case(_fn.__name__, "halves", _fn, L(HALVES + (INF, -INF, NAN), "f32"))
for _decimals in (1, 2, -1, -2):
    for _dtype in ("f32", "f16"):
        case("round", f"decimals={_decimals}", lambda x, d=_decimals: torch.round(x, decimals=d),
             L((1.005, 2.675, -0.125, 15.5, 250.0, -35.0, 0.0, 149.99), _dtype))
    case("round", f"decimals={_decimals}", lambda x, d=_decimals: x.round(decimals=d), T("f32", (64,)))
case("round", "decimals-inplace", lambda x: x.round_(decimals=3), T("f64", (3, 4)))
case("round", "decimals-f16-vector", lambda x: torch.round(x, decimals=2), T("f16", (64,)))

# --- signs ------------------------------------------------------------------------------------

unary("sign", {"fn": torch.sign, "method": lambda x: x.sign(), "inplace": lambda x: x.sign_()},
      FLOATS + INTS + ("bool",))
unary("sgn", {"fn": torch.sgn, "method": lambda x: x.sgn(), "inplace": lambda x: x.sgn_()}, FLOATS + ("i64", "bool"))
unary("signbit", {"fn": torch.signbit, "method": lambda x: x.signbit()}, FLOATS + INTS + ("bool",))
for _dtype in ("f32", "bf16"):
    case("signbit", "special", torch.signbit, L(SPECIAL, _dtype))
    case("sign", "special", torch.sign, L(SPECIAL, _dtype))

# --- special values ---------------------------------------------------------------------------

unary("isnan", {"fn": torch.isnan, "method": lambda x: x.isnan()}, FLOATS + ("i64", "bool", "c64"))
unary("isinf", {"fn": torch.isinf, "method": lambda x: x.isinf()}, FLOATS + ("i64", "bool"))
unary("isfinite", {"fn": torch.isfinite, "method": lambda x: x.isfinite()}, FLOATS + ("i64", "bool"))
unary("isposinf", {"fn": torch.isposinf, "method": lambda x: x.isposinf()}, FLOATS + ("i64", "bool"))
unary("isneginf", {"fn": torch.isneginf, "method": lambda x: x.isneginf()}, FLOATS + ("i64", "bool"))
unary("isreal", {"fn": torch.isreal, "method": lambda x: x.isreal()}, ("f32", "i64", "bool"))
for _fn in (torch.isnan, torch.isinf, torch.isfinite, torch.isposinf, torch.isneginf):
    for _dtype in ("f32", "f16"):
        case(_fn.__name__, "special", _fn, L(SPECIAL, _dtype))
case("isnan", "complex-special", torch.isnan, L((complex(NAN, 0), complex(0, NAN), 1 + 2j), "c64"))

unary("nan_to_num", {"fn": torch.nan_to_num, "method": lambda x: x.nan_to_num(), "inplace": lambda x: x.nan_to_num_()},
      FLOATS + ("i64", "bool"))
for _dtype in ("f32", "f64", "bf16"):
    case("nan_to_num", "special", torch.nan_to_num, L(SPECIAL, _dtype))
    case("nan_to_num", "values", lambda x: torch.nan_to_num(x, nan=1.5, posinf=100.0, neginf=-7.0), L(SPECIAL, _dtype))
case("nan_to_num", "posinf-only", lambda x: x.nan_to_num(posinf=2.0), L(SPECIAL, "f32"))
# 1e10 does not fit in float16: torch's kernel casts it to inf.
case("nan_to_num", "f16-overflow", lambda x: torch.nan_to_num(x, posinf=1e10), L(SPECIAL, "f16"))

# --- forms that are the value itself: positive, conj, real and resolve_* of real tensors -------

case("exp2", "positive", lambda x: torch.exp2(+x) + torch.positive(x).exp2(), T("f32", (3, 4)))
case("exp2", "conj-real", lambda x: torch.exp2(x.conj()) * torch.real(x).exp2() * x.real.exp2(), T("f32", (3, 4)))
case("exp2", "resolve", lambda x: torch.resolve_conj(x).exp2() + x.resolve_neg().exp2() + x.conj_physical().exp2(),
     T("f64", (3, 4)))
# They are the tensor itself, so an in-place write through them reaches it, as in eager.
case("exp2", "positive-alias", lambda x: (x.positive().add_(1), x.exp2())[1], T("f32", (3, 4)))

# --- transcendental functions ------------------------------------------------------------------

unary("log1p", {"fn": torch.log1p, "method": lambda x: x.log1p(), "special": torch.special.log1p,
                "inplace": lambda x: x.log1p_()}, FLOATS + ("i64", "bool", "c64"), "pos")
unary("expm1", {"fn": torch.expm1, "method": lambda x: x.expm1(), "special": torch.special.expm1},
      FLOATS + ("i64", "bool", "c64"))
unary("log2", {"fn": torch.log2, "method": lambda x: x.log2()}, FLOATS + ("i64", "bool"), "pos")
unary("log10", {"fn": torch.log10, "method": lambda x: x.log10(), "inplace": lambda x: x.log10_()},
      FLOATS + ("i64",), "pos")
unary("exp2", {"fn": torch.exp2, "method": lambda x: x.exp2(), "special": torch.special.exp2},
      FLOATS + ("i64", "bool", "c64"))
unary("tan", {"fn": torch.tan, "method": lambda x: x.tan()}, FLOATS + ("i64",))
unary("asin", {"fn": torch.asin, "arcsin": torch.arcsin, "method": lambda x: x.arcsin()}, FLOATS + ("i64", "c64"))
unary("acos", {"fn": torch.acos, "arccos": torch.arccos, "method": lambda x: x.acos()}, FLOATS + ("i64",))
unary("atan", {"fn": torch.atan, "arctan": torch.arctan, "method": lambda x: x.arctan(),
               "inplace": lambda x: x.atan_()}, FLOATS + ("i64", "bool"))
unary("sinh", {"fn": torch.sinh, "method": lambda x: x.sinh()}, FLOATS + ("i64", "c64"))
unary("cosh", {"fn": torch.cosh, "method": lambda x: x.cosh()}, FLOATS + ("i64",))
unary("asinh", {"fn": torch.asinh, "arcsinh": torch.arcsinh, "method": lambda x: x.asinh()}, FLOATS + ("i64",))
unary("acosh", {"fn": torch.acosh, "arccosh": torch.arccosh, "method": lambda x: x.arccosh()},
      FLOATS + ("i64",), "pos")
unary("atanh", {"fn": torch.atanh, "arctanh": torch.arctanh, "method": lambda x: x.atanh()}, FLOATS + ("i64",))
for _fn in (torch.asin, torch.acos, torch.atanh):
    for _dtype in ("f32", "f64", "bf16"):
        case(_fn.__name__, "domain", _fn, L(MINUS_ONE_TO_ONE, _dtype))
for _fn in (torch.log1p, torch.expm1, torch.log2, torch.log10, torch.exp2, torch.sinh, torch.cosh):
    case(_fn.__name__, "special", _fn, L(SPECIAL + (1e-8, -1e-8, 88.0), "f32"))

unary("square", {"fn": torch.square, "method": lambda x: x.square(), "inplace": lambda x: x.square_()},
      FLOATS + ("i64", "u8", "bool", "c64"))
unary("deg2rad", {"fn": torch.deg2rad, "method": lambda x: x.deg2rad(), "inplace": lambda x: x.deg2rad_()},
      FLOATS + ("i64", "bool"))
unary("rad2deg", {"fn": torch.rad2deg, "method": lambda x: x.rad2deg()}, FLOATS + ("i64", "bool"))
unary("sinc", {"fn": torch.sinc, "method": lambda x: x.sinc(), "special": torch.special.sinc,
               "inplace": lambda x: x.sinc_()}, FLOATS + ("i64", "bool", "c64"))
for _dtype in ("f32", "bf16"):
    case("sinc", "zeros", torch.sinc, L((0.0, -0.0, 1.0, -2.0, 0.5, 1e-20, INF, NAN), _dtype))
unary("angle", {"fn": torch.angle, "method": lambda x: x.angle()}, FLOATS + ("i64", "bool"))
for _dtype in ("f32", "f16"):
    case("angle", "special", torch.angle, L(SPECIAL, _dtype))

_UNIT = (0.0, 1e-7, 0.1, 0.5, 0.75, 0.999, 1.0, 1.5)
unary("logit", {"fn": torch.logit, "method": lambda x: x.logit(), "special": torch.special.logit,
                "inplace": lambda x: x.logit_()}, FLOATS + ("i64", "bool"), "pos")
for _dtype in ("f32", "f16"):
    case("logit", "unit", torch.logit, L(_UNIT + (NAN, -0.5), _dtype))
    case("logit", "eps", lambda x: torch.logit(x, eps=1e-6), L(_UNIT + (NAN, -0.5), _dtype))
    case("logit", "eps-wide", lambda x: x.logit(0.25), L(_UNIT + (NAN, -0.5), _dtype))
case("logit", "eps-negative", lambda x: torch.logit(x, eps=-1.0), L(_UNIT, "f32"))
case("logit", "eps-nan", lambda x: torch.logit(x, eps=NAN), L(_UNIT, "f32"))
case("logit", "eps-vector", lambda x: torch.logit(x, eps=0.1), T("f16", (64,), "pos"))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


# --- forms left to torch: what needs the parts of complex numbers -------------------------------

OPAQUE_FORMS = (
    ("sgn-complex", torch.sgn, T("c64", (3,)), "torch.sgn"),
    ("isinf-complex", torch.isinf, T("c64", (3,)), "torch.isinf"),
    ("isfinite-complex", lambda x: x.isfinite(), T("c64", (3,)), "torch.Tensor.isfinite"),
    ("isreal-complex", torch.isreal, T("c64", (3,)), "torch.isreal"),
    ("nan_to_num-complex", torch.nan_to_num, T("c64", (3,)), "torch.nan_to_num"),
    ("conj-complex", lambda x: x.conj(), T("c64", (3,)), "torch.Tensor.conj"),
    ("angle-complex", torch.angle, T("c64", (3,)), "torch.angle"),
)


@pytest.mark.parametrize(("fn", "arg", "opaque"), rows_by_id(OPAQUE_FORMS))
def test_unmodelled_forms_stay_torch_calls(fn, arg, opaque):
    assert opaque in check_stays_torch_call(fn, (arg,), opaque)


# --- calls eager torch refuses are refused while tracing, at the user's line ----------------------

REFUSED = (
    ("floor-bool", torch.floor, T("bool", (3,))),
    ("round-complex", torch.round, T("c64", (3,))),
    ("round-decimals-int", lambda x: torch.round(x, decimals=2), T("i64", (3,))),
    ("frac-int", torch.frac, T("i64", (3,))),
    ("sign-complex", torch.sign, T("c64", (3,))),
    ("signbit-complex", torch.signbit, T("c64", (3,))),
    ("isposinf-complex", torch.isposinf, T("c64", (3,))),
    ("positive-bool", lambda x: +x, T("bool", (3,))),
    ("deg2rad-complex", torch.deg2rad, T("c64", (3,))),
    ("logit-complex", torch.logit, T("c64", (3,))),
    ("trunc-complex", torch.trunc, T("c64", (3,))),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(REFUSED))
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)
