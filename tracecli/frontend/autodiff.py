"""Differentiating recorded bound symbols: the backward of some of their values with
respect to others, built from each op's backward rule (ops/grads/).

`differentiate(bsyms, outputs, seeds, leaves, registry)` returns the forward's bound
symbols with every op on the gradient's path that has no rule replaced by its
decomposition (so the backward can read the prims' results), the backward's bound
symbols, and one gradient per leaf. An opaque call gets an opaque backward that runs
torch.autograd on the original callable. An op that has none of these, or whose rule
refuses the arguments, stops with `GradError` naming the op and the user's line: a
gradient is never guessed.

Both the grad transform of a whole trace (passes/grad.py, `--grad`) and the tracer at a
`loss.backward()` in the user's code (frontend/training.py) are built on it.
"""

from __future__ import annotations

from dataclasses import dataclass

from tracecli.core.names import GENERATED, NameRegistry
from tracecli.core.pytree import map_values, values_in
from tracecli.core.rewrite import map_bsym, renamer
from tracecli.core.symbol import BoundSymbol, Tag, pop_handler, push_handler
from tracecli.core.values import TensorValue
from tracecli.frontend.recorder import Recorder
from tracecli.ops import ltorch, prims
from tracecli.ops.grads import (
    CARRIES_GRADIENT,
    NO_GRADIENT,
    REFUSALS,
    RESIDUALS,
    RULES,
    NotDifferentiable,
    bind,
    has_rule,
)
from tracecli.ops.grads.opaque import opaque_backward
from tracecli.ops.promotion import ShapeError


class GradError(Exception):
    """The values cannot be differentiated as asked: the message names the op and line."""


@dataclass(frozen=True)
class Differentiated:
    forward: tuple[BoundSymbol, ...]  # the bound symbols given, ops without rules decomposed
    backward: tuple[BoundSymbol, ...]  # the gradients' bound symbols, the seeds made here first
    gradients: tuple[TensorValue | None, ...]  # one per leaf, None where no gradient reaches it
    seeds: tuple[TensorValue, ...]  # the cotangent of each output


# ltorch ops whose decompositions take a maximum or minimum where torch's gradient
# follows the same even split at ties (or where a tie cannot change it: the maximum is
# only a shift that cancels). Any other op reaching maximum, minimum, amax or amin
# through its decomposition needs a rule of its own: torch picks one element at a tie
# (max with a dim, max pooling) and the prims' rule would split it.
_EVEN_TIES = frozenset({
    "maximum", "minimum", "amax", "amin", "softmax", "log_softmax", "softmin", "logsumexp", "cross_entropy",
    "logaddexp", "logaddexp2", "fmax", "fmin", "clamp_min", "clamp_max", "scaled_dot_product_attention", "aminmax",
    "max_all", "min_all",
})
_TIE_PRIMS = frozenset({prims.maximum, prims.minimum, prims.amax, prims.amin, prims.max_all, prims.min_all})


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


def _reaches_ties(bsym: BoundSymbol, needs: set[str]) -> bool:
    """Whether the decomposition takes a maximum of values a gradient reaches (the
    arguments named in `needs`, and what is computed from them) that no rule of its own
    (softmax's) or op with torch's even split stands in front of. A maximum of what no
    gradient reaches (an index clamped into range) does not count."""
    reached = {v.name for v in bsym.arg_values() if v.name in needs}
    return _ties_among(bsym.subsymbols, reached)


def _ties_among(subsymbols, reached: set[str]) -> bool:
    for sub in subsymbols:
        if not any(v.name in reached for v in sub.arg_values()):
            continue
        sym = sub.symbol
        if sym in _TIE_PRIMS:
            return True
        if not (has_rule(sub) or (sym.namespace == "ltorch" and sym.name in _EVEN_TIES)) and _ties_among(
                sub.subsymbols, set(reached)):
            return True
        reached.update(v.name for v in sub.output_values())
    return False


