"""Matrix products."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from tracecli.ops import prims
from tracecli.ops.ltorch._base import broadcast_to, convert, expect_tensor, symbol
from tracecli.ops.promotion import ShapeError


def _same_dtype(a, b, op):
    if a.dtype != b.dtype:
        raise ShapeError(f"{op} expects both operands to have the same dtype, got {a.dtype.name} and {b.dtype.name}")


@symbol(torch.matmul)
def matmul(input, other):
    """matrix product with torch's broadcasting rules for batches and vectors"""
    input, other = expect_tensor(input, "matmul"), expect_tensor(other, "matmul")
    _same_dtype(input, other, "matmul")
    return prims.matmul(input, other)


@symbol(F.linear)
def linear(input, weight, bias=None):
    """input @ weight.T + bias"""
    input, weight = expect_tensor(input, "linear"), expect_tensor(weight, "linear")
    _same_dtype(input, weight, "linear")
    if weight.ndim == 2:
        weight = prims.transpose(weight, (1, 0))
    elif weight.ndim != 1:
        raise ShapeError(f"linear expects a 1-D or 2-D weight, got {list(weight.shape)}")
    out = prims.matmul(input, weight)
    if bias is not None:
        out = prims.add(out, broadcast_to(convert(bias, out.dtype), out.shape))
    return out
