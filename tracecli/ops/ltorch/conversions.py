"""Dtype and device conversions, and copies."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import torch

from tracecli.core import dtypes
from tracecli.core.symbol import Tag
from tracecli.core.values import TensorValue
from tracecli.ops import prims
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import convert, expect_tensor, symbol, torch_form
from tracecli.ops.torch_bridge import to_device, to_dtype


def _to(input, device=None, dtype=None):
    return input.to(device=device, dtype=dtype)


@symbol(_to)
def to(input, device=None, dtype=None):
    """the tensor in another dtype and/or on another device"""
    input = expect_tensor(input, "to")
    out = input
    if dtype is not None:
        out = convert(out, to_dtype(dtype))
    if device is not None and to_device(device) != input.device:
        out = prims.device_put(out, to_device(device))
    return out


@symbol(torch.clone, methods=("clone",))
def clone(input, *, memory_format=None):
    """a copy in new memory (kept in traces: in-place writes to it must not reach the original)"""
    return prims.clone(expect_tensor(input, "clone"))


# --- the spellings of a conversion ------------------------------------------------------


@torch_form(methods=("to",))
def _to_method(self, *args, dtype=None, device=None, non_blocking=False, copy=False, memory_format=None):
    for arg in args:
        if isinstance(arg, dtypes.DType):
            dtype = arg
        elif isinstance(arg, TensorValue):
            dtype, device = arg.dtype, arg.device
        elif isinstance(arg, str):
            device = arg
        elif arg is not None:
            return OPAQUE
    return to(self, device=device, dtype=dtype)


@torch_form(methods=("cpu",))
def _cpu(self, memory_format=torch.preserve_format):
    return to(self, device="cpu")


@torch_form(methods=("type_as",))
def _type_as(self, other):
    return to(self, dtype=other.dtype)


@torch_form(methods=("type",))
def _type(self, dtype=None, non_blocking=False, **kwargs):
    # Tensor.type() without a dtype returns a type name; with a string it converts by name.
    if not isinstance(dtype, dtypes.DType) or kwargs:
        return OPAQUE
    return to(self, dtype=dtype)


def _to_dtype(dtype: dtypes.DType):
    def convert_to(self, memory_format=None):
        return to(self, dtype=dtype)

    convert_to.__name__ = f"_to_{dtype.name}"
    return convert_to


for _method, _dtype in (
    ("float", dtypes.float32), ("half", dtypes.float16), ("double", dtypes.float64), ("bfloat16", dtypes.bfloat16),
    ("int", dtypes.int32), ("long", dtypes.int64), ("short", dtypes.int16), ("bool", dtypes.bool8),
    ("byte", dtypes.uint8), ("char", dtypes.int8),
):
    torch_form(methods=(_method,))(_to_dtype(_dtype))


def _contiguous(self, memory_format=torch.contiguous_format):
    # Other layouts (channels_last) copy even a C-contiguous tensor: left to torch.
    return contiguous(self) if memory_format is torch.contiguous_format else OPAQUE


@symbol(torch.Tensor.contiguous, methods=("contiguous",), adapter=_contiguous, tags=(Tag.VIEW,))
def contiguous(input):
    """the tensor itself when it is contiguous, else a contiguous copy (which the
    tracer follows: writes to a copy do not reach the tensor)"""
    return prims.clone(expect_tensor(input, "contiguous"))


@symbol(torch.Tensor.detach, aliases=(torch.detach,), methods=("detach",), tags=(Tag.VIEW,))
def detach(input):
    """the tensor cut from autograd: the same values (the same storage in torch, so
    writes to either reach the other), through which no gradient flows back"""
    return prims.clone(expect_tensor(input, "detach"))


@torch_form(properties=(torch.Tensor.data.__get__,))
def _data(self):
    # `p.data` is p detached: what old optimizers write through in place.
    return detach(self)
