"""Elementwise ltorch symbols: arithmetic, comparisons, unary maths, where, clamp."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import sys

import torch
import torch.nn.functional as F

from tracecli.core import dtypes
from tracecli.core.dims import statically_equal
from tracecli.ops import prims
from tracecli.ops.autocast import Autocast, Policy
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import (
    ALL,
    broadcast_all,
    compute_dtype,
    convert,
    expect_tensor,
    float_dtype_for,
    is_tensor,
    symbol,
    torch_form,
)
from tracecli.ops.promotion import ShapeError, result_type
from tracecli.ops.torch_bridge import TO_TORCH

# CUDA autocast computes these in float32 (ATen's fp32 list).
CUDA_FP32 = Autocast(cuda=Policy.FP32)


def binary(prim, a, b, *, dtype=None, out_dtype=None):
    """Promote, convert and broadcast the operands, then apply `prim`."""
    if not (is_tensor(a) or is_tensor(b)):
        raise ShapeError(f"{prim.name} needs a tensor operand")
    dtype = dtype or result_type(a, b)
    a, b = broadcast_all(convert(a, dtype), convert(b, dtype))
    out = prim(a, b)
    return convert(out, out_dtype) if out_dtype is not None and out.dtype != out_dtype else out


def reads_scalar_in_float32(input, other, dtype) -> bool:
    """Whether torch reads `other` unrounded, computing `input op other` in float32.

    torch's CPU kernels for mul, div and floor_divide in a half type read a zero-dim
    `other` of another dtype at float32 precision, without rounding it to the half type
    first: `x_f16 * torch.tensor(2.485)` multiplies by 2.485, not by 2.484375.
    """
    return (
        dtype in (dtypes.float16, dtypes.bfloat16)
        and is_tensor(input) and is_tensor(other) and other.ndim == 0 and other.dtype != dtype
    )


def rounded(x, dtype):
    """`x` in `dtype`; a number stays a number, but with the value `dtype` can hold
    (which matters once an op on half precision computes in float32)."""
    if is_tensor(x) or dtype not in (dtypes.float16, dtypes.bfloat16):
        return convert(x, dtype)
    return torch.tensor(float(x), dtype=TO_TORCH[dtype]).item()


def _scaled(b, alpha):
    if is_tensor(alpha):
        # A 0-d tensor, which eager reads as the number it holds (torch.optim.ASGD passes
        # its step size so): its value is known only at run time, so it multiplies.
        if alpha.shape:
            raise ShapeError(f"alpha must be a number or a 0-d tensor, not a tensor of shape {list(alpha.shape)}")
        dtype = b.dtype if is_tensor(b) else alpha.dtype
        return binary(prims.mul, b, convert(alpha, dtype), dtype=dtype)
    if alpha == 1:
        return b
    if is_tensor(b):
        return prims.mul(b, convert(alpha, b.dtype))
    return b * alpha


@symbol(torch.add, methods=("add", "__add__", "__radd__"))
def add(input, other, *, alpha=1):
    """input + alpha * other"""
    dtype = result_type(input, other)
    return binary(prims.add, input, _scaled(convert(other, dtype), alpha), dtype=dtype)


def _no_bool_subtraction(*operands) -> None:
    if any(isinstance(x, bool) or (is_tensor(x) and x.dtype == dtypes.bool8) for x in operands):
        raise ShapeError(
            "subtraction with a bool operand is not supported; to invert a mask use ~ or logical_not()"
        )


@symbol(torch.sub, aliases=(torch.subtract,), methods=("sub", "subtract", "__sub__"))
def sub(input, other, *, alpha=1):
    """input - alpha * other"""
    _no_bool_subtraction(input, other)
    dtype = result_type(input, other)
    return binary(prims.sub, input, _scaled(convert(other, dtype), alpha), dtype=dtype)


@symbol(torch.rsub, methods=("__rsub__",))
def rsub(input, other, *, alpha=1):
    """other - alpha * input"""
    _no_bool_subtraction(input, other)
    dtype = result_type(input, other)
    return binary(prims.sub, other, _scaled(convert(input, dtype), alpha), dtype=dtype)


@symbol(torch.mul, aliases=(torch.multiply,), methods=("mul", "multiply", "__mul__", "__rmul__"))
def mul(input, other):
    """input * other"""
    dtype = result_type(input, other)
    if reads_scalar_in_float32(input, other, dtype):
        return convert(binary(prims.mul, input, other, dtype=dtypes.float32), dtype)
    return binary(prims.mul, input, other, dtype=dtype)


def _true_divide_dtype(a, b):
    dtype = result_type(a, b)
    return dtype if dtype.is_inexact else dtypes.float32


@symbol(torch.true_divide, methods=("true_divide", "__truediv__"))
def true_divide(input, other):
    """input / other, always in floating point"""
    dtype = _true_divide_dtype(input, other)
    if reads_scalar_in_float32(input, other, dtype):
        return convert(binary(prims.div, input, other, dtype=dtypes.float32), dtype)
    return binary(prims.div, input, other, dtype=dtype)


def _floor_divide_float(a, b):
    """torch's floor division of floats (c10's div_floor_floating, which Python's // also
    follows). floor(a / b) is not it: 1.0 / 0.1 rounds up to 10.0, but 1.0 // 0.1 is 9.0."""
    mod = prims.fmod(a, b)
    div = prims.div(prims.sub(a, mod), b)
    # fmod's remainder has the dividend's sign; flooring needs the divisor's.
    b_negative = prims.lt(b, 0.0) if is_tensor(b) else b < 0
    wrong_sign = prims.bitwise_and(prims.ne(mod, 0.0), prims.ne(prims.lt(mod, 0.0), b_negative))
    div = prims.where(wrong_sign, prims.sub(div, 1.0), div)
    # (a - mod) / b is an integer up to rounding: round it to the nearest one.
    floordiv = prims.floor(div)
    floordiv = prims.where(prims.gt(prims.sub(div, floordiv), 0.5), prims.add(floordiv, 1.0), floordiv)
    quotient = prims.div(a, b)
    # A zero result takes the sign of a / b; a zero divisor gives a / b itself (inf or nan).
    out = prims.where(prims.eq(div, 0.0), prims.mul(quotient, 0.0), floordiv)
    if is_tensor(b):
        return prims.where(prims.eq(b, 0.0), quotient, out)
    return quotient if b == 0 else out


