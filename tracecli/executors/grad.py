"""Running a forward and backward pair made by the grad transform (passes/grad.py)."""

from __future__ import annotations

import torch

from tracecli.core.pytree import values_in
from tracecli.executors.registry import Executor, compile_for
from tracecli.passes.grad import GradTraces


def run_grad(traces: GradTraces, inputs: list, cotangents: list | None = None,
             executor: str | Executor = "torch") -> tuple[object, tuple]:
    """(the forward's outputs, the gradients) for `inputs`; cotangents default to ones."""
    forward = compile_for(traces.forward, executor)
    backward = compile_for(traces.backward, executor)
    output, saved = forward(*inputs)
    if cotangents is None:
        by_name = dict(zip([v.name for v in values_in(traces.forward.output[0])], _leaves(output), strict=False))
        cotangents = [torch.ones_like(by_name[name]) for name in traces.cotangent_of]
    return output, backward(*saved, *cotangents)


def _leaves(output) -> list:
    if isinstance(output, torch.Tensor):
        return [output]
    if isinstance(output, (tuple, list)):
        return [leaf for item in output for leaf in _leaves(item)]
    if isinstance(output, dict):
        return [leaf for item in output.values() for leaf in _leaves(item)]
    return [output]
