"""Run-time checks: prims with no output, tagged CHECK so no pass ever drops them."""

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
