"""Elementwise ltorch symbols: arithmetic, comparisons, activations, where."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from tracecli.core import dtypes
from tracecli.ops import prims
from tracecli.ops.ltorch._base import (
    broadcast_all, compute_dtype, convert, expect_tensor, float_dtype_for, is_tensor, symbol,
)
from tracecli.ops.promotion import ShapeError, result_type


def _binary(prim, a, b, *, dtype=None, out_dtype=None):
    """Promote, convert and broadcast the operands, then apply `prim`."""
    if not (is_tensor(a) or is_tensor(b)):
        raise ShapeError(f"{prim.name} needs a tensor operand")
    dtype = dtype or result_type(a, b)
    a, b = broadcast_all(convert(a, dtype), convert(b, dtype))
    out = prim(a, b)
    return convert(out, out_dtype) if out_dtype is not None and out.dtype != out_dtype else out


def _scaled(b, alpha):
    if alpha == 1:
        return b
    if is_tensor(b):
        return prims.mul(b, convert(alpha, b.dtype))
    return b * alpha


@symbol(torch.add)
def add(input, other, *, alpha=1):
    """input + alpha * other"""
    dtype = result_type(input, other)
    return _binary(prims.add, input, _scaled(convert(other, dtype), alpha), dtype=dtype)


@symbol(torch.sub)
def sub(input, other, *, alpha=1):
    """input - alpha * other"""
    dtype = result_type(input, other)
    return _binary(prims.sub, input, _scaled(convert(other, dtype), alpha), dtype=dtype)


@symbol(torch.rsub)
def rsub(input, other, *, alpha=1):
    """other - alpha * input"""
    dtype = result_type(input, other)
    return _binary(prims.sub, other, _scaled(convert(input, dtype), alpha), dtype=dtype)


@symbol(torch.mul)
def mul(input, other):
    """input * other"""
    return _binary(prims.mul, input, other)


def _true_divide_dtype(a, b):
    dtype = result_type(a, b)
    return dtype if dtype.is_inexact else dtypes.float32


@symbol(torch.true_divide)
def true_divide(input, other):
    """input / other, always in floating point"""
    return _binary(prims.div, input, other, dtype=_true_divide_dtype(input, other))


@symbol(torch.floor_divide)
def floor_divide(input, other):
    """input // other"""
    dtype = result_type(input, other)
    if dtype.is_inexact:
        return prims.floor(_binary(prims.div, input, other, dtype=dtype))
    # Exact for integers below 2**53, the range where float64 division is exact enough.
    quotient = _binary(prims.div, input, other, dtype=dtypes.float64)
    return convert(prims.floor(quotient), dtype)


@symbol(torch.pow)
def pow(input, exponent):  # noqa: A001
    """input ** exponent"""
    return _binary(prims.pow, input, exponent)


@symbol(torch.maximum)
def maximum(input, other):
    """elementwise max of two tensors"""
    return _binary(prims.maximum, expect_tensor(input, "maximum"), expect_tensor(other, "maximum"))


@symbol(torch.minimum)
def minimum(input, other):
    """elementwise min of two tensors"""
    return _binary(prims.minimum, expect_tensor(input, "minimum"), expect_tensor(other, "minimum"))


def _comparison(prim):
    def compare(input, other):
        return _binary(prim, input, other)

    compare.__doc__ = f"input {prim.name} other, as bool"
    return compare


eq = symbol(torch.eq, name="eq")(_comparison(prims.eq))
ne = symbol(torch.ne, name="ne")(_comparison(prims.ne))
lt = symbol(torch.lt, name="lt")(_comparison(prims.lt))
le = symbol(torch.le, name="le")(_comparison(prims.le))
gt = symbol(torch.gt, name="gt")(_comparison(prims.gt))
ge = symbol(torch.ge, name="ge")(_comparison(prims.ge))


@symbol(torch.neg)
def neg(input):
    """-input"""
    if input.dtype == dtypes.bool8:
        raise ShapeError("negation of a bool tensor is not supported; use ~ or logical_not")
    return prims.neg(input)


@symbol(torch.abs)
def abs(input):  # noqa: A001
    """|input|"""
    return input if input.dtype == dtypes.bool8 else prims.abs(input)


def _float_unary(prim):
    def apply(input):
        input = expect_tensor(input, prim.name)
        return prim(convert(input, float_dtype_for(input)))

    apply.__doc__ = f"{prim.name}(input), in floating point"
    return apply


exp = symbol(torch.exp, name="exp")(_float_unary(prims.exp))
log = symbol(torch.log, name="log")(_float_unary(prims.log))
sin = symbol(torch.sin, name="sin")(_float_unary(prims.sin))
cos = symbol(torch.cos, name="cos")(_float_unary(prims.cos))
tanh = symbol(torch.tanh, name="tanh")(_float_unary(prims.tanh))
sqrt = symbol(torch.sqrt, name="sqrt")(_float_unary(prims.sqrt))
rsqrt = symbol(torch.rsqrt, name="rsqrt")(_float_unary(prims.rsqrt))
erf = symbol(torch.erf, name="erf")(_float_unary(prims.erf))


def _in_compute_dtype(x, fn):
    """Apply `fn` in float32 for half-precision inputs and cast back, as torch does."""
    x = convert(x, float_dtype_for(x))
    wide = compute_dtype(x.dtype)
    return convert(fn(convert(x, wide)), x.dtype)


@symbol(torch.sigmoid)
def sigmoid(input):
    """1 / (1 + exp(-input))"""
    return _in_compute_dtype(input, lambda x: prims.reciprocal(prims.add(prims.exp(prims.neg(x)), 1.0)))


@symbol(torch.relu)
def relu(input):
    """max(input, 0)"""
    if input.dtype == dtypes.bool8:
        raise ShapeError("relu is not defined for bool tensors")
    return prims.maximum(input, convert(0, input.dtype))


@symbol(F.gelu)
def gelu(input, approximate="none"):
    """x * Φ(x), exactly with erf or with the tanh approximation"""
    if approximate not in ("none", "tanh"):
        raise ShapeError(f"gelu approximate must be 'none' or 'tanh', got {approximate!r}")

    def exact(x):
        cdf = prims.add(prims.erf(prims.mul(x, 1 / math.sqrt(2.0))), 1.0)
        return prims.mul(prims.mul(x, 0.5), cdf)

    def tanh_approx(x):
        cube = prims.mul(prims.mul(x, x), x)
        inner = prims.mul(prims.add(x, prims.mul(cube, 0.044715)), math.sqrt(2.0 / math.pi))
        return prims.mul(prims.mul(x, 0.5), prims.add(prims.tanh(inner), 1.0))

    return _in_compute_dtype(input, exact if approximate == "none" else tanh_approx)


@symbol(F.silu)
def silu(input):
    """input * sigmoid(input)"""
    return _in_compute_dtype(
        input, lambda x: prims.div(x, prims.add(prims.exp(prims.neg(x)), 1.0))
    )


@symbol(torch.where)
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
