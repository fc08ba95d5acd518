"""Activations: sigmoid, the relu family (relu, relu6, leaky_relu, rrelu in eval mode,
prelu, elu, selu, celu, threshold, hardtanh), the smooth ones (gelu, silu, mish, softplus,
softsign, logsigmoid), the hard approximations (hardsigmoid, hardswish), shrinkage
(softshrink, hardshrink, tanhshrink), glu and softmin; computed in float32 for half
precision, as torch's kernels do."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from tracecli.core import dtypes
from tracecli.core.dims import exact_div, mod
from tracecli.ops import prims
from tracecli.ops.autocast import Policy, everywhere
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch import elementwise as ew
from tracecli.ops.ltorch import reductions
from tracecli.ops.ltorch._base import compute_dtype, convert, expect_tensor, float_dtype_for, symbol, torch_form
from tracecli.ops.ltorch.elementwise import CUDA_FP32, rounded
from tracecli.ops.ltorch.indexing import slice_along
from tracecli.ops.ltorch.inplace import written_in_place
from tracecli.ops.promotion import ShapeError, canonical_dim
from tracecli.ops.torch_bridge import TO_TORCH


def _in_compute_dtype(x, fn):
    """Apply `fn` in float32 for half-precision inputs and cast back, as torch does."""
    x = convert(expect_tensor(x, "activation"), float_dtype_for(x))
    wide = compute_dtype(x.dtype)
    return convert(fn(convert(x, wide)), x.dtype)


@symbol(torch.sigmoid, aliases=(torch.special.expit, F.sigmoid), methods=("sigmoid",))
def sigmoid(input):
    """1 / (1 + exp(-input))"""
    return _in_compute_dtype(input, lambda x: prims.reciprocal(prims.add(prims.exp(prims.neg(x)), 1.0)))


def _expect_float(x, op: str, *, complex_ok: bool = False) -> None:
    # torch has no integer kernels for these activations (sigmoid, unlike them, promotes).
    dtype = expect_tensor(x, op).dtype
    if not (dtype.is_float or (complex_ok and dtype.is_complex)):
        raise ShapeError(f"{op} needs a floating point tensor, got {dtype.name}")


@symbol(torch.relu, methods=("relu",))
def relu(input):
    """max(input, 0)"""
    if input.dtype == dtypes.bool8:
        raise ShapeError("relu is not defined for bool tensors")
    return prims.maximum(input, convert(0, input.dtype))


@symbol(F.gelu)
def gelu(input, approximate="none"):
    """x * Φ(x), exactly with erf or with the tanh approximation"""
    _expect_float(input, "gelu")
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


@torch_form(F.relu)
def _relu(input, inplace=False):
    # inplace=True (nn.ReLU(inplace=True)) writes the result into the input, as relu_ does.
    return written_in_place(input, relu(input), "relu") if inplace else relu(input)


def _silu(input, inplace=False):
    return written_in_place(input, silu(input), "silu") if inplace else silu(input)


@symbol(F.silu, adapter=_silu)
def silu(input):
    """input * sigmoid(input)"""
    _expect_float(input, "silu", complex_ok=True)
    return _in_compute_dtype(
        input, lambda x: prims.div(x, prims.add(prims.exp(prims.neg(x)), 1.0))
    )


def _maybe_in_place(op, input, inplace: bool, *args):
    """`op(input, *args)`, written into `input` for the `inplace=True` forms (nn.ELU(inplace=True))."""
    result = op(input, *args)
    return written_in_place(input, result, op.name) if inplace else result


def _float_in_compute_dtype(x, op: str, fn):
    """`fn` applied to a floating point `x` in float32 for half precision (torch's
    kernels for these activations refuse integers)."""
    _expect_float(x, op)
    return _in_compute_dtype(x, fn)


def _number_in(value, dtype, op: str):
    """`value` as a kernel reads a number argument in `dtype`: rounded to a float dtype,
    truncated to an integer one. Out of the dtype's range torch refuses a float; an int
    it refuses too, except a negative one it wraps around into an unsigned dtype."""
    if dtype.is_float:
        return rounded(value, dtype)
    info = torch.iinfo(TO_TORCH[dtype])
    if not isinstance(value, float) and info.min == 0 and -info.max <= value < 0:
        return int(value) + info.max + 1
    if not info.min <= value <= info.max:
        raise ShapeError(f"{op}: {value} is out of range for {dtype.name}")
    return int(value)


def _in_product(a: float, b: float, dtype) -> float:
    """a * b rounded as the kernel computes it, in `dtype`."""
    return (torch.tensor(a, dtype=TO_TORCH[dtype]) * torch.tensor(b, dtype=TO_TORCH[dtype])).item()


# --- the relu family ---------------------------------------------------------------------


def _clamped(input, low, high, op: str):
    # torch's hardtanh is a clamp in the input's own dtype (bounds truncated for integers).
    input = expect_tensor(input, op)
    if input.dtype.kind not in ("int", "float"):
        raise ShapeError(f"{op} is not defined for {input.dtype.name} tensors")
    if input.dtype == dtypes.uint8 and (low < 0 or high < 0):
        raise ShapeError(f"{op} of an unsigned tensor needs non-negative limits")
    low, high = (_number_in(bound, input.dtype, op) for bound in (low, high))
    return prims.minimum(prims.maximum(input, low), high)


def _hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return _maybe_in_place(hardtanh, input, inplace, min_val, max_val)


@torch_form(F.hardtanh_)
def _hardtanh_(input, min_val=-1.0, max_val=1.0):
    return _maybe_in_place(hardtanh, input, True, min_val, max_val)


@symbol(F.hardtanh, adapter=_hardtanh)
def hardtanh(input, min_val=-1.0, max_val=1.0):
    """input clamped to [min_val, max_val]"""
    return _clamped(input, min_val, max_val, "hardtanh")


def _relu6(input, inplace=False):
    return _maybe_in_place(relu6, input, inplace)


@symbol(F.relu6, adapter=_relu6)
def relu6(input):
    """input clamped to [0, 6]"""
    return _clamped(input, 0, 6, "relu6")


def _leaky(x, slope):
    return prims.where(prims.gt(x, 0.0), x, prims.mul(x, slope))


def _leaky_relu(input, negative_slope=0.01, inplace=False):
    return _maybe_in_place(leaky_relu, input, inplace, negative_slope)


@torch_form(F.leaky_relu_)
def _leaky_relu_(input, negative_slope=0.01):
    return _maybe_in_place(leaky_relu, input, True, negative_slope)


@symbol(F.leaky_relu, adapter=_leaky_relu)
def leaky_relu(input, negative_slope=0.01):
    """input where positive, else input * negative_slope"""
    return _float_in_compute_dtype(input, "leaky_relu", lambda x: _leaky(x, negative_slope))


@torch_form(F.rrelu)
def _f_rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    # In training each negative element draws its own slope, one draw per negative element
    # in memory order: a stream no prim reproduces, so that form stays an opaque (random) call.
    return OPAQUE if training else _maybe_in_place(rrelu, input, inplace, lower, upper)


def _torch_rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return OPAQUE if training or generator is not None else rrelu(input, lower, upper)


@symbol(torch.rrelu, adapter=_torch_rrelu)
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """leaky_relu with the mean slope (lower + upper) / 2: rrelu outside training"""
    if training:
        raise ShapeError("rrelu in training draws random slopes; only training=False is modelled")
    if lower > upper:
        raise ShapeError(f"rrelu needs lower <= upper, got {lower} and {upper}")
    return _float_in_compute_dtype(input, "rrelu", lambda x: _leaky(x, (lower + upper) / 2))


@symbol(torch.prelu, methods=("prelu",), autocast=everywhere(Policy.LOWER))
def prelu(input, weight):
    """input where positive, else weight * input, with one weight per channel (dim 1) or one for all"""
    input, weight = expect_tensor(input, "prelu"), expect_tensor(weight, "prelu")
    _expect_float(input, "prelu")
    if input.dtype != weight.dtype:
        raise ShapeError(f"prelu needs input and weight of one dtype, got {input.dtype.name} and {weight.dtype.name}")
    if weight.ndim > 1:
        raise ShapeError(f"prelu expects a weight with at most one dimension, got {weight.ndim}")
    count = weight.shape[0] if weight.ndim else 1
    if count == 1:
        w = prims.reshape(weight, ()) if weight.ndim else weight  # one weight broadcasts to any shape
    else:
        channels = input.shape[1] if input.ndim > 1 else 1
        if input.ndim == 0 or channels != count:
            raise ShapeError(f"prelu has {count} weights for {channels} channels")
        shape = tuple(count if d == 1 else 1 for d in range(input.ndim))
        w = prims.broadcast_in_dim(prims.reshape(weight, shape), input.shape, tuple(range(input.ndim)))
    if w.ndim == 0 and input.ndim:
        w = prims.broadcast_in_dim(w, input.shape, ())
    return prims.where(prims.gt(input, 0.0), input, prims.mul(w, input))


def _threshold(input, threshold, value, inplace=False):
    return _maybe_in_place(thresholded, input, inplace, threshold, value)


@symbol(F.threshold, aliases=(torch.threshold,), adapter=_threshold, name="threshold")
def thresholded(input, threshold, value):
    """value where input <= threshold, else input"""
    input = expect_tensor(input, "threshold")
    if input.dtype.kind not in ("int", "float"):
        raise ShapeError(f"threshold is not defined for {input.dtype.name} tensors")
    limit, value = (_number_in(v, input.dtype, "threshold") for v in (threshold, value))
    return prims.where(prims.le(input, limit), value, input)


# --- exponential linear units ------------------------------------------------------------


def _elu(x, negcoef: float, poscoef: float = 1.0, negiptcoef: float = 1.0):
    """torch's elu kernel: x * poscoef where x > 0, else expm1(x * negiptcoef) * negcoef."""
    negative = prims.mul(prims.expm1(x if negiptcoef == 1 else prims.mul(x, negiptcoef)), negcoef)
    return prims.where(prims.gt(x, 0.0), x if poscoef == 1 else prims.mul(x, poscoef), negative)


