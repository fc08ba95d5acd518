"""Backward rules of the elementwise prims (and the special functions' prims).

Operands of an elementwise prim share one shape (ltorch broadcasts before calling it),
so a gradient needs no reduction here: `broadcast_in_dim`'s rule sums it back. A number
operand gets no gradient. Ties and non-differentiable points follow torch's formulas
(derivatives.yaml): maximum splits a tie evenly, abs and sign give zero at zero.
"""

from __future__ import annotations

import math

from tracecli.ops import prims
from tracecli.ops.grads.base import NotDifferentiable, backward, is_differentiable, no_gradient, zeros_like

mul, div, neg, add, sub = prims.mul, prims.div, prims.neg, prims.add, prims.sub


def _grad(x, value):
    """`value` as the gradient of operand `x`: None for a number or an integer tensor."""
    return value if is_differentiable(x) else None


# --- unary ------------------------------------------------------------------------------


@backward(prims.neg)
def _neg(g, out, x):
    return (neg(g),)


@backward(prims.abs)
def _abs(g, out, x):
    return (mul(g, prims.sign(x)),)


@backward(prims.exp)
def _exp(g, out, x):
    return (mul(g, out),)


@backward(prims.exp2)
def _exp2(g, out, x):
    return (mul(g, mul(out, math.log(2.0))),)


@backward(prims.expm1)
def _expm1(g, out, x):
    return (mul(g, add(out, 1.0)),)


@backward(prims.log)
def _log(g, out, x):
    return (div(g, x),)


@backward(prims.log2)
def _log2(g, out, x):
    return (div(g, mul(x, math.log(2.0))),)


@backward(prims.log10)
def _log10(g, out, x):
    return (div(g, mul(x, math.log(10.0))),)


@backward(prims.log1p)
def _log1p(g, out, x):
    return (div(g, add(x, 1.0)),)


@backward(prims.sin)
def _sin(g, out, x):
    return (mul(g, prims.cos(x)),)


@backward(prims.cos)
def _cos(g, out, x):
    return (mul(g, neg(prims.sin(x))),)


@backward(prims.tan)
def _tan(g, out, x):
    return (mul(g, add(mul(out, out), 1.0)),)


@backward(prims.tanh)
def _tanh(g, out, x):
    return (mul(g, sub(1.0, mul(out, out))),)


@backward(prims.sinh)
def _sinh(g, out, x):
    return (mul(g, prims.cosh(x)),)


@backward(prims.cosh)
def _cosh(g, out, x):
    return (mul(g, prims.sinh(x)),)


@backward(prims.sqrt)
def _sqrt(g, out, x):
    return (div(g, mul(out, 2.0)),)


@backward(prims.rsqrt)
def _rsqrt(g, out, x):
    # d/dx x^-1/2 = -1/2 x^-3/2 = -1/2 * out^3
    return (mul(g, mul(prims.pow(out, 3.0), -0.5)),)


@backward(prims.reciprocal)
def _reciprocal(g, out, x):
    return (mul(g, neg(mul(out, out))),)


@backward(prims.asin)
def _asin(g, out, x):
    return (div(g, prims.sqrt(sub(1.0, mul(x, x)))),)


@backward(prims.acos)
def _acos(g, out, x):
    return (neg(div(g, prims.sqrt(sub(1.0, mul(x, x))))),)


@backward(prims.atan)
def _atan(g, out, x):
    return (div(g, add(mul(x, x), 1.0)),)


@backward(prims.asinh)
def _asinh(g, out, x):
    return (div(g, prims.sqrt(add(mul(x, x), 1.0))),)


@backward(prims.acosh)
def _acosh(g, out, x):
    return (div(g, prims.sqrt(mul(sub(x, 1.0), add(x, 1.0)))),)


@backward(prims.atanh)
def _atanh(g, out, x):
    return (div(g, sub(1.0, mul(x, x))),)


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


@backward(prims.erf)
def _erf(g, out, x):
    return (mul(g, mul(prims.exp(neg(mul(x, x))), _TWO_OVER_SQRT_PI)),)


@backward(prims.erfc)
def _erfc(g, out, x):
    return (mul(g, mul(prims.exp(neg(mul(x, x))), -_TWO_OVER_SQRT_PI)),)


@backward(prims.erfinv)
def _erfinv(g, out, x):
    return (mul(g, mul(prims.exp(mul(out, out)), math.sqrt(math.pi) / 2.0)),)


@backward(prims.lgamma)
def _lgamma(g, out, x):
    return (mul(g, prims.digamma(x)),)


@backward(prims.digamma)
def _digamma(g, out, x):
    return (mul(g, prims.polygamma(1, x)),)


