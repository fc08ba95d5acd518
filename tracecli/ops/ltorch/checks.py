"""Checks that library code asks the compiler to keep (torch._check and friends)."""

from __future__ import annotations

import torch

from tracecli.core import dtypes
from tracecli.core.symbol import Tag
from tracecli.ops import prims
from tracecli.ops.ltorch._base import convert, expect_tensor, symbol


def _check_tensor_all(cond):
    torch._check_tensor_all(cond)


@symbol(_check_tensor_all, tags=(Tag.CHECK,))
def check_all(cond):
    """fail at run time unless every element of cond is true"""
    cond = expect_tensor(cond, "check_all")
    prims.check_all(convert(cond, dtypes.bool8))


def _check_size(lhs, op, rhs):
    prims.checks.check_size.impl(lhs, op, rhs)


@symbol(_check_size, tags=(Tag.CHECK,))
def check_size(lhs, op, rhs):
    """fail at run time unless `lhs op rhs` holds of these sizes (a torch._check of sizes
    the data decide: what the trace relies on)"""
    prims.check_size(lhs, op, rhs)
