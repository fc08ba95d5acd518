"""Autograd's state on tensors, as a traced training step leaves it."""

from __future__ import annotations

import torch

from tracecli.core.symbol import Tag
from tracecli.ops import prims
from tracecli.ops.ltorch._base import symbol


def _set_grad(tensor: torch.Tensor, grad: torch.Tensor | None) -> None:
    tensor.grad = grad


@symbol(_set_grad, tags=(Tag.SIDE_EFFECT,))
def set_grad(tensor, grad):
    """tensor.grad = grad: where a traced loss.backward() (or zero_grad()) leaves the
    tensor's gradient once the step is over; the tensor is the leaf object itself,
    whatever its values are by then"""
    prims.set_grad(tensor, grad)
