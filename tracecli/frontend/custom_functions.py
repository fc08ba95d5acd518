"""A custom `torch.autograd.Function` while tracing: one call, named for the function,
whose subsymbols are the ops its forward ran (traced with autograd off, as in eager), and
whose gradient is its own backward, traced once there and then:

    t13 = GeLUFunction_apply(t3)  # t13: "cpu f32[3, 4]"
      # t4 = ltorch.mul(t3, 0.5)  # t4: "cpu f32[3, 4]"
      ...
      # t13 = ltorch.mul(t4, t12)  # t13: "cpu f32[3, 4]"

The call is kept whole by every pass (core/functions.py), and the generated code runs
what it holds. Its arguments are the tensors the function was given, in order, then any
other value its forward or backward reads from outside (a captured tensor), so its rule
finds every value by its place, whatever the passes renamed: the backward is recorded
again with the arguments, the results and the cotangents put in. A value the backward
reads that the forward made but does not return (what `ctx.save_for_backward` kept of
its inside) is returned by the call too once gradients are taken (`RESIDUALS`), and a
value made inside that the program reads afterwards (kept in Python state) is returned
from the start.

A tensor the forward writes in place that it did not make (a buffer it updates) is
returned by the call too, in its last value: the trace's in-place bookkeeping looks
into the call (core/trace.py), so the write lands where eager's does.

The backward is traced with a stand-in `ctx` that keeps what the forward saved on it
(`save_for_backward`, attributes). A backward that cannot be traced leaves the call
without a gradient: tracing goes on, and a gradient that would go through it (a
`loss.backward()`, `--grad`) is refused, naming the function and why.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace

import torch
from torch.autograd.function import _is_setup_context_defined

from tracecli.core.bindings import is_literal_leaf
from tracecli.core.functions import inlined, is_function_call
from tracecli.core.names import NameRegistry
from tracecli.core.printing import format_bsym, type_comment
from tracecli.core.pytree import tree_leaves, tree_map, values_in
from tracecli.core.regions import outside_arguments
from tracecli.core.rewrite import map_bsym, renamer
from tracecli.core.symbol import BoundSymbol, Symbol, Tag, pop_handler, push_handler
from tracecli.core.values import TensorValue
from tracecli.frontend.autodiff import replay
from tracecli.frontend.proxy import TensorProxy
from tracecli.frontend.recorder import Recorder
from tracecli.frontend.source import location_of, user_frame
from tracecli.ops import ltorch
from tracecli.ops.grads import CARRIES_GRADIENT, REFUSALS, RESIDUALS, RULES
from tracecli.ops.grads.base import sum_to, to_dtype


class UntracedBackward(Exception):
    """The function's backward could not be traced: the message says why."""


class _Context:
    """What `forward` (or `setup_context`) and `backward` get as `ctx`."""

    def __init__(self, needs_input_grad: tuple[bool, ...]):
        self.needs_input_grad = needs_input_grad
        self.saved_tensors: tuple = ()
        self.materialize_grads = True
        self.non_differentiable: tuple = ()

    def save_for_backward(self, *tensors) -> None:
        self.saved_tensors = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value

    def mark_dirty(self, *tensors) -> None:
        raise UntracedBackward("it writes its inputs in place (ctx.mark_dirty), which is not traced")


def run_forward(cls, args: tuple, kwargs: dict) -> tuple[object, _Context]:
    """`cls.forward` on traced tensors, with autograd off as eager runs it."""
    ctx = _Context(tuple(isinstance(a, torch.Tensor) and a.dtype.is_floating_point for a in args))
    with torch.no_grad():
        if _is_setup_context_defined(cls.setup_context):
            out = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, out)
        else:
            out = cls.forward(ctx, *args, **kwargs)
    return out, ctx


@dataclass(frozen=True)
class _Backward:
    """The function's backward as traced: its bound symbols, read again for each gradient."""

    recipe: tuple[BoundSymbol, ...]
    cotangents: tuple[TensorValue, ...]  # the stand-ins for the results' cotangents
    grads: tuple  # per argument of the call: the gradient value the recipe makes, or None
    zeros: frozenset[int]  # results marked non-differentiable: their cotangent is zeros


