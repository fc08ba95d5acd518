"""Dtype and device conversions."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import torch

from tracecli.ops import prims
from tracecli.ops.ltorch._base import convert, expect_tensor, symbol
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


__all__ = ["to", "torch"]
