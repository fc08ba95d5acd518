"""renumber: generated names consecutive in order of definition.

Before:                           After:
    t3 = ltorch.linear(...)           t0 = ltorch.linear(...)
    t4 = ltorch.relu(t3)              t1 = ltorch.relu(t0)

Names the user chose (a value's own variable hint) are kept, even `t7`; generated
names are renumbered around them. Top-level values come first, so the trace reads
t0, t1, t2 ... at any --depth; subsymbol intermediates are numbered after them.
Sizes the data decide keep their `u<N>` names in the order they were made, renumbered
as u0, u1, ... once a pass dropped or merged some (`u0, u2` -> `u0, u1`).
"""

from __future__ import annotations

import re

from tracecli.core.names import GENERATED
from tracecli.core.pytree import values_in
from tracecli.core.regions import flatten_regions
from tracecli.core.rewrite import map_trace, renamer
from tracecli.core.symbol import BoundSymbol
from tracecli.core.trace import Trace
from tracecli.core.values import TensorValue
from tracecli.passes.base import PassResult, register


@register("renumber", "renumber generated names consecutively in order of definition")
def renumber(trace: Trace) -> PassResult:
    user_named = {out for b in flatten_regions(trace.bsyms) for out, var in b.name_hints if out == var}
    taken = {v.name for v in trace.inputs} | user_named
    counters: dict[str, int] = {}
    names: dict[str, str] = {}
    generated = GENERATED.match
    for bsym in _top_level_first(trace.bsyms):
        output = bsym.output
        # Most bound symbols have one tensor output (and a subsymbol mostly produces its
        # parent's): no tree to walk, and no pattern to match for a value already seen.
        for out in (output,) if type(output) is TensorValue else values_in(output):
            name = out.name
            if name in names or name in user_named or not generated(name):
                continue
            prefix = name[0]
            n = counters.get(prefix, 0)
            new = f"{prefix}{n}"
            while new in taken:
                n += 1
                new = f"{prefix}{n}"
            counters[prefix] = n + 1
            names[name] = new
            taken.add(new)
    names.update(_counts(trace))
    names = {old: new for old, new in names.items() if old != new}
    if not names:
        return PassResult(trace, False, {"renamed": 0})
    return PassResult(map_trace(trace, renamer(names)), True, {"renamed": len(names)}, names)


_COUNT = re.compile(r"^u(\d+)$")


def _counts(trace: Trace) -> dict[str, str]:
    """u<N> -> u<k>: the unbacked sizes a trace still has, numbered in the order made."""
    sizes = [d.name for d in trace.dims if d.unbacked and _COUNT.match(d.name) and d.hint != d.name]
    if not sizes:
        return {}
    taken = set(trace.names) - set(sizes)
    names = {}
    n = 0
    for old in sizes:
        while f"u{n}" in taken:
            n += 1
        names[old] = f"u{n}"
        n += 1
    return names


def _top_level_first(bsyms) -> list[BoundSymbol]:
    """The top-level bound symbols, then every subsymbol below them in `walk` order."""
    order = list(bsyms)
    for bsym in bsyms:
        parts = bsym.parts
        if type(parts) is not tuple:
            continue  # restated by one primitive: it defines its parent's outputs, no more
        for sub in parts:  # one level written out: most subsymbols have none below
            order.append(sub)
            if sub.parts and type(sub.parts) is tuple:
                _append_below(sub.parts, order)
    return order


def _append_below(subsymbols, order: list[BoundSymbol]) -> None:
    for sub in subsymbols:
        order.append(sub)
        if sub.parts and type(sub.parts) is tuple:
            _append_below(sub.parts, order)
