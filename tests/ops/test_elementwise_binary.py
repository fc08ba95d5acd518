"""The binary maths beyond arithmetic: fmod and remainder (`%`), atan2, copysign, hypot,
nextafter, heaviside, fmax/fmin, logaddexp/logaddexp2, xlogy and xlog1py, addcmul,
addcdiv, lerp, float_power, ldexp, gcd and lcm, in each torch spelling, with
broadcasting, type promotion, numbers on either side where torch takes them, in-place
twins, and the values where they are delicate (NaN, infinities, signed zeros)."""

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
SPECIAL = (NAN, INF, -INF, 0.0, -0.0, 1.5, -2.5, 1e30)


def binary(symbol: str, forms: dict, dtypes: tuple, lhs: str = "any", rhs: str = "any") -> None:
    """The first form on every dtype eager supports and on broadcast and zero-dim shapes,
    a half-precision pair of 64 elements (torch's vectorised loop), the other forms once."""
    first_form, first = next(iter(forms.items()))
    for dtype in dtypes:
        case(symbol, first_form, first, T(dtype, (3, 4), lhs), T(dtype, (3, 4), rhs))
    for sa, sb in (((2, 1, 4), (3, 1)), ((), (3,)), ((0, 2), (2,))):
        case(symbol, first_form, first, T(dtypes[0], sa, lhs), T(dtypes[0], sb, rhs))
    if "f16" in dtypes:
        case(symbol, first_form, first, T("f16", (64,), lhs), T("f16", (64,), rhs))
    for form, fn in list(forms.items())[1:]:
        case(symbol, form, fn, T(dtypes[0], (2, 3), lhs), T(dtypes[0], (3,), rhs))


def special_values(symbol: str, fn, dtype: str = "f32") -> None:
    """Every pair of SPECIAL values."""
    a = tuple(x for x in SPECIAL for _ in SPECIAL)
    b = tuple(y for _ in SPECIAL for y in SPECIAL)
    case(symbol, "special", fn, L(a, dtype), L(b, dtype))


INTS = ("i64", "i32")

# --- remainders --------------------------------------------------------------------------------

binary("fmod", {"fn": torch.fmod, "method": lambda a, b: a.fmod(b), "inplace": lambda a, b: a.fmod_(b)},
       FLOATS + INTS, rhs="nonzero")
binary("remainder", {"op": lambda a, b: a % b, "fn": torch.remainder, "method": lambda a, b: a.remainder(b),
                     "inplace": lambda a, b: a.remainder_(b), "imod": lambda a, b: a.__imod__(b)},
       FLOATS + INTS + ("u8",), rhs="nonzero")
for _scalar in (3, -2.5):
    case("fmod", f"scalar={_scalar}", lambda a, s=_scalar: torch.fmod(a, s), T("f32", (3, 4)))
    case("remainder", f"scalar={_scalar}", lambda a, s=_scalar: a % s, T("i64", (3, 4)))
    case("remainder", f"scalar-left={_scalar}", lambda a, s=_scalar: s % a, T("i64", (3, 4), "nonzero"))
case("remainder", "scalar-f16", lambda a: a % 0.3, T("f16", (64,)))
case("remainder", "promote", torch.remainder, T("i64", (3, 4)), T("f32", (4,), "nonzero"))
special_values("fmod", torch.fmod)
special_values("remainder", torch.remainder)

# --- angles, signs, steps -----------------------------------------------------------------------

binary("atan2", {"fn": torch.atan2, "arctan2": torch.arctan2, "method": lambda a, b: a.arctan2(b),
                 "inplace": lambda a, b: a.atan2_(b)}, FLOATS + ("i64", "bool"))
special_values("atan2", torch.atan2)
binary("copysign", {"fn": torch.copysign, "method": lambda a, b: a.copysign(b)}, FLOATS + ("i64", "bool"))
case("copysign", "scalar", lambda a: torch.copysign(a, -1), T("i64", (3, 4)))
case("copysign", "scalar-zero", lambda a: a.copysign(-0.0), T("f16", (3, 4)))
special_values("copysign", torch.copysign)
binary("hypot", {"fn": torch.hypot, "method": lambda a, b: a.hypot(b), "inplace": lambda a, b: a.hypot_(b)}, FLOATS)
case("hypot", "huge", torch.hypot, L((3e30, 1e-30, 0.0, INF), "f32"), L((4e30, 1e-30, -0.0, NAN), "f32"))
case("hypot", "promote", torch.hypot, T("f32", (3, 4)), T("f64", ()))
binary("nextafter", {"fn": torch.nextafter, "method": lambda a, b: a.nextafter(b)}, FLOATS)
special_values("nextafter", torch.nextafter)
binary("heaviside", {"fn": torch.heaviside, "method": lambda a, b: a.heaviside(b)}, FLOATS + ("i64", "bool"))
case("heaviside", "zeros", torch.heaviside, L((0.0, -0.0, NAN, -1.0, 2.0), "f32"), L((0.5, 0.25, 7.0, 1.0, 1.0), "f32"))

# --- extremes that ignore NaN ----------------------------------------------------------------------

