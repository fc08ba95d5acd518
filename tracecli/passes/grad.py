"""grad: autograd as a transform of the trace.

`grad_transform(trace, requires_grad)` turns a forward trace into two:

- the forward trace, returning `(its outputs, (saved values...))`: what the backward
  needs, under the forward's own names;
- the backward trace, taking the saved values and one cotangent per differentiable
  output (`grad_<output>`), and returning one gradient per input that requires it
  (`grad_<input>`), None where no gradient reaches the input.

Before (forward):
    t0 = ltorch.mul(x, w)
    t1 = ltorch.sum(t0)
    return t1
After (backward):
    def f_backward(x, w, grad_t1):
      t2 = prims.broadcast_in_dim(grad_t1, (3,), ())
      grad_x = prims.mul(t2, w)
      grad_w = prims.mul(t2, x)
      return (grad_x, grad_w)

Each op's gradient comes from its backward rule (frontend/autodiff.py says how). An
ltorch op without a rule is differentiated through its decomposition: the forward trace
then holds its prims in its place, so the backward can read their results.
"""

from __future__ import annotations

from dataclasses import dataclass

from tracecli.core.names import NameRegistry
from tracecli.core.pytree import values_in
from tracecli.core.trace import Trace
from tracecli.core.values import TensorValue
from tracecli.frontend.autodiff import GradError, differentiate, reached
from tracecli.frontend.symbolic import bound_unbacked
from tracecli.ops.ltorch.autograd import RESTORES_GRAD_MODE, SETS_GRAD_MODE


@dataclass(frozen=True)
class GradTraces:
    forward: Trace  # returns (the original outputs, saved values)
    backward: Trace  # takes (*saved, *cotangents), returns one gradient per requires_grad input
    saved: tuple  # the forward values the backward reads
    cotangents: tuple[TensorValue, ...]  # the backward's cotangent inputs
    cotangent_of: tuple[str, ...]  # the forward output each cotangent belongs to
    requires_grad: tuple[str, ...]  # the inputs whose gradients the backward returns, in order


def computed_without_grad(bsyms) -> frozenset[str]:
    """The values the program computed with autograd off (`torch.no_grad()`), as the
    trace's grad mode calls say, for a call made with it on: constants to a gradient."""
    modes = [True]
    off: set[str] = set()
    for bsym in bsyms:
        if bsym.symbol in SETS_GRAD_MODE:
            modes.append(bool(bsym.args[0]))
        elif bsym.symbol in RESTORES_GRAD_MODE:
            if len(modes) > 1:
                modes.pop()
        elif not modes[-1]:
            off.update(v.name for v in bsym.output_values())
    return frozenset(off)


def _is_differentiable(value: object) -> bool:
    return isinstance(value, TensorValue) and value.dtype.is_float


def grad_transform(trace: Trace, requires_grad=None) -> GradTraces:
    """The forward and backward traces of `trace` for the inputs named in `requires_grad`
    (default: every floating-point tensor input)."""
    inputs = {v.name: v for v in trace.inputs}
    if requires_grad is None:
        requires_grad = [v.name for v in trace.inputs if _is_differentiable(v)]
    for name in requires_grad:
        if name not in inputs:
            raise GradError(f"{name} is not an input of {trace.name}")
        if not _is_differentiable(inputs[name]):
            raise GradError(f"input {name} is not a floating-point tensor: it cannot require a gradient")
    leaves = [inputs[name] for name in requires_grad]
    registry = NameRegistry(trace.names)
    # Only the outputs a gradient can reach get a cotangent: the rest are constants to it.
    reach = reached(trace.bsyms, leaves)
    outputs = [v for v in values_in(trace.output) if isinstance(v, TensorValue) and v.name in reach]
    outputs = list({v.name: v for v in outputs}.values())
    cotangents = [TensorValue(registry.take(f"grad_{v.name}"), v.shape, v.dtype, v.device) for v in outputs]
    made = differentiate(trace.bsyms, outputs, cotangents, leaves, registry, stop=computed_without_grad(trace.bsyms))

    defined = {v.name: v for v in trace.inputs} | {v.name: v for b in made.forward for v in b.output_values()}
    order = {name: i for i, name in enumerate(defined)}
    read = {v.name: v for b in made.backward for v in b.arg_values() if v.name in defined}
    read.update({g.name: g for g in made.gradients if g is not None and g.name in defined})
    saved = tuple(sorted(read.values(), key=lambda v: order[v.name]))

    forward = trace.replace(bsyms=made.forward, output=(trace.output, saved))
    backward = Trace(f"{trace.name}_backward", (*saved, *cotangents), made.backward, made.gradients,
                     info=trace.info, dims=trace.dims, guards=trace.guards)
    backward = bound_unbacked(backward)  # its sizes the data decide, read off what it is handed
    return GradTraces(forward, backward, saved, tuple(cotangents), tuple(v.name for v in outputs),
                      tuple(requires_grad))


__all__ = ["GradError", "GradTraces", "grad_transform"]
