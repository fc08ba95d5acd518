"""Sizes the data decide (`u0`, `u1`, ...) as passes meet them: which a call makes, what
two equal calls' sizes become when cse merges them, and which a pass left unused.

A call that makes an unbacked size (`t1 = ltorch.nonzero(mask)`, `t1: i64[u0, 2]`) is
pure: the same call on the same values finds the same elements, so two equal ones make
equal sizes. cse keeps the first and substitutes its size for the other's everywhere
(`substitute_sizes`): in types, size arguments, `prims.shape` bindings and facts. Two
bindings of one size may then remain (`(u0,) = prims.shape(t1)` and, from the merged
`u1`, `(u0,) = prims.shape(t9)`): the later one binds nothing new and goes.
"""

from __future__ import annotations

from tracecli.core.dims import Dim, symbols_in
from tracecli.core.pytree import values_in
from tracecli.core.symbol import BoundSymbol
from tracecli.core.trace import Trace, substitute_sizes, walk
from tracecli.core.values import NumberValue, TensorValue
from tracecli.ops import prims


def unbacked_names(trace: Trace) -> frozenset[str]:
    return frozenset(info.name for info in trace.dims if info.unbacked)


def sizes_made(bsym: BoundSymbol, unbacked: frozenset[str]) -> set[str]:
    """The unbacked sizes in `bsym`'s output types that its arguments do not have: the
    ones it makes (at some level of its decomposition)."""
    made = set()
    for out in bsym.output_values():
        if type(out) is TensorValue:
            made |= symbols_in(out.shape) & unbacked
    if not made:
        return made
    for value in bsym.arg_values():
        made -= symbols_in(value.shape if type(value) is TensorValue else value.value)
    return made


def equal_sizes(dup: BoundSymbol, kept: BoundSymbol, unbacked: frozenset[str]) -> dict[str, int | Dim]:
    """The unbacked sizes of `dup`'s outputs with what `kept`'s outputs have in their
    place: equal calls, so equal sizes."""
    found: dict[str, int | Dim] = {}
    for a, b in zip(dup.output_values(), kept.output_values(), strict=True):
        if type(a) is not TensorValue or type(b) is not TensorValue:
            continue
        for da, db in zip(a.shape, b.shape, strict=True):
            name = da.as_symbol() if isinstance(da, Dim) else None
            if name in unbacked and not (isinstance(db, Dim) and db.same(da)):
                found[name] = db
    return found


def merge_sizes(trace: Trace, merged: dict[str, int | Dim]) -> Trace:
    """`trace` with each merged size replaced by the one it equals, everywhere; the
    merged sizes' entries gone from its dims, repeated facts and bindings dropped."""
    resolved = {}
    for name, target in merged.items():
        seen = {name}
        while isinstance(target, Dim) and (inner := target.as_symbol()) in merged and inner not in seen:
            seen.add(inner)
            target = merged[inner]
        resolved[name] = target
    trace = trace.replace(dims=tuple(d for d in trace.dims if d.name not in resolved))
    trace = substitute_sizes(trace, resolved)
    facts, texts = [], set()
    for fact in trace.facts:
        if fact.text() not in texts:
            texts.add(fact.text())
            facts.append(fact)
    return trace.replace(bsyms=_bound_once(trace.bsyms), facts=tuple(facts))


def _bound_once(bsyms) -> tuple[BoundSymbol, ...]:
    """Top-level `prims.shape` bindings without the sizes an earlier one binds: a
    position already bound is discarded (`_`), a binding left with none goes."""
    bound: set[str] = set()
    out = []
    for bsym in bsyms:
        if bsym.symbol is prims.shape:
            sizes = [v for v in values_in(bsym.output) if type(v) is NumberValue]
            if any(v.name in bound for v in sizes):
                if all(v.name in bound for v in sizes):
                    continue
                bsym = bsym.replace(output=tuple(
                    None if type(v) is NumberValue and v.name in bound else v for v in bsym.output))
            bound.update(v.name for v in sizes)
        out.append(bsym)
    return tuple(out)


def prune_unbacked(trace: Trace) -> Trace:
    """`trace` without the dims entries (header lines) of unbacked sizes that no type,
    size argument or fact uses any more (a pass dropped or merged what made them)."""
    unbacked = unbacked_names(trace)
    if not unbacked:
        return trace
    used = set()
    for fact in trace.facts:
        used |= symbols_in((fact.lhs, fact.rhs))
    for value in trace.inputs:
        if type(value) is TensorValue:
            used |= symbols_in(value.shape)
    for _, bsym in walk(trace.bsyms):
        for value in (*bsym.arg_values(), *bsym.output_values()):
            used |= symbols_in(value.shape if type(value) is TensorValue else value.value)
        used |= symbols_in(bsym.args)
        if unbacked <= used:
            return trace
    unused = unbacked - used
    if not unused:
        return trace
    return trace.replace(dims=tuple(d for d in trace.dims if d.name not in unused))


__all__ = ["equal_sizes", "merge_sizes", "prune_unbacked", "sizes_made", "unbacked_names"]
