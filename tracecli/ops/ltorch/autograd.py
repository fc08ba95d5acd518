"""Autograd's state: tensors' `.grad`, as a traced training step leaves it, and the grad
mode the program ran its calls in."""

from __future__ import annotations

import torch

from tracecli.core.symbol import Tag
from tracecli.ops import prims
from tracecli.ops.ltorch._base import symbol


def _set_grad(tensor: torch.Tensor, grad: torch.Tensor | None) -> None:
    prims.set_grad.impl(tensor, grad)


@symbol(_set_grad, tags=(Tag.SIDE_EFFECT,))
def set_grad(tensor, grad):
    """tensor.grad = grad: where a traced loss.backward() (or zero_grad()) leaves the
    tensor's gradient once the step is over; the tensor is the leaf object itself,
    whatever its values are by then"""
    prims.set_grad(tensor, grad)


def _set_grad_enabled(mode: bool) -> None:
    prims.set_grad_enabled.impl(mode)


def _restore_grad_enabled() -> None:
    prims.restore_grad_enabled.impl()


@symbol(_set_grad_enabled, tags=(Tag.SIDE_EFFECT,))
def set_grad_enabled(mode):
    """autograd on or off for the calls after it, as the program's `torch.no_grad()`,
    `torch.enable_grad()` or `torch.inference_mode()` set it; the mode it replaces is
    kept for restore_grad_enabled"""
    prims.set_grad_enabled(mode)


@symbol(_restore_grad_enabled, tags=(Tag.SIDE_EFFECT,))
def restore_grad_enabled():
    """the grad mode the last set_grad_enabled replaced, back: where the program's
    `with` block ended"""
    prims.restore_grad_enabled()


# The grad mode calls at either level, for what reads a trace's grad mode.
SETS_GRAD_MODE = frozenset({set_grad_enabled, prims.set_grad_enabled})
RESTORES_GRAD_MODE = frozenset({restore_grad_enabled, prims.restore_grad_enabled})