@dataclass(frozen=True)
class _Call:
    """One call of a function, as traced: what it ran, the names of what those ops read
    from outside (the call's arguments) and of what the call returns (its results
    first), all as they were when it was traced."""

    cls: type
    members: tuple[BoundSymbol, ...]
    arg_names: tuple[str, ...]
    out_names: tuple[str, ...]
    results: int
    backward: _Backward | None
    refused: str | None  # why it has no gradient, when it has none


_CALLS: dict[Symbol, _Call] = {}
# Calls alike (the same function on values of the same types, running the same ops with
# the same constants, and the same backward) share one symbol: the call in every layer
# of a model prints as one function, a saved file defines it once, and cse may merge
# two such calls on the same arguments.
_SHARED: dict[tuple[type, str], Symbol] = {}
# (symbol, the values inside it returned too) -> the symbol of the call that returns them
_WIDER: dict[tuple[Symbol, tuple], Symbol] = {}


def keep_whole(tracer, cls, args: tuple, inputs: list[TensorValue], out, ctx: _Context, start: int,
               differentiable: bool):
    """The forward just traced (the bound symbols recorded since `start`, given the
    tensors `args` held as `inputs`) made one call; `differentiable`: autograd was on, so
    its backward is traced too. Returns what the program gets back (a result it was
    given as it is is a new tensor, as in eager) and why the function has no gradient
    (None: it has one, or needs none)."""
    recorder = tracer.recorder
    if not any(isinstance(leaf, TensorProxy) for leaf in tree_leaves(out)):
        return out, None  # nothing traced comes back: its ops stay as they are
    out = _new_results(tracer, out, start)
    results = [tracer.value_of(leaf) for leaf in tree_leaves(out) if isinstance(leaf, TensorProxy)]
    returned = {v.name for v in results}
    written = [v for v in _written_outside(recorder.bsyms[start:]) if v.name not in returned]
    members = tuple(recorder.bsyms[start:])
    made = {v.name for b in members for v in b.output_values()}
    named = {v.name for v in inputs}
    extras = {name: v for name, v in outside_arguments(members).items() if name not in named}
    backward, refused = None, None
    if differentiable:
        try:
            backward = _traced_backward(tracer, cls, ctx, args, results)
        except UntracedBackward as exc:
            refused = f"{cls.__qualname__}.backward: {exc}"
    if backward is not None:
        known = named | made | {c.name for c in backward.cotangents}
        extras.update((name, v) for name, v in outside_arguments(backward.recipe).items() if name not in known)
        backward = replace(backward, grads=backward.grads + (None,) * len(extras))
    call_args = (*inputs, *extras.values())
    outputs = [*results, *written]
    call = _Call(cls, members, tuple(v.name for v in call_args), tuple(v.name for v in outputs), len(results),
                 backward, refused)
    structure = _structure(call_args, members, outputs, backward, refused)
    symbol = _SHARED.get((cls, structure)) if structure is not None else None
    if symbol is None:
        symbol = _symbol(call)
        if structure is not None:
            _SHARED[(cls, structure)] = symbol
    frame = user_frame(sys._getframe(1))
    output = outputs[0] if len(outputs) == 1 else tuple(outputs)
    bsym = BoundSymbol(symbol, call_args, (), output, members,
                       source=location_of(frame) if frame is not None else None,
                       name_hints=tracer.hints.note(frame, output) if frame is not None else (),
                       scope=recorder.module_scope())
    recorder.bsyms[start:] = [bsym]
    if backward is not None:
        # Made with autograd off, as the forward runs, but the function's results need a
        # gradient: through its backward (not the ones it marked non-differentiable).
        tracer.training.no_grad.difference_update(
            v.name for i, v in enumerate(results) if i not in backward.zeros)
    return out, refused


def returning_what_is_read(bsyms: tuple[BoundSymbol, ...], output) -> tuple[BoundSymbol, ...]:
    """Once the entry is traced: each call that made a value something after it reads
    (a tensor the forward kept in Python state) returns it too."""
    if not any(is_function_call(b) for b in bsyms):
        return bsyms
    read = {v.name for v in values_in(output)}
    out = list(bsyms)
    for i in range(len(out) - 1, -1, -1):
        bsym = out[i]
        if bsym.symbol in _CALLS:
            returned = {v.name for v in bsym.output_values()}
            escaped = tuple((j, k) for j, member in enumerate(bsym.subsymbols)
                            for k, v in enumerate(member.output_values()) if v.name in read and v.name not in returned)
            if escaped:
                out[i] = bsym = _returning(bsym, escaped, None)
        read.update(v.name for v in bsym.arg_values())
    return tuple(out)


