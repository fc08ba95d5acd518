"""Tensor factories and random sampling."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch

from tracecli.core import dtypes
from tracecli.core.symbol import Tag
from tracecli.ops import prims
from tracecli.ops.ltorch._base import expect_tensor, shape_arg, symbol
from tracecli.ops.promotion import ShapeError
from tracecli.ops.torch_bridge import to_device, to_dtype


def _dtype(dtype, default=dtypes.float32):
    return to_dtype(dtype) if dtype is not None else default


@symbol(torch.zeros)
def zeros(*size, dtype=None, device=None):
    """a tensor of zeros"""
    return prims.full(shape_arg(size), 0, device=to_device(device), dtype=_dtype(dtype))


@symbol(torch.ones)
def ones(*size, dtype=None, device=None):
    """a tensor of ones"""
    return prims.full(shape_arg(size), 1, device=to_device(device), dtype=_dtype(dtype))


@symbol(torch.full)
def full(size, fill_value, *, dtype=None, device=None):
    """a tensor filled with fill_value (dtype follows the value's Python type)"""
    default = dtypes.DEFAULT_FOR_KIND[dtypes.kind_of_number(fill_value)]
    return prims.full(shape_arg((size,)), fill_value, device=to_device(device), dtype=_dtype(dtype, default))


@symbol(torch.arange)
def arange(start, end=None, step=1, *, dtype=None, device=None):
    """start, start + step, ... below end"""
    if end is None:
        start, end = 0, start
    integral = all(isinstance(v, int) for v in (start, end, step))
    dtype = _dtype(dtype, dtypes.int64 if integral else dtypes.float32)
    # torch's kernel first casts the bounds to the accumulation type: integers for an
    # integer dtype (truncating, as int() does), so arange(0, 5, 1.5, dtype=int64) steps by 1.
    acc = int if dtype.kind == "int" else (lambda v: v)
    x_start, x_end, x_step = acc(start), acc(end), acc(step)
    if x_step == 0:
        raise ShapeError("arange step must be nonzero")
    if (x_step > 0 and x_end < x_start) or (x_step < 0 and x_end > x_start):
        raise ShapeError(f"arange({start}, {end}, {step}): the bounds are inconsistent with the step's sign")
    if dtype == dtypes.int64:
        # Exact integer arithmetic, as torch does for int64 (doubles would lose digits).
        sign = 1 if x_step > 0 else -1
        length = abs(x_end - x_start + x_step - sign) // abs(x_step)
    else:
        length = math.ceil((end - start) / step)
    return prims.iota(length, x_start, x_step, device=to_device(device), dtype=dtype)


@symbol(torch.rand, tags=(Tag.RANDOM,))
def rand(*size, dtype=None, device=None):
    """uniform samples in [0, 1)"""
    return prims.uniform(shape_arg(size), 0.0, 1.0, device=to_device(device), dtype=_dtype(dtype))


@symbol(torch.randn, tags=(Tag.RANDOM,))
def randn(*size, dtype=None, device=None):
    """standard normal samples"""
    return prims.normal(shape_arg(size), 0.0, 1.0, device=to_device(device), dtype=_dtype(dtype))


def _like(input, dtype, device):
    input = expect_tensor(input, "*_like")
    return input.shape, _dtype(dtype, input.dtype), to_device(device) if device is not None else input.device


@symbol(torch.rand_like, tags=(Tag.RANDOM,))
def rand_like(input, *, dtype=None, device=None):
    """uniform samples in [0, 1) shaped like input"""
    shape, dtype, device = _like(input, dtype, device)
    return prims.uniform(shape, 0.0, 1.0, device=device, dtype=dtype)


@symbol(torch.randn_like, tags=(Tag.RANDOM,))
def randn_like(input, *, dtype=None, device=None):
    """standard normal samples shaped like input"""
    shape, dtype, device = _like(input, dtype, device)
    return prims.normal(shape, 0.0, 1.0, device=device, dtype=dtype)


@symbol(torch.zeros_like)
def zeros_like(input, *, dtype=None, device=None):
    """zeros shaped like input"""
    shape, dtype, device = _like(input, dtype, device)
    return prims.full(shape, 0, device=device, dtype=dtype)


@symbol(torch.ones_like)
def ones_like(input, *, dtype=None, device=None):
    """ones shaped like input"""
    shape, dtype, device = _like(input, dtype, device)
    return prims.full(shape, 1, device=device, dtype=dtype)
