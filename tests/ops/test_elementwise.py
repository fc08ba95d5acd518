"""The elementwise ops: arithmetic, comparisons, the unary math functions, where and
clamp, called the way users call them in torch, and their prims.

Each case traces a small function, checks the trace (verifier, no opaque calls, the
expected ltorch symbol recorded, every recorded type equal to what its implementation
returns), then runs it at the ltorch level and lowered to prims (which checks the
decompositions) and compares both with eager torch: same dtype, same shape, values
within the executor's tolerances (see tests/ops/harness.py).

The binary ops cover every shape pair in BINARY_SHAPES, the dtypes eager supports, each
torch spelling, the type-promotion rules in PROMOTIONS and Python numbers on either side.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F

from tests.ops.harness import (
    EXTREMES,
    FLOATS,
    PRIM_DTYPES,
    Case,
    L,
    T,
    case_adder,
    check_case,
    check_elementwise_prim_meta_matches_impl,
    check_refused,
    check_stays_torch_call,
    float32_operands,
    rows_by_id,
    unary_cases,
)
from tracecli.ops import prims

CASES: list[Case] = []
case = case_adder(CASES)

NAN, INF = math.nan, math.inf

# --- binary ops -----------------------------------------------------------------------

# Shape pairs: same shape at every rank, broadcasting, zero-dim beside n-dim.
BINARY_SHAPES = (
    ((), ()), ((5,), (5,)), ((3, 4), (3, 4)), ((2, 3, 4), (2, 3, 4)),
    ((3, 1), (4,)), ((2, 1, 4), (3, 1)), ((), (3, 4)), ((3, 4), ()),
)


@dataclass(frozen=True)
class Binary:
    symbol: str
    forms: dict[str, Callable]  # the first form is the one users write most
    dtypes: tuple[str, ...]  # tensor dtypes eager supports for this op on CPU
    scalars: tuple = (2, 2.5, True)
    scalar_left: Callable | None = None  # how a Python number on the left is written
    # The symbol a number on the left records: `2 < x` is `x > 2`, and torch computes
    # `2 / x` as `x.reciprocal() * 2`.
    reflected: str = ""
    lhs_domain: str = "any"
    rhs_domain: str = "any"


def _cmp_forms(op, fn, method):
    return {"op": op, "fn": fn, "method": method}


BINARY = (
    Binary("add", {
        "op": lambda a, b: a + b, "fn": lambda a, b: torch.add(a, b), "method": lambda a, b: a.add(b),
        "alpha": lambda a, b: torch.add(a, b, alpha=2),
    }, FLOATS + ("i64", "bool"), scalar_left=lambda a, b: a + b),
    Binary("sub", {
        "op": lambda a, b: a - b, "fn": lambda a, b: torch.sub(a, b), "method": lambda a, b: a.sub(b),
        "subtract": lambda a, b: torch.subtract(a, b), "alpha": lambda a, b: a.sub(b, alpha=3),
    }, FLOATS + ("i64",), scalars=(2, 2.5)),
    Binary("rsub", {
        "fn": lambda a, b: torch.rsub(a, b), "alpha": lambda a, b: torch.rsub(a, b, alpha=2),
    }, FLOATS + ("i64",), scalars=(2, 2.5), scalar_left=lambda a, b: a - b),
    Binary("mul", {
        "op": lambda a, b: a * b, "fn": lambda a, b: torch.mul(a, b), "method": lambda a, b: a.mul(b),
        "multiply": lambda a, b: torch.multiply(a, b),
    }, FLOATS + ("i64", "bool"), scalar_left=lambda a, b: a * b),
    Binary("true_divide", {
        "op": lambda a, b: a / b, "div": lambda a, b: torch.div(a, b), "method": lambda a, b: a.div(b),
        "fn": lambda a, b: torch.true_divide(a, b), "divide": lambda a, b: torch.divide(a, b),
    }, FLOATS + ("i64", "bool"), scalar_left=lambda a, b: a / b, rhs_domain="nonzero", reflected="reciprocal"),
    Binary("floor_divide", {
        "op": lambda a, b: a // b, "fn": lambda a, b: torch.floor_divide(a, b),
        "rounding": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    }, FLOATS + ("i64",), scalars=(2, 2.5), scalar_left=lambda a, b: a // b, rhs_domain="nonzero"),
    Binary("pow", {
        "op": lambda a, b: a**b, "fn": lambda a, b: torch.pow(a, b), "method": lambda a, b: a.pow(b),
    }, FLOATS + ("i64",), scalars=(2, 0.5), scalar_left=lambda a, b: a**b, lhs_domain="pos", rhs_domain="small"),
    Binary("maximum", {
        "fn": lambda a, b: torch.maximum(a, b), "method": lambda a, b: a.maximum(b),
    }, FLOATS + ("i64", "bool"), scalars=()),
    Binary("minimum", {
        "fn": lambda a, b: torch.minimum(a, b), "method": lambda a, b: a.minimum(b),
    }, FLOATS + ("i64", "bool"), scalars=()),
    Binary("eq", _cmp_forms(lambda a, b: a == b, torch.eq, lambda a, b: a.eq(b)),
           FLOATS + ("i64", "bool"), scalar_left=lambda a, b: a == b),
    Binary("ne", _cmp_forms(lambda a, b: a != b, torch.ne, lambda a, b: a.ne(b)),
           FLOATS + ("i64", "bool"), scalar_left=lambda a, b: a != b),
    Binary("lt", _cmp_forms(lambda a, b: a < b, torch.lt, lambda a, b: a.lt(b)),
           FLOATS + ("i64", "bool"), scalar_left=lambda a, b: a < b, reflected="gt"),
    Binary("le", _cmp_forms(lambda a, b: a <= b, torch.le, lambda a, b: a.le(b)),
           FLOATS + ("i64", "bool"), scalar_left=lambda a, b: a <= b, reflected="ge"),
    Binary("gt", _cmp_forms(lambda a, b: a > b, torch.gt, lambda a, b: a.gt(b)),
           FLOATS + ("i64", "bool"), scalar_left=lambda a, b: a > b, reflected="lt"),
    Binary("ge", _cmp_forms(lambda a, b: a >= b, torch.ge, lambda a, b: a.ge(b)),
           FLOATS + ("i64", "bool"), scalar_left=lambda a, b: a >= b, reflected="le"),
)

# Mixed-dtype operand pairs: each exercises one type-promotion rule.
PROMOTIONS = (
    (T("i64", (3, 4)), T("f32", (3, 4))),  # int with float: the float
    (T("i32", (3, 4)), T("i64", (4,))),  # ints widen
    (T("u8", (3, 4)), T("i8", (3, 4))),  # uint8 with int8: int16
    (T("bool", (3, 4)), T("i64", (3, 4))),
    (T("f16", (3, 4)), T("bf16", (3, 4))),  # two half types: float32
    (T("f16", (3, 4)), T("f32", ())),  # a zero-dim tensor cannot widen within its kind
    (T("f32", (3, 4)), T("f64", ())),
    (T("i64", (3, 4)), T("f64", ())),  # ... but raises the kind, keeping its own dtype
    (T("bool", (3, 4)), T("i32", ())),
    (T("f16", ()), T("f32", ())),  # zero-dim beside zero-dim promotes normally
    (T("i64", ()), T("f16", (3, 4))),
)


def _binary_cases(op: Binary) -> None:
    first_form, first = next(iter(op.forms.items()))
    lhs = lambda dtype, shape: T(dtype, shape, op.lhs_domain)
    rhs = lambda dtype, shape: T(dtype, shape, op.rhs_domain)
    for sa, sb in BINARY_SHAPES:
        case(op.symbol, first_form, first, lhs("f32", sa), rhs("f32", sb))
    for dtype in op.dtypes:
        if dtype == "f32":
            continue  # the shape matrix above
        for sa, sb in (((3, 4), (3, 4)), ((3, 1), (4,))):
            case(op.symbol, first_form, first, lhs(dtype, sa), rhs(dtype, sb))
    for form, fn in list(op.forms.items())[1:]:
        case(op.symbol, form, fn, lhs("f32", (3, 1)), rhs("f32", (4,)))
        case(op.symbol, form, fn, lhs("i64", (2, 3)), rhs("i64", (2, 3)))
    for a, b in PROMOTIONS:
        a, b = T(a.dtype, a.shape, op.lhs_domain), T(b.dtype, b.shape, op.rhs_domain)
        if "bool" in (a.dtype, b.dtype) and op.symbol in ("sub", "rsub", "floor_divide"):
            continue  # torch refuses bool operands for these
        case(op.symbol, first_form, first, a, b)
    for scalar in op.scalars:
        for dtype in ("f32", "i64", "bool", "f16"):
            if dtype == "bool" and op.symbol in ("sub", "rsub", "floor_divide", "pow"):
                continue
            if op.symbol == "rsub":
                case(op.symbol, "fn", op.forms["fn"], lhs(dtype, (3, 4)), scalar)
            else:
                case(op.symbol, first_form, first, lhs(dtype, (3, 4)), scalar)
            if op.scalar_left is not None:
                scalar_left = abs(scalar) if op.symbol == "pow" else scalar
                right = T(dtype, (3, 4), "small" if op.symbol == "pow" else op.rhs_domain)
                case(op.reflected or op.symbol, "scalar-left", op.scalar_left, scalar_left, right)


for _op in BINARY:
    _binary_cases(_op)

# Values where floor(a / b) is not torch's floor division: 1.0 / 0.1 rounds up to 10.0,
# but 1.0 = 9 * 0.1 + 0.09999..., so 1.0 // 0.1 is 9.0 in torch as in Python.
_FLOOR_A = (1.0, 7.0, -1.0, 0.3, 5.0, -7.5, 0.0, 3.0)
_FLOOR_B = (0.1, 0.7, 0.1, 0.1, -0.5, 2.0, 3.0, -0.3)
for _dtype in ("f32", "f64"):
    case("floor_divide", "op", lambda a, b: a // b, L(_FLOOR_A, _dtype), L(_FLOOR_B, _dtype))
case("floor_divide", "scalar", lambda a: a // 0.1, L(_FLOOR_A, "f64"))
case("floor_divide", "op", lambda a, b: a // b, L((-7, 7, -7, 7, 0, 5), "i64"), L((2, -2, -2, 2, 3, 5), "i64"))
case("true_divide", "int/int", lambda a, b: a / b, L((-7, 7, 1, 0), "i64"), L((2, -2, 3, 5), "i64"))
case("true_divide", "int/int-scalar", lambda a: a / 4, T("i32", (3, 4)))
for _dtype in FLOATS + ("i64",):
    # Bitwise: torch's `number / tensor` rounds twice (reciprocal, then product), and so must the trace.
    case(("reciprocal", "mul"), "number/tensor", lambda a: 2.485 / a, T(_dtype, (64,), "nonzero"), exact=True)
case("mul", "int*float", lambda a: a * 2.5, T("i64", (3, 4)))
case("add", "f16+f32-0d", lambda a, b: a + b, T("f16", (3, 4)), T("f32", ()))
case("add", "alpha-float", lambda a, b: torch.add(a, b, alpha=0.5), T("f32", (3, 4)), T("f32", (4,)))
case("add", "alpha-scalar", lambda a: torch.add(a, 3, alpha=2), T("i64", (3, 4)))
case("pow", "float**0d", lambda a, b: a**b, T("f32", (3, 4), "pos"), T("f64", ()))
case("pow", "int**float", lambda a: a**0.5, T("i64", (3, 4), "pos"))
case("pow", "square", lambda a: a**2, T("f16", (3, 4)))
for _name, _fn in (("eq", torch.eq), ("lt", torch.lt)):
    case(_name, "int-vs-float", _fn, L((1, 2, 3, 4), "i64"), L((1.0, 2.5, 2.9, 4.0), "f32"))
case(("gt", "add"), "chain", lambda a, b: (a + 1) > b, T("i64", (3, 4)), T("f32", (4,)))

# --- unary ops -------------------------------------------------------------------------

unary_cases(case, {
    "neg": ({"op": lambda x: -x, "fn": torch.neg, "method": lambda x: x.neg(), "negative": torch.negative},
            FLOATS + ("i64",), "any"),
    "abs": ({"fn": torch.abs, "builtin": lambda x: abs(x), "method": lambda x: x.abs()}, FLOATS + ("i64",), "any"),
    "exp": ({"fn": torch.exp, "method": lambda x: x.exp()}, FLOATS + ("i64", "bool"), "any"),
    "log": ({"fn": torch.log, "method": lambda x: x.log()}, FLOATS + ("i64",), "pos"),
    "sin": ({"fn": torch.sin, "method": lambda x: x.sin()}, FLOATS + ("i64", "bool"), "any"),
    "cos": ({"fn": torch.cos, "method": lambda x: x.cos()}, FLOATS + ("i64",), "any"),
    "tanh": ({"fn": torch.tanh, "method": lambda x: x.tanh(), "F": F.tanh}, FLOATS + ("i64",), "any"),
    "sqrt": ({"fn": torch.sqrt, "method": lambda x: x.sqrt()}, FLOATS + ("i64",), "pos"),
    "rsqrt": ({"fn": torch.rsqrt, "method": lambda x: x.rsqrt()}, FLOATS + ("i64",), "pos"),
    "erf": ({"fn": torch.erf, "method": lambda x: x.erf()}, FLOATS + ("i64",), "any"),
    "reciprocal": ({"fn": torch.reciprocal, "method": lambda x: x.reciprocal()}, FLOATS + ("i64", "bool"), "nonzero"),
})
for _symbol, _fn in (("tanh", torch.tanh), ("erf", torch.erf)):
    for _dtype in ("f32", "f64", "f16", "bf16"):
        case(_symbol, "extremes", _fn, L(EXTREMES if _dtype != "f16" else EXTREMES[:-1], _dtype))

# --- where ---------------------------------------------------------------------------------

case("where", "fn", torch.where, T("bool", (3, 4)), T("f32", (3, 4)), T("f32", (3, 4)))
case("where", "fn", torch.where, T("bool", (3, 1)), T("f32", (4,)), T("f32", ()))
case("where", "fn", torch.where, T("bool", ()), T("f64", (2, 3)), T("f64", (2, 3)))
case("where", "fn", torch.where, T("bool", (2, 3, 4)), T("i64", (3, 4)), T("f32", (4,)))
case("where", "fn", torch.where, T("bool", (3, 4)), T("f16", (3, 4)), T("f32", ()))
case("where", "fn", torch.where, T("bool", (3, 4)), T("bf16", (3, 4)), T("bf16", (3, 4)))
case("where", "fn", torch.where, T("bool", (3, 4)), T("bool", (3, 4)), T("bool", (4,)))
case("where", "scalar", lambda c, x: torch.where(c, x, 0.0), T("bool", (3, 4)), T("f32", (3, 4)))
case("where", "scalar", lambda c, x: torch.where(c, 1, x), T("bool", (3, 4)), T("i64", (4,)))
case("where", "scalar", lambda c, x: torch.where(c, x, 2.5), T("bool", (3, 4)), T("i64", (3, 4)))
case("where", "scalars", lambda c: torch.where(c, 1.0, 0.0), T("bool", (3, 4)))
case("where", "scalars", lambda c: torch.where(c, 1, 0), T("bool", (2, 3)))
case("where", "method", lambda c, x, y: x.where(c, y), T("bool", (3, 4)), T("f32", (3, 4)), T("f32", (4,)))
case(("where", "gt"), "mask", lambda x: torch.where(x > 0, x, x * 0.1), T("f32", (2, 3, 4)))

# --- clamp ----------------------------------------------------------------------------------------------------

CLAMP = {
    "fn": lambda x: torch.clamp(x, -1, 1),
    "method-min": lambda x: x.clamp(min=0),
    "method-max": lambda x: x.clamp(max=0.5),
    "clip": lambda x: torch.clip(x, -0.5, 2),
    "clip-method": lambda x: x.clip(max=1),
    "clamp_min": lambda x: torch.clamp_min(x, 0.25),
    "clamp_min-method": lambda x: x.clamp_min(0),
    "clamp_max": lambda x: torch.clamp_max(x, 1),
    "clamp_max-method": lambda x: x.clamp_max(-1.5),
    "min-above-max": lambda x: x.clamp(2, 1),
}
for _form, _fn in CLAMP.items():
    case("clamp", _form, _fn, T("f32", (3, 4)))
for _dtype in ("i64", "f16", "bf16", "f64", "i32"):
    case("clamp", "fn", lambda x: torch.clamp(x, -1, 1), T(_dtype, (3, 4)))
case("clamp", "int-float-bound", lambda x: x.clamp(min=1.5), T("i64", (3, 4)))
case("clamp", "tensors", lambda x, lo, hi: torch.clamp(x, lo, hi), T("f32", (3, 4)), T("f32", (4,)), T("f32", (3, 1)))
case("clamp", "tensor-wider", lambda x, lo: x.clamp(min=lo), T("f32", (4,)), T("f32", (2, 4)))
case("clamp", "tensor-promote", lambda x, lo: x.clamp(lo), T("f16", (3, 4)), T("f32", (3, 4)))
case("clamp", "0d-bounds", lambda x, lo, hi: x.clamp(lo, hi), T("f32", (3, 4)), T("f64", ()), T("f64", ()))
case("clamp", "int-0d-float", lambda x, lo: torch.clamp(x, lo), T("i64", (3, 4)), L(0.5, "f32"))
case("clamp", "int-tensor-bounds", lambda x, lo, hi: x.clamp(lo, hi), T("f32", (3, 4)), T("i32", (3, 4)), T("i64", (4,)))
case("clamp", "clamp_max-tensor", lambda x, hi: torch.clamp_max(x, hi), T("f32", (2, 3)), T("f32", (3,)))
case("clamp", "clamp_min-tensor", lambda x, lo: torch.clamp_min(x, lo), T("f32", (3,)), T("f32", (2, 3)))
case("clamp", "nan", lambda x: x.clamp(-1, 1), L((NAN, -INF, INF, 0.5), "f32"))
case("clamp", "nan-bound", lambda x, lo: x.clamp(min=lo), L((0.0, 1.0), "f32"), L((NAN, 0.0), "f32"))
# One tensor bound of a bool tensor is a maximum or a minimum, which torch takes.
case("clamp", "bool-tensor-min", lambda x, lo: torch.clamp_min(x, lo), T("bool", (3, 4)), T("bool", (4,)))
case("clamp", "bool-tensor-max", lambda x, hi: x.clamp(max=hi), T("bool", (3, 4)), T("bool", ()))

# --- other spellings of the same operations -----------------------------------------------------------------

case("abs", "absolute", torch.absolute, T("f32", (3, 4)))
case("abs", "absolute-method", lambda x: x.absolute(), T("i64", (3, 4)))
case("erf", "special", torch.special.erf, T("f32", (3, 4)))
case("maximum", "max-binary", torch.max, T("f32", (3, 4)), T("f32", (4,)))
case("maximum", "max-method", lambda a, b: a.max(b), T("i64", (3, 4)), T("i64", (3, 4)))
case("minimum", "min-binary", torch.min, T("f32", (3, 1)), T("f16", (4,)))
case("minimum", "min-method", lambda a, b: a.min(b), T("bf16", (3, 4)), T("bf16", ()))
for _alias, _symbol in (("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"), ("less_equal", "le"),
                        ("not_equal", "ne")):
    case(_symbol, _alias, getattr(torch, _alias), T("f32", (3, 4)), T("f32", (4,)))
    case(_symbol, f"{_alias}-method", lambda a, name=_alias: getattr(a, name)(0), T("i64", (3, 4)))

# --- edge values and sizes ----------------------------------------------------------------------------------------

for _sa, _sb in (((0,), (0,)), ((0, 3), (3,)), ((2, 0), (1, 0)), ((0,), ())):
    case("add", "empty", lambda a, b: a + b, T("f32", _sa), T("f32", _sb))
    case("floor_divide", "empty", lambda a, b: a // b, T("i64", _sa, "nonzero"), T("i64", _sb, "nonzero"))
for _shape in ((0,), (2, 0)):
    case("exp", "empty", torch.exp, T("f32", _shape))
_BIG = (2**62 + 3, -(2**62) - 1, 2**53 + 1, -7, 9_007_199_254_740_993)
case("floor_divide", "big-ints", lambda a, b: a // b, L(_BIG, "i64"), L((3, 7, 2, 2, -10), "i64"))
case("floor_divide", "big-ints-scalar", lambda a: a // 3, L(_BIG, "i64"))
case("floor_divide", "scalar-left-int", lambda a: 7 // a, L((2, -2, 3, -3, 7), "i64"))
case("floor_divide", "f16", lambda a, b: a // b, L(_FLOOR_A, "f16"), L(_FLOOR_B, "f16"))
case("floor_divide", "bf16", lambda a, b: a // b, L(_FLOOR_A, "bf16"), L(_FLOOR_B, "bf16"))
case("floor_divide", "by-zero", lambda a, b: a // b, L((1.0, -1.0, 0.0, 2.0), "f32"), L((0.0, 0.0, 0.0, -0.0), "f32"))
case("floor_divide", "by-zero-scalar", lambda a: a // 0.0, L((1.0, -1.0, 0.0), "f64"))
case("floor_divide", "inf", lambda a, b: a // b, L((math.inf, 1.0, -math.inf, 5.0), "f32"),
     L((2.0, math.inf, 3.0, -math.inf), "f32"))
# Half-precision mul, div and floor_divide read a wider zero-dim divisor unrounded.
_HALF_A = (2.484375, 3.572265625, 0.85400390625, 4.96875, -2.484375)
for _half in ("f16", "bf16"):
    for _wide in ("f32", "f64", "i64"):
        _b = L(2.4850123 if _wide != "i64" else 4097, _wide)
        case("floor_divide", f"half-by-0d-{_wide}", lambda a, b: a // b, L(_HALF_A, _half), _b, exact=True)
        case("true_divide", f"half-by-0d-{_wide}", lambda a, b: a / b, L(_HALF_A, _half), _b, exact=True)
        case("mul", f"half-by-0d-{_wide}", lambda a, b: a * b, L(_HALF_A, _half), _b, exact=True)
    case("floor_divide", "0d-by-half", lambda a, b: b // a, L(_HALF_A, _half), L(2.4850123, "f32"), exact=True)
    # 2.4850123 / 0.35498046875 is 7.0004, but 2.484375 (the number in half precision) gives 6.9986.
    case("floor_divide", "number-by-half", lambda a: 2.4850123 // a, L((0.35498046875, 1.5), _half), exact=True)
    case("floor_divide", "half-by-number", lambda a: a // 0.37, L(_HALF_A, _half), exact=True)
    case("floor_divide", "half-by-half", lambda a, b: a // b, T(_half, (64,)), T(_half, (64,), "nonzero"), exact=True)
# Trunc division: torch.div(a, b, rounding_mode="trunc") and the in-place div_.


def _trunc(a, b):
    return torch.div(a, b, rounding_mode="trunc")


for _sa, _sb in (((3, 4), (3, 4)), ((3, 1), (4,)), ((), (3,)), ((2, 0), (1, 0))):
    case("trunc_divide", "div", _trunc, T("f32", _sa), T("f32", _sb, "nonzero"))
for _dtype in ("f64", "i64", "i32", "u8"):
    case("trunc_divide", "div", _trunc, T(_dtype, (3, 4)), T(_dtype, (4,), "nonzero"))
case("trunc_divide", "method", lambda a: a.div(-3, rounding_mode="trunc"), T("i64", (3, 4)))
case("trunc_divide", "divide-number", lambda a: torch.divide(a, 0.37, rounding_mode="trunc"), L(_FLOOR_A, "f32"))
case("trunc_divide", "promote", _trunc, T("i64", (3, 4)), T("f32", (4,), "nonzero"))
case("trunc_divide", "big-ints", _trunc, L(_BIG, "i64"), L((3, 7, 2, -2, -10), "i64"))
case("trunc_divide", "by-zero", _trunc, L((1.0, -1.0, 0.0, 2.0), "f32"), L((0.0, 0.0, 0.0, -0.0), "f32"))
case("trunc_divide", "div_", lambda a, b: a.div_(b, rounding_mode="trunc"), T("f32", (3, 4)), T("f32", (4,), "nonzero"))
case("floor_divide", "div_", lambda a: a.div_(3, rounding_mode="floor"), T("i64", (3, 4)))
for _half in ("f16", "bf16"):
    # By one element torch divides in float32; (-8.4765625 / -0.0610046...) is 138.95 there, 139 in float16.
    case("trunc_divide", f"{_half}-by-0d", _trunc, L((-8.4765625, 3.5, -7.0), _half), L(-0.061004638671875, _half),
         exact=True)
    case("trunc_divide", f"{_half}-by-1", _trunc, T(_half, (64,)), L((-0.061004638671875,), _half), exact=True)
    case("trunc_divide", f"{_half}-by-number", lambda a: torch.div(a, 0.37, rounding_mode="trunc"),
         L(_HALF_A, _half), exact=True)
    case("trunc_divide", f"{_half}-by-0d-f32", _trunc, L(_HALF_A, _half), L(2.4850123, "f32"), exact=True)
case("true_divide", "by-zero", lambda a, b: a / b, L((1, -1, 0), "i64"), L((0, 0, 0), "i64"))
case("true_divide", "by-zero-float", lambda a: a / 0.0, L((1.0, -1.0, 0.0), "f32"))
case("maximum", "nan", torch.maximum, L((math.nan, 1.0, -0.0), "f32"), L((1.0, math.nan, 0.0), "f32"))
case("pow", "negative-base", lambda a, b: a**b, L((-2.0, -2.0, 0.0, 2.0), "f32"), L((0.5, 2.0, -1.0, -0.5), "f32"))
case("mul", "complex-scalar", lambda x: x * 1j, T("f32", (3, 4)))
case("add", "complex-scalar", lambda x: (1 + 2j) + x, T("f64", (3, 4)))
case("add", "complex", lambda a, b: a + b, T("c64", (3, 4)), T("f32", (4,)))
case("exp", "complex", torch.exp, T("c64", (3, 4)))
case("true_divide", "complex", lambda a, b: a / b, T("c64", (3, 4)), T("c64", (3, 4), "nonzero"))


# --- the tests ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


# Every arithmetic and comparison prim, also those no decomposition uses yet.
ELEMENTWISE_PRIMS = (
    "neg", "abs", "exp", "log", "log1p", "expm1", "sin", "cos", "tan", "tanh", "sqrt", "rsqrt", "erf",
    "sign", "floor", "ceil", "round", "trunc", "reciprocal", "asin", "acos", "atan", "sinh", "cosh", "asinh",
    "acosh", "atanh", "log2", "log10", "exp2",
    "add", "sub", "mul", "div", "pow", "maximum", "minimum", "fmod", "remainder", "atan2", "copysign", "nextafter",
    "hypot", "gcd", "eq", "ne", "lt", "le", "gt", "ge",
)


@pytest.mark.parametrize("dtype", PRIM_DTYPES)
@pytest.mark.parametrize("name", ELEMENTWISE_PRIMS)
def test_prim_meta_matches_impl(name, dtype):
    check_elementwise_prim_meta_matches_impl(name, dtype)


@pytest.mark.parametrize("name", [name for name in ELEMENTWISE_PRIMS if name != "gcd"])
def test_prims_accept_float32(name):
    """Strictness refuses dtypes, never the common case (gcd is for integers only)."""
    prims.ALL[name].meta(*float32_operands(name))


# --- forms the adapters leave to torch ----------------------------------------------------------------------------

OPAQUE_FORMS = (
    ("abs-complex", lambda x: x.abs(), T("c64", (3, 4)), "torch.Tensor.abs"),
    # In half precision torch divides by a tensor in float32 or in the half type as its
    # memory layout decides (an expanded single element reads as one number).
    ("div-trunc-half", lambda x: torch.div(x, x, rounding_mode="trunc"), T("f16", (3, 4), "nonzero"),
     "torch.div"),
)


@pytest.mark.parametrize(("fn", "arg", "opaque"), rows_by_id(OPAQUE_FORMS))
def test_unmodelled_forms_stay_torch_calls(fn, arg, opaque):
    assert check_stays_torch_call(fn, (arg,), opaque) == [opaque]


# --- calls eager torch refuses are refused while tracing, at the user's line ----------------------------------------

REFUSED = (
    ("abs-bool", lambda x: x.abs(), T("bool", (3,))),
    ("neg-bool", lambda x: -x, T("bool", (3,))),
    ("sub-bool", lambda x: x - x, T("bool", (3,))),
    ("floor_divide-bool", lambda x: x // x, T("bool", (3,))),
    ("pow-bool", lambda x: x**x, T("bool", (3,))),
    ("lt-complex", lambda x: x < 1, T("c64", (3,))),
    ("sub-bool-number", lambda x: x - True, T("f32", (3,))),
    ("rsub-bool-tensor", lambda x: 1 - x, T("bool", (3,))),
    ("pow-int-negative", lambda x: x**-1, T("i64", (3,))),
    ("floor_divide-int-by-zero", lambda x: x // 0, T("i64", (3,))),
    ("clamp-no-bounds", lambda x: torch.clamp(x), T("f32", (3, 4))),
    ("clamp-bool", lambda x: x.clamp(min=False), T("bool", (3, 4))),
    ("clamp-bool-tensors", lambda x: x.clamp(x, x), T("bool", (3, 4))),
    ("div-rounding-mode", lambda x: torch.div(x, 2, rounding_mode="round"), T("f32", (3,))),
    ("trunc_divide-int-by-zero", lambda x: torch.div(x, 0, rounding_mode="trunc"), T("i64", (3,))),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(REFUSED))
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)
