"""The special functions of torch and torch.special: error functions and the normal
distribution, gamma and its derivatives, entropy, Bessel functions, orthogonal
polynomials and zeta. Each takes real floating point tensors (integers and bools become
float32); most of torch.special has float32 and float64 kernels only, and refuses the
half types as torch does."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch

from tracecli.core import dtypes
from tracecli.ops import prims
from tracecli.ops.ltorch._base import convert, expect_tensor, float_dtype_for, symbol, torch_form
from tracecli.ops.ltorch.elementwise import CUDA_FP32, binary, float_unary
from tracecli.ops.promotion import ShapeError, result_type

# --- error functions and the normal distribution ----------------------------------------------

erfc = symbol(torch.erfc, aliases=(torch.special.erfc,), methods=("erfc",), name="erfc")(float_unary(prims.erfc))
erfinv = symbol(torch.erfinv, aliases=(torch.special.erfinv,), methods=("erfinv",), name="erfinv", autocast=CUDA_FP32)(
    float_unary(prims.erfinv)
)
erfcx = symbol(torch.special.erfcx, name="erfcx")(float_unary(prims.erfcx))
ndtri = symbol(torch.special.ndtri, name="ndtri")(float_unary(prims.ndtri))


def _real_float(input, op: str):
    input = expect_tensor(input, op)
    if input.dtype.is_complex:
        raise ShapeError(f"{op} is not defined for complex tensors")
    return convert(input, float_dtype_for(input))


@symbol(torch.special.ndtr)
def ndtr(input):
    """(1 + erf(input / sqrt(2))) / 2: the standard normal distribution function"""
    # torch computes it op by op in the input's dtype, as written here.
    x = _real_float(input, "ndtr")
    return prims.mul(prims.add(prims.erf(prims.mul(x, math.sqrt(0.5))), 1.0), 0.5)


@symbol(torch.special.log_ndtr)
def log_ndtr(input):
    """log(ndtr(input)), accurate far in the lower tail"""
    x = _real_float(input, "log_ndtr")
    t = prims.mul(x, math.sqrt(0.5))
    # Below -1, ndtr(x) = erfcx(-t) / 2 * exp(-t²), whose logarithm does not underflow.
    tail = prims.sub(prims.log(prims.div(prims.erfcx(prims.neg(t)), 2.0)), prims.mul(t, t))
    body = prims.log1p(prims.div(prims.neg(prims.erfc(t)), 2.0))
    return prims.where(prims.lt(x, -1.0), tail, body)


# --- gamma and entropy -----------------------------------------------------------------------------

lgamma = symbol(torch.lgamma, aliases=(torch.special.gammaln,), methods=("lgamma",), name="lgamma")(
    float_unary(prims.lgamma)
)
digamma = symbol(torch.digamma, aliases=(torch.special.digamma, torch.special.psi), methods=("digamma",),
                 name="digamma")(float_unary(prims.digamma))


@symbol(torch.polygamma, aliases=(torch.special.polygamma,))
def polygamma(n, input):
    """the n-th derivative of digamma at input"""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ShapeError(f"polygamma needs a non-negative int order, got {n!r}")
    return prims.polygamma(n, _real_float(input, "polygamma"))


@torch_form(methods=("polygamma",))
def _polygamma_method(self, n):
    return polygamma(n, self)


def _incomplete_gamma(prim, input, other):
    dtype = result_type(expect_tensor(input, prim.name), expect_tensor(other, prim.name))
    if not dtype.is_float:
        raise ShapeError(f"{prim.name} is not defined for {dtype.name} tensors")
    return binary(prim, input, other, dtype=dtype)


@symbol(torch.igamma, aliases=(torch.special.gammainc,), methods=("igamma",))
def igamma(input, other):
    """the regularized lower incomplete gamma function P(input, other)"""
    return _incomplete_gamma(prims.igamma, input, other)


@symbol(torch.igammac, aliases=(torch.special.gammaincc,), methods=("igammac",))
def igammac(input, other):
    """the regularized upper incomplete gamma function Q(input, other) = 1 - P(input, other)"""
    return _incomplete_gamma(prims.igammac, input, other)


@symbol(torch.special.entr)
def entr(input):
    """-input * log(input): 0 at 0, -inf below 0"""
    x = _real_float(input, "entr")  # computed in its dtype, half precision included, as torch does
    positive = prims.mul(prims.neg(x), prims.log(x))
    minus_infinity = prims.full(x.shape, -math.inf, device=x.device, dtype=x.dtype)
    out = prims.where(prims.gt(x, 0.0), positive, prims.where(prims.eq(x, 0.0), 0.0, minus_infinity))
    return prims.where(prims.ne(x, x), x, out)


# --- Bessel functions ---------------------------------------------------------------------------

i0 = symbol(torch.i0, aliases=(torch.special.i0,), methods=("i0",), name="i0")(float_unary(prims.i0))
i0e = symbol(torch.special.i0e, name="i0e")(float_unary(prims.i0e))
i1 = symbol(torch.special.i1, name="i1")(float_unary(prims.i1))
i1e = symbol(torch.special.i1e, name="i1e")(float_unary(prims.i1e))


def _special_unary(name: str):
    return symbol(getattr(torch.special, name), name=name)(float_unary(getattr(prims, name)))


airy_ai = _special_unary("airy_ai")
bessel_j0 = _special_unary("bessel_j0")
bessel_j1 = _special_unary("bessel_j1")
bessel_y0 = _special_unary("bessel_y0")
bessel_y1 = _special_unary("bessel_y1")
modified_bessel_i0 = _special_unary("modified_bessel_i0")
modified_bessel_i1 = _special_unary("modified_bessel_i1")
modified_bessel_k0 = _special_unary("modified_bessel_k0")
modified_bessel_k1 = _special_unary("modified_bessel_k1")
scaled_modified_bessel_k0 = _special_unary("scaled_modified_bessel_k0")
scaled_modified_bessel_k1 = _special_unary("scaled_modified_bessel_k1")
spherical_bessel_j0 = _special_unary("spherical_bessel_j0")

# --- polynomials and zeta: two operands, either of them may be a number ---------------------------


def _float_binary(prim, input, other):
    dtype = result_type(input, other)
    if dtype.is_complex:
        raise ShapeError(f"{prim.name} is not defined for complex tensors")
    return binary(prim, input, other, dtype=dtype if dtype.is_float else dtypes.float32)


def _polynomial(name: str):
    prim = getattr(prims, name)

    def apply(input, n):
        return _float_binary(prim, input, n)

    apply.__doc__ = f"{prim.doc}, n truncated to an integer"
    return symbol(getattr(torch.special, name), name=name)(apply)


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w")
hermite_polynomial_h = _polynomial("hermite_polynomial_h")
hermite_polynomial_he = _polynomial("hermite_polynomial_he")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l")
legendre_polynomial_p = _polynomial("legendre_polynomial_p")


@symbol(torch.special.zeta)
def zeta(input, other):
    """the Hurwitz zeta function: sum over k >= 0 of 1 / (k + other) ** input"""
    return _float_binary(prims.zeta, input, other)
