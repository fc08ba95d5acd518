"""The special functions: erfc, erfinv, erfcx, the normal distribution (ndtr, ndtri,
log_ndtr), lgamma, digamma, polygamma, the incomplete gamma functions, entr, the Bessel
functions, the orthogonal polynomials and zeta, in their torch and torch.special
spellings, and their prims (one torch kernel each)."""

from __future__ import annotations

import math

import pytest
import torch

from tests.ops.harness import (
    FLOATS,
    PRIM_DTYPES,
    Case,
    L,
    T,
    case_adder,
    check_case,
    check_elementwise_prim_meta_matches_impl,
    check_refused,
    rows_by_id,
)

CASES: list[Case] = []
case = case_adder(CASES)

NAN, INF = math.nan, math.inf
WIDE = ("f32", "f64")  # most of torch.special has no half-precision kernels


def unary(symbol: str, forms: dict, dtypes: tuple, domain: str = "any") -> None:
    first_form, first = next(iter(forms.items()))
    case(symbol, first_form, first, T("f32", (2, 3, 4), domain))
    for dtype in dtypes + ("i64", "bool"):
        if dtype != "f32":
            case(symbol, first_form, first, T(dtype, (3, 4), domain))
    for form, fn in list(forms.items())[1:]:
        case(symbol, form, fn, T(dtypes[-1], (5,), domain))


unary("erfc", {"fn": torch.erfc, "special": torch.special.erfc, "method": lambda x: x.erfc(),
               "inplace": lambda x: x.erfc_()}, FLOATS)
unary("erfinv", {"fn": torch.erfinv, "special": torch.special.erfinv, "method": lambda x: x.erfinv()}, FLOATS)
case("erfinv", "domain", torch.erfinv, L((-1.0, -0.999, -0.5, 0.0, 0.5, 0.999, 1.0, 1.5), "f32"))
unary("erfcx", {"special": torch.special.erfcx}, WIDE)
unary("ndtri", {"special": torch.special.ndtri}, WIDE, "pos")
case("ndtri", "domain", torch.special.ndtri, L((0.0, 1e-30, 0.025, 0.5, 0.975, 1.0, 1.5), "f64"))
unary("ndtr", {"special": torch.special.ndtr}, FLOATS)
unary("log_ndtr", {"special": torch.special.log_ndtr}, WIDE)
for _dtype in WIDE:
    # Far in the lower tail log(ndtr) has to come from erfcx: ndtr itself underflows.
    case("log_ndtr", "tails", torch.special.log_ndtr, L((-40.0, -10.0, -1.0001, -1.0, -0.5, 0.0, 6.0, 40.0), _dtype))
    case("ndtr", "tails", torch.special.ndtr, L((-40.0, -10.0, -1.0, 0.0, 6.0, 40.0, INF, NAN), _dtype))

unary("lgamma", {"fn": torch.lgamma, "gammaln": torch.special.gammaln, "method": lambda x: x.lgamma()}, FLOATS)
unary("digamma", {"fn": torch.digamma, "psi": torch.special.psi, "special": torch.special.digamma,
                  "method": lambda x: x.digamma(), "inplace": lambda x: x.digamma_()}, FLOATS, "pos")
case("lgamma", "poles", torch.lgamma, L((0.0, -1.0, -2.5, 1.0, 2.0, 1e-30, 171.5, INF), "f32"))
for _n in (0, 1, 3):
    case("polygamma", f"n={_n}", lambda x, n=_n: torch.polygamma(n, x), T("f32", (3, 4), "pos"))
