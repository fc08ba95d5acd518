"""Autograd's state on tensors: the `.grad` a training step leaves on its parameters."""

from __future__ import annotations

import torch

from tracecli.core.symbol import Tag
from tracecli.core.values import TensorValue
from tracecli.ops.prims.base import prim
from tracecli.ops.promotion import ShapeError


def _set_grad_meta(tensor: TensorValue, grad: TensorValue | None) -> None:
    if not isinstance(tensor, TensorValue):
        raise ShapeError("prims.set_grad sets the .grad of a tensor")
    if grad is not None and (not isinstance(grad, TensorValue) or (grad.shape, grad.dtype) != (tensor.shape, tensor.dtype)):
        raise ShapeError(f"prims.set_grad: a gradient of {tensor.name} must be None or shaped and typed as it is")
    return None


def _set_grad(tensor: torch.Tensor, grad: torch.Tensor | None) -> None:
    tensor.grad = grad


set_grad = prim("set_grad", _set_grad_meta, _set_grad, tags=(Tag.SIDE_EFFECT,),
                doc="sets tensor.grad, as backward() and zero_grad() leave it in eager")
