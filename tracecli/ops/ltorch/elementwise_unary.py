"""Unary elementwise maths beyond the basics: rounding, signs, classification of
special values, the inverse and hyperbolic trigonometric functions, logarithms and
exponentials in other bases, angles, sinc and logit."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch

from tracecli.core import dtypes
from tracecli.ops import prims
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch import elementwise as ew
from tracecli.ops.ltorch._base import compute_dtype, convert, expect_tensor, float_dtype_for, symbol, torch_form
from tracecli.ops.ltorch.elementwise import CUDA_FP32, float_unary
from tracecli.ops.promotion import ShapeError
from tracecli.ops.torch_bridge import TO_TORCH


def _filled(like, value):
    """A bool tensor shaped as `like`, every element `value`: what a test of special
    values answers for integers, which have none."""
    return prims.full(like.shape, value, device=like.device, dtype=dtypes.bool8)


def _real(input, op: str):
    input = expect_tensor(input, op)
    if input.dtype.kind not in ("int", "float"):
        raise ShapeError(f"{op} is not defined for {input.dtype.name} tensors")
    return input


# --- rounding ------------------------------------------------------------------------


def _rounding(prim):
    def apply(input):
        # Integers are already whole: torch returns a copy, as the prim does.
        return prim(_real(input, prim.name))

    apply.__doc__ = f"{prim.name}(input), in the input's dtype"
    return apply


floor = symbol(torch.floor, methods=("floor",), name="floor")(_rounding(prims.floor))
ceil = symbol(torch.ceil, methods=("ceil",), name="ceil")(_rounding(prims.ceil))
trunc = symbol(torch.trunc, aliases=(torch.fix,), methods=("trunc", "fix"), name="trunc")(_rounding(prims.trunc))


@symbol(torch.round, aliases=(torch.special.round,), methods=("round",))
def round(input, *, decimals=0):
    """input rounded half to even, to `decimals` decimal places"""
    input = _real(input, "round")
    if decimals == 0:
        return prims.round(input)
    if not input.dtype.is_float:
        raise ShapeError(f"round with decimals is not defined for {input.dtype.name} tensors")
    if abs(decimals) > 300:
        raise ShapeError(f"round: 10 ** {abs(decimals)} is beyond every floating point dtype")
    # torch's kernel scales by 10^|decimals| in float32 for half precision, and divides
    # (or multiplies) back after rounding, so the result is the nearest such multiple.
    x = convert(input, compute_dtype(input.dtype))
    scale = float(10 ** abs(decimals))
    if decimals > 0:
        out = prims.div(prims.round(prims.mul(x, scale)), scale)
    else:
        out = prims.mul(prims.round(prims.div(x, scale)), scale)
    return convert(out, input.dtype)


@symbol(torch.frac, methods=("frac",))
def frac(input):
    """input - trunc(input): the fractional part, with the input's sign"""
    input = expect_tensor(input, "frac")
    if not input.dtype.is_float:
        raise ShapeError(f"frac is not defined for {input.dtype.name} tensors")
    return prims.sub(input, prims.trunc(input))


# --- signs ---------------------------------------------------------------------------


@symbol(torch.sign, methods=("sign",))
def sign(input):
    """-1, 0 or 1 as input is negative, zero or positive (bools are their own sign)"""
    input = expect_tensor(input, "sign")
    if input.dtype.is_complex:
        raise ShapeError("sign is not defined for complex tensors; torch.sgn is")
    return prims.sign(input)


def _sgn(input):
    # sgn of a complex number is z / |z|, which no prim computes: torch does.
    return OPAQUE if expect_tensor(input, "sgn").dtype.is_complex else sgn(input)


@symbol(torch.sgn, methods=("sgn",), adapter=_sgn)
def sgn(input):
    """sign(input), for real tensors"""
    return prims.sign(expect_tensor(input, "sgn"))


@symbol(torch.signbit, methods=("signbit",))
def signbit(input):
    """whether input's sign bit is set: true for -0.0 and negative NaNs too"""
    input = expect_tensor(input, "signbit")
    if input.dtype.is_complex:
        raise ShapeError("signbit is not defined for complex tensors")
    if input.dtype == dtypes.bool8:
        return _filled(input, False)
    if not input.dtype.is_float:
        return prims.lt(input, 0)
    # Comparisons cannot see the sign of zero or of NaN; copysign carries it onto 1.0.
    return prims.lt(prims.copysign(1.0, input), 0.0)


# --- special values ------------------------------------------------------------------


