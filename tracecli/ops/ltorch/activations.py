"""Activations: sigmoid, relu, gelu, silu; computed in float32 for half precision, as
torch's kernels do."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from tracecli.core import dtypes
from tracecli.ops import prims
from tracecli.ops.ltorch._base import compute_dtype, convert, expect_tensor, float_dtype_for, symbol, torch_form
from tracecli.ops.ltorch.inplace import written_in_place
from tracecli.ops.promotion import ShapeError


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