binary("fmax", {"fn": torch.fmax, "method": lambda a, b: a.fmax(b)}, FLOATS + ("i64", "u8", "bool"))
binary("fmin", {"fn": torch.fmin, "method": lambda a, b: a.fmin(b)}, FLOATS + ("i64", "bool"))
case("fmax", "promote", torch.fmax, T("i64", (3, 4)), T("f32", (4,)))
special_values("fmax", torch.fmax)
special_values("fmin", torch.fmin, "bf16")

# --- logarithms of sums and products ----------------------------------------------------------------

binary("logaddexp", {"fn": torch.logaddexp, "method": lambda a, b: a.logaddexp(b)}, FLOATS)
binary("logaddexp2", {"fn": torch.logaddexp2, "method": lambda a, b: a.logaddexp2(b)}, FLOATS)
case("logaddexp", "promote", torch.logaddexp, T("f16", (3, 4)), T("f32", (4,)))
special_values("logaddexp", torch.logaddexp)
special_values("logaddexp2", torch.logaddexp2, "f16")
binary("xlogy", {"fn": torch.xlogy, "special": torch.special.xlogy, "method": lambda a, b: a.xlogy(b),
                 "inplace": lambda a, b: a.xlogy_(b)}, FLOATS + ("i64", "bool"), rhs="pos")
binary("xlog1py", {"fn": torch.special.xlog1py}, FLOATS + ("i64", "bool"), rhs="pos")
for _name, _fn in (("xlogy", torch.xlogy), ("xlog1py", torch.special.xlog1py)):
    special_values(_name, _fn)
    case(_name, "scalar-x", lambda b, f=_fn: f(2, b), T("f32", (3, 4), "pos"))
    case(_name, "scalar-x-zero", lambda b, f=_fn: f(0, b), L(SPECIAL, "f32"))
    case(_name, "scalar-y", lambda a, f=_fn: f(a, 3.5), T("i64", (3, 4)))
    case(_name, "scalar-y-nan", lambda a, f=_fn: f(a, NAN), L(SPECIAL, "f32"))

# --- fused multiply-adds and interpolation --------------------------------------------------------


def ternary(symbol: str, fn, dtypes: tuple, domain: str = "any") -> None:
    for dtype in dtypes:
        case(symbol, "fn", fn, T(dtype, (3, 4)), T(dtype, (3, 4)), T(dtype, (3, 4), domain))
    case(symbol, "fn", fn, T("f32", (2, 1, 4)), T("f32", (3, 1)), T("f32", (4,), domain))
    case(symbol, "fn", fn, T("f32", ()), T("f32", ()), T("f32", (), domain))
    case(symbol, "fn", fn, T("f16", (64,)), T("f16", (64,)), T("f16", (64,), domain))


ternary("addcmul", torch.addcmul, FLOATS + ("i64", "c64"))
ternary("addcdiv", torch.addcdiv, FLOATS + ("c64",), "nonzero")
for _value in (0.5, -2):
    case("addcmul", f"value={_value}", lambda a, b, c, v=_value: torch.addcmul(a, b, c, value=v),
         T("f32", (3, 4)), T("f32", (4,)), T("f32", (3, 1)))
    case("addcdiv", f"value={_value}", lambda a, b, c, v=_value: a.addcdiv(b, c, value=v),
         T("bf16", (3, 4)), T("bf16", (4,)), T("bf16", (3, 1), "nonzero"))
case("addcmul", "int-value-truncated", lambda a, b, c: torch.addcmul(a, b, c, value=2.5),
     T("i64", (3, 4)), T("i64", (3, 4)), T("i64", (3, 4)))
case("addcmul", "promote", torch.addcmul, T("f32", (3, 4)), T("i64", (3, 4)), T("f64", ()))
case("addcmul", "inplace", lambda a, b, c: a.addcmul_(b, c, value=3), T("f32", (3, 4)), T("f32", (4,)), T("f32", (4,)))
case("addcdiv", "promote", torch.addcdiv, T("i64", (3, 4)), T("f32", (3, 4)), T("i64", (3, 4), "nonzero"))
case("addcdiv", "inplace", lambda a, b, c: a.addcdiv_(b, c), T("f64", (3, 4)), T("f64", (4,)), T("f64", (4,), "pos"))

for _weight in (0.25, 0.75, -1.5):
    case("lerp", f"weight={_weight}", lambda a, b, w=_weight: torch.lerp(a, b, w), T("f32", (3, 4)), T("f32", (4,)))
    case("lerp", f"weight={_weight}", lambda a, b, w=_weight: a.lerp(b, w), T("bf16", (64,)), T("bf16", (64,)))
for _dtype in FLOATS:
    case("lerp", "tensor", torch.lerp, T(_dtype, (3, 4)), T(_dtype, (3, 4)), T(_dtype, (3, 4)))