def _floor_divide_int(a, b):
    """Truncating division, one less where the remainder is nonzero and the signs differ
    (c10's div_floor_integer): exact for every integer, unlike a detour through floats."""
    quotient = prims.div(a, b)
    remainder = prims.fmod(a, b)
    b_negative = prims.lt(b, 0) if is_tensor(b) else b < 0
    wrong_sign = prims.bitwise_and(prims.ne(remainder, 0), prims.ne(prims.lt(remainder, 0), b_negative))
    return prims.where(wrong_sign, prims.sub(quotient, 1), quotient)


def _division_operands(input, other, op: str):
    """The operands of a rounding division in the dtype it computes in, and its result dtype.

    torch computes half-precision floor and trunc division in float32 and rounds once at
    the end, from operands rounded to the half type, except an `other` that is a number
    or a zero-dim tensor of another dtype: the kernel reads that one in float32 unrounded.
    """
    if not (is_tensor(input) or is_tensor(other)):
        raise ShapeError(f"{op} needs a tensor operand")
    dtype = result_type(input, other)
    if dtype.kind not in ("int", "float"):
        raise ShapeError(f"{op} is not defined for {dtype.name}")
    if dtype.kind == "int" and not is_tensor(other) and other == 0:
        raise ShapeError("integer division by zero")
    compute = compute_dtype(dtype)
    unrounded = compute != dtype and (not is_tensor(other) or reads_scalar_in_float32(input, other, dtype))
    a = convert(rounded(input, dtype), compute)
    b = convert(other if unrounded else rounded(other, dtype), compute)
    return (*broadcast_all(a, b), dtype)


@symbol(torch.floor_divide, methods=("floor_divide", "__floordiv__"))
def floor_divide(input, other):
    """input // other"""
    a, b, dtype = _division_operands(input, other, "floor_divide")
    out = _floor_divide_float(a, b) if dtype.is_float else _floor_divide_int(a, b)
    return convert(out, dtype)


def _trunc_divide(input, other):
    return torch.div(input, other, rounding_mode="trunc")


