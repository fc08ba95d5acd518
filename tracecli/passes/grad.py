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

Each op's gradient comes from its backward rule (ops/grads/). An ltorch op without a
rule is differentiated through its decomposition: the forward trace then holds its prims
in its place, so the backward can read their results. An opaque call gets an opaque
backward that runs torch.autograd on the original callable. An op that has none of
these, or whose rule refuses the arguments, stops the transform with `GradError` naming
the op and the user's line: a gradient is never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass

from tracecli.core.names import GENERATED, NameRegistry
from tracecli.core.pytree import values_in
from tracecli.core.symbol import BoundSymbol, Tag, pop_handler, push_handler
from tracecli.core.trace import Trace
from tracecli.core.values import TensorValue
from tracecli.frontend.recorder import Recorder
from tracecli.ops import ltorch, prims
from tracecli.ops.grads import NO_GRADIENT, RULES, NotDifferentiable, bind
from tracecli.ops.grads.opaque import opaque_backward
from tracecli.ops.promotion import ShapeError
from tracecli.passes.rewrite import map_bsym, renamer


class GradError(Exception):
    """The trace cannot be differentiated as asked: the message names the op and line."""


@dataclass(frozen=True)
class GradTraces:
    forward: Trace  # returns (the original outputs, saved values)
    backward: Trace  # takes (*saved, *cotangents), returns one gradient per requires_grad input
    saved: tuple  # the forward values the backward reads
    cotangents: tuple[TensorValue, ...]  # the backward's cotangent inputs
    cotangent_of: tuple[str, ...]  # the forward output each cotangent belongs to
    requires_grad: tuple[str, ...]  # the inputs whose gradients the backward returns, in order


# ltorch ops whose decompositions take a maximum or minimum where torch's gradient
# follows the same even split at ties (or where a tie cannot change it: the maximum is
# only a shift that cancels). Any other op reaching maximum, minimum, amax or amin
# through its decomposition needs a rule of its own: torch picks one element at a tie
# (max with a dim, max pooling) and the prims' rule would split it.
_EVEN_TIES = frozenset({
    "maximum", "minimum", "amax", "amin", "softmax", "log_softmax", "softmin", "logsumexp", "cross_entropy",
    "logaddexp", "logaddexp2", "fmax", "fmin", "clamp_min", "clamp_max", "scaled_dot_product_attention",
})
_TIE_PRIMS = frozenset({prims.maximum, prims.minimum, prims.amax, prims.amin})


class _NoHints:
    """The recorder's hint tracker for rules: what they compute is stored in no variable
    of the user's (the recorder takes what `note` returns as the call's name hints)."""

    def note(self, frame, output) -> tuple:
        return ()


def _where(bsym: BoundSymbol) -> str:
    if bsym.source is None:
        return ""
    return f" ({bsym.source.file}:{bsym.source.line}: {bsym.source.text})"


def _is_differentiable(value: object) -> bool:
    return isinstance(value, TensorValue) and value.dtype.is_float


def _inherit(sub: BoundSymbol, parent: BoundSymbol) -> BoundSymbol:
    return sub.replace(source=sub.source or parent.source, scope=sub.scope or parent.scope)


def _reaches_ties(bsym: BoundSymbol) -> bool:
    """Whether the decomposition reaches a maximum that no rule of its own (softmax's)
    or op with torch's even split stands in front of."""
    for sub in bsym.subsymbols:
        sym = sub.symbol
        if sym in _TIE_PRIMS:
            return True
        if sym in RULES or (sym.namespace == "ltorch" and sym.name in _EVEN_TIES):
            continue
        if _reaches_ties(sub):
            return True
    return False


