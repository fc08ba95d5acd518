"""The norms: linalg.vector_norm at every order, the spellings that reduce to it
(torch.norm, Tensor.norm, linalg.norm), dist and renorm. They decompose into other
families' prims and have none of their own."""

from __future__ import annotations

import math

import pytest
import torch

from tests.ops.harness import (
    FLOATS,
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

LA = torch.linalg
INF, NAN = math.inf, math.nan
ORDS = (2, 1, INF, -INF, 0, 0.5, 3, -1, -2.5)

# --- linalg.vector_norm -------------------------------------------------------------------------------

for _ord in ORDS:
    case("vector_norm", f"ord{_ord}", lambda x, o=_ord: LA.vector_norm(x, o), T("f32", (3, 4)))
    case("vector_norm", f"ord{_ord}-dim", lambda x, o=_ord: LA.vector_norm(x, o, dim=-1, keepdim=True), X3)
    case("vector_norm", f"ord{_ord}-zeros", lambda x, o=_ord: LA.vector_norm(x, o, 1),
         L(((0.0, 1.5, -2.0), (0.0, 0.0, 0.0), (NAN, 1.0, 0.0), (INF, -1.0, 2.0)), "f32"))
    # A zero row among finite ones: torch's gradient there is 0 at every order.
    case("vector_norm", f"ord{_ord}-zero-row", lambda x, o=_ord: LA.vector_norm(x, o, 1),
         L(((0.0, 1.5, -2.0), (0.0, 0.0, 0.0), (3.0, -3.0, 1.0)), "f32"))
    case("vector_norm", f"ord{_ord}-one-element", lambda x, o=_ord: LA.vector_norm(x, o, (0, 2)),
         L((((-1e-30,), (3e38,), (0.0,)),), "f32"))
for _dtype in FLOATS:
    case("vector_norm", "fn", LA.vector_norm, T(_dtype, (3, 4)))
    case("vector_norm", "inf", lambda x: LA.vector_norm(x, INF, dim=0), T(_dtype, (3, 4)))
case("vector_norm", "dims", lambda x: LA.vector_norm(x, 3, dim=(0, 2)), X3)
case("vector_norm", "dim-empty", lambda x: LA.vector_norm(x, dim=()), T("f32", (3, 4)))
case("vector_norm", "dtype", lambda x: LA.vector_norm(x, 2, 1, dtype=torch.float64), T("f32", (3, 4)))
case("vector_norm", "dtype-half", lambda x: LA.vector_norm(x, 0.5, dtype=torch.float32), T("bf16", (3, 4)))
case("vector_norm", "0d", lambda x: LA.vector_norm(x, -1), T("f32", ()))
case("vector_norm", "0d-dim", lambda x: LA.vector_norm(x, 0, dim=0, keepdim=True), L(-2.5, "f32"))
case("vector_norm", "empty", lambda x: LA.vector_norm(x, 2), T("f32", (0, 3)))
case("vector_norm", "empty-dim", lambda x: LA.vector_norm(x, 1, dim=0), T("f32", (0, 3)))
case("vector_norm", "empty-kept", lambda x: LA.vector_norm(x, -INF, dim=1), T("f32", (0, 3)))

# --- torch.norm, Tensor.norm, linalg.norm ---------------------------------------------------------------

case("vector_norm", "norm", torch.norm, T("f32", (3, 4)))
case("vector_norm", "norm-p", lambda x: torch.norm(x, 3.0, dim=1, dtype=torch.float64), T("f32", (3, 4)))
case("vector_norm", "norm-fro-dims", lambda x: torch.norm(x, "fro", dim=(0, 2), keepdim=True), X3)
case("vector_norm", "norm-inf", lambda x: torch.norm(x, INF, 0), T("f32", (3, 4)))
case("vector_norm", "norm-none", lambda x: torch.norm(x, p=None, dim=-1), T("f16", (3, 4)))
case("vector_norm", "method-norm", lambda x: x.norm(), X3)
case("vector_norm", "method-norm-p", lambda x: x.norm(1, -1, True), T("f32", (3, 4)))
case("vector_norm", "method-norm-dtype", lambda x: x.norm(2, 0, False, torch.float32), T("bf16", (3, 4)))
case("vector_norm", "linalg-norm", LA.norm, X3)
case("vector_norm", "linalg-norm-vector", lambda x: LA.norm(x, -INF), T("f32", (5,)))
case("vector_norm", "linalg-norm-dim", lambda x: LA.norm(x, 0.5, dim=1, keepdim=True), X3)
case("vector_norm", "linalg-norm-fro", lambda x: LA.norm(x, "fro"), T("f32", (3, 4)))
case("vector_norm", "linalg-norm-dims", lambda x: LA.norm(x, dim=(0, 2)), X3)
for _ord in (1, -1, INF, -INF):
    case("vector_norm", f"linalg-norm-matrix{_ord}", lambda x, o=_ord: LA.norm(x, o), T("f32", (3, 4)))
    case(("vector_norm", "amax" if _ord > 0 else "amin"), f"linalg-norm-matrix{_ord}-dims",
         lambda x, o=_ord: LA.norm(x, o, dim=(2, 0), keepdim=True), X3)
    case("vector_norm", f"linalg-norm-matrix{_ord}-dims-reversed",
         lambda x, o=_ord: LA.norm(x, o, dim=(-1, -3), dtype=torch.float64), X3)

# --- dist, renorm ---------------------------------------------------------------------------------------

for _ord in ORDS:
    case("dist", f"p{_ord}", lambda x, y, o=_ord: torch.dist(x, y, o), T("f32", (3, 4)), T("f32", (4,)))
for _dtype in FLOATS:
    case("dist", "fn", torch.dist, T(_dtype, (3, 4)), T(_dtype, (3, 4)))
case("dist", "method", lambda x, y: x.dist(y, p=1), T("f32", (3, 4)), T("i64", (3, 1)))
case("dist", "promote", torch.dist, T("f16", (3, 4)), T("f32", (3, 4)))
case("dist", "0d", torch.dist, T("f32", ()), T("f32", (2,)))
for _dtype in FLOATS:
    case("renorm", "fn", lambda x: torch.renorm(x, 2, 0, 3.0), T(_dtype, (3, 4)))
for _ord in (1, 2, 3.5, INF):
    case("renorm", f"p{_ord}", lambda x, o=_ord: x.renorm(o, 1, 2.0), X3)
case("renorm", "method-neg-dim", lambda x: x.renorm(1, -1, 5.0), T("f64", (3, 4)))
case("renorm", "maxnorm-zero", lambda x: torch.renorm(x, 2, 0, 0), T("f32", (3, 4)))
case("renorm", "empty", lambda x: torch.renorm(x, 2, 1, 1.0), T("f32", (0, 3)))
case(("renorm", "copy_"), "inplace", lambda x: x.clone().renorm_(2, 0, 1.0), T("f32", (3, 4)))


# --- norm_except_dim, _weight_norm ----------------------------------------------------------------------

for _dim in (0, 1, 2, -1, -2):
    case("norm_except_dim", f"dim{_dim}", lambda x, d=_dim: torch.norm_except_dim(x, 2, d), X3)
case("norm_except_dim", "pow", lambda x: torch.norm_except_dim(x, 3, 1), T("f64", (3, 4)))
case("norm_except_dim", "default", torch.norm_except_dim, T("f16", (3, 4)))
# g is shaped as the norm, as the parametrization stores it; dims 0 and last take ATen's
# fused kernel (not for float16), the others its composed ops.
for _dtype in FLOATS:
    for _dim, _g in ((0, (2, 1, 1)), (2, (1, 1, 4)), (1, (1, 3, 1)), (-1, ())):
        case("weight_norm", f"dim{_dim}-{_dtype}", lambda v, g, d=_dim: torch._weight_norm(v, g, d),
             T(_dtype, (2, 3, 4)), T(_dtype, _g))
case("weight_norm", "matrix", lambda v, g: torch._weight_norm(v, g, 0), T("f32", (5, 6)), T("f32", (5, 1)))
case("weight_norm", "vector", lambda v, g: torch._weight_norm(v, g, 0), T("f32", (5,)), T("f32", (5,)))
case("weight_norm", "neg-dim", lambda v, g: torch._weight_norm(v, g, -2), T("f32", (2, 3, 4)), T("f32", (1, 3, 1)))
case(("weight_norm", "conv1d"), "parametrization",
     lambda x, v, g: torch.nn.functional.conv1d(x, torch._weight_norm(v, g, 2), padding=1),
     T("f32", (2, 4, 7)), T("f32", (6, 4, 3)), T("f32", (1, 1, 3)))

@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


# Complex norms, and the matrix norms that need singular values, are torch's.
OPAQUE_FORMS = (
    ("vector_norm-complex", lambda x: LA.vector_norm(x), T("c64", (3, 4)), "torch.linalg.vector_norm"),
    ("norm-nuc", lambda x: torch.norm(x, "nuc"), T("f32", (3, 4)), "torch.norm"),
    ("method-norm-complex", lambda x: x.norm(), T("c64", (3,)), "torch.Tensor.norm"),
    ("linalg-norm-2", lambda x: LA.norm(x, 2), T("f32", (3, 4)), "torch.linalg.norm"),
    ("linalg-norm-nuc", lambda x: LA.norm(x, "nuc"), T("f32", (3, 4)), "torch.linalg.norm"),
    ("linalg-norm-empty-max", lambda x: LA.norm(x, INF), T("f32", (0, 3)), "torch.linalg.norm"),
    ("dist-complex", lambda x: torch.dist(x, x), T("c64", (3,)), "torch.dist"),
    ("renorm-complex", lambda x: x.renorm(2, 0, 1.0), T("c64", (3, 2)), "torch.Tensor.renorm"),
)


@pytest.mark.parametrize(("fn", "arg", "opaque"), rows_by_id(OPAQUE_FORMS))
def test_unmodelled_forms_stay_torch_calls(fn, arg, opaque):
    assert check_stays_torch_call(fn, (arg,), opaque) == [opaque]


def test_weight_norm_of_mixed_dtypes_stays_a_torch_call():
    # ATen's composed path promotes a float32 direction and a float64 magnitude; its fused
    # kernel refuses them: both are torch's.
    fn = lambda v, g: torch._weight_norm(v, g, 1)  # noqa: E731
    assert check_stays_torch_call(fn, (T("f32", (2, 3, 4)), T("f64", (1, 3, 1))), "torch._weight_norm") == [
        "torch._weight_norm"]


REFUSED = (
    ("vector_norm-int", LA.vector_norm, T("i64", (3,))),
    ("vector_norm-narrowing", lambda x: LA.vector_norm(x, dtype=torch.float16), T("f32", (3,))),
    ("vector_norm-complex-dtype", lambda x: LA.vector_norm(x, dtype=torch.complex64), T("f32", (3,))),
    ("vector_norm-inf-empty", lambda x: LA.vector_norm(x, INF), T("f32", (0, 3))),
    ("vector_norm-neg-empty-dim", lambda x: LA.vector_norm(x, -1, dim=0), T("f32", (0, 3))),
    ("linalg-norm-3d", lambda x: LA.norm(x, 2), T("f32", (2, 3, 4))),
    ("linalg-norm-3-dims", lambda x: LA.norm(x, dim=(0, 1, 2)), T("f32", (2, 3, 4))),
    ("linalg-norm-fro-dim", lambda x: LA.norm(x, "fro", dim=0), T("f32", (3, 4))),
    ("linalg-norm-matrix-order", lambda x: LA.norm(x, 3), T("f32", (3, 4))),
    ("linalg-norm-same-dims", lambda x: LA.norm(x, 1, dim=(1, -1)), T("f32", (3, 4))),
    ("dist-int", lambda x: torch.dist(x, x), T("i64", (3,))),
    ("renorm-1d", lambda x: x.renorm(2, 0, 1.0), T("f32", (3,))),
    ("renorm-p", lambda x: x.renorm(0, 0, 1.0), T("f32", (3, 4))),
    ("renorm-maxnorm", lambda x: x.renorm(2, 0, -1.0), T("f32", (3, 4))),
    ("renorm-int", lambda x: x.renorm(2, 0, 1.0), T("i64", (3, 4))),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(REFUSED))
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)