@symbol(torch.isnan, methods=("isnan",))
def isnan(input):
    """input != input: true exactly where input is NaN"""
    input = expect_tensor(input, "isnan")
    return prims.ne(input, input) if input.dtype.is_inexact else _filled(input, False)


def _isinf(input):
    # A complex number is infinite when either part is: parts are not modelled.
    return OPAQUE if expect_tensor(input, "isinf").dtype.is_complex else isinf(input)


@symbol(torch.isinf, methods=("isinf",), adapter=_isinf)
def isinf(input):
    """|input| == inf"""
    input = expect_tensor(input, "isinf")
    return prims.eq(prims.abs(input), math.inf) if input.dtype.is_float else _filled(input, False)


def _isfinite(input):
    return OPAQUE if expect_tensor(input, "isfinite").dtype.is_complex else isfinite(input)


@symbol(torch.isfinite, methods=("isfinite",), adapter=_isfinite)
def isfinite(input):
    """|input| < inf: neither infinite nor NaN"""
    input = expect_tensor(input, "isfinite")
    return prims.lt(prims.abs(input), math.inf) if input.dtype.is_float else _filled(input, True)


def _infinity_test(value: float, op: str):
    def apply(input):
        input = expect_tensor(input, op)
        if input.dtype.is_complex:
            raise ShapeError(f"{op} is not defined for complex tensors")
        return prims.eq(input, value) if input.dtype.is_float else _filled(input, False)

    apply.__doc__ = f"input == {value}"
    return apply


isposinf = symbol(torch.isposinf, methods=("isposinf",), name="isposinf")(_infinity_test(math.inf, "isposinf"))
isneginf = symbol(torch.isneginf, methods=("isneginf",), name="isneginf")(_infinity_test(-math.inf, "isneginf"))


def _isreal(input):
    # Whether the imaginary part is zero: parts of complex numbers are not modelled.
    return OPAQUE if expect_tensor(input, "isreal").dtype.is_complex else isreal(input)


@symbol(torch.isreal, methods=("isreal",), adapter=_isreal)
def isreal(input):
    """true everywhere for a real tensor"""
    return _filled(expect_tensor(input, "isreal"), True)


def _nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    # Complex numbers have each part replaced: parts are not modelled.
    return OPAQUE if expect_tensor(input, "nan_to_num").dtype.is_complex else nan_to_num(input, nan, posinf, neginf)


@symbol(torch.nan_to_num, methods=("nan_to_num",), adapter=_nan_to_num)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """input with NaN, inf and -inf replaced (by default by 0 and the dtype's extremes)"""
    input = expect_tensor(input, "nan_to_num")
    if not input.dtype.is_float:
        return prims.clone(input)  # integers have no special values; torch returns a copy
    info = torch.finfo(TO_TORCH[input.dtype])
    # prims.where puts each number in the input's dtype, as torch's kernel casts them.
    out = prims.where(prims.eq(input, -math.inf), info.min if neginf is None else neginf, input)
    out = prims.where(prims.eq(input, math.inf), info.max if posinf is None else posinf, out)
    return prims.where(prims.ne(input, input), 0.0 if nan is None else nan, out)


def _angle(input):
    # The argument of a complex number needs its parts, which are not modelled.
    return OPAQUE if expect_tensor(input, "angle").dtype.is_complex else angle(input)


@symbol(torch.angle, methods=("angle",), adapter=_angle)
def angle(input):
    """the argument of a real number: pi where negative, else 0 (NaN stays NaN)"""
    input = expect_tensor(input, "angle")
    x = convert(input, float_dtype_for(input))
    zero = prims.full(x.shape, 0.0, device=x.device, dtype=x.dtype)
    out = prims.where(prims.lt(x, 0.0), math.pi, zero)
    return prims.where(prims.ne(x, x), x, out)


# --- forms that are the value itself ---------------------------------------------------


@torch_form(torch.positive, methods=("positive", "__pos__"))
def _positive(input):
    # torch returns the tensor itself.
    if expect_tensor(input, "positive").dtype == dtypes.bool8:
        raise ShapeError("the + operator is not defined for bool tensors")
    return input


@torch_form(torch.conj, torch.conj_physical, torch.resolve_conj, torch.resolve_neg, torch.real,
            methods=("conj", "conj_physical", "resolve_conj", "resolve_neg"), properties=(torch.Tensor.real.__get__,))
def _real_part(input):
    # For a real tensor torch returns the tensor itself; complex parts are not modelled.
    return OPAQUE if expect_tensor(input, "conj").dtype.is_complex else input


# --- transcendental functions ---------------------------------------------------------

