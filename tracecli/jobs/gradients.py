"""`--grad`: the backward of an entry's outputs with respect to every input and parameter
that requires grad, made by the grad transform from the final trace, and checked
against eager autograd on the same inputs and seed.

The cotangent of each floating output is ones, as `loss.backward()` on a scalar loss
seeds it; gradients are compared at looser tolerances than outputs
(jobs/compare.py GRADIENT_TOLERANCES), since the backward sums in another order than
autograd's kernels do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import torch

from tracecli.core.errors import UserError
from tracecli.core.grad_contract import verify_grad_contract
from tracecli.core.pytree import tree_leaves, tree_map
from tracecli.core.trace import Trace
from tracecli.executors.grad import run_grad
from tracecli.frontend.tracer import TracedProgram
from tracecli.jobs.compare import OutputCheck, compare_outputs
from tracecli.passes.grad import GradError, GradTraces, grad_transform
from tracecli.passes.pipeline import Stage, Step, run_pipeline


def differentiate(trace: Trace, program: TracedProgram, entry: str, steps: list[Step], *,
                  check: bool = True) -> tuple[GradTraces, list[Stage]]:
    """The forward and backward traces of `trace` for the inputs that require grad; the
    passes run on the backward too (dce drops the gradients of inputs nobody asked for).
    The forward is left as the transform made it: its saved outputs are the backward's
    inputs, by name. Also the backward's stages, the transform's first, for diffs."""
    wanted = [value.name for value, obj in zip(trace.inputs, program.inputs, strict=True)
              if isinstance(obj, torch.Tensor) and obj.requires_grad]
    if not wanted:
        raise UserError(f"--grad: no input or parameter of {entry} requires grad; give an input with "
                        "requires_grad=True in sample_inputs, or trace a module with parameters")
    try:
        traces = grad_transform(trace, requires_grad=wanted)
    except GradError as exc:
        raise UserError(f"--grad: {exc}") from exc
    # The backward is made from the forward after its passes: its own start with none.
    made = traces.backward.replace(info=replace(traces.backward.info, passes=()))
    stages = run_pipeline(made, steps, check=check)
    traces = replace(traces, backward=stages[-1].trace)
    if check:
        verify_grad_contract(traces.forward, traces.backward)
    return traces, stages


def check_gradients(traces: GradTraces, trace: Trace, program: TracedProgram, fn: Callable, args: tuple,
                    kwargs: dict, *, seed: int, executor: str, cotangents: list | None = None) -> list[OutputCheck]:
    """Each `grad_<input>` of the compiled backward against eager autograd's; `cotangents`
    (one per floating output, in order; default ones) seed both."""
    names = [value.name for value in trace.inputs]
    wanted = list(traces.requires_grad)
    if cotangents is not None and len(cotangents) != len(traces.cotangents):
        raise UserError(f"sample_grads() gave {len(cotangents)} cotangents; the entry has {len(traces.cotangents)} "
                        "floating point outputs, one cotangent each in output order")
    torch.manual_seed(seed)
    inputs = [_fresh_leaf(obj) for obj in program.inputs]
    _, grads = run_grad(traces, inputs, cotangents, executor=executor)
    actual = [g if g is not None else torch.zeros_like(inputs[names.index(n)]) for n, g in zip(wanted, grads,
                                                                                                  strict=True)]
    eager_args, eager_kwargs = tree_map(_fresh_leaf, args), tree_map(_fresh_leaf, kwargs)
    torch.manual_seed(seed)
    with torch.enable_grad():
        out = fn(*eager_args, **eager_kwargs)
    objects = program.inputs_for(eager_args, eager_kwargs)
    leaves = [objects[names.index(n)] for n in wanted]
    floating = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor) and t.is_floating_point()]
    seeds = cotangents if cotangents is not None else [torch.ones_like(t) for t in floating]
    # Outputs no input reaches (no grad_fn) contribute nothing: autograd refuses them.
    pairs = [(t, c) for t, c in zip(floating, seeds, strict=False) if t.requires_grad]
    expected = torch.autograd.grad([t for t, _ in pairs], leaves, grad_outputs=[c for _, c in pairs],
                                   allow_unused=True) if pairs else [None] * len(leaves)
    expected = [e if e is not None else torch.zeros_like(leaf) for e, leaf in zip(expected, leaves, strict=True)]
    return compare_outputs([f"grad_{n}" for n in wanted], expected, actual, gradients=True)


def _fresh_leaf(obj):
    """A copy of a tensor argument that is a leaf of its own, requiring grad as it did."""
    if not isinstance(obj, torch.Tensor):
        return obj
    return obj.detach().clone().requires_grad_(obj.requires_grad)