case("polygamma", "special", lambda x: torch.special.polygamma(2, x), T("f64", (3, 4), "pos"))
case("polygamma", "method", lambda x: x.polygamma(1), T("bf16", (5,), "pos"))
case("polygamma", "int", lambda x: torch.polygamma(1, x), T("i64", (3, 4), "pos"))
case("polygamma", "inplace", lambda x: x.polygamma_(1), T("f16", (3, 4), "pos"))
for _dtype in FLOATS:
    case("igamma", "fn", torch.igamma, T(_dtype, (3, 4), "pos"), T(_dtype, (4,), "pos"))
    case("igammac", "fn", torch.igammac, T(_dtype, (3, 4), "pos"), T(_dtype, (3, 1), "pos"))
case("igamma", "special", torch.special.gammainc, T("f32", (3, 4), "pos"), T("f64", (), "pos"))
case("igammac", "method", lambda a, x: a.igammac(x), T("f32", (3, 4), "pos"), T("f32", (4,), "pos"))

unary("entr", {"special": torch.special.entr}, FLOATS)
case("entr", "special", torch.special.entr, L((0.0, -0.0, -1.0, 1.0, 0.5, INF, -INF, NAN), "f32"))

unary("i0", {"fn": torch.i0, "special": torch.special.i0, "method": lambda x: x.i0(), "inplace": lambda x: x.i0_()},
      FLOATS)
for _name in ("i0e", "i1", "i1e"):
    unary(_name, {"special": getattr(torch.special, _name)}, FLOATS)
for _name in ("airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
              "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
              "scaled_modified_bessel_k1", "spherical_bessel_j0"):
    _fn = getattr(torch.special, _name)
    case(_name, "special", _fn, T("f32", (3, 4), "pos"))
    case(_name, "special", _fn, T("f64", (5,), "any"))

for _name in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
              "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
              "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
              "laguerre_polynomial_l", "legendre_polynomial_p"):
    _fn = getattr(torch.special, _name)
    case(_name, "tensors", _fn, T("f32", (3, 4)), T("i64", (4,), "small"))
    case(_name, "number-n", lambda x, f=_fn: f(x, 3), T("f64", (5,)))
case("chebyshev_polynomial_t", "number-x", lambda n: torch.special.chebyshev_polynomial_t(0.5, n),
     T("i64", (5,), "small"))
case("hermite_polynomial_h", "ints", torch.special.hermite_polynomial_h, T("i64", (3, 4)), T("i64", (3, 4), "small"))
case("zeta", "fn", torch.special.zeta, T("f32", (3, 4), "small"), T("f32", (4,), "pos"))
case("zeta", "f64", torch.special.zeta, L((2.0, 3.0, 1.0, 4.5), "f64"), L((1.0, 2.0, 1.0, 0.5), "f64"))
case("zeta", "number", lambda q: torch.special.zeta(2.0, q), T("f32", (3, 4), "pos"))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


SPECIAL_PRIMS = (
    "erfc", "erfinv", "lgamma", "digamma", "i0", "i0e", "i1", "i1e", "igamma", "igammac", "erfcx", "ndtri",
    "airy_ai", "bessel_j0", "bessel_y1", "modified_bessel_k0", "spherical_bessel_j0", "zeta",
    "chebyshev_polynomial_t", "laguerre_polynomial_l",
)


@pytest.mark.parametrize("dtype", PRIM_DTYPES)
@pytest.mark.parametrize("name", SPECIAL_PRIMS)
def test_prim_meta_matches_impl(name, dtype):
    check_elementwise_prim_meta_matches_impl(name, dtype)


REFUSED = (
    ("erfc-complex", torch.erfc, T("c64", (3,))),
    ("erfcx-half", torch.special.erfcx, T("f16", (3,))),
    ("log_ndtr-half", torch.special.log_ndtr, T("bf16", (3,))),
    ("zeta-half", lambda x: torch.special.zeta(x, x), T("f16", (3,))),
    ("polygamma-negative", lambda x: torch.polygamma(-1, x), T("f32", (3,))),
    ("igamma-int", lambda x: torch.igamma(x, x), T("i64", (3,))),
    ("bessel_j0-complex", torch.special.bessel_j0, T("c64", (3,))),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(REFUSED))
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)
