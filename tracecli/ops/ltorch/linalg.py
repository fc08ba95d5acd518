"""Matrix products."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import torch
import torch.nn.functional as F

from tracecli.ops import prims
from tracecli.ops.ltorch._base import broadcast_to, compute_dtype, convert, expect_tensor, symbol
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
    if bias is None:
        return prims.matmul(input, weight)
    _same_dtype(input, expect_tensor(bias, "linear"), "linear")
    # torch adds the bias inside the product (addmm), accumulating half precision in
    # float32 and rounding once; rounding the product before the add is several ulps off.
    wide = compute_dtype(input.dtype)
    out = prims.matmul(convert(input, wide), convert(weight, wide))
    out = prims.add(out, broadcast_to(convert(bias, wide), out.shape))
    return convert(out, input.dtype)
