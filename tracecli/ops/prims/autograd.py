"""Autograd's state: the `.grad` a training step leaves on its parameters, and the grad
mode (`torch.no_grad()`) the program ran its calls in."""

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
    if grad is not None and any(stride == 0 and size > 1 for stride, size in zip(grad.stride(), grad.shape, strict=True)):
        # A gradient that is one value broadcast (the ones of `(x + b).sum()` for b): the
        # .grad autograd leaves is its own memory, laid out as the tensor is, and a later
        # step adds into it in place.
        grad = torch.empty_like(tensor, dtype=grad.dtype).copy_(grad)
    tensor.grad = grad


set_grad = prim("set_grad", _set_grad_meta, _set_grad, tags=(Tag.SIDE_EFFECT,),
                doc="sets tensor.grad, as backward() and zero_grad() leave it in eager")


# The grad modes the generated code replaced, innermost last: set_grad_enabled and
# restore_grad_enabled come in pairs, and the mode restored is the one the trace was
# called in, not the one it was traced in.
SAVED_GRAD_MODES: list[bool] = []


def _grad_mode_meta(mode: bool) -> None:
    if type(mode) is not bool:
        raise ShapeError(f"prims.set_grad_enabled takes True or False, got {mode!r}")


def _set_grad_enabled(mode: bool) -> None:
    SAVED_GRAD_MODES.append(torch.is_grad_enabled())
    torch._C._set_grad_enabled(mode)


def _restore_meta() -> None:
    return None


def _restore_grad_enabled() -> None:
    torch._C._set_grad_enabled(SAVED_GRAD_MODES.pop())


set_grad_enabled = prim(
    "set_grad_enabled", _grad_mode_meta, _set_grad_enabled, tags=(Tag.SIDE_EFFECT,),
    doc="turns autograd on or off for the calls after it, as `with torch.no_grad():` did in the program",
)
restore_grad_enabled = prim(
    "restore_grad_enabled", _restore_meta, _restore_grad_enabled, tags=(Tag.SIDE_EFFECT,),
    doc="puts back the grad mode the last set_grad_enabled replaced, as leaving the `with` block did",
)
