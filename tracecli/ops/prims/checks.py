"""Run-time checks: prims with no output, tagged CHECK so no pass ever drops them: that
every element of a bool tensor is true, and relations of sizes the data decide."""

from __future__ import annotations

import torch

from tracecli.core import dtypes
from tracecli.core.symbol import Tag
from tracecli.core.values import TensorValue
from tracecli.ops.prims.base import prim
from tracecli.ops.promotion import ShapeError


def _check_meta(cond: TensorValue) -> None:
    if not isinstance(cond, TensorValue) or cond.dtype != dtypes.bool8:
        raise ShapeError("prims.check_all needs a bool tensor")
    return None


def _check_all(cond: torch.Tensor) -> None:
    torch._check_tensor_all(cond)


check_all = prim("check_all", _check_meta, _check_all, tags=(Tag.CHECK,))


# `lhs OP rhs` of sizes: a fact the program stated of sizes the data decide (torch._check).
SIZE_RELATIONS = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}


def _check_size_meta(lhs, op: str, rhs) -> None:
    if op not in SIZE_RELATIONS:
        raise ShapeError(f"prims.check_size relates sizes with one of {' '.join(SIZE_RELATIONS)}, got {op!r}")
    return None


def _check_size(lhs, op: str, rhs) -> None:
    torch._check(SIZE_RELATIONS[op](lhs, rhs),
                 lambda: f"{lhs} {op} {rhs} fails here, and the trace relies on it (a fact about sizes the data "
                 "decide, at the line its `# fact:` names)")


check_size = prim("check_size", _check_size_meta, _check_size, tags=(Tag.CHECK,))