def _flatten(bsyms, needs: set[str], parent: BoundSymbol | None, out: list[BoundSymbol],
             stop: frozenset[str]) -> None:
    """The forward's bound symbols with every op on the gradient's path that has no rule
    replaced by its decomposition; `needs` gathers the values a gradient reaches. A bound
    symbol with an output in `stop` (computed with autograd off) passes no gradient on."""
    for bsym in bsyms:
        if parent is not None:
            bsym = _inherit(bsym, parent)
        read = [v for v in bsym.arg_values() if v.name in needs]
        sym = bsym.symbol
        # Stopped when autograd was off for all it made (a custom Function returns what it
        # saved, made with autograd off, beside results that carry a gradient).
        outs = bsym.output_values()
        if not read or sym in NO_GRADIENT or (stop and outs and all(v.name in stop for v in outs)):
            out.append(bsym)
            continue
        outputs = [v for v in bsym.output_values() if isinstance(v, TensorValue)]
        complex_values = [v for v in (*read, *outputs) if v.dtype.is_complex]
        if complex_values:
            raise GradError(f"{sym.qualname}{_where(bsym)}: gradients of complex values are not modelled")
        refused = REFUSALS.get(sym)
        if refused is not None:
            raise GradError(f"{sym.qualname}{_where(bsym)}: {refused}")
        rule = has_rule(bsym)
        if Tag.RANDOM in sym.tags and not rule and "dropout" not in sym.name:
            # torch's gradients of a draw (normal's mean and std) are not those of the
            # sampling formula a decomposition spells out.
            raise GradError(f"{sym.qualname}{_where(bsym)}: draws random numbers from its differentiable "
                            "arguments; its gradient is not modelled")
        if rule or sym.namespace in ("torch", ""):
            out.append(bsym)
        elif Tag.INPLACE in sym.tags and bsym.subsymbols and sym.namespace == "ltorch":
            # Kept whole: the write into its tensor (a module's buffer, an input) must stay
            # in the forward. Its gradient comes from its decomposition, replayed in the
            # backward (`_replayed`).
            if _reaches_ties(bsym, needs):
                raise GradError(f"{sym.qualname}{_where(bsym)}: no backward rule, and its decomposition takes a "
                                "maximum whose gradient at ties would differ from torch's")
            out.append(bsym)
        elif bsym.subsymbols and sym.namespace == "ltorch":
            if sym.name not in _EVEN_TIES and _reaches_ties(bsym, needs):
                raise GradError(f"{sym.qualname}{_where(bsym)}: no backward rule, and its decomposition takes a "
                                "maximum whose gradient at ties would differ from torch's")
            _flatten(bsym.subsymbols, needs, bsym, out, stop)
            continue
        else:
            raise GradError(f"{sym.qualname}{_where(bsym)}: has no backward rule")
        carried = CARRIES_GRADIENT.get(sym)
        needs.update(v.name for i, v in enumerate(outputs) if _is_differentiable(v) and (carried is None or i in carried))


def reached(bsyms, leaves: list[TensorValue], stop: frozenset[str] = frozenset()) -> set[str]:
    """The names of the values a gradient of `leaves` reaches (the leaves' included)."""
    needs = {v.name for v in leaves}
    _flatten(bsyms, needs, None, [], stop)
    return needs


def flattened(bsyms, leaves: list[TensorValue], stop: frozenset[str] = frozenset()) -> list[BoundSymbol]:
    """The bound symbols as a backward of `leaves` would differentiate them: each op on
    the gradient's path that has no rule replaced by its decomposition."""
    out: list[BoundSymbol] = []
    _flatten(bsyms, {v.name for v in leaves}, None, out, stop)
    return out


def differentiate(bsyms, outputs: list[TensorValue], seeds: list[TensorValue | None], leaves: list[TensorValue],
                  registry: NameRegistry, *, stop: frozenset[str] = frozenset(), leaf_names: dict[str, str] | None = None,
                  seed_names: list[str] | None = None) -> Differentiated:
    """The backward of `outputs` (each seeded with its cotangent in `seeds`; None: ones,
    made first in the backward, as `loss.backward()` seeds a scalar loss) with respect to
    `leaves`. `registry` names what the backward makes. The gradient of a leaf is called
    `grad_<name>`, with `leaf_names` giving the name where it is not the leaf's own (a
    parameter's value after an in-place update); a seed made here is `grad_<seed name>`."""
    leaf_names = leaf_names or {}
    needs = {v.name for v in leaves}
    # A call whose rule reads what it makes inside returns that too, from here on.
    bsyms = [RESIDUALS[b.symbol](b, registry) if b.symbol in RESIDUALS else b for b in bsyms]
    flat: list[BoundSymbol] = []
    _flatten(bsyms, needs, None, flat, stop)
    reached = [v for v in outputs if v.name in needs]
    recorder = Recorder(registry, lambda: "", _NoHints())
    cot: dict[str, TensorValue] = {}
    made_seeds: list[TensorValue] = []
    push_handler(recorder.record)
    try:
        for i, (output, seed) in enumerate(zip(outputs, seeds, strict=True)):
            if seed is None:
                seed = ltorch.ones_like(output)
                name = registry.take(f"grad_{seed_names[i] if seed_names else output.name}")
                recorder.scopes[0][-1] = map_bsym(recorder.scopes[0][-1], renamer({seed.name: name}))
                seed = seed.renamed(name)
            made_seeds.append(seed)
            if output in reached:
                known = cot.get(output.name)
                cot[output.name] = seed if known is None else ltorch.add(known, seed)
        for bsym in reversed(flat):
            _backward_of(bsym, cot, needs, recorder)
    finally:
        pop_handler()
    fixed = {s.name for s in made_seeds}
    backward, renamed = _named(recorder.bsyms, cot, registry, {v.name: leaf_names.get(v.name, v.name) for v in leaves},
                               fixed)
    grads = tuple(None if (g := cot.get(v.name)) is None else renamed.get(g, g) for v in leaves)
    flat, backward = _saved_before_writes(flat, backward, registry)
    return Differentiated(tuple(flat), tuple(backward), grads, tuple(made_seeds))