def _structure(args, members, outputs, backward: _Backward | None, refused: str | None) -> str | None:
    """The call written with its values numbered in order of appearance: equal for two
    calls that differ only in the names of their values. None when a member takes an
    object the text cannot tell apart from another (a module, a function)."""
    numbers: dict[str, str] = {}

    def numbered(value):
        return value.renamed(numbers.setdefault(value.name, f"v{len(numbers)}"))

    lines = [", ".join(f"{numbered(v).name}: {type_comment(v)}" for v in args)]
    for bsym in (*members, *(backward.recipe if backward is not None else ())):
        if not all(is_literal_leaf(leaf) or leaf is None for leaf in tree_leaves((bsym.args, bsym.kwargs))):
            return None
        lines.append(f"{id(bsym.symbol)} {format_bsym(map_bsym(bsym, numbered))}")
    lines.append(", ".join(numbered(v).name for v in outputs))
    if backward is not None:
        lines.append(", ".join(numbered(v).name for v in backward.cotangents))
        lines.append(", ".join("-" if g is None else numbered(g).name for g in backward.grads))
        lines.append(repr(sorted(backward.zeros)))
    lines.append(repr(refused))
    return "\n".join(lines)


def _written_outside(members) -> list[TensorValue]:
    """The last value of each tensor the forward did not make that it writes in place
    (a buffer it updates): the call returns it, so the write is seen where it lands."""
    made: set[str] = set()
    origin: dict[str, str] = {}  # a value an in-place write made -> the outside tensor it is
    last: dict[str, TensorValue] = {}
    for bsym in inlined(members):
        args, outs = bsym.arg_values(), bsym.output_values()
        if Tag.INPLACE in bsym.symbol.tags and args and outs and (args[0].name not in made or args[0].name in origin):
            tensor = origin.get(args[0].name, args[0].name)
            origin[outs[0].name] = tensor
            last[tensor] = outs[0]
        made.update(v.name for v in outs)
    return list(last.values())


def _new_results(tracer, out, start: int):
    """`out` with each result the forward did not make (an argument returned as it is, or
    a result returned twice) a new tensor sharing its memory, as autograd returns it."""
    seen: set[str] = set()

    def fresh(leaf):
        if not isinstance(leaf, TensorProxy):
            return leaf
        value = tracer.value_of(leaf)
        made = any(value.name == v.name for b in tracer.recorder.bsyms[start:] for v in b.output_values())
        if made and value.name not in seen:
            seen.add(value.name)
            return leaf
        view = tracer.record_top(ltorch.detach, (value,), {})
        seen.add(view.name)
        return tracer.proxy(view)

    return tree_map(fresh, out)


def _traced_backward(tracer, cls, ctx: _Context, args: tuple, results: list[TensorValue]) -> _Backward:
    """`cls.backward` traced on stand-in cotangents, its bound symbols taken out of the trace."""
    recorder = tracer.recorder
    cotangents = [TensorValue(tracer.registry.fresh("t"), v.shape, v.dtype, v.device) for v in results]
    start = len(recorder.bsyms)
    try:
        with recorder.grad_mode_internal(), torch.no_grad():
            grads = cls.backward(ctx, *(tracer.proxy(c) for c in cotangents))
    except UntracedBackward:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever stops it is the reason given
        raise UntracedBackward(f"tracing it failed: {type(exc).__name__}: {exc}") from exc
    finally:
        recipe = tuple(recorder.bsyms[start:])
        del recorder.bsyms[start:]
    grads = grads if isinstance(grads, tuple) else (grads,)
    tensor_grads = []
    for arg, grad in zip(args, grads, strict=False):
        if isinstance(arg, torch.Tensor):
            tensor_grads.append(tracer.value_of(grad) if isinstance(grad, torch.Tensor) else None)
    frozen = {tracer.value_of(t).name for t in ctx.non_differentiable if isinstance(t, torch.Tensor)}
    zeros = frozenset(i for i, v in enumerate(results) if v.name in frozen)
    return _Backward(recipe, tuple(cotangents), tuple(tensor_grads), zeros)


