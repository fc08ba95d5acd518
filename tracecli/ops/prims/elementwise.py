"""Elementwise prims: unary and binary arithmetic, comparisons, where.

Strict: tensor operands must already share shape, dtype and device (ltorch inserts the
broadcasts and conversions), so every conversion shows in a lowered trace. A number
operand may stand beside a tensor on either side.
"""

from __future__ import annotations

import torch

from tracecli.core import dtypes
from tracecli.core.dtypes import DType
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import ANY, INEXACT, NUMBER, REAL, check_kinds, prim
from tracecli.ops.promotion import ShapeError, same_device

_FLOAT = frozenset({"float"})
_INT = frozenset({"int"})
_ORDERED = ANY - {"complex"}  # ordering complex numbers has no meaning; equality does


def unary_meta(name: str, kinds: frozenset, out_dtype: DType | None = None):
    def meta(x: TensorValue) -> TensorType:
        check_kinds(name, x.dtype, kinds)
        return TensorType(x.shape, out_dtype or x.dtype, x.device)

    return meta


def binary_type(name: str, a, b, out_dtype: DType | None = None, kinds: frozenset = ANY) -> TensorType:
    tensors = [v for v in (a, b) if isinstance(v, TensorValue)]
    if not tensors:
        raise ShapeError(f"prims.{name} needs at least one tensor operand")
    same_device(*tensors)
    first = tensors[0]
    for other in tensors[1:]:
        if other.shape != first.shape or other.dtype != first.dtype or other.device != first.device:
            raise ShapeError(
                f"prims.{name} operands differ: {first.dtype.short}{list(first.shape)} on {first.device} "
                f"vs {other.dtype.short}{list(other.shape)} on {other.device}"
            )
    check_kinds(name, first.dtype, kinds)
    return TensorType(first.shape, out_dtype or first.dtype, first.device)


def binary_meta(name: str, kinds: frozenset, out_dtype: DType | None = None):
    return lambda a, b: binary_type(name, a, b, out_dtype, kinds)


def number_as_tensor(fn):
    """Prims take a number operand on either side; where torch takes tensors only
    (maximum, atan2, fmod's first operand, ...) the number becomes a zero-dim tensor
    of the other operand's dtype, the dtype ltorch converted it for."""

    def apply(a, b):
        if not isinstance(a, torch.Tensor):
            a = torch.tensor(a, dtype=b.dtype, device=b.device)
        elif not isinstance(b, torch.Tensor):
            b = torch.tensor(b, dtype=a.dtype, device=a.device)
        return fn(a, b)

    apply.__name__ = fn.__name__
    return apply


def _div(a, b):
    # Integer division truncates, as C does: the meta rule promises the operands' dtype,
    # which torch.div's true division would not keep.
    tensor = a if isinstance(a, torch.Tensor) else b
    if tensor.dtype.is_floating_point or tensor.dtype.is_complex:
        return torch.div(a, b)
    return torch.div(a, b, rounding_mode="trunc")


# --- unary ------------------------------------------------------------------------

neg = prim("neg", unary_meta("neg", NUMBER), torch.neg)
abs = prim("abs", unary_meta("abs", REAL), torch.abs)  # noqa: A001
exp = prim("exp", unary_meta("exp", INEXACT), torch.exp)
log = prim("log", unary_meta("log", INEXACT), torch.log)
log1p = prim("log1p", unary_meta("log1p", INEXACT), torch.log1p)
expm1 = prim("expm1", unary_meta("expm1", INEXACT), torch.expm1)
sin = prim("sin", unary_meta("sin", INEXACT), torch.sin)
cos = prim("cos", unary_meta("cos", INEXACT), torch.cos)
tan = prim("tan", unary_meta("tan", INEXACT), torch.tan)
tanh = prim("tanh", unary_meta("tanh", INEXACT), torch.tanh)
sqrt = prim("sqrt", unary_meta("sqrt", INEXACT), torch.sqrt)
rsqrt = prim("rsqrt", unary_meta("rsqrt", INEXACT), torch.rsqrt)
erf = prim("erf", unary_meta("erf", _FLOAT), torch.erf)
sign = prim("sign", unary_meta("sign", _ORDERED), torch.sign)
floor = prim("floor", unary_meta("floor", REAL), torch.floor)
ceil = prim("ceil", unary_meta("ceil", REAL), torch.ceil)
round = prim("round", unary_meta("round", REAL), torch.round)  # noqa: A001
reciprocal = prim("reciprocal", unary_meta("reciprocal", INEXACT), torch.reciprocal)
trunc = prim("trunc", unary_meta("trunc", REAL), torch.trunc)
asin = prim("asin", unary_meta("asin", INEXACT), torch.asin)
acos = prim("acos", unary_meta("acos", INEXACT), torch.acos)
atan = prim("atan", unary_meta("atan", INEXACT), torch.atan)
sinh = prim("sinh", unary_meta("sinh", INEXACT), torch.sinh)
cosh = prim("cosh", unary_meta("cosh", INEXACT), torch.cosh)
asinh = prim("asinh", unary_meta("asinh", INEXACT), torch.asinh)
acosh = prim("acosh", unary_meta("acosh", INEXACT), torch.acosh)
atanh = prim("atanh", unary_meta("atanh", INEXACT), torch.atanh)
log2 = prim("log2", unary_meta("log2", INEXACT), torch.log2)
log10 = prim("log10", unary_meta("log10", INEXACT), torch.log10)
exp2 = prim("exp2", unary_meta("exp2", INEXACT), torch.exp2)