def _saved_before_writes(forward: list[BoundSymbol], backward: list[BoundSymbol],
                         registry: NameRegistry) -> tuple[list[BoundSymbol], list[BoundSymbol]]:
    """A value the backward reads that the forward writes in place after making it (an
    in-place op on it, or on a tensor it is a view of) no longer holds it when the
    backward runs: the forward keeps a copy of it, made where it is made, and the
    backward reads the copy (autograd refuses such a graph; the trace saves what it needs)."""
    storage: dict[str, str] = {}  # value -> the tensor whose memory it is (through views and in-place results)
    made_in: dict[str, list[str]] = {}  # that tensor -> the values made so far that live in it
    overwritten: set[str] = set()
    for bsym in forward:
        first = bsym.args[0] if bsym.args and isinstance(bsym.args[0], TensorValue) else None
        tags = bsym.symbol.tags
        shares = first is not None and (Tag.VIEW in tags or Tag.INPLACE in tags)
        if first is not None and Tag.INPLACE in tags:
            overwritten.update(made_in.get(storage.get(first.name, first.name), [first.name]))
        for out in bsym.output_values():
            root = storage.get(first.name, first.name) if shares else out.name
            storage[out.name] = root
            made_in.setdefault(root, [root] if root != out.name else []).append(out.name)
    read = {v.name: v for b in backward for v in b.arg_values()}
    at_risk = [read[name] for name in read if name in overwritten]
    if not at_risk:
        return forward, backward
    recorder = Recorder(registry, lambda: "", _NoHints())
    copies: dict[str, TensorValue] = {}
    push_handler(recorder.record)
    try:
        for value in at_risk:
            copies[value.name] = ltorch.clone(value)
    finally:
        pop_handler()
    copy_of = {b.args[0].name: b for b in recorder.bsyms}
    defined_at = {v.name: i for i, b in enumerate(forward) for v in b.output_values()}
    # An input's copy comes first; any other value's right after the call that made it, at its line.
    placed = [copy_of[v.name] for v in at_risk if v.name not in defined_at]
    for i, bsym in enumerate(forward):
        placed.append(bsym)
        placed.extend(copy_of[v.name].replace(source=bsym.source, scope=bsym.scope)
                      for v in at_risk if defined_at.get(v.name) == i)
    rename = renamer({name: copy.name for name, copy in copies.items()})
    return placed, [map_bsym(b, rename) for b in backward]


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
        rule = has_rule(bsym)
        if not rule and Tag.INPLACE in sym.tags and bsym.subsymbols and sym.namespace == "ltorch":
            _replayed(bsym, gs, cot, needs, recorder)
            pairs = []
        elif rule:
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


def _replayed(bsym: BoundSymbol, gs: list, cot: dict, needs: set[str], recorder: Recorder) -> None:
    """The backward of an in-place op the forward keeps whole: its decomposition
    recorded again in the backward, under fresh names, and differentiated there, the
    cotangents reaching the op's own arguments."""
    flat: list[BoundSymbol] = []
    local = set(needs)
    _flatten(bsym.subsymbols, local, bsym, flat, frozenset())
    start = len(recorder.bsyms)
    replayed = replay(flat, {})
    for value, g in zip(bsym.output_values(), gs, strict=True):
        if g is not None:
            name = replayed.get(value.name, value).name
            cot[name] = g if cot.get(name) is None else ltorch.add(cot[name], g)
    local |= {fresh.name for name, fresh in replayed.items() if name in local}
    for replayed_bsym in reversed(recorder.bsyms[start:]):
        _backward_of(replayed_bsym, cot, local, recorder)


def replay(bsyms, values: dict[str, object]) -> dict[str, object]:
    """Record `bsyms` again through the current handler, each value named in `values`
    replaced by its entry there; `values` is returned with every output recorded added
    (old name -> the new value)."""

    def current(value):
        return values.get(value.name, value)

    for bsym in bsyms:
        made = bsym.symbol(*map_values(current, bsym.args), **{k: map_values(current, v) for k, v in bsym.kwargs})
        values.update((old.name, new) for old, new in zip(values_in(bsym.output), values_in(made), strict=True))
    return values


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


def _named(bsyms: list[BoundSymbol], cot: dict, registry: NameRegistry, leaves: dict[str, str],
           fixed: set[str]) -> tuple[list[BoundSymbol], dict]:
    """The backward with each complete cotangent of a named forward value called
    `grad_<name>`: the leaves' first (under the names `leaves` gives them), then the
    values the user named."""
    made = {v.name for b in bsyms for v in b.output_values()}
    names: dict[str, str] = {}
    claimed: set[str] = set()
    order = [n for n in cot if n in leaves] + [n for n in cot if n not in leaves and not GENERATED.match(n)]
    for forward_name in order:
        value = cot[forward_name]
        if value.name in made and value.name not in claimed and value.name not in fixed:
            names[value.name] = registry.take(f"grad_{leaves.get(forward_name, forward_name)}")
            claimed.add(value.name)
    rename = renamer(names)
    renamed = {value: rename(value) for value in cot.values() if value.name in names}
    return [map_bsym(b, rename) for b in bsyms], renamed


__all__ = ["Differentiated", "GradError", "differentiate", "reached", "replay"]