case("lerp", "tensor", torch.lerp, T("f32", (2, 1, 4)), T("f32", (3, 1)), L((0.0, 0.49, 0.5, 1.0), "f32"))
case("lerp", "weight-0d-f64", torch.lerp, T("f32", (3, 4)), T("f32", (3, 4)), L(0.7, "f64"))
case("lerp", "tensor", torch.lerp, T("f16", (64,)), T("f16", (64,)), T("f16", (64,)))
case("lerp", "inplace", lambda a, b: a.lerp_(b, 0.3), T("f32", (3, 4)), T("f32", (4,)))
case("lerp", "special", torch.lerp, L(SPECIAL, "f32"), L(SPECIAL[::-1], "f32"),
     L((0.0, 0.3, 1.0, 0.6, 0.2, 0.9, 2.0, -1.0), "f32"))

# torch casts a zero-dim tensor of another dtype to the half type before computing in float32.
for _half in ("f16", "bf16"):
    case("lerp", "half-0d-f32", torch.lerp, T(_half, (64,)), T(_half, (64,)), L(0.7123, "f32"), exact=True)
    case("addcmul", "half-0d-f32", torch.addcmul, T(_half, (64,)), L(0.3123, "f32"), T(_half, (64,)), exact=True)
    case("logaddexp", "half-0d-f64", torch.logaddexp, T(_half, (64,)), L(-1.7071, "f64"), exact=True)

# --- powers and exponents -------------------------------------------------------------------------

binary("float_power", {"fn": torch.float_power, "method": lambda a, b: a.float_power(b)},
       ("f32", "f16", "i64", "bool", "c64"), lhs="pos", rhs="small")
case("float_power", "scalar", lambda a: torch.float_power(a, 2), T("f32", (3, 4)))
case("float_power", "scalar-left", lambda b: torch.float_power(2.5, b), T("i64", (3, 4), "small"))
case("float_power", "complex-scalar", lambda a: torch.float_power(a, 1j), T("f32", (3, 4), "pos"))
case("float_power", "inplace", lambda a, b: a.float_power_(b), T("f64", (3, 4), "pos"), T("f32", (4,)))
binary("ldexp", {"fn": torch.ldexp, "method": lambda a, b: a.ldexp(b), "inplace": lambda a, b: a.ldexp_(b)},
       ("f32", "f64", "f16", "bf16", "i64"), rhs="small")
case("ldexp", "mixed", torch.ldexp, T("f16", (3, 4)), T("i32", (4,), "small"))
case("ldexp", "0d-f64", torch.ldexp, T("f32", (3, 4)), L(3, "i64"))

# --- integers -------------------------------------------------------------------------------------

binary("gcd", {"fn": torch.gcd, "method": lambda a, b: a.gcd(b), "inplace": lambda a, b: a.gcd_(b)},
       ("i64", "i32", "i16", "i8", "u8"))
binary("lcm", {"fn": torch.lcm, "method": lambda a, b: a.lcm(b), "inplace": lambda a, b: a.lcm_(b)},
       ("i64", "i32", "i8", "u8"))
case("gcd", "promote", torch.gcd, T("i32", (3, 4)), T("i64", (4,)))
case("lcm", "zeros", torch.lcm, L((0, 0, 4, -6, 12, -128), "i8"), L((0, 5, 0, 4, -18, 1), "i8"))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


# --- forms left to torch: complex operands some of these take -------------------------------------

OPAQUE_FORMS = (
    ("logaddexp-complex", lambda x: torch.logaddexp(x, x), T("c64", (3,)), "torch.logaddexp"),
    ("lerp-complex", lambda x: torch.lerp(x, x, 0.5), T("c64", (3,)), "torch.lerp"),
)


@pytest.mark.parametrize(("fn", "arg", "opaque"), rows_by_id(OPAQUE_FORMS))
def test_unmodelled_forms_stay_torch_calls(fn, arg, opaque):
    assert opaque in check_stays_torch_call(fn, (arg,), opaque)


# --- calls eager torch refuses are refused while tracing, at the user's line ----------------------

REFUSED = (
    ("fmod-int-by-zero", lambda x: torch.fmod(x, 0), T("i64", (3,))),
    ("remainder-bool", lambda x: x % x, T("bool", (3,))),
    ("hypot-int", lambda x: torch.hypot(x, x), T("i64", (3,))),
    ("heaviside-mixed", lambda x: torch.heaviside(x, x.double()), T("f32", (3,))),
    ("heaviside-complex", lambda x: torch.heaviside(x, x), T("c64", (3,))),
    ("fmax-complex", lambda x: torch.fmax(x, x), T("c64", (3,))),
    ("nextafter-int", lambda x: torch.nextafter(x, x), T("i64", (3,))),
    ("xlogy-complex", lambda x: torch.xlogy(x, x), T("c64", (3,))),
    ("addcmul-bool", lambda x: torch.addcmul(x, x, x), T("bool", (3,))),
    ("addcdiv-int", lambda x: torch.addcdiv(x, x, x), T("i64", (3,))),
    ("lerp-mixed", lambda x: torch.lerp(x, x.double(), 0.5), T("f32", (3,))),
    ("lerp-int", lambda x: torch.lerp(x, x, 0.5), T("i64", (3,))),
    ("gcd-float", lambda x: torch.gcd(x, x), T("f32", (3,))),
    ("gcd-bool", lambda x: torch.gcd(x, x), T("bool", (3,))),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(REFUSED))
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)
