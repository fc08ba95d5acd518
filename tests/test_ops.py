"""The op matrix: every ltorch symbol, called the way users call it in torch.

Each case traces a small function, checks the trace (verifier, no opaque calls, the
expected ltorch symbol recorded, every recorded type equal to what its implementation
returns), then runs it at the ltorch level and lowered to prims (which checks the
decompositions) and compares both with eager torch: same dtype, same shape, values
within the executor's tolerances. Random ops run under the same seed and must agree
exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F

from tests.ops.harness import (
    DT,
    FLOATS,
    SEED,
    SHAPES,
    Case,
    L,
    T,
    assert_matches,
    case_adder,
    check_case,
    check_refused,
)
from tracecli.core.errors import TracingError
from tracecli.core.symbol import Tag
from tracecli.core.trace import walk
from tracecli.core.values import TensorValue
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable
from tracecli.ops import ltorch, prims
from tracecli.ops.promotion import ShapeError
from tracecli.ops.torch_bridge import FROM_TORCH, TO_TORCH

CASES: list[Case] = []
case = case_adder(CASES)

# --- elementwise binary ops -----------------------------------------------------------

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

# --- elementwise unary ops -------------------------------------------------------------

UNARY = {
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
    "sigmoid": ({"fn": torch.sigmoid, "method": lambda x: x.sigmoid(), "F": F.sigmoid,
                 "expit": torch.special.expit}, FLOATS + ("i64",), "any"),
    "relu": ({"fn": torch.relu, "F": F.relu, "method": lambda x: x.relu()}, FLOATS + ("i64",), "any"),
    "gelu": ({"F": F.gelu, "tanh": lambda x: F.gelu(x, approximate="tanh")}, FLOATS, "any"),
    "silu": ({"F": F.silu}, FLOATS, "any"),
}


def _unary_cases() -> None:
    for symbol, (forms, dtypes, domain) in UNARY.items():
        first_form, first = next(iter(forms.items()))
        for shape in SHAPES:
            case(symbol, first_form, first, T("f32", shape, domain))
        for dtype in dtypes:
            if dtype != "f32":  # f32 is the shape matrix above
                case(symbol, first_form, first, T(dtype, (3, 4), domain))
        for form, fn in list(forms.items())[1:]:
            case(symbol, form, fn, T("f32", (2, 3, 4), domain))
            case(symbol, form, fn, T("bf16", (5,), domain))


_unary_cases()
# Where the formulas saturate or lose precision: large magnitudes, exact zeros.
_EXTREMES = (-40.0, -10.0, -1e-4, 0.0, 1e-4, 10.0, 40.0, 88.0)
for _symbol, _fn in (("sigmoid", torch.sigmoid), ("silu", F.silu), ("gelu", F.gelu),
                     ("tanh", torch.tanh), ("erf", torch.erf)):
    for _dtype in ("f32", "f64", "f16", "bf16"):
        case(_symbol, "extremes", _fn, L(_EXTREMES if _dtype != "f16" else _EXTREMES[:-1], _dtype))
case("gelu", "tanh-extremes", lambda x: F.gelu(x, approximate="tanh"), L(_EXTREMES, "f32"))

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

# --- reductions -------------------------------------------------------------------------------

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
    case("layer_norm", "F", lambda x: F.layer_norm(x, (4,)), T(_dtype, (2, 3, 4)))
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
for _shape, _dim in (((), 0), ((5,), 0), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), 1), ((2, 3, 4), -1)):
    case("softmax", f"fn-dim{_dim}", lambda x, d=_dim: torch.softmax(x, d), T("f32", _shape))
    case("log_softmax", f"fn-dim{_dim}", lambda x, d=_dim: torch.log_softmax(x, d), T("f32", _shape))
case("softmax", "method", lambda x: x.softmax(-1), T("f32", (2, 3, 4)))
case("softmax", "dtype", lambda x: torch.softmax(x, -1, dtype=torch.float32), T("f16", (3, 4)))
case("softmax", "F-dtype", lambda x: F.softmax(x, 0, dtype=torch.float64), T("f32", (3, 4)))
case("log_softmax", "method", lambda x: x.log_softmax(dim=1), T("f32", (2, 3, 4)))
case("log_softmax", "dtype", lambda x: F.log_softmax(x, -1, dtype=torch.float64), T("bf16", (3, 4)))
case("softmax", "large", lambda x: torch.softmax(x * 1000, -1), T("f32", (3, 4)))
case("layer_norm", "affine",
     lambda x, w, b: F.layer_norm(x, (4,), w, b), T("f32", (2, 3, 4)), T("f32", (4,)), T("f32", (4,)))
case("layer_norm", "2d-shape",
     lambda x, w, b: F.layer_norm(x, (3, 4), w, b, eps=1e-3), T("f32", (2, 3, 4)), T("f32", (3, 4)),
     T("f32", (3, 4)))
case("layer_norm", "weight-only", lambda x, w: F.layer_norm(x, [4], weight=w), T("f64", (3, 4)), T("f64", (4,)))
case("layer_norm", "1d", lambda x: F.layer_norm(x, (5,)), T("f32", (5,)))
case("layer_norm", "bf16-affine",
     lambda x, w, b: F.layer_norm(x, (4,), w, b), T("bf16", (3, 4)), T("bf16", (4,)), T("bf16", (4,)))
case("layer_norm", "module", lambda x: torch.nn.functional.layer_norm(x, x.shape[-1:]), T("f32", (3, 4)))

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

# --- shapes --------------------------------------------------------------------------------------------

for _dtype in ("f32", "i64", "bool", "bf16"):
    case("reshape", "fn", lambda x: torch.reshape(x, (4, 3)), T(_dtype, (3, 4)))
case("reshape", "method", lambda x: x.reshape(2, -1), T("f32", (2, 3, 4)))
case("reshape", "method-tuple", lambda x: x.reshape((6, 4)), T("f32", (2, 3, 4)))
case("reshape", "view", lambda x: x.view(-1), T("f32", (2, 3, 4)))
case("reshape", "view", lambda x: x.view(1, 1), T("f32", ()))
case("reshape", "to-0d", lambda x: x.reshape(()), T("f32", (1, 1)))
case("reshape", "view_as", lambda x, y: x.view_as(y), T("f32", (3, 4)), T("i64", (2, 6)))
case("reshape", "reshape_as", lambda x, y: x.reshape_as(y), T("f32", (3, 4)), T("i64", (12,)))
case("permute", "method", lambda x: x.permute(2, 0, 1), T("f32", (2, 3, 4)))
case("permute", "fn", lambda x: torch.permute(x, (1, 0)), T("i64", (3, 4)))
case("permute", "negative", lambda x: x.permute((-1, 0, 1)), T("f32", (2, 3, 4)))
case("permute", "T", lambda x: x.T, T("f32", (3, 4)))
case("permute", "T", lambda x: x.T, T("bf16", (2, 3, 4)))
case("transpose", "fn", lambda x: torch.transpose(x, 0, 1), T("f32", (3, 4)))
case("transpose", "method", lambda x: x.transpose(-1, -3), T("f32", (2, 3, 4)))
case("transpose", "swapaxes", lambda x: torch.swapaxes(x, 1, 2), T("i64", (2, 3, 4)))
case("transpose", "swapdims", lambda x: x.swapdims(0, 1), T("f32", (2, 3)))
case("transpose", "mT", lambda x: x.mT, T("f32", (2, 3, 4)))
for _dim in (0, 1, -1, 2):
    case("unsqueeze", f"method-dim{_dim}", lambda x, d=_dim: x.unsqueeze(d), T("f32", (3, 4)))
case("unsqueeze", "fn", lambda x: torch.unsqueeze(x, 0), T("f32", ()))
case("unsqueeze", "0d-negative", lambda x: x.unsqueeze(-1), T("bool", ()))
case("squeeze", "all", lambda x: x.squeeze(), T("f32", (1, 3, 1, 4)))
case("squeeze", "dim", lambda x: x.squeeze(2), T("f32", (1, 3, 1, 4)))
case("squeeze", "fn-neg", lambda x: torch.squeeze(x, -4), T("i64", (1, 3, 1, 4)))
case("squeeze", "dims", lambda x: x.squeeze((0, 2)), T("f32", (1, 3, 1, 4)))
case("squeeze", "to-0d", lambda x: x.squeeze(), T("f32", (1, 1)))
case("expand", "method", lambda x: x.expand(3, 4), T("f32", (3, 1)))
case("expand", "new-dims", lambda x: x.expand(2, 3, 4), T("i64", (4,)))
case("expand", "minus-one", lambda x: x.expand(2, -1, 4), T("f32", (3, 1)))
case("expand", "tuple", lambda x: x.expand((2, 3)), T("bool", ()))
case("expand", "expand_as", lambda x, y: x.expand_as(y), T("f32", (1, 4)), T("f64", (3, 4)))
for _dim in (0, 1, -1):
    case("cat", f"fn-dim{_dim}", lambda a, b, d=_dim: torch.cat([a, b], d), T("f32", (2, 3)), T("f32", (2, 3)))
case("cat", "sizes", lambda a, b, c: torch.cat((a, b, c), dim=1), T("f32", (2, 1)), T("f32", (2, 3)), T("f32", (2, 2)))
case("cat", "promote", lambda a, b: torch.cat([a, b]), T("i64", (2, 3)), T("f32", (1, 3)))
case("cat", "promote", lambda a, b: torch.cat([a, b]), T("f16", (2,)), T("bf16", (3,)))
case("cat", "promote", lambda a, b: torch.cat([a, b], -1), T("bool", (2, 2)), T("u8", (2, 1)))
case("cat", "concat", lambda a, b: torch.concat([a, b], 0), T("bf16", (2, 3)), T("bf16", (2, 3)))
case("cat", "concatenate", lambda a, b: torch.concatenate([a, b], 1), T("i64", (2, 3)), T("i64", (2, 3)))
case("cat", "legacy-empty", lambda a, b: torch.cat([b, a, b]), T("f32", (0,)), T("f32", (2, 3)))
case("cat", "legacy-empty-promote", lambda a, b: torch.cat([a, b]), T("f64", (0,)), T("f32", (2, 3)))

# --- conversions ---------------------------------------------------------------------------------------

CONVERSIONS = {
    "float": lambda x: x.float(), "double": lambda x: x.double(), "half": lambda x: x.half(),
    "bfloat16": lambda x: x.bfloat16(), "long": lambda x: x.long(), "int": lambda x: x.int(),
    "short": lambda x: x.short(), "bool": lambda x: x.bool(),
    "to-dtype": lambda x: x.to(torch.float16), "to-kw": lambda x: x.to(dtype=torch.float64),
    "to-device-dtype": lambda x: x.to("cpu", torch.bfloat16),
    "to-device-obj": lambda x: x.to(torch.device("cpu"), dtype=torch.int64),
}
for _form, _fn in CONVERSIONS.items():
    for _src in ("f32", "i64", "bool", "f16"):
        if _fn(torch.zeros((), dtype=DT[_src])).dtype != DT[_src]:  # same dtype: nothing to record
            case("to", _form, _fn, T(_src, (3, 4)))
case("to", "to-tensor", lambda x, y: x.to(y), T("f32", (3, 4)), T("i64", (2,)))
case("to", "type_as", lambda x, y: x.type_as(y), T("i64", (3, 4)), T("f16", (2,)))
case("to", "0d", lambda x: x.double(), T("f32", ()))
case("to", "negative-to-int", lambda x: x.long(), L((-2.5, -0.5, 0.5, 2.5, 3.99), "f32"))

# --- factories -----------------------------------------------------------------------------------------

case("zeros", "varargs", lambda: torch.zeros(2, 3))
case("zeros", "tuple", lambda: torch.zeros((2, 3, 4), dtype=torch.float64))
case("zeros", "list", lambda: torch.zeros([4], dtype=torch.int64))
case("zeros", "0d", lambda: torch.zeros(()))
case("zeros", "device", lambda: torch.zeros(3, device="cpu", dtype=torch.bool))
case("ones", "varargs", lambda: torch.ones(2, 3))
case("ones", "tuple", lambda: torch.ones((3,), dtype=torch.bfloat16))
case("ones", "0d", lambda: torch.ones([], dtype=torch.int32))
case(("ones", "add"), "with-input", lambda x: x + torch.ones(x.shape[-1]), T("f32", (3, 4)))
case("full", "float", lambda: torch.full((2, 3), 1.5))
case("full", "int", lambda: torch.full((2, 3), 7))
case("full", "bool", lambda: torch.full((4,), True))
case("full", "dtype", lambda: torch.full([2, 2], 3, dtype=torch.float16))
case("full", "0d", lambda: torch.full((), -2.0, dtype=torch.float64))
case("full", "inf", lambda: torch.full((3,), float("-inf")))
case("arange", "end", lambda: torch.arange(5))
case("arange", "start-end", lambda: torch.arange(2, 9))
case("arange", "step", lambda: torch.arange(1, 10, 3))
case("arange", "negative-step", lambda: torch.arange(5, -5, -2))
case("arange", "float-step", lambda: torch.arange(0, 1, 0.1))
case("arange", "float-end", lambda: torch.arange(2.5))
case("arange", "dtype", lambda: torch.arange(6, dtype=torch.float64))
case("arange", "int-dtype-float-args", lambda: torch.arange(0.5, 4.5, dtype=torch.int64))
case("arange", "empty", lambda: torch.arange(3, 3))
case("arange", "int-dtype-float-step", lambda: torch.arange(0, 5, 1.5, dtype=torch.int64))
case("arange", "i32-float-bounds", lambda: torch.arange(0.5, 5.7, 2, dtype=torch.int32))
case("arange", "big-int64", lambda: torch.arange(2**60, 2**60 + 7, 3))
case("arange", "negative-float-step", lambda: torch.arange(1, -1, -0.3, dtype=torch.float64))
case(("arange", "mul"), "with-input", lambda x: x * torch.arange(x.shape[-1]), T("f32", (3, 4)))
for _src in ("f32", "i64", "bool", "bf16"):
    case("zeros_like", "fn", torch.zeros_like, T(_src, (3, 4)))
    case("ones_like", "fn", torch.ones_like, T(_src, (2, 3, 4)))
case("zeros_like", "dtype", lambda x: torch.zeros_like(x, dtype=torch.int64), T("f32", (3, 4)))
case("ones_like", "dtype", lambda x: torch.ones_like(x, dtype=torch.float16), T("bool", ()))

for _dtype in FLOATS:
    _torch_dtype = DT[_dtype]
    case("rand", _dtype, lambda d=_torch_dtype: torch.rand(3, 4, dtype=d), random=True)
    case("randn", _dtype, lambda d=_torch_dtype: torch.randn((2, 3, 4), dtype=d), random=True)
    case("rand_like", "fn", torch.rand_like, T(_dtype, (3, 4)), random=True)
    case("randn_like", "fn", torch.randn_like, T(_dtype, (5,)), random=True)
case("rand", "0d", lambda: torch.rand(()), random=True)
case("randn", "list", lambda: torch.randn([7]), random=True)
case("rand_like", "dtype", lambda x: torch.rand_like(x, dtype=torch.float64), T("f32", (3, 4)), random=True)
case("randn_like", "dtype", lambda x: torch.randn_like(x, dtype=torch.float32), T("i64", (2, 3)), random=True)
case(("randn", "rand", "add"), "two-draws", lambda: torch.randn(3) + torch.rand(3), random=True)
case(("rand_like", "mul"), "with-input", lambda x: x * torch.rand_like(x), T("f32", (3, 4)), random=True)

# --- other spellings of the same operations -----------------------------------------------------------------

case("abs", "absolute", torch.absolute, T("f32", (3, 4)))
case("abs", "absolute-method", lambda x: x.absolute(), T("i64", (3, 4)))
case("erf", "special", torch.special.erf, T("f32", (3, 4)))
case("transpose", "swapdims-fn", lambda x: torch.swapdims(x, 0, 2), T("f32", (2, 3, 4)))
case("transpose", "t-fn", torch.t, T("f32", (3, 4)))
case("transpose", "t-method", lambda x: x.t(), T("i64", (2, 5)))
case("maximum", "max-binary", torch.max, T("f32", (3, 4)), T("f32", (4,)))
case("maximum", "max-method", lambda a, b: a.max(b), T("i64", (3, 4)), T("i64", (3, 4)))
case("minimum", "min-binary", torch.min, T("f32", (3, 1)), T("f16", (4,)))
case("minimum", "min-method", lambda a, b: a.min(b), T("bf16", (3, 4)), T("bf16", ()))
case("matmul", "mm", torch.mm, T("f32", (3, 4)), T("f32", (4, 5)))
case("matmul", "mm-method", lambda a, b: a.mm(b), T("f64", (3, 4)), T("f64", (4, 2)))
case("matmul", "bmm", torch.bmm, T("f32", (2, 3, 4)), T("f32", (2, 4, 5)))
case("matmul", "bmm-method", lambda a, b: a.bmm(b), T("f32", (2, 3, 4)), T("f32", (2, 4, 5)))
case("softmax", "special", lambda x: torch.special.softmax(x, -1), T("f32", (3, 4)))
case("log_softmax", "special", lambda x: torch.special.log_softmax(x, 0, dtype=torch.float64), T("f32", (3, 4)))
case("layer_norm", "torch-fn", lambda x, w: torch.layer_norm(x, (4,), w), T("f32", (3, 4)), T("f32", (4,)))
case("reshape", "flatten", torch.flatten, T("f32", (2, 3, 4)))
case("reshape", "flatten-start", lambda x: torch.flatten(x, 1), T("f32", (2, 3, 4)))
case("reshape", "flatten-method", lambda x: x.flatten(0, -2), T("i64", (2, 3, 4)))
case("reshape", "flatten-0d", torch.flatten, T("f32", ()))
case("expand", "broadcast_to", lambda x: torch.broadcast_to(x, (2, 3, 4)), T("f32", (3, 1)))
case("expand", "broadcast_to-method", lambda x: x.broadcast_to((3, 4)), T("f32", (4,)))
for _alias, _symbol in (("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"), ("less_equal", "le"),
                        ("not_equal", "ne")):
    case(_symbol, _alias, getattr(torch, _alias), T("f32", (3, 4)), T("f32", (4,)))
    case(_symbol, f"{_alias}-method", lambda a, name=_alias: getattr(a, name)(0), T("i64", (3, 4)))
case("to", "byte", lambda x: x.byte(), T("i64", (3, 4), "pos"))
case("to", "char", lambda x: x.char(), T("f32", (3, 4)))
case("to", "type", lambda x: x.type(torch.float16), T("f32", (3, 4)))
case("zeros", "size-kw", lambda: torch.zeros(size=(2, 3)))
case("ones", "size-kw", lambda: torch.ones(size=[4], dtype=torch.int64))
case("rand", "size-kw", lambda: torch.rand(size=(2, 3)), random=True)
case("zeros", "new_zeros", lambda x: x.new_zeros(2, 3), T("f64", (4,)))
case("ones", "new_ones", lambda x: x.new_ones((2,), dtype=torch.int32), T("f32", (4,)))
case("full", "new_full", lambda x: x.new_full((2, 2), 3), T("bf16", (4,)))
case("arange", "kw", lambda: torch.arange(start=2, end=9, step=3))
case("arange", "end-kw", lambda: torch.arange(end=4))
case("arange", "start-end-kw", lambda: torch.arange(1, end=4, dtype=torch.float64))

# --- edge values and sizes ----------------------------------------------------------------------------------------

for _sa, _sb in (((0,), (0,)), ((0, 3), (3,)), ((2, 0), (1, 0)), ((0,), ())):
    case("add", "empty", lambda a, b: a + b, T("f32", _sa), T("f32", _sb))
    case("floor_divide", "empty", lambda a, b: a // b, T("i64", _sa, "nonzero"), T("i64", _sb, "nonzero"))
for _shape in ((0,), (2, 0)):
    case("exp", "empty", torch.exp, T("f32", _shape))
    case("sum", "empty", torch.sum, T("f32", _shape))
    case("mean", "empty-dim", lambda x: x.mean(-1), T("f32", _shape))
    case("softmax", "empty", lambda x: torch.softmax(x, 0), T("f32", _shape))
case("amax", "empty-kept-dim", lambda x: x.amax(1), T("f32", (0, 3)))
case("cat", "empty-2d", lambda a, b: torch.cat([a, b]), T("f32", (0, 3)), T("f32", (2, 3)))
case("matmul", "empty-inner", lambda a, b: a @ b, T("f32", (3, 0)), T("f32", (0, 4)))
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
case("true_divide", "by-zero", lambda a, b: a / b, L((1, -1, 0), "i64"), L((0, 0, 0), "i64"))
case("true_divide", "by-zero-float", lambda a: a / 0.0, L((1.0, -1.0, 0.0), "f32"))
case("softmax", "masked", lambda x: torch.softmax(x, -1),
     L(((0.0, -math.inf, 1.0), (-math.inf, -math.inf, -math.inf)), "f32"))
case("log_softmax", "masked", lambda x: torch.log_softmax(x, -1), L(((0.0, -math.inf, 1.0),), "f32"))
case("layer_norm", "constant", lambda x: F.layer_norm(x, (3,)), L(((2.0, 2.0, 2.0), (1.0, 2.0, 3.0)), "f32"))
case("mean", "int-with-dtype", lambda x: x.mean(dtype=torch.float32), T("i64", (3, 4)))
case("sum", "dim-none", lambda x: x.sum(dim=None), T("f32", (3, 4)))
case("maximum", "nan", torch.maximum, L((math.nan, 1.0, -0.0), "f32"), L((1.0, math.nan, 0.0), "f32"))
case("relu", "nan", torch.relu, L((math.nan, -1.0, 0.0, 2.0), "f32"))
case("pow", "negative-base", lambda a, b: a**b, L((-2.0, -2.0, 0.0, 2.0), "f32"), L((0.5, 2.0, -1.0, -0.5), "f32"))
case("to", "float-to-bool", lambda x: x.bool(), L((0.0, -0.0, 0.1, math.nan), "f32"))
case("mul", "complex-scalar", lambda x: x * 1j, T("f32", (3, 4)))
case("add", "complex-scalar", lambda x: (1 + 2j) + x, T("f64", (3, 4)))
case("add", "complex", lambda a, b: a + b, T("c64", (3, 4)), T("f32", (4,)))
case("exp", "complex", torch.exp, T("c64", (3, 4)))
case("silu", "complex", F.silu, T("c64", (3, 4)))
case("mean", "complex", lambda x: x.mean(0), T("c64", (3, 4)))
case("true_divide", "complex", lambda a, b: a / b, T("c64", (3, 4)), T("c64", (3, 4), "nonzero"))

# --- composites users write --------------------------------------------------------------------------------


def _attention(q, k, v):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return torch.softmax(scores, dim=-1) @ v


case(("matmul", "transpose", "true_divide", "softmax"), "attention", _attention,
     T("f32", (2, 3, 4)), T("f32", (2, 5, 4)), T("f32", (2, 5, 6)))
case(("sub", "mean", "pow", "rsqrt", "mul", "add"), "manual-norm",
     lambda x: (x - x.mean(-1, keepdim=True)) * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6),
     T("f32", (2, 3, 4)))


# --- the tests ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


RANDOM_SYMBOLS = {"rand", "randn", "rand_like", "randn_like", "dropout"}


@pytest.mark.parametrize("name", sorted(ltorch.ALL))
def test_random_tag(name):
    """Exactly the sampling ops carry RANDOM, so dce and cse never drop or merge a draw."""
    assert (Tag.RANDOM in ltorch.ALL[name].tags) == (name in RANDOM_SYMBOLS)


@pytest.mark.parametrize("name", sorted(prims.ALL))
def test_random_tag_on_prims(name):
    assert (Tag.RANDOM in prims.ALL[name].tags) == (name in {"uniform", "normal", "bernoulli"})


def test_random_draws_are_tagged_in_traces():
    program = trace_callable(lambda x: torch.rand_like(x) + torch.randn(3, 4), (torch.zeros(3, 4),))
    draws = [b for _, b in walk(program.trace.bsyms) if Tag.RANDOM in b.tags]
    assert [b.symbol.qualname for b in draws] == ["ltorch.rand_like", "prims.uniform", "ltorch.randn", "prims.normal"]


# --- prims: each meta rule promises what its implementation returns -------------------------------------

ELEMENTWISE_PRIMS = (
    "neg", "abs", "exp", "log", "log1p", "expm1", "sin", "cos", "tan", "tanh", "sqrt", "rsqrt", "erf",
    "sign", "floor", "ceil", "round", "reciprocal", "logical_not", "bitwise_not",
    "add", "sub", "mul", "div", "pow", "maximum", "minimum", "fmod", "remainder", "atan2",
    "bitwise_and", "bitwise_or", "bitwise_xor", "eq", "ne", "lt", "le", "gt", "ge",
)
PRIM_DTYPES = ("f32", "f64", "f16", "bf16", "i64", "i32", "u8", "bool", "c64")


def _prim_operands(name: str, dtype: str) -> list[tuple]:
    """(meta arguments, impl arguments) for each operand form the prim takes: tensors
    only, and for binary prims a number (in the tensor's Python type) on either side."""
    gen = torch.Generator().manual_seed(SEED)
    torch_dtype = DT[dtype]
    # Positive, away from zero: no division by zero, no log of negatives.
    x = (torch.rand((2, 3), generator=gen) * 3 + 1).to(torch_dtype)
    y = (torch.rand((2, 3), generator=gen) * 3 + 1).to(torch_dtype)
    vx, vy = (TensorValue(n, (2, 3), FROM_TORCH[torch_dtype], "cpu") for n in ("x", "y"))
    if prims.ALL[name].meta.__code__.co_argcount == 1:
        return [((vx,), (x,))]
    number = {torch.bool: True}.get(torch_dtype, 2.0 if torch_dtype.is_floating_point else 2)
    if torch_dtype.is_complex:
        number = 2 + 1j
    return [((vx, vy), (x, y)), ((vx, number), (x, number)), ((number, vy), (number, y))]


@pytest.mark.parametrize("dtype", PRIM_DTYPES)
@pytest.mark.parametrize("name", ELEMENTWISE_PRIMS)
def test_elementwise_prim_meta_matches_impl(name, dtype):
    """A prim either refuses a dtype at trace time or its implementation returns
    exactly the shape and dtype its meta rule recorded."""
    sym = prims.ALL[name]
    for meta_args, impl_args in _prim_operands(name, dtype):
        try:
            want = sym.meta(*meta_args)
        except ShapeError:
            continue
        got = sym.impl(*impl_args)
        assert (tuple(got.shape), got.dtype) == (want.shape, TO_TORCH[want.dtype]), meta_args


@pytest.mark.parametrize("name", ELEMENTWISE_PRIMS)
def test_elementwise_prims_accept_float32(name):
    """Strictness refuses dtypes, never the common case (bitwise ops excepted)."""
    value = TensorValue("x", (2,), FROM_TORCH[torch.float32], "cpu")
    meta = prims.ALL[name].meta
    args = (value,) if meta.__code__.co_argcount == 1 else (value, value)
    if name.startswith("bitwise"):
        with pytest.raises(ShapeError):
            meta(*args)
    else:
        meta(*args)


def test_ltorch_exports_every_symbol():
    assert set(ltorch.__all__) == set(ltorch.ALL) | {"ALL"}
    assert all(getattr(ltorch, name) is sym for name, sym in ltorch.ALL.items())


# --- forms the adapters leave to torch ----------------------------------------------------------------------------

OPAQUE_FORMS = (
    ("abs-complex", lambda x: x.abs(), T("c64", (3, 4)), "torch.Tensor.abs"),
    ("max-reduction", lambda x: torch.max(x), T("f32", (3, 4)), "torch.max"),
    ("min-reduction-method", lambda x: x.min(), T("i64", (3, 4)), "torch.Tensor.min"),
    ("div-trunc", lambda x: torch.div(x, 3, rounding_mode="trunc"), T("f32", (3, 4)), "torch.div"),
    ("var-complex", lambda x: x.var(0), T("c64", (3, 4)), "torch.Tensor.var"),
)


@pytest.mark.parametrize(("fn", "arg", "opaque"), [f[1:] for f in OPAQUE_FORMS], ids=[f[0] for f in OPAQUE_FORMS])
def test_unmodelled_forms_stay_torch_calls(fn, arg, opaque):
    """Forms of a mapped callable that ltorch does not model become opaque calls, which
    still run and agree with eager, instead of being forced into the wrong symbol."""
    args = (arg.make(torch.Generator().manual_seed(SEED)),)
    program = trace_callable(fn, args, name="fn")
    assert [b.symbol.qualname for b in program.trace.bsyms] == [opaque]
    assert_matches("torch", program.trace, fn(*args), compile_trace(program.trace)(*program.inputs), exact=True)


def test_mm_of_batches_is_torchs_error():
    with pytest.raises(TracingError, match="mm"):
        trace_callable(lambda a, b: torch.mm(a, b), (torch.zeros(2, 3, 4), torch.zeros(4, 5)), name="fn")


# --- calls eager torch refuses are refused while tracing, at the user's line ----------------------------------------

REFUSED = (
    ("abs-bool", lambda x: x.abs(), T("bool", (3,))),
    ("neg-bool", lambda x: -x, T("bool", (3,))),
    ("relu-bool", torch.relu, T("bool", (3,))),
    ("gelu-int", F.gelu, T("i64", (3,))),
    ("silu-int", F.silu, T("i64", (3,))),
    ("sub-bool", lambda x: x - x, T("bool", (3,))),
    ("floor_divide-bool", lambda x: x // x, T("bool", (3,))),
    ("pow-bool", lambda x: x**x, T("bool", (3,))),
    ("mean-int", torch.mean, T("i64", (3,))),
    ("softmax-int", lambda x: x.softmax(0), T("i64", (3,))),
    ("amax-empty", lambda x: x.amax(0), T("f32", (0, 3))),
    ("lt-complex", lambda x: x < 1, T("c64", (3,))),
    ("t-3d", lambda x: x.t(), T("f32", (2, 3, 4))),
    ("flatten-dims-reversed", lambda x: x.flatten(1, 0), T("f32", (2, 3))),
    ("sub-bool-number", lambda x: x - True, T("f32", (3,))),
    ("rsub-bool-tensor", lambda x: 1 - x, T("bool", (3,))),
    ("amax-complex", lambda x: x.amax(), T("c64", (3,))),
    ("softmax-complex", lambda x: x.softmax(0), T("c64", (3,))),
    ("layer_norm-int", lambda x: F.layer_norm(x, (3,)), T("i64", (3,))),
    ("gelu-complex", F.gelu, T("c64", (3,))),
    ("pow-int-negative", lambda x: x**-1, T("i64", (3,))),
    ("floor_divide-int-by-zero", lambda x: x // 0, T("i64", (3,))),
    ("linear-bias-dtype", lambda x: F.linear(x, torch.ones(2, 3), torch.ones(2, dtype=torch.float64)), T("f32", (3,))),
    ("arange-wrong-sign", lambda x: x + torch.arange(3, 0), T("f32", (3,))),
    ("arange-step-truncates-to-zero", lambda x: x + torch.arange(0, 3, 0.5, dtype=torch.int64), T("i64", (6,))),
    ("rand-int", lambda x: x + torch.rand(3, dtype=torch.int64), T("i64", (3,))),
    ("randn_like-int", torch.randn_like, T("i64", (3,))),
)


@pytest.mark.parametrize(("fn", "arg"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)
