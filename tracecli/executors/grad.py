"""Running a forward and backward pair made by the grad transform (passes/grad.py)."""

from __future__ import annotations

import torch

from tracecli.core.pytree import tree_leaves, values_in
from tracecli.core.values import TensorValue
from tracecli.executors.registry import Executor, compile_for
from tracecli.passes.grad import GradTraces


def run_grad(traces: GradTraces, inputs: list, cotangents: list | None = None,
             executor: str | Executor = "torch") -> tuple[object, tuple]:
    """(the forward's outputs, the gradients) for `inputs`; cotangents default to ones."""
    forward = compile_for(traces.forward, executor)
    backward = compile_for(traces.backward, executor)
    output, saved = forward(*inputs)
    if cotangents is None:
        # The outputs' containers are the entry's own (tuples, dicts, dataclasses): walked alike.
        tensors = [leaf for leaf in tree_leaves(output) if isinstance(leaf, torch.Tensor)]
        names = [v.name for v in values_in(traces.forward.output[0]) if isinstance(v, TensorValue)]
        by_name = dict(zip(names, tensors, strict=True))
        cotangents = [torch.ones_like(by_name[name]) for name in traces.cotangent_of]
    return output, backward(*saved, *cotangents)