# --- binary -----------------------------------------------------------------------

add = prim("add", binary_meta("add", ANY), torch.add)
sub = prim("sub", binary_meta("sub", NUMBER), torch.sub)
mul = prim("mul", binary_meta("mul", ANY), torch.mul)
div = prim("div", binary_meta("div", NUMBER), _div)
pow = prim("pow", binary_meta("pow", NUMBER), torch.pow)  # noqa: A001
maximum = prim("maximum", binary_meta("maximum", _ORDERED), number_as_tensor(torch.maximum))
minimum = prim("minimum", binary_meta("minimum", _ORDERED), number_as_tensor(torch.minimum))
fmod = prim("fmod", binary_meta("fmod", REAL), number_as_tensor(torch.fmod))
remainder = prim("remainder", binary_meta("remainder", REAL), number_as_tensor(torch.remainder))
atan2 = prim("atan2", binary_meta("atan2", _FLOAT), number_as_tensor(torch.atan2))
copysign = prim(
    "copysign", binary_meta("copysign", _FLOAT), number_as_tensor(torch.copysign), doc="|a| with the sign (bit) of b"
)
nextafter = prim("nextafter", binary_meta("nextafter", _FLOAT), number_as_tensor(torch.nextafter))
# hypot is a prim of its own: sqrt(a² + b²) overflows where |a| or |b| is above sqrt(max).
hypot = prim("hypot", binary_meta("hypot", _FLOAT), number_as_tensor(torch.hypot))
gcd = prim("gcd", binary_meta("gcd", _INT), number_as_tensor(torch.gcd))

# --- comparisons ------------------------------------------------------------------


def _comparison(fn, flipped):
    """torch's comparisons take a number only on the right: a number on the left flips
    the comparison, which is exact (no rounding of the number into the tensor's dtype)."""

    def apply(a, b):
        return fn(a, b) if isinstance(a, torch.Tensor) else flipped(b, a)

    apply.__name__ = fn.__name__
    return apply


eq = prim("eq", binary_meta("eq", ANY, dtypes.bool8), _comparison(torch.eq, torch.eq))
ne = prim("ne", binary_meta("ne", ANY, dtypes.bool8), _comparison(torch.ne, torch.ne))
lt = prim("lt", binary_meta("lt", _ORDERED, dtypes.bool8), _comparison(torch.lt, torch.gt))
le = prim("le", binary_meta("le", _ORDERED, dtypes.bool8), _comparison(torch.le, torch.ge))
gt = prim("gt", binary_meta("gt", _ORDERED, dtypes.bool8), _comparison(torch.gt, torch.lt))
ge = prim("ge", binary_meta("ge", _ORDERED, dtypes.bool8), _comparison(torch.ge, torch.le))

# --- where ------------------------------------------------------------------------


def _where_meta(pred, a, b) -> TensorType:
    if not isinstance(pred, TensorValue) or pred.dtype != dtypes.bool8:
        raise ShapeError("prims.where needs a bool tensor condition")
    if not any(isinstance(v, TensorValue) for v in (a, b)):
        raise ShapeError("prims.where needs a tensor operand besides the condition")
    value = binary_type("where", a, b)
    if value.shape != pred.shape:
        raise ShapeError("prims.where operands differ in shape from the condition")
    return value


where = prim("where", _where_meta, torch.where)