def _half_by_tensor(input, other) -> bool:
    """Whether torch's half-precision trunc division reads memory layout: by a tensor of
    one element (or a number) it divides in float32, otherwise in the half type, unless
    that tensor is an expanded single element, which a trace cannot tell apart."""
    dtype = result_type(input, other)
    one_element = not is_tensor(other) or all(statically_equal(d, 1) for d in other.shape)
    return dtype in (dtypes.float16, dtypes.bfloat16) and not one_element


@symbol(_trunc_divide, name="trunc_divide")
def trunc_divide(input, other):
    """input / other rounded toward zero: torch.div(input, other, rounding_mode="trunc")"""
    if _half_by_tensor(input, other):
        raise ShapeError("half-precision trunc division by a tensor depends on its memory layout")
    a, b, dtype = _division_operands(input, other, "trunc_divide")
    quotient = prims.div(a, b)  # integer division truncates already
    return convert(prims.trunc(quotient) if dtype.is_float else quotient, dtype)


@symbol(torch.pow, methods=("pow", "__pow__"), autocast=CUDA_FP32)
def pow(input, exponent):  # noqa: A001
    """input ** exponent"""
    dtype = result_type(input, exponent)
    if dtype.kind == "int" and isinstance(exponent, int) and not isinstance(exponent, bool) and exponent < 0:
        raise ShapeError("integers to negative integer powers are not allowed")
    return binary(prims.pow, input, exponent, dtype=dtype)


@symbol(torch.maximum, methods=("maximum",))
def maximum(input, other):
    """elementwise max of two tensors"""
    return binary(prims.maximum, expect_tensor(input, "maximum"), expect_tensor(other, "maximum"))


@symbol(torch.minimum, methods=("minimum",))
def minimum(input, other):
    """elementwise min of two tensors"""
    return binary(prims.minimum, expect_tensor(input, "minimum"), expect_tensor(other, "minimum"))


def _comparison(prim):
    def compare(input, other):
        return binary(prim, input, other)

    compare.__doc__ = f"input {prim.name} other, as bool"
    return compare


# torch's (and numpy's) spelled-out names for the comparisons are aliases.
eq = symbol(torch.eq, methods=("eq", "__eq__"), name="eq")(_comparison(prims.eq))
ne = symbol(torch.ne, aliases=(torch.not_equal,), methods=("ne", "__ne__", "not_equal"), name="ne")(
    _comparison(prims.ne)
)
lt = symbol(torch.lt, aliases=(torch.less,), methods=("lt", "__lt__", "less"), name="lt")(_comparison(prims.lt))
le = symbol(torch.le, aliases=(torch.less_equal,), methods=("le", "__le__", "less_equal"), name="le")(
    _comparison(prims.le)
)
gt = symbol(torch.gt, aliases=(torch.greater,), methods=("gt", "__gt__", "greater"), name="gt")(
    _comparison(prims.gt)
)
ge = symbol(torch.ge, aliases=(torch.greater_equal,), methods=("ge", "__ge__", "greater_equal"), name="ge")(
    _comparison(prims.ge)
)


@symbol(torch.neg, aliases=(torch.negative,), methods=("neg", "negative", "__neg__"))
def neg(input):
    """-input"""
    if input.dtype == dtypes.bool8:
        raise ShapeError("negation of a bool tensor is not supported; use ~ or logical_not")
    return prims.neg(input)


def _abs(input):
    # abs of a complex tensor is real: no prim computes it, so torch does.
    return OPAQUE if input.dtype.is_complex else abs(input)


@symbol(torch.abs, aliases=(torch.absolute,), methods=("abs", "absolute", "__abs__"), adapter=_abs)
def abs(input):  # noqa: A001
    """|input|"""
    if input.dtype == dtypes.bool8:
        raise ShapeError("abs is not defined for bool tensors")
    return prims.abs(input)


def float_unary(prim):
    def apply(input):
        input = expect_tensor(input, prim.name)
        return prim(convert(input, float_dtype_for(input)))

    apply.__doc__ = f"{prim.name}(input), in floating point"
    # The op belongs to the module declaring it, its family, not to this helper's.
    apply.__module__ = sys._getframe(1).f_globals["__name__"]
    return apply


