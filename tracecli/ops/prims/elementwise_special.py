"""Prims of the special functions: error and gamma functions, Bessel functions,
orthogonal polynomials, zeta. None has a closed form in the other prims; each is one
torch kernel, computed in the operands' floating point dtype."""

from __future__ import annotations

import torch

from tracecli.core import dtypes
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import check_kinds, prim
from tracecli.ops.prims.elementwise import binary_type, number_as_tensor, unary_meta
from tracecli.ops.promotion import ShapeError

_FLOAT = frozenset({"float"})
# Most of torch.special's kernels exist in float32 and float64 only.
_HALF = frozenset({dtypes.float16, dtypes.bfloat16})


def _no_half(name: str, dtype) -> None:
    if dtype in _HALF:
        raise ShapeError(f"prims.{name} does not accept {dtype.name} operands (float32 and float64 only)")


def _wide_unary(name: str):
    def meta(x: TensorValue) -> TensorType:
        check_kinds(name, x.dtype, _FLOAT)
        _no_half(name, x.dtype)
        return TensorType(x.shape, x.dtype, x.device)

    return meta


def _wide_binary(name: str):
    def meta(a, b) -> TensorType:
        out = binary_type(name, a, b, kinds=_FLOAT)
        _no_half(name, out.dtype)
        return out

    return meta


def _polygamma_meta(n, x: TensorValue) -> TensorType:
    if not isinstance(n, int) or n < 0:
        raise ShapeError(f"prims.polygamma needs a non-negative int order, got {n!r}")
    check_kinds("polygamma", x.dtype, _FLOAT)
    return TensorType(x.shape, x.dtype, x.device)


# --- in every floating point dtype ----------------------------------------------------------

erfc = prim("erfc", unary_meta("erfc", _FLOAT), torch.erfc)
erfinv = prim("erfinv", unary_meta("erfinv", _FLOAT), torch.erfinv)
lgamma = prim("lgamma", unary_meta("lgamma", _FLOAT), torch.lgamma)
digamma = prim("digamma", unary_meta("digamma", _FLOAT), torch.digamma)
polygamma = prim("polygamma", _polygamma_meta, torch.polygamma, doc="the n-th derivative of digamma")
# The regularized lower and upper incomplete gamma functions P(a, x) and Q(a, x).
igamma = prim("igamma", lambda a, x: binary_type("igamma", a, x, kinds=_FLOAT), number_as_tensor(torch.igamma))
igammac = prim("igammac", lambda a, x: binary_type("igammac", a, x, kinds=_FLOAT), number_as_tensor(torch.igammac))
i0 = prim("i0", unary_meta("i0", _FLOAT), torch.i0, doc="modified Bessel function of the first kind, order 0")
i0e = prim("i0e", unary_meta("i0e", _FLOAT), torch.special.i0e, doc="exp(-|x|) * i0(x)")
i1 = prim("i1", unary_meta("i1", _FLOAT), torch.special.i1, doc="modified Bessel function of the first kind, order 1")
i1e = prim("i1e", unary_meta("i1e", _FLOAT), torch.special.i1e, doc="exp(-|x|) * i1(x)")

# --- float32 and float64 only ----------------------------------------------------------------


def _unary(name: str, doc: str):
    return prim(name, _wide_unary(name), getattr(torch.special, name), doc=doc)


erfcx = _unary("erfcx", "exp(x²) * erfc(x)")
ndtri = _unary("ndtri", "the inverse of the standard normal distribution function")
airy_ai = _unary("airy_ai", "the Airy function Ai")
bessel_j0 = _unary("bessel_j0", "Bessel function of the first kind, order 0")
bessel_j1 = _unary("bessel_j1", "Bessel function of the first kind, order 1")
bessel_y0 = _unary("bessel_y0", "Bessel function of the second kind, order 0")
bessel_y1 = _unary("bessel_y1", "Bessel function of the second kind, order 1")
modified_bessel_i0 = _unary("modified_bessel_i0", "modified Bessel function of the first kind, order 0")
modified_bessel_i1 = _unary("modified_bessel_i1", "modified Bessel function of the first kind, order 1")
modified_bessel_k0 = _unary("modified_bessel_k0", "modified Bessel function of the second kind, order 0")
modified_bessel_k1 = _unary("modified_bessel_k1", "modified Bessel function of the second kind, order 1")
scaled_modified_bessel_k0 = _unary("scaled_modified_bessel_k0", "exp(x) * modified_bessel_k0(x)")
scaled_modified_bessel_k1 = _unary("scaled_modified_bessel_k1", "exp(x) * modified_bessel_k1(x)")
spherical_bessel_j0 = _unary("spherical_bessel_j0", "spherical Bessel function of the first kind, order 0")


def _binary(name: str, doc: str):
    # torch takes a number for either operand of these.
    return prim(name, _wide_binary(name), getattr(torch.special, name), doc=doc)


zeta = _binary("zeta", "the Hurwitz zeta function of x and q")
chebyshev_polynomial_t = _binary("chebyshev_polynomial_t", "Chebyshev polynomial of the first kind T_n(x)")
chebyshev_polynomial_u = _binary("chebyshev_polynomial_u", "Chebyshev polynomial of the second kind U_n(x)")
chebyshev_polynomial_v = _binary("chebyshev_polynomial_v", "Chebyshev polynomial of the third kind V_n(x)")
chebyshev_polynomial_w = _binary("chebyshev_polynomial_w", "Chebyshev polynomial of the fourth kind W_n(x)")
shifted_chebyshev_polynomial_t = _binary("shifted_chebyshev_polynomial_t", "T_n(2x - 1)")
shifted_chebyshev_polynomial_u = _binary("shifted_chebyshev_polynomial_u", "U_n(2x - 1)")
shifted_chebyshev_polynomial_v = _binary("shifted_chebyshev_polynomial_v", "V_n(2x - 1)")
shifted_chebyshev_polynomial_w = _binary("shifted_chebyshev_polynomial_w", "W_n(2x - 1)")
hermite_polynomial_h = _binary("hermite_polynomial_h", "physicists' Hermite polynomial H_n(x)")
hermite_polynomial_he = _binary("hermite_polynomial_he", "probabilists' Hermite polynomial He_n(x)")
laguerre_polynomial_l = _binary("laguerre_polynomial_l", "Laguerre polynomial L_n(x)")
legendre_polynomial_p = _binary("legendre_polynomial_p", "Legendre polynomial P_n(x)")
