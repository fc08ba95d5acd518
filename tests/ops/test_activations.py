"""The activation functions, in every torch spelling (torch, torch.nn.functional with and
without inplace=True, Tensor methods, nn.Modules), dtype and rank, and where their
formulas saturate or switch branches. They decompose into elementwise prims and have
none of their own."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from tests.ops.harness import (
    EXTREMES,
    FLOATS,
    Case,
    L,
    T,
    case_adder,
    check_case,
    check_refused,
    check_stays_torch_call,
    module,
    rows_by_id,
    unary_cases,
)

CASES: list[Case] = []
case = case_adder(CASES)

NAN, INF = math.nan, math.inf

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
case("silu", "module", module(lambda: nn.SiLU()), T("f32", (2, 3, 4)))
case("gelu", "module-tanh", module(lambda: nn.GELU(approximate="tanh")), T("bf16", (2, 3, 4)))

# Around the branch points: 0, the thresholds, NaN and infinities.
EDGES = (-INF, -30.0, -3.0, -1.0, -0.5, -1e-3, -0.0, 0.0, 1e-3, 0.5, 1.0, 3.0, 6.0, 20.0, 30.0, INF, NAN)


def activation(symbol: str, forms: dict, dtypes: tuple = FLOATS, edges: bool = True, zero_dim: bool = True) -> None:
    """The first form at rank 3 and 0 and in every dtype eager supports, half precision on
    64 elements (torch's vectorised loop), the edge values, and the other forms once."""
    first_form, first = next(iter(forms.items()))
    case(symbol, first_form, first, T("f32", (2, 3, 4)))
    if zero_dim:
        case(symbol, first_form, first, T("f32", ()))
    for dtype in dtypes:
        if dtype != "f32":
            case(symbol, first_form, first, T(dtype, (3, 4)))
    if "f16" in dtypes:
        case(symbol, first_form, first, T("f16", (64,)))
    if edges:
        case(symbol, "edges", first, L(EDGES, "f32"))
    for form, fn in list(forms.items())[1:]:
        case(symbol, form, fn, T("f32", (2, 6)))


activation("hardtanh", {"F": F.hardtanh, "bounds": lambda x: F.hardtanh(x, -0.5, 2.0),
                        "inplace": lambda x: F.hardtanh(x, inplace=True), "hardtanh_": lambda x: F.hardtanh_(x),
                        "module": module(lambda: nn.Hardtanh(-2.0, 2.0)), "module-relu6": module(nn.ReLU6)},
           FLOATS + ("i64", "i32"))
case("hardtanh", "int-float-bounds", lambda x: F.hardtanh(x, -1.5, 2.5), T("i64", (3, 4)))
activation("relu6", {"F": F.relu6, "inplace": lambda x: F.relu6(x, inplace=True)}, FLOATS + ("i64", "u8"))
activation("leaky_relu", {"F": F.leaky_relu, "slope": lambda x: F.leaky_relu(x, 0.2),
                          "inplace": lambda x: F.leaky_relu(x, 0.1, inplace=True),
                          "leaky_relu_": lambda x: F.leaky_relu_(x), "module": module(lambda: nn.LeakyReLU(0.3))})
activation("rrelu", {"eval": lambda x: F.rrelu(x), "torch": lambda x: torch.rrelu(x, 0.1, 0.3),
                     "inplace": lambda x: F.rrelu(x, inplace=True), "module-eval": module(lambda: nn.RReLU().eval())})
activation("prelu", {"F": lambda x: F.prelu(x, torch.full((1,), 0.25, dtype=x.dtype)),
                     "module": module(lambda: nn.PReLU(6))}, edges=False)
for _dtype in FLOATS:
    case("prelu", "channels", F.prelu, T(_dtype, (2, 3, 4)), T(_dtype, (3,)))
case("prelu", "method", lambda x, w: x.prelu(w), T("f32", (4, 3)), T("f32", (3,)))
case("prelu", "0d-weight", torch.prelu, T("f32", (2, 3)), T("f32", ()))
case("prelu", "1d-input", torch.prelu, T("f32", (5,)), T("f32", (1,)))
case("prelu", "0d-input", torch.prelu, T("f32", ()), T("f32", (1,)))
case("prelu", "edges", lambda x: F.prelu(x, torch.full((1,), 0.25)), L(EDGES, "f32"))
activation("threshold", {"F": lambda x: F.threshold(x, 0.5, 2.0), "torch": lambda x: torch.threshold(x, 1, 7),
                         "inplace": lambda x: F.threshold(x, 0.0, 1.0, inplace=True),
                         "threshold_": lambda x: torch.threshold_(x, 0.1, 0.0),
                         "module": module(lambda: nn.Threshold(0.1, 20.0))}, FLOATS + ("i64", "u8"))
case("threshold", "int-float-args", lambda x: F.threshold(x, 0.5, -2.7), T("i64", (3, 4)))
case("threshold", "u8-wraps", lambda x: F.threshold(x, -1, 7), T("u8", (3, 4)))
case("threshold", "f16-rounded", lambda x: F.threshold(x, 0.1, 0.3), L((0.0999755859375, 0.10003662109375, 0.1), "f16"))

activation("elu", {"F": F.elu, "alpha": lambda x: F.elu(x, 0.5), "inplace": lambda x: F.elu(x, inplace=True),
                   "elu_": lambda x: F.elu_(x, 2.0), "module": module(lambda: nn.ELU(1.5))})
activation("selu", {"F": F.selu, "torch": torch.selu, "inplace": lambda x: F.selu(x, inplace=True),
                    "selu_": torch.selu_, "module": module(nn.SELU)})
activation("celu", {"F": F.celu, "alpha": lambda x: torch.celu(x, 0.3), "inplace": lambda x: F.celu(x, 2.0, True),
                    "celu_": lambda x: torch.celu_(x), "module": module(lambda: nn.CELU(0.7))})
activation("softplus", {"F": F.softplus, "beta": lambda x: F.softplus(x, beta=2.0, threshold=5.0),
                        "module": module(lambda: nn.Softplus(0.5, 10.0))})
activation("mish", {"F": F.mish, "inplace": lambda x: F.mish(x, inplace=True), "module": module(nn.Mish)})
activation("logsigmoid", {"F": F.logsigmoid, "module": module(nn.LogSigmoid)})
activation("softsign", {"F": F.softsign, "module": module(nn.Softsign)}, FLOATS + ("i64",))
activation("tanhshrink", {"F": F.tanhshrink, "module": module(nn.Tanhshrink)}, FLOATS + ("i64",))
activation("hardsigmoid", {"F": F.hardsigmoid, "inplace": lambda x: F.hardsigmoid(x, inplace=True),
                           "module": module(nn.Hardsigmoid)})
activation("hardswish", {"F": F.hardswish, "inplace": lambda x: F.hardswish(x, True), "module": module(nn.Hardswish)})
activation("softshrink", {"F": F.softshrink, "lambd": lambda x: F.softshrink(x, 1.5),
                          "module": module(lambda: nn.Softshrink(0.0))})
activation("hardshrink", {"F": F.hardshrink, "method": lambda x: x.hardshrink(0.25), "torch": torch.hardshrink,
                          "module": module(lambda: nn.Hardshrink(1.0))})
case("hardshrink", "f16-rounded", lambda x: F.hardshrink(x, 0.1), L((0.0999755859375, 0.10003662109375, -0.1), "f16"))

activation("glu", {"F": F.glu, "dim": lambda x: F.glu(x, 0), "module": module(lambda: nn.GLU(1))}, edges=False,
           zero_dim=False)
for _dtype in FLOATS:
    case("glu", "dim", lambda x: F.glu(x, dim=1), T(_dtype, (2, 6, 3)))
case("glu", "f16-vector", F.glu, T("f16", (2, 128)))
activation("softmin", {"F": lambda x: F.softmin(x, -1), "dtype": lambda x: F.softmin(x, 0, dtype=torch.float64),
                       "module": module(lambda: nn.Softmin(1))}, edges=False)
case("softmin", "implicit-dim", lambda x: F.softmin(x), T("f32", (2, 3, 4)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


# rrelu in training draws a slope per negative element, a stream no prim reproduces.
OPAQUE_FORMS = (
    ("rrelu-training", lambda x: F.rrelu(x, training=True), T("f32", (3, 4)), "torch.nn.functional.rrelu"),
    ("softsign-complex", F.softsign, T("c64", (3, 4)), "torch.nn.functional.softsign"),
)


@pytest.mark.parametrize(("fn", "arg", "opaque"), rows_by_id(OPAQUE_FORMS))
def test_unmodelled_forms_stay_torch_calls(fn, arg, opaque):
    assert opaque in check_stays_torch_call(fn, (arg,), opaque)


REFUSED = (
    ("relu-bool", torch.relu, T("bool", (3,))),
    ("hardtanh-bool", F.hardtanh, T("bool", (3,))),
    ("relu6-bool", F.relu6, T("bool", (3,))),
    ("hardtanh-unsigned-negative", F.hardtanh, T("u8", (3,))),
    ("elu-int", F.elu, T("i64", (3,))),
    ("leaky_relu-int", F.leaky_relu, T("i64", (3,))),
    ("softplus-int", F.softplus, T("i64", (3,))),
    ("hardshrink-int", F.hardshrink, T("i64", (3,))),
    ("threshold-bool", lambda x: F.threshold(x, 0, 1), T("bool", (3,))),
    ("threshold-overflow", lambda x: F.threshold(x, 1, 300), T("u8", (3,))),
    ("threshold-negative-float", lambda x: F.threshold(x, 1, -2.0), T("u8", (3,))),
    ("softshrink-negative", lambda x: F.softshrink(x, -1.0), T("f32", (3,))),
    ("prelu-mixed", lambda x: F.prelu(x, torch.tensor([0.25], dtype=torch.float64)), T("f32", (3,))),
    ("prelu-channels", lambda x: F.prelu(x, torch.tensor([0.25, 0.5])), T("f32", (2, 3))),
    ("glu-odd", F.glu, T("f32", (2, 3))),
    ("glu-0d", F.glu, T("f32", ())),
    ("glu-int", F.glu, T("i64", (2, 4))),
    ("softmin-int", lambda x: F.softmin(x, 0), T("i64", (3,))),
    ("rrelu-bounds", lambda x: F.rrelu(x, 0.5, 0.25), T("f32", (3,))),
    ("gelu-int", F.gelu, T("i64", (3,))),
    ("silu-int", F.silu, T("i64", (3,))),
    ("gelu-complex", F.gelu, T("c64", (3,))),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(REFUSED))
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)