def _symbol(call: _Call) -> Symbol:
    """The call's symbol: its decomposition records what the function ran again (for the
    verifier's check and for a call made anew), and runs it on real tensors as well."""

    def run(*values):
        now = replay(call.members, dict(zip(call.arg_names, values, strict=True)))
        made = [now[name] for name in call.out_names]
        return made[0] if len(made) == 1 else tuple(made)

    run.__name__ = run.__qualname__ = f"{call.cls.__name__}_apply"
    symbol = Symbol(run.__name__, "", impl=run, decomposition=run, tags=frozenset({Tag.FUNCTION}),
                    doc=f"{call.cls.__qualname__}.apply: its forward's ops, its gradient {call.cls.__qualname__}.backward's")
    _CALLS[symbol] = call
    if call.backward is not None:
        RULES[symbol] = _rule(call)
        CARRIES_GRADIENT[symbol] = frozenset(range(call.results)) - call.backward.zeros
        saved = _saved_inside(call)
        if saved:
            RESIDUALS[symbol] = lambda bsym, registry: _returning(bsym, saved, registry)
    elif call.refused is not None:
        REFUSALS[symbol] = f"a custom autograd.Function whose backward is not traced ({call.refused})"
    return symbol


def _saved_inside(call: _Call) -> tuple[tuple[int, int], ...]:
    """What the backward reads that the forward made but the call does not return: each
    as (which member made it, which of its outputs), a place no renaming changes."""
    read = {v.name for b in call.backward.recipe for v in b.arg_values()}
    known = set(call.arg_names) | set(call.out_names)
    return tuple((j, k) for j, member in enumerate(call.members) for k, v in enumerate(member.output_values())
                 if v.name in read and v.name not in known)


def _returning(bsym: BoundSymbol, places: tuple[tuple[int, int], ...], registry: NameRegistry | None) -> BoundSymbol:
    """`bsym`, a call kept whole, returning too the values its members make at `places`
    ((member, output) pairs). While it holds the ops it was traced with (renamed or
    not), it returns them as they are; changed by passes since (lowered, a member
    dropped), what it ran is recorded again under fresh names, what it returned
    keeping its names."""
    call = _CALLS[bsym.symbol]
    symbol = _WIDER.get((bsym.symbol, places))
    if symbol is None:
        names = tuple(call.members[j].output_values()[k].name for j, k in places)
        symbol = _WIDER[(bsym.symbol, places)] = _symbol(replace(call, out_names=call.out_names + names))
    members = bsym.subsymbols
    if len(members) == len(call.members) and all(
            now.symbol is then.symbol and len(now.output_values()) == len(then.output_values())
            for now, then in zip(members, call.members, strict=True)):
        inside = [members[j].output_values()[k] for j, k in places]
        return bsym.replace(symbol=symbol, output=(*bsym.output_values(), *inside))
    recorder = Recorder(registry, lambda: "", _NoHints())
    push_handler(recorder.record)
    try:
        symbol(*bsym.args)
    finally:
        pop_handler()
    (again,) = recorder.bsyms
    kept = {new.name: old.name for new, old in zip(again.output_values(), bsym.output_values(), strict=False)}
    return map_bsym(again, renamer(kept)).replace(source=bsym.source, scope=bsym.scope, name_hints=bsym.name_hints)


class _NoHints:
    def note(self, frame, output) -> tuple:
        return ()


def _rule(call: _Call):
    """The call's backward rule: the function's backward recorded again, the call's
    arguments, results and cotangents put in for the values it was traced with."""
    backward = call.backward

    def rule(g, out, *args):
        outs = out if isinstance(out, tuple) else (out,)
        given = g if isinstance(g, tuple) else (g,)
        values = dict(zip(call.arg_names, args, strict=True))
        values.update(zip(call.out_names, outs, strict=True))
        for i, (cotangent, result) in enumerate(zip(backward.cotangents, outs, strict=False)):
            seed = None if i in backward.zeros else given[i]
            values[cotangent.name] = seed if seed is not None else ltorch.zeros_like(result)
        now = replay(backward.recipe, values)
        return tuple(None if grad is None else _as_autograd_takes(now.get(grad.name, grad), arg)
                     for grad, arg in zip(backward.grads, args, strict=True))

    return rule


def _as_autograd_takes(grad: TensorValue, arg) -> TensorValue:
    """A gradient the backward returned, as autograd passes it on: summed down to its
    input's shape when it broadcasts to it, in its input's dtype (a backward under
    autocast returns the low-precision one)."""
    if not isinstance(arg, TensorValue) or not isinstance(grad, TensorValue):
        return grad
    return to_dtype(sum_to(grad, arg.shape), arg.dtype)
