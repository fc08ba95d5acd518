"""Checking a training step: what it changes besides its outputs and the tensors it
writes in place, namely each leaf's `.grad` and the state of its optimizers.

Eager runs the step with autograd on; its arguments are copied with their
`requires_grad`. Whatever the eager run changes is put back afterwards, as for a
module's weights: the `.grad` of the real parameters (in place, when one existed, since
a trace may read it) and every optimizer that stepped (frontend/training.py).
"""

from __future__ import annotations

from contextlib import AbstractContextManager, ExitStack

import torch

from tracecli.core.regions import is_backward
from tracecli.core.trace import Trace
from tracecli.frontend.training import optimizer_state_kept
from tracecli.ops import ltorch, prims

# `ltorch.set_grad`, or the prim it lowers to (`-p lower`, the prims executor).
_SET_GRAD = frozenset({ltorch.set_grad, prims.set_grad})


def trains(trace: Trace) -> bool:
    """Whether the trace is a training step: it runs a backward or sets a `.grad`."""
    return any(b.symbol in _SET_GRAD or is_backward(b) for b in trace.bsyms)


def grads_set(trace: Trace) -> dict[int, object]:
    """The positions of the inputs whose `.grad` the trace sets, in input order, each
    with the value it is set to (None: set to None)."""
    grads = {b.args[0].name: b.args[1] for b in trace.bsyms if b.symbol in _SET_GRAD}
    return {i: grads[value.name] for i, value in enumerate(trace.inputs) if value.name in grads}


def _copy(obj):
    return obj.detach().clone() if isinstance(obj, torch.Tensor) else obj


class EagerSteps(AbstractContextManager):
    """While open, eager calls of a training step may change `.grad` of `tensors` and any
    optimizer's state: all of it is as it was once closed."""

    def __init__(self, tensors: list, optimizers: list | None = None):
        """`optimizers`: kept from the start, and each optimizer that first steps inside
        is added to it (a call traced as it runs steps them on stand-ins)."""
        self.kept = [(t, t.grad, _copy(t.grad)) for t in tensors if isinstance(t, torch.Tensor)]
        self.optimizers = [] if optimizers is None else optimizers
        self.stack = ExitStack()

    def __enter__(self):
        self.stack.enter_context(optimizer_state_kept(copy=_copy, on_first_step=lambda opt, _: self.optimizers.append(opt),
                                                      optimizers=list(self.optimizers)))
        self.stack.enter_context(torch.enable_grad())
        return self

    def __exit__(self, *exc):
        self.stack.close()
        with torch.no_grad():
            for tensor, grad, copy in self.kept:
                if grad is not None:
                    grad.copy_(copy)
                tensor.grad = grad
        return False


__all__ = ["EagerSteps", "grads_set", "trains"]