@backward(prims.polygamma)
def _polygamma(g, out, n, x):
    return (None, mul(g, prims.polygamma(n + 1, x)))


# Piecewise constant: zero gradient everywhere, as torch gives.
@backward(prims.sign, prims.floor, prims.ceil, prims.round, prims.trunc)
def _constant(g, out, x):
    return (zeros_like(x),)


# --- binary -----------------------------------------------------------------------------


@backward(prims.add)
def _add(g, out, a, b):
    return _grad(a, g), _grad(b, g)


@backward(prims.sub)
def _sub(g, out, a, b):
    return _grad(a, g), _grad(b, neg(g) if is_differentiable(b) else None)


@backward(prims.mul)
def _mul(g, out, a, b):
    return (_grad(a, mul(g, b) if is_differentiable(a) else None),
            _grad(b, mul(g, a) if is_differentiable(b) else None))


@backward(prims.div)
def _div(g, out, a, b):
    grad_a = div(g, b) if is_differentiable(a) else None
    grad_b = neg(div(mul(g, out), b)) if is_differentiable(b) else None
    return grad_a, grad_b


@backward(prims.pow)
def _pow(g, out, a, b):
    grad_a = grad_b = None
    if is_differentiable(a):
        if is_differentiable(b):
            term = mul(g, mul(prims.pow(a, sub(b, 1.0)), b))
            # torch: zero where the exponent is zero (0 * a^-1 would be NaN at a = 0)
            grad_a = prims.where(prims.eq(b, 0.0), zeros_like(term), term)
        elif b == 0:
            grad_a = zeros_like(a)
        else:
            grad_a = mul(g, mul(prims.pow(a, b - 1), b))
    if is_differentiable(b):
        if not is_differentiable(a):
            if a <= 0:
                raise NotDifferentiable("pow of a number base <= 0: the exponent's gradient is not modelled")
            grad_b = mul(g, mul(out, math.log(a)))
        else:
            term = mul(g, mul(out, prims.log(a)))
            # torch: zero where a = 0 and b >= 0 (0 * log 0 would be NaN)
            mask = prims.bitwise_and(prims.eq(a, 0.0), prims.ge(b, 0.0))
            grad_b = prims.where(mask, zeros_like(term), term)
    return grad_a, grad_b


def _tie_split(g, a, b, first_wins):
    """maximum/minimum: the chosen operand gets g, a tie splits it in half (torch)."""
    half = mul(g, 0.5)
    zero = zeros_like(g)
    tie = prims.eq(a, b)
    grad_a = prims.where(tie, half, prims.where(first_wins, g, zero)) if is_differentiable(a) else None
    grad_b = prims.where(tie, half, prims.where(first_wins, zero, g)) if is_differentiable(b) else None
    return grad_a, grad_b


@backward(prims.maximum)
def _maximum(g, out, a, b):
    return _tie_split(g, a, b, prims.gt(a, b))


@backward(prims.minimum)
def _minimum(g, out, a, b):
    return _tie_split(g, a, b, prims.lt(a, b))


@backward(prims.fmod)
def _fmod(g, out, a, b):
    grad_b = mul(neg(g), prims.trunc(div(a, b))) if is_differentiable(b) else None
    return _grad(a, g), grad_b


@backward(prims.remainder)
def _remainder(g, out, a, b):
    grad_b = mul(neg(g), prims.floor(div(a, b))) if is_differentiable(b) else None
    return _grad(a, g), grad_b


@backward(prims.atan2)
def _atan2(g, out, a, b):
    scale = div(g, add(mul(a, a), mul(b, b)))
    return (_grad(a, mul(scale, b) if is_differentiable(a) else None),
            _grad(b, neg(mul(scale, a)) if is_differentiable(b) else None))


@backward(prims.hypot)
def _hypot(g, out, a, b):
    return (_grad(a, mul(g, div(a, out)) if is_differentiable(a) else None),
            _grad(b, mul(g, div(b, out)) if is_differentiable(b) else None))


@backward(prims.copysign)
def _copysign(g, out, a, b):
    grad_a = None
    if is_differentiable(a):
        # torch: g * out / a, zero where a is zero
        ratio = div(out, a)
        grad_a = prims.where(prims.eq(a, 0.0), zeros_like(g), mul(g, ratio))
    return grad_a, _grad(b, zeros_like(b) if is_differentiable(b) else None)


@backward(prims.where)
def _where(g, out, pred, a, b):
    zero = zeros_like(g)
    return (None, _grad(a, prims.where(pred, g, zero) if is_differentiable(a) else None),
            _grad(b, prims.where(pred, zero, g) if is_differentiable(b) else None))


no_gradient(prims.eq, prims.ne, prims.lt, prims.le, prims.gt, prims.ge, prims.gcd, prims.shape)
