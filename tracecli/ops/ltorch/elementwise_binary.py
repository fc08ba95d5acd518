"""Binary elementwise maths beyond arithmetic: remainders, angles, signs and steps,
log-sum-exp of pairs, interpolation and fused multiply-adds, NaN-ignoring extremes,
x·log(y), integer gcd/lcm, and float powers and exponents."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch

from tracecli.core import dtypes
from tracecli.ops import prims
from tracecli.ops.autocast import Autocast, Policy
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch import elementwise as ew
from tracecli.ops.ltorch._base import (
    broadcast_all,
    compute_dtype,
    convert,
    expect_tensor,
    is_tensor,
    symbol,
    torch_form,
)
from tracecli.ops.ltorch.elementwise import binary
from tracecli.ops.promotion import ShapeError, result_type
from tracecli.ops.torch_bridge import TO_TORCH

# CUDA autocast computes these at the widest floating dtype of their operands.
_CUDA_PROMOTE = Autocast(cuda=Policy.PROMOTE)


def _promoted(op: str, *operands, kinds=("int", "float"), tensors_only=False):
    """The dtype torch computes `op` in, refusing operands it refuses."""
    if tensors_only:
        for x in operands:
            expect_tensor(x, op)
    elif not any(is_tensor(x) for x in operands):
        raise ShapeError(f"{op} needs a tensor operand")
    dtype = result_type(*operands)
    if dtype.kind not in kinds:
        raise ShapeError(f"{op} is not defined for {dtype.name}")
    return dtype


def _float_result(dtype):
    """Integers and bools computed as float32, as torch's float-only kernels do."""
    return dtype if dtype.is_float else dtypes.float32


def _in_compute_dtype(dtype, *operands):
    """The operands in `dtype`'s compute dtype (float32 for half precision, as torch's
    kernels compute), broadcast together. A tensor of another dtype (a zero-dim float32
    beside float16) is first rounded to `dtype`, as torch casts its operands."""
    wide = compute_dtype(dtype)
    return broadcast_all(*(convert(convert(x, dtype), wide) if is_tensor(x) else convert(x, wide) for x in operands))


# --- remainders -----------------------------------------------------------------------


def _no_integer_division_by_zero(dtype, other) -> None:
    if dtype.kind == "int" and not is_tensor(other) and other == 0:
        raise ShapeError("integer division by zero")


@symbol(torch.fmod, methods=("fmod",))
def fmod(input, other):
    """input - trunc(input / other) * other: the remainder with the dividend's sign"""
    dtype = _promoted("fmod", expect_tensor(input, "fmod"), other)
    _no_integer_division_by_zero(dtype, other)
    return binary(prims.fmod, input, other, dtype=dtype)


@symbol(torch.remainder, methods=("remainder", "__mod__"))
def remainder(input, other):
    """input - floor(input / other) * other: the remainder with the divisor's sign (Python's %)"""
    dtype = _promoted("remainder", input, other)
    _no_integer_division_by_zero(dtype, other)
    return binary(prims.remainder, input, other, dtype=dtype)


@torch_form(methods=("__rmod__",))
def _rmod(self, other):
    return remainder(other, self)


# --- angles, signs and steps -----------------------------------------------------------


@symbol(torch.atan2, aliases=(torch.arctan2,), methods=("atan2", "arctan2"), autocast=_CUDA_PROMOTE)
def atan2(input, other):
    """the angle of the point (other, input), in (-pi, pi]"""
    dtype = _promoted("atan2", input, other, kinds=("bool", "int", "float"), tensors_only=True)
    return binary(prims.atan2, input, other, dtype=_float_result(dtype))


@symbol(torch.copysign, methods=("copysign",))
def copysign(input, other):
    """|input| with the sign of other (of its sign bit: -0.0 counts as negative)"""
    dtype = _promoted("copysign", expect_tensor(input, "copysign"), other, kinds=("bool", "int", "float"))
    return binary(prims.copysign, input, other, dtype=_float_result(dtype))


@symbol(torch.hypot, methods=("hypot",))
def hypot(input, other):
    """sqrt(input² + other²), without overflow in the squares"""
    dtype = _promoted("hypot", input, other, kinds=("float",), tensors_only=True)
    return binary(prims.hypot, input, other, dtype=dtype)


@symbol(torch.nextafter, methods=("nextafter",))
def nextafter(input, other):
    """the next number after input in the direction of other, in input's dtype"""
    dtype = _promoted("nextafter", input, other, kinds=("float",), tensors_only=True)
    return binary(prims.nextafter, input, other, dtype=dtype)


@symbol(torch.heaviside, methods=("heaviside",))
def heaviside(input, values):
    """0 where input < 0, values where input == 0, 1 where input > 0 (NaN gives 0)"""
    input, values = expect_tensor(input, "heaviside"), expect_tensor(values, "heaviside")
    if input.dtype != values.dtype:
        raise ShapeError("heaviside needs input and values of one dtype")
    if input.dtype.is_complex:
        raise ShapeError("heaviside is not defined for complex tensors")
    x, values = broadcast_all(input, values)
    zero = convert(0, x.dtype)
    return prims.where(prims.eq(x, zero), values, convert(prims.gt(x, zero), x.dtype))


