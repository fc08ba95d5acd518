"""Bitwise and logical ops (`&`, `|`, `^`, `~` on masks and integers), all/any, diff."""

from __future__ import annotations

# ruff: noqa: A001, A002 - torch's names (`input`, `all`, `any`) are kept.
import torch

from tracecli.core import dtypes
from tracecli.ops import prims
from tracecli.ops.ltorch._base import broadcast_all, convert, expect_tensor, is_tensor, keepdim_reshape, symbol
from tracecli.ops.promotion import ShapeError, canonical_dim, canonical_dims, result_type


def _integral_binary(prim, input, other, op: str):
    if not (is_tensor(input) or is_tensor(other)):
        raise ShapeError(f"{op} needs a tensor operand")
    dtype = result_type(input, other)
    if dtype.kind not in ("bool", "int"):
        raise ShapeError(f"{op} is only defined for bool and integer tensors, got {dtype.name}")
    a, b = broadcast_all(convert(input, dtype), convert(other, dtype))
    return prim(a, b)


@symbol(torch.bitwise_and)
def bitwise_and(input, other):
    """input & other (masks: elementwise and)"""
    return _integral_binary(prims.bitwise_and, input, other, "&")


@symbol(torch.bitwise_or)
def bitwise_or(input, other):
    """input | other"""
    return _integral_binary(prims.bitwise_or, input, other, "|")


@symbol(torch.bitwise_xor)
def bitwise_xor(input, other):
    """input ^ other"""
    return _integral_binary(prims.bitwise_xor, input, other, "^")


@symbol(torch.bitwise_not)
def bitwise_not(input):
    """~input"""
    input = expect_tensor(input, "~")
    if input.dtype.kind not in ("bool", "int"):
        raise ShapeError(f"~ is only defined for bool and integer tensors, got {input.dtype.name}")
    return prims.logical_not(input) if input.dtype == dtypes.bool8 else prims.bitwise_not(input)


def _as_bool(x):
    return convert(x, dtypes.bool8) if is_tensor(x) else bool(x)


@symbol(torch.logical_and)
def logical_and(input, other):
    """nonzero(input) and nonzero(other), as bool"""
    a, b = broadcast_all(_as_bool(input), _as_bool(other))
    return prims.bitwise_and(a, b)


@symbol(torch.logical_or)
def logical_or(input, other):
    """nonzero(input) or nonzero(other), as bool"""
    a, b = broadcast_all(_as_bool(input), _as_bool(other))
    return prims.bitwise_or(a, b)


@symbol(torch.logical_not)
def logical_not(input):
    """not nonzero(input), as bool"""
    return prims.logical_not(expect_tensor(input, "logical_not"))


def _all_or_any(input, dim, keepdim, *, want_all: bool):
    input = expect_tensor(input, "all" if want_all else "any")
    flags = convert(input, dtypes.bool8)
    dims = canonical_dims(dim, input.ndim)
    # all = no element is false; any = some element is true: reduce as integers.
    counted = flags if want_all is False else prims.logical_not(flags)
    total = prims.sum(convert(counted, dtypes.int64), dims)
    out = prims.eq(total, 0) if want_all else prims.ne(total, 0)
    out = out if input.dtype != dtypes.uint8 else convert(out, dtypes.uint8)
    return keepdim_reshape(out, input, dims) if keepdim else out


@symbol(torch.all)
def all(input, dim=None, keepdim=False):
    """true where every element (along dim) is nonzero"""
    return _all_or_any(input, dim, keepdim, want_all=True)


@symbol(torch.any)
def any(input, dim=None, keepdim=False):
    """true where some element (along dim) is nonzero"""
    return _all_or_any(input, dim, keepdim, want_all=False)


@symbol(torch.diff)
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """differences of neighbours along dim, n times (after prepend/append)"""
    input = expect_tensor(input, "diff")
    d = canonical_dim(dim, input.ndim)
    parts = [t for t in (prepend, input, append) if t is not None]
    if len(parts) > 1:
        dtype = result_type(*parts)
        parts = [convert(expect_tensor(t, "diff"), dtype) for t in parts]
        x = prims.cat(parts, d)
    else:
        x = input
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        start = [0] * x.ndim
        end = list(x.shape)
        end[d] = size - 1
        first = prims.slice(x, tuple(start), tuple(end))
        start[d] = 1
        end[d] = size
        second = prims.slice(x, tuple(start), tuple(end))
        x = prims.ne(second, first) if x.dtype == dtypes.bool8 else prims.sub(second, first)
    return x