# Each in floating point (integers and bools become float32), as torch's own kernels;
# CUDA autocast computes most of them in float32.
log1p = symbol(torch.log1p, aliases=(torch.special.log1p,), methods=("log1p",), name="log1p", autocast=CUDA_FP32)(
    float_unary(prims.log1p)
)
expm1 = symbol(torch.expm1, aliases=(torch.special.expm1,), methods=("expm1",), name="expm1", autocast=CUDA_FP32)(
    float_unary(prims.expm1)
)
log2 = symbol(torch.log2, methods=("log2",), name="log2", autocast=CUDA_FP32)(float_unary(prims.log2))
log10 = symbol(torch.log10, methods=("log10",), name="log10", autocast=CUDA_FP32)(float_unary(prims.log10))
exp2 = symbol(torch.exp2, aliases=(torch.special.exp2,), methods=("exp2",), name="exp2")(float_unary(prims.exp2))
tan = symbol(torch.tan, methods=("tan",), name="tan", autocast=CUDA_FP32)(float_unary(prims.tan))
asin = symbol(torch.asin, aliases=(torch.arcsin,), methods=("asin", "arcsin"), name="asin", autocast=CUDA_FP32)(
    float_unary(prims.asin)
)
acos = symbol(torch.acos, aliases=(torch.arccos,), methods=("acos", "arccos"), name="acos", autocast=CUDA_FP32)(
    float_unary(prims.acos)
)
atan = symbol(torch.atan, aliases=(torch.arctan,), methods=("atan", "arctan"), name="atan")(float_unary(prims.atan))
sinh = symbol(torch.sinh, methods=("sinh",), name="sinh", autocast=CUDA_FP32)(float_unary(prims.sinh))
cosh = symbol(torch.cosh, methods=("cosh",), name="cosh", autocast=CUDA_FP32)(float_unary(prims.cosh))
asinh = symbol(torch.asinh, aliases=(torch.arcsinh,), methods=("asinh", "arcsinh"), name="asinh")(
    float_unary(prims.asinh)
)
acosh = symbol(torch.acosh, aliases=(torch.arccosh,), methods=("acosh", "arccosh"), name="acosh")(
    float_unary(prims.acosh)
)
atanh = symbol(torch.atanh, aliases=(torch.arctanh,), methods=("atanh", "arctanh"), name="atanh")(
    float_unary(prims.atanh)
)


@symbol(torch.square, methods=("square",))
def square(input):
    """input ** 2 (bools become int64, as in torch)"""
    # torch's square is its pow, autocast's policy for pow included (float32 on CUDA).
    return ew.pow(expect_tensor(input, "square"), 2)


def _angle_conversion(factor: float, op: str):
    def apply(input):
        input = expect_tensor(input, op)
        if input.dtype.is_complex:
            raise ShapeError(f"{op} is not defined for complex tensors")
        return prims.mul(convert(input, float_dtype_for(input)), factor)

    apply.__doc__ = f"input * {factor!r}"
    return apply


deg2rad = symbol(torch.deg2rad, methods=("deg2rad",), name="deg2rad")(_angle_conversion(math.pi / 180, "deg2rad"))
rad2deg = symbol(torch.rad2deg, methods=("rad2deg",), name="rad2deg")(_angle_conversion(180 / math.pi, "rad2deg"))


@symbol(torch.sinc, aliases=(torch.special.sinc,), methods=("sinc",))
def sinc(input):
    """sin(pi * input) / (pi * input), and 1 at 0"""
    input = expect_tensor(input, "sinc")
    x = convert(input, float_dtype_for(input))
    wide = convert(x, compute_dtype(x.dtype))
    product = prims.mul(wide, math.pi)
    out = prims.where(prims.eq(wide, 0.0), 1.0, prims.div(prims.sin(product), product))
    return convert(out, x.dtype)


@symbol(torch.logit, aliases=(torch.special.logit,), methods=("logit",))
def logit(input, eps=None):
    """log(input / (1 - input)), input first clamped to [eps, 1 - eps] when eps is given"""
    input = expect_tensor(input, "logit")
    if input.dtype.is_complex:
        raise ShapeError("logit is not defined for complex tensors")
    x = convert(input, float_dtype_for(input))
    if eps is not None and eps >= 0:  # a negative or NaN eps clamps nothing, as in torch
        # The bounds in the input's dtype: torch computes 1 - eps there.
        low = torch.tensor(eps, dtype=TO_TORCH[x.dtype])
        x = prims.minimum(prims.maximum(x, low.item()), (1 - low).item())
    return prims.log(prims.div(x, prims.sub(1.0, x)))