def _f_elu(input, alpha=1.0, inplace=False):
    return _maybe_in_place(elu, input, inplace, alpha)


@torch_form(F.elu_)
def _f_elu_(input, alpha=1.0):
    return _maybe_in_place(elu, input, True, alpha)


@symbol(F.elu, adapter=_f_elu)
def elu(input, alpha=1.0):
    """input where positive, else alpha * (exp(input) - 1)"""
    return _float_in_compute_dtype(input, "elu", lambda x: _elu(x, alpha))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _f_selu(input, inplace=False):
    return _maybe_in_place(selu, input, inplace)


@symbol(torch.selu, aliases=(F.selu,), adapter=_f_selu)
def selu(input):
    """scale * elu(input, alpha) with the self-normalising constants"""
    # The kernel multiplies alpha by scale in the dtype it computes in.
    return _float_in_compute_dtype(
        input, "selu", lambda x: _elu(x, _in_product(_SELU_ALPHA, _SELU_SCALE, x.dtype), _SELU_SCALE)
    )


def _f_celu(input, alpha=1.0, inplace=False):
    return _maybe_in_place(celu, input, inplace, alpha)


@symbol(torch.celu, aliases=(F.celu,), adapter=_f_celu)
def celu(input, alpha=1.0):
    """input where positive, else alpha * (exp(input / alpha) - 1)"""
    if alpha == 0:
        raise ShapeError("celu is not defined for alpha = 0")
    return _float_in_compute_dtype(input, "celu", lambda x: _elu(x, alpha, negiptcoef=1.0 / alpha))


