"""Bitwise and logical ops: `&`, `|`, `^`, `~` on masks and integers, the shifts `<<` and
`>>`, logical_and/or/xor/not."""

from __future__ import annotations

# ruff: noqa: A001, A002 - torch's names (`input`, `all`, `any`) are kept.
import torch

from tracecli.core import dtypes
from tracecli.ops import prims
from tracecli.ops.ltorch._base import broadcast_all, convert, expect_tensor, is_tensor, symbol, torch_form
from tracecli.ops.promotion import ShapeError, result_type


def _integral_binary(prim, input, other, op: str, kinds=("bool", "int")):
    if not (is_tensor(input) or is_tensor(other)):
        raise ShapeError(f"{op} needs a tensor operand")
    dtype = result_type(input, other)
    if dtype.kind not in kinds:
        kind = "bool and integer tensors" if "bool" in kinds else "integer tensors"
        raise ShapeError(f"{op} is only defined for {kind}, got {dtype.name}")
    a, b = broadcast_all(convert(input, dtype), convert(other, dtype))
    return prim(a, b)


@symbol(torch.bitwise_and, methods=("bitwise_and", "__and__", "__rand__"))
def bitwise_and(input, other):
    """input & other (masks: elementwise and)"""
    return _integral_binary(prims.bitwise_and, input, other, "&")


@symbol(torch.bitwise_or, methods=("bitwise_or", "__or__", "__ror__"))
def bitwise_or(input, other):
    """input | other"""
    return _integral_binary(prims.bitwise_or, input, other, "|")


@symbol(torch.bitwise_xor, methods=("bitwise_xor", "__xor__", "__rxor__"))
def bitwise_xor(input, other):
    """input ^ other"""
    return _integral_binary(prims.bitwise_xor, input, other, "^")


@symbol(torch.bitwise_left_shift, methods=("bitwise_left_shift", "__lshift__"))
def bitwise_left_shift(input, other):
    """input << other: 0 once other reaches the width of the dtype"""
    return _integral_binary(prims.bitwise_left_shift, input, other, "<<", kinds=("int",))


@symbol(torch.bitwise_right_shift, methods=("bitwise_right_shift", "__rshift__"))
def bitwise_right_shift(input, other):
    """input >> other, filling with the sign bit"""
    return _integral_binary(prims.bitwise_right_shift, input, other, ">>", kinds=("int",))


@torch_form(methods=("__rlshift__",))
def _rlshift(self, other):
    return bitwise_left_shift(other, self)


@torch_form(methods=("__rrshift__",))
def _rrshift(self, other):
    return bitwise_right_shift(other, self)


@symbol(torch.bitwise_not, methods=("bitwise_not", "__invert__"))
def bitwise_not(input):
    """~input"""
    input = expect_tensor(input, "~")
    if input.dtype.kind not in ("bool", "int"):
        raise ShapeError(f"~ is only defined for bool and integer tensors, got {input.dtype.name}")
    return prims.logical_not(input) if input.dtype == dtypes.bool8 else prims.bitwise_not(input)


def _as_bool(x):
    return convert(x, dtypes.bool8) if is_tensor(x) else bool(x)


@symbol(torch.logical_and, methods=("logical_and",))
def logical_and(input, other):
    """nonzero(input) and nonzero(other), as bool"""
    a, b = broadcast_all(_as_bool(input), _as_bool(other))
    return prims.bitwise_and(a, b)


@symbol(torch.logical_or, methods=("logical_or",))
def logical_or(input, other):
    """nonzero(input) or nonzero(other), as bool"""
    a, b = broadcast_all(_as_bool(input), _as_bool(other))
    return prims.bitwise_or(a, b)


@symbol(torch.logical_xor, methods=("logical_xor",))
def logical_xor(input, other):
    """nonzero(input) != nonzero(other), as bool"""
    a, b = broadcast_all(_as_bool(input), _as_bool(other))
    return prims.bitwise_xor(a, b)


@symbol(torch.logical_not, methods=("logical_not",))
def logical_not(input):
    """not nonzero(input), as bool"""
    return prims.logical_not(expect_tensor(input, "logical_not"))