# --- extremes that ignore NaN ------------------------------------------------------------


def _nan_ignoring(prim, op: str):
    def apply(input, other):
        dtype = _promoted(op, input, other, kinds=("bool", "int", "float"), tensors_only=True)
        a, b = broadcast_all(convert(input, dtype), convert(other, dtype))
        out = prim(a, b)
        if not dtype.is_float:
            return out
        # Where one operand is NaN the other one wins; prims.maximum would propagate it.
        return prims.where(prims.ne(b, b), a, prims.where(prims.ne(a, a), b, out))

    apply.__doc__ = f"elementwise {prim.name} of input and other, a NaN only where both are NaN"
    return apply


fmax = symbol(torch.fmax, methods=("fmax",), name="fmax")(_nan_ignoring(prims.maximum, "fmax"))
fmin = symbol(torch.fmin, methods=("fmin",), name="fmin")(_nan_ignoring(prims.minimum, "fmin"))


# --- logarithms of sums and products -------------------------------------------------------


def _logaddexp(input, other, op: str, exp, log_scale: float):
    dtype = _promoted(op, input, other, kinds=("float",), tensors_only=True)
    a, b = _in_compute_dtype(dtype, input, other)
    # max + log1p(exp(-|a - b|)) is exact where the plain formula overflows; where both
    # are the same infinity, a - b is NaN, and the result is that infinity.
    correction = prims.log1p(exp(prims.neg(prims.abs(prims.sub(a, b)))))
    out = prims.add(prims.maximum(a, b), correction if log_scale == 1 else prims.mul(correction, log_scale))
    same_infinity = prims.bitwise_and(prims.eq(a, b), prims.eq(prims.abs(a), math.inf))
    return convert(prims.where(same_infinity, a, out), dtype)


def _real_only(op):
    # torch also adds complex exponentials, which no prim here models.
    def adapter(input, other):
        complex_operand = any(is_tensor(x) and x.dtype.is_complex for x in (input, other))
        return OPAQUE if complex_operand else op(input, other)

    return adapter


@symbol(torch.logaddexp, methods=("logaddexp",), adapter=_real_only(lambda a, b: logaddexp(a, b)))
def logaddexp(input, other):
    """log(exp(input) + exp(other))"""
    return _logaddexp(input, other, "logaddexp", prims.exp, 1)


@symbol(torch.logaddexp2, methods=("logaddexp2",))
def logaddexp2(input, other):
    """log2(2**input + 2**other)"""
    return _logaddexp(input, other, "logaddexp2", prims.exp2, 1 / math.log(2))


def _x_log(log, op: str):
    def apply(input, other):
        # torch computes these in the operands' dtype, half precision included.
        dtype = _float_result(_promoted(op, input, other, kinds=("bool", "int", "float")))
        x, y = (convert(v, dtype) for v in (input, other))
        if not is_tensor(y):  # the logarithm of a number, computed as torch does: in the tensor's dtype
            y = prims.full(x.shape, y, device=x.device, dtype=dtype)
        x, y = broadcast_all(x, y)
        product = prims.mul(x, log(y))
        # x == 0 gives 0 even where log(y) is infinite; a NaN y gives NaN even where x == 0.
        if is_tensor(x):
            product = prims.where(prims.eq(x, 0.0), 0.0, product)
        elif x == 0:
            product = prims.full(y.shape, 0.0, device=y.device, dtype=dtype)
        return prims.where(prims.ne(y, y), y, product)

    apply.__doc__ = f"input * {log.name}(other), 0 where input is 0 (unless other is NaN)"
    return apply


xlogy = symbol(torch.xlogy, aliases=(torch.special.xlogy,), methods=("xlogy",), name="xlogy")(
    _x_log(prims.log, "xlogy")
)
xlog1py = symbol(torch.special.xlog1py, name="xlog1py")(_x_log(prims.log1p, "xlog1py"))


# --- fused multiply-adds and interpolation ---------------------------------------------------


def _addc(prim, op: str):
    def apply(input, tensor1, tensor2, *, value=1):
        operands = tuple(expect_tensor(x, op) for x in (input, tensor1, tensor2))
        dtype = _promoted(op, *operands, kinds=("int", "float", "complex"))
        if isinstance(value, complex) and not dtype.is_complex:
            raise ShapeError(f"{op} of {dtype.name} tensors needs a real value, got {value!r}")
        # torch reads `value` in the result's dtype (an int tensor truncates 0.5 to 0).
        value = convert(value, compute_dtype(dtype))
        x, t1, t2 = _in_compute_dtype(dtype, *operands)
        scaled = t1 if isinstance(value, (int, float)) and value == 1 else prims.mul(t1, value)
        return convert(prims.add(x, prim(scaled, t2)), dtype)

    return apply


