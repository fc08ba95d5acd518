"""renumber: generated names consecutive in order of definition.

Before:                           After:
    t3 = ltorch.linear(...)           t0 = ltorch.linear(...)
    t4 = ltorch.relu(t3)              t1 = ltorch.relu(t0)

Names the user chose (a value's own variable hint) are kept, even `t7`; generated
names are renumbered around them. Top-level values come first, so the trace reads
t0, t1, t2 ... at any --depth; subsymbol intermediates are numbered after them.
"""

from __future__ import annotations

from tracecli.core.names import GENERATED
from tracecli.core.regions import flatten_regions
from tracecli.core.rewrite import map_trace, renamer
from tracecli.core.trace import Trace, walk
from tracecli.passes.base import PassResult, register


@register("renumber", "renumber generated names consecutively in order of definition")
def renumber(trace: Trace) -> PassResult:
    user_named = {out for b in flatten_regions(trace.bsyms) for out, var in b.name_hints if out == var}
    taken = {v.name for v in trace.inputs} | user_named
    counters: dict[str, int] = {}
    names: dict[str, str] = {}
    top_level_first = list(trace.bsyms) + [b for depth, b in walk(trace.bsyms) if depth > 0]
    for bsym in top_level_first:
        for out in bsym.iter_outputs():
            if out.name in names or out.name in user_named or not GENERATED.match(out.name):
                continue
            prefix = out.name[0]
            n = counters.get(prefix, 0)
            while f"{prefix}{n}" in taken:
                n += 1
            counters[prefix] = n + 1
            names[out.name] = f"{prefix}{n}"
            taken.add(names[out.name])
    names = {old: new for old, new in names.items() if old != new}
    if not names:
        return PassResult(trace, False, {"renamed": 0})
    return PassResult(map_trace(trace, renamer(names)), True, {"renamed": len(names)}, dict(names))