def _flatten(bsyms, needs: set[str], parent: BoundSymbol | None, out: list[BoundSymbol]) -> None:
    """The forward's bound symbols with every op on the gradient's path that has no rule
    replaced by its decomposition; `needs` gathers the values a gradient reaches."""
    for bsym in bsyms:
        if parent is not None:
            bsym = _inherit(bsym, parent)
        read = [v for v in bsym.arg_values() if v.name in needs]
        sym = bsym.symbol
        if not read or sym in NO_GRADIENT:
            out.append(bsym)
            continue
        outputs = [v for v in bsym.output_values() if isinstance(v, TensorValue)]
        complex_values = [v for v in (*read, *outputs) if v.dtype.is_complex]
        if complex_values:
            raise GradError(f"{sym.qualname}{_where(bsym)}: gradients of complex values are not modelled")
        if Tag.RANDOM in sym.tags and sym not in RULES and "dropout" not in sym.name:
            # torch's gradients of a draw (normal's mean and std) are not those of the
            # sampling formula a decomposition spells out.
            raise GradError(f"{sym.qualname}{_where(bsym)}: draws random numbers from its differentiable "
                            "arguments; its gradient is not modelled")
        if sym in RULES or sym.namespace in ("torch", ""):
            out.append(bsym)
        elif bsym.subsymbols and sym.namespace == "ltorch":
            if sym.name not in _EVEN_TIES and _reaches_ties(bsym):
                raise GradError(f"{sym.qualname}{_where(bsym)}: no backward rule, and its decomposition takes a "
                                "maximum whose gradient at ties would differ from torch's")
            _flatten(bsym.subsymbols, needs, bsym, out)
            continue
        else:
            raise GradError(f"{sym.qualname}{_where(bsym)}: has no backward rule")
        needs.update(v.name for v in outputs if _is_differentiable(v))


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
    needs = set(requires_grad)
    flat: list[BoundSymbol] = []
    _flatten(trace.bsyms, needs, None, flat)

    registry = NameRegistry(trace.names | {v.name for b in flat for v in b.output_values()})
    outputs = [v for v in values_in(trace.output) if isinstance(v, TensorValue) and v.name in needs]
    outputs = list({v.name: v for v in outputs}.values())
    cotangents = [TensorValue(registry.take(f"grad_{v.name}"), v.shape, v.dtype, v.device) for v in outputs]
    cot: dict[str, TensorValue] = {v.name: c for v, c in zip(outputs, cotangents, strict=True)}

    recorder = Recorder(registry, lambda: "", _NoHints())
    push_handler(recorder.record)
    try:
        for bsym in reversed(flat):
            _backward_of(bsym, cot, needs, recorder)
    finally:
        pop_handler()

    grads = [cot.get(name) for name in requires_grad]
    bwd_bsyms = _named(recorder.bsyms, cot, trace, registry, set(requires_grad), {c.name for c in cotangents})
    renamed = {old.name: new for old, new in bwd_bsyms[1].items()}
    bwd_bsyms = bwd_bsyms[0]
    grads = [None if g is None else renamed.get(g.name, g) for g in grads]

    defined = {v.name: v for v in trace.inputs} | {v.name: v for b in flat for v in b.output_values()}
    order = {name: i for i, name in enumerate(defined)}
    read = {v.name: v for b in bwd_bsyms for v in b.arg_values() if v.name in defined}
    read.update({g.name: g for g in grads if g is not None and g.name in defined})
    saved = tuple(sorted(read.values(), key=lambda v: order[v.name]))

    forward = trace.replace(bsyms=tuple(flat), output=(trace.output, saved))
    backward = Trace(f"{trace.name}_backward", (*saved, *cotangents), tuple(bwd_bsyms), tuple(grads),
                     info=trace.info, dims=trace.dims, guards=trace.guards)
    return GradTraces(forward, backward, saved, tuple(cotangents), tuple(v.name for v in outputs),
                      tuple(requires_grad))


def _backward_of(bsym: BoundSymbol, cot: dict, needs: set[str], recorder: Recorder) -> None:
    """Record the backward of one forward bound symbol, adding to the cotangents."""
    outs = bsym.output_values()
    gs = [cot.get(v.name) for v in outs]
    if all(g is None for g in gs):
        return
    wanted = [v for v in bsym.arg_values() if v.name in needs]
    if not wanted:
        return
    sym = bsym.symbol
    start = len(recorder.bsyms)
    try:
        if sym in RULES:
            kwargs = dict(bsym.kwargs)
            bound = bind(sym, bsym.args, kwargs)
            stray = [v for v in values_in(bound.kwargs) if v.name in needs]
            if stray:
                raise NotDifferentiable(f"the keyword-only argument {stray[0].name} needs a gradient")
            g = gs[0] if len(outs) == 1 and isinstance(bsym.output, TensorValue) else tuple(gs)
            grads = RULES[sym](g, bsym.output, *bound.args, **bound.kwargs)
            pairs = _pair(bound.args, grads)
        else:
            pairs = opaque_backward(bsym, gs, needs)
    except (NotDifferentiable, ShapeError) as e:
        raise GradError(f"{sym.qualname}{_where(bsym)}: {e}") from e
    for value, grad in pairs:
        if grad is None or value.name not in needs:
            continue
        if grad.shape != value.shape or grad.dtype != value.dtype:
            raise GradError(f"the backward rule of {sym.qualname} gives {value.name} a gradient of "
                            f"{grad.dtype.short}{list(grad.shape)}, not {value.dtype.short}{list(value.shape)}")
        known = cot.get(value.name)
        cot[value.name] = grad if known is None else ltorch.add(known, grad)
    recorder.scopes[0][start:] = [b.replace(source=bsym.source, scope=bsym.scope)
                                 for b in recorder.scopes[0][start:]]


def _pair(args: tuple, grads) -> list[tuple[TensorValue, TensorValue]]:
    """(argument, gradient) for each tensor argument a rule gave a gradient."""
    pairs = []
    for arg, grad in zip(args, grads, strict=False):
        if grad is None:
            continue
        if isinstance(arg, (tuple, list)):
            pairs.extend((a, g) for a, g in zip(arg, grad, strict=True) if isinstance(a, TensorValue))
        elif isinstance(arg, TensorValue):
            pairs.append((arg, grad))
    return pairs


def _named(bsyms: list[BoundSymbol], cot: dict, trace: Trace, registry: NameRegistry, inputs: set[str],
           fixed: set[str]) -> tuple[list[BoundSymbol], dict]:
    """The backward with each complete cotangent of a named forward value called
    `grad_<name>`: the inputs' first, then the values the user named."""
    made = {v.name for b in bsyms for v in b.output_values()}
    names: dict[str, str] = {}
    claimed: set[str] = set()
    order = [n for n in cot if n in inputs] + [n for n in cot if n not in inputs and not GENERATED.match(n)]
    for forward_name in order:
        value = cot[forward_name]
        if value.name in made and value.name not in claimed and value.name not in fixed:
            names[value.name] = registry.take(f"grad_{forward_name}")
            claimed.add(value.name)
    rename = renamer(names)
    renamed = {value: rename(value) for value in cot.values() if value.name in names}
    return [map_bsym(b, rename) for b in bsyms], renamed


__all__ = ["GradError", "GradTraces", "grad_transform"]