def _with_tensor_value(op: str):
    """torch takes a number `value` only; code written for torch.compile passes a 0-d
    tensor there (Adam's step size, computed from its step count under compilation),
    which the trace spells as the multiply, divide and add it stands for."""

    def adapter(input, tensor1, tensor2, *, value=1):
        if not is_tensor(value):
            return (addcmul if op == "addcmul" else addcdiv)(input, tensor1, tensor2, value=value)
        combined = ew.mul(tensor1, tensor2) if op == "addcmul" else ew.true_divide(tensor1, tensor2)
        return ew.add(input, ew.mul(combined, value))

    return adapter


@symbol(torch.addcmul, methods=("addcmul",), autocast=_CUDA_PROMOTE, adapter=_with_tensor_value("addcmul"))
def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2"""
    return _addc(prims.mul, "addcmul")(input, tensor1, tensor2, value=value)


@symbol(torch.addcdiv, methods=("addcdiv",), autocast=_CUDA_PROMOTE, adapter=_with_tensor_value("addcdiv"))
def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2 (in floating point only)"""
    if all(is_tensor(t) and t.dtype.kind in ("bool", "int") for t in (tensor1, tensor2)):
        raise ShapeError("addcdiv does not divide integers; convert tensor1 or tensor2 to floating point")
    return _addc(prims.div, "addcdiv")(input, tensor1, tensor2, value=value)


def _lerp(input, end, weight):
    # A complex weight is small or large by its modulus, which no prim computes.
    complex_weight = is_tensor(weight) and weight.dtype.is_complex or isinstance(weight, complex)
    return OPAQUE if complex_weight or expect_tensor(input, "lerp").dtype.is_complex else lerp(input, end, weight)


@symbol(torch.lerp, methods=("lerp",), adapter=_lerp)
def lerp(input, end, weight):
    """input + weight * (end - input), computed from the nearer end"""
    input, end = expect_tensor(input, "lerp"), expect_tensor(end, "lerp")
    if input.dtype != end.dtype:
        raise ShapeError(f"lerp needs input and end of one dtype, got {input.dtype.name} and {end.dtype.name}")
    if not input.dtype.is_float:
        raise ShapeError(f"lerp is not defined for {input.dtype.name} tensors")
    if is_tensor(weight) and weight.ndim and weight.dtype != input.dtype:
        raise ShapeError(f"lerp needs a weight of the input's dtype, got {weight.dtype.name}")
    # Far from the start, torch interpolates back from the end: (end - input) * (weight - 1) + end.
    start, end, w = _in_compute_dtype(input.dtype, input, end, weight)
    diff = prims.sub(end, start)
    if not is_tensor(w):
        w = torch.tensor(w, dtype=TO_TORCH[start.dtype]).item()  # the kernel reads it in its compute dtype
        small = abs(w) < 0.5
        return convert(prims.add(start if small else end, prims.mul(diff, w if small else w - 1.0)), input.dtype)
    small = prims.lt(prims.abs(w), 0.5)
    coeff = prims.where(small, w, prims.sub(w, 1.0))
    return convert(prims.add(prims.where(small, start, end), prims.mul(diff, coeff)), input.dtype)


# --- powers and exponents ----------------------------------------------------------------------


@symbol(torch.float_power, methods=("float_power",))
def float_power(input, exponent):
    """input ** exponent in double precision (float64, or complex128 for complex operands)"""
    dtype = _promoted("float_power", input, exponent, kinds=("bool", "int", "float", "complex"))
    wide = dtypes.complex128 if dtype.is_complex else dtypes.float64
    return binary(prims.pow, input, exponent, dtype=wide)


@symbol(torch.ldexp, methods=("ldexp",))
def ldexp(input, other):
    """input * 2 ** other"""
    input, other = expect_tensor(input, "ldexp"), expect_tensor(other, "ldexp")
    # torch multiplies in the dtype the product promotes to, then writes the product into
    # a result of the operands' own promoted (floating point) dtype.
    dtype = _promoted("ldexp", input, other, kinds=("bool", "int", "float", "complex"))
    # torch's ldexp is its pow and mul, autocast's policy for pow included (float32 on CUDA).
    product = ew.mul(input, ew.pow(2.0, other))
    return convert(product, dtype if dtype.is_inexact else dtypes.float32)


# --- integers -----------------------------------------------------------------------------------


@symbol(torch.gcd, methods=("gcd",))
def gcd(input, other):
    """the greatest common divisor of input and other (non-negative)"""
    dtype = _promoted("gcd", input, other, kinds=("int",), tensors_only=True)
    return binary(prims.gcd, input, other, dtype=dtype)


@symbol(torch.lcm, methods=("lcm",))
def lcm(input, other):
    """|input / gcd * other|: the least common multiple, 0 where either is 0"""
    dtype = _promoted("lcm", input, other, kinds=("int",), tensors_only=True)
    a, b = broadcast_all(convert(input, dtype), convert(other, dtype))
    divisor = prims.gcd(a, b)
    # Where the gcd is 0 (both are 0) the result is 0; dividing by 1 there keeps the division defined.
    zero = prims.eq(divisor, 0)
    multiple = prims.abs(prims.mul(prims.div(a, prims.where(zero, 1, divisor)), b))
    return prims.where(zero, 0, multiple)