# --- smooth activations ----------------------------------------------------------------------


@symbol(F.softplus, autocast=CUDA_FP32)
def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * input)) / beta, or input itself where beta * input > threshold"""

    def apply(x):
        scaled = x if beta == 1 else prims.mul(x, beta)
        smooth = prims.log1p(prims.exp(scaled))
        return prims.where(prims.gt(scaled, threshold), x, smooth if beta == 1 else prims.div(smooth, beta))

    return _float_in_compute_dtype(input, "softplus", apply)


def _f_mish(input, inplace=False):
    return _maybe_in_place(mish, input, inplace)


@symbol(F.mish, adapter=_f_mish)
def mish(input):
    """input * tanh(softplus(input))"""
    return _float_in_compute_dtype(input, "mish", lambda x: prims.mul(x, prims.tanh(prims.log1p(prims.exp(x)))))


@symbol(F.logsigmoid)
def logsigmoid(input):
    """log(sigmoid(input)), as min(input, 0) - log1p(exp(-|input|))"""
    return _float_in_compute_dtype(
        input, "logsigmoid",
        lambda x: prims.sub(prims.minimum(x, 0.0), prims.log1p(prims.exp(prims.neg(prims.abs(x))))),
    )


def _softsign(input):
    # |input| of a complex tensor is real, which no prim computes: torch does.
    return OPAQUE if expect_tensor(input, "softsign").dtype.is_complex else softsign(input)


@symbol(F.softsign, adapter=_softsign)
def softsign(input):
    """input / (|input| + 1)"""
    # torch runs this in Python, op by op in the input's dtype.
    input = expect_tensor(input, "softsign")
    return ew.true_divide.decomposition(input, ew.add.decomposition(ew.abs.decomposition(input), 1))


@symbol(F.tanhshrink)
def tanhshrink(input):
    """input - tanh(input)"""
    input = expect_tensor(input, "tanhshrink")
    return ew.sub.decomposition(input, ew.tanh.decomposition(input))


# --- hard approximations ------------------------------------------------------------------


def _relu6_of_shifted(x):
    return prims.minimum(prims.maximum(prims.add(x, 3.0), 0.0), 6.0)


def _f_hardsigmoid(input, inplace=False):
    return _maybe_in_place(hardsigmoid, input, inplace)


@symbol(F.hardsigmoid, adapter=_f_hardsigmoid)
def hardsigmoid(input):
    """relu6(input + 3) / 6"""
    return _float_in_compute_dtype(input, "hardsigmoid", lambda x: prims.div(_relu6_of_shifted(x), 6.0))


def _f_hardswish(input, inplace=False):
    return _maybe_in_place(hardswish, input, inplace)


@symbol(F.hardswish, adapter=_f_hardswish)
def hardswish(input):
    """input * relu6(input + 3) / 6"""
    return _float_in_compute_dtype(input, "hardswish", lambda x: prims.div(prims.mul(x, _relu6_of_shifted(x)), 6.0))


# --- shrinkage ----------------------------------------------------------------------------------


def _check_lambd(lambd, op: str) -> None:
    if lambd < 0:
        raise ShapeError(f"{op} needs lambd >= 0, got {lambd}")


@symbol(F.softshrink)
def softshrink(input, lambd=0.5):
    """input moved toward 0 by lambd, and 0 within [-lambd, lambd]"""
    _check_lambd(lambd, "softshrink")

    def apply(x):
        inside = prims.mul(x, 0.0)  # 0, or NaN where input is NaN
        below = prims.where(prims.lt(x, -lambd), prims.add(x, lambd), inside)
        return prims.where(prims.gt(x, lambd), prims.sub(x, lambd), below)

    return _float_in_compute_dtype(input, "softshrink", apply)


@symbol(torch.hardshrink, methods=("hardshrink",))
def hardshrink(input, lambd=0.5):
    """0 within [-lambd, lambd], else input"""
    _expect_float(input, "hardshrink")
    limit = rounded(lambd, input.dtype)  # the kernel compares in the input's dtype
    inside = prims.bitwise_and(prims.ge(input, -limit), prims.le(input, limit))
    return prims.where(inside, 0.0, input)


# --- gates and normalisers ----------------------------------------------------------------------


@symbol(F.glu)
def glu(input, dim=-1):
    """a * sigmoid(b), a and b the two halves of input along dim"""
    input = expect_tensor(input, "glu")
    _expect_float(input, "glu")
    if input.ndim == 0:
        raise ShapeError("glu does not take a zero-dim tensor: it halves a dimension")
    d = canonical_dim(dim, input.ndim)
    size = input.shape[d]
    if mod(size, 2) != 0:
        raise ShapeError(f"glu halves dimension {d}, of odd size {size}")
    half = exact_div(size, 2)
    a, b = slice_along(input, d, 0, half, always=True), slice_along(input, d, half, size, always=True)
    wide = compute_dtype(input.dtype)
    a, b = convert(a, wide), convert(b, wide)
    gate = prims.reciprocal(prims.add(prims.exp(prims.neg(b)), 1.0))
    return convert(prims.mul(a, gate), input.dtype)


def _softmax_dim(ndim: int) -> int:
    # torch's choice when no dim is given (deprecated, with a warning).
    return 0 if ndim in (0, 1, 3) else 1


@symbol(F.softmin)
def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-input) along dim"""
    input = expect_tensor(input, "softmin")
    return reductions.softmax(ew.neg(input), _softmax_dim(input.ndim) if dim is None else dim, dtype=dtype)