exp = symbol(torch.exp, methods=("exp",), name="exp", autocast=CUDA_FP32)(float_unary(prims.exp))
log = symbol(torch.log, methods=("log",), name="log", autocast=CUDA_FP32)(float_unary(prims.log))
sin = symbol(torch.sin, methods=("sin",), name="sin")(float_unary(prims.sin))
cos = symbol(torch.cos, methods=("cos",), name="cos")(float_unary(prims.cos))
tanh = symbol(torch.tanh, aliases=(F.tanh,), methods=("tanh",), name="tanh")(float_unary(prims.tanh))
sqrt = symbol(torch.sqrt, methods=("sqrt",), name="sqrt")(float_unary(prims.sqrt))
rsqrt = symbol(torch.rsqrt, methods=("rsqrt",), name="rsqrt", autocast=CUDA_FP32)(float_unary(prims.rsqrt))
erf = symbol(torch.erf, aliases=(torch.special.erf,), methods=("erf",), name="erf")(float_unary(prims.erf))
reciprocal = symbol(torch.reciprocal, methods=("reciprocal",), name="reciprocal", autocast=CUDA_FP32)(
    float_unary(prims.reciprocal)
)


@torch_form(torch.div, torch.divide, methods=("div", "divide"))
def div_rounding(input, other, *, rounding_mode=None):
    """torch.div's three divisions: true, floor and trunc (the in-place div_ takes them too)."""
    if rounding_mode is None:
        return true_divide(input, other)
    if rounding_mode == "floor":
        return floor_divide(input, other)
    if rounding_mode == "trunc":
        return OPAQUE if _half_by_tensor(input, other) else trunc_divide(input, other)
    raise ShapeError(f"div expects rounding_mode None, 'trunc' or 'floor', got {rounding_mode!r}")


@torch_form(methods=("__rtruediv__", "__rdiv__"))
def _rdiv(self, other):
    # Python's `number / tensor`: torch computes it as reciprocal then product, which
    # rounds twice; a true division would be closer, but not what eager returns.
    return mul(reciprocal(self), other)


@torch_form(methods=("__rfloordiv__",))
def _rfloordiv(self, other):
    return floor_divide(other, self)


@torch_form(methods=("__rpow__",))
def _rpow(self, other):
    return pow(other, self)


def _where(condition, input=None, other=None):
    if input is None and other is None:
        return ALL["nonzero"](condition, as_tuple=True)  # as many indices as the data has
    return where(condition, input, other)


@torch_form(methods=("where",))
def _where_method(self, condition, other):
    return where(condition, self, other)


@symbol(torch.where, adapter=_where)
def where(condition, input, other):
    """input where condition else other"""
    condition = expect_tensor(condition, "where")
    if condition.dtype != dtypes.bool8:
        raise ShapeError(f"where expects a bool condition, got {condition.dtype.name}")
    dtype = result_type(input, other)
    condition, input, other = broadcast_all(condition, convert(input, dtype), convert(other, dtype))
    if not (is_tensor(input) or is_tensor(other)):
        input = prims.full(condition.shape, input, device=condition.device, dtype=dtype)
    return prims.where(condition, input, other)


@symbol(torch.clamp, aliases=(torch.clip,), methods=("clamp", "clip"))
def clamp(input, min=None, max=None):
    """input limited to [min, max] (numbers or tensors, promoting like arithmetic)"""
    input = expect_tensor(input, "clamp")
    if min is None and max is None:
        raise ShapeError("clamp needs at least one of min and max")
    dtype = result_type(input, min, max)
    # One tensor bound makes clamp a maximum or a minimum, which torch takes for bools too.
    one_tensor_bound = (min is None) != (max is None) and is_tensor(max if min is None else min)
    if dtype.kind == "complex" or (dtype.kind == "bool" and not one_tensor_bound):
        raise ShapeError(f"clamp is not defined for {dtype.name}")
    bounds = (None if bound is None else convert(bound, dtype) for bound in (min, max))
    x, low, high = broadcast_all(convert(input, dtype), *bounds)
    # max first, then min: where min > max, torch's result is max too.
    out = x if low is None else prims.maximum(x, low)
    return out if high is None else prims.minimum(out, high)


@torch_form(torch.clamp_min, methods=("clamp_min",))
def _clamp_min(input, min):
    return clamp(input, min=min)


@torch_form(torch.clamp_max, methods=("clamp_max",))
def _clamp_max(input, max):
    return clamp(input, max=max)
