"""Matrix products: matmul, linear, addmm, baddbmm, outer."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import torch
import torch.nn.functional as F

from tracecli.ops import prims
from tracecli.ops.ltorch._base import broadcast_to, compute_dtype, convert, expect_tensor, symbol
from tracecli.ops.promotion import ShapeError, broadcast_shapes, result_type


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


def _scaled_sum(op: str, input, product, beta, alpha, dtype):
    """beta * input + alpha * product in `product`'s (wide) dtype, rounded once to `dtype`.
    With beta 0 input is not read at all, as in torch (its NaNs do not spread)."""
    shape = product.shape
    if broadcast_shapes(input.shape, shape) != shape:
        raise ShapeError(f"{op}: input {list(input.shape)} does not broadcast to the product's shape {list(shape)}")
    out = product if alpha == 1 else prims.mul(product, convert(alpha, dtype))
    if beta != 0:
        addend = broadcast_to(convert(input, product.dtype), shape)
        if beta != 1:
            addend = prims.mul(addend, convert(beta, dtype))
        out = prims.add(out, addend)
    return convert(out, dtype)


def _product_operands(op: str, input, a, b, ndim: int):
    input, a, b = (expect_tensor(t, op) for t in (input, a, b))
    if a.ndim != ndim or b.ndim != ndim:
        raise ShapeError(f"{op} expects {ndim}-D operands, got {list(a.shape)} and {list(b.shape)}")
    _same_dtype(a, b, op)
    _same_dtype(a, input, op)
    if a.dtype.kind == "bool":
        raise ShapeError(f"{op} is not implemented for bool tensors")
    return input, a, b


@symbol(torch.addmm)
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2)"""
    input, mat1, mat2 = _product_operands("addmm", input, mat1, mat2, 2)
    # Half precision accumulates in float32 and rounds once, as torch's kernel does.
    wide = compute_dtype(mat1.dtype)
    product = prims.matmul(convert(mat1, wide), convert(mat2, wide))
    return _scaled_sum("addmm", input, product, beta, alpha, mat1.dtype)


@symbol(torch.baddbmm)
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (batch1 @ batch2), batch by batch"""
    input, batch1, batch2 = _product_operands("baddbmm", input, batch1, batch2, 3)
    if batch1.shape[0] != batch2.shape[0]:
        raise ShapeError(f"baddbmm: batch sizes differ, {batch1.shape[0]} and {batch2.shape[0]}")
    wide = compute_dtype(batch1.dtype)
    product = prims.matmul(convert(batch1, wide), convert(batch2, wide))
    return _scaled_sum("baddbmm", input, product, beta, alpha, batch1.dtype)


@symbol(torch.outer)
def outer(input, vec2):
    """the outer product input[i] * vec2[j], promoting dtypes"""
    input, vec2 = expect_tensor(input, "outer"), expect_tensor(vec2, "outer")
    if input.ndim != 1 or vec2.ndim != 1:
        raise ShapeError(f"outer expects 1-D operands, got {list(input.shape)} and {list(vec2.shape)}")
    dtype = result_type(input, vec2)
    shape = (input.shape[0], vec2.shape[0])
    rows = prims.broadcast_in_dim(convert(input, dtype), shape, (0,))
    cols = prims.broadcast_in_dim(convert(vec2, dtype), shape, (1,))
    return prims.mul(rows, cols)
