"""Linear algebra prims: matmul, with torch's rules for 1-d operands and batch broadcasting."""

from __future__ import annotations

import torch

from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import prim
from tracecli.ops.promotion import ShapeError, broadcast_shapes


def _matmul_meta(a: TensorValue, b: TensorValue) -> TensorType:
    if a.dtype != b.dtype or a.device != b.device:
        raise ShapeError("prims.matmul operands must share dtype and device")
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError("matmul needs tensors with at least one dimension")
    a_shape = (1,) + a.shape if a.ndim == 1 else a.shape
    b_shape = b.shape + (1,) if b.ndim == 1 else b.shape
    if a_shape[-1] != b_shape[-2]:
        raise ShapeError(f"cannot multiply {list(a.shape)} by {list(b.shape)}: inner sizes differ")
    batch = broadcast_shapes(a_shape[:-2], b_shape[:-2])
    shape = batch + (a_shape[-2], b_shape[-1])
    if a.ndim == 1:
        shape = shape[:-2] + shape[-1:]
    if b.ndim == 1:
        shape = shape[:-1]
    return TensorType(shape, a.dtype, a.device)


matmul = prim("matmul", _matmul_meta, torch.matmul)

