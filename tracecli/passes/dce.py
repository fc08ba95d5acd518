"""dce: drop what nothing uses, at the top level and inside subsymbols.

Before:
    t0 = ltorch.sin(x)
    t1 = ltorch.cos(x)
      # i0 = prims.ne(alpha, 1)       <- dead subsymbol
      # t1 = prims.cos(x)
    return t1
After:
    t1 = ltorch.cos(x)
      # t1 = prims.cos(x)
    return t1

Inside subsymbols it also collapses duplicates: a pure subsymbol with the same symbol
and arguments as an earlier one is replaced by it (the repeated `prims.shape` /
`prims.eq` of symbolic-value traces). Bound symbols tagged CHECK, SIDE_EFFECT, RANDOM or
INPLACE, or holding such a subsymbol, are never dropped.
"""

from __future__ import annotations

from tracecli.core.symbol import EFFECT_TAGS, BoundSymbol
from tracecli.core.trace import Trace, collect_names
from tracecli.passes.base import PassResult, register
from tracecli.passes.keys import call_key
from tracecli.passes.rewrite import map_bsym, substituter


def has_effect(bsym: BoundSymbol) -> bool:
    """Effects are pinned: in the symbol's own tags or anywhere in its decomposition."""
    if bsym.symbol.tags & EFFECT_TAGS:
        return True
    return any(has_effect(s) for s in bsym.subsymbols)


class _Counts:
    def __init__(self):
        self.removed = 0
        self.subsymbols_removed = 0
        self.collapsed = 0


def _collapse_duplicates(subsymbols, parent_outputs: set[str], counts: _Counts) -> list[BoundSymbol]:
    seen: dict[tuple, BoundSymbol] = {}
    env: dict = {}
    out: list[BoundSymbol] = []
    for sub in subsymbols:
        if env:
            sub = map_bsym(sub, substituter(env), env)
        outputs = list(sub.iter_outputs())
        # A duplicate that produces the parent's result keeps its name: the parent is defined by it.
        if has_effect(sub) or not outputs or any(o.name in parent_outputs for o in outputs):
            out.append(sub)
            continue
        key = call_key(sub)
        first = seen.get(key)
        if first is None:
            seen[key] = sub
            out.append(sub)
            continue
        for dup, kept in zip(outputs, first.iter_outputs(), strict=True):
            env[dup.name] = kept
        counts.collapsed += 1
    return out


def _sweep(bsyms, live: set[str], counts: _Counts, top_level: bool) -> list[BoundSymbol]:
    """One backward walk: keep what is live or pinned, recurse into what is kept."""
    kept: list[BoundSymbol] = []
    for bsym in reversed(bsyms):
        outputs = [o.name for o in bsym.iter_outputs()]
        if not has_effect(bsym) and not any(name in live for name in outputs):
            if top_level:
                counts.removed += 1
            else:
                counts.subsymbols_removed += 1
            continue
        if bsym.subsymbols:
            subs = _collapse_duplicates(bsym.subsymbols, set(outputs), counts)
            subs = _sweep(subs, set(outputs), counts, top_level=False)
            if len(subs) != len(bsym.subsymbols) or any(a is not b for a, b in zip(subs, bsym.subsymbols, strict=False)):
                bsym = bsym.with_subsymbols(tuple(subs))
        live.update(v.name for v in bsym.iter_args())
        kept.append(bsym)
    kept.reverse()
    return kept


@register("dce", "drop unused bound symbols and subsymbols, collapse duplicated pure subsymbols")
def dce(trace: Trace) -> PassResult:
    counts = _Counts()
    live = {v.name for v in trace.iter_outputs()}
    bsyms = _sweep(trace.bsyms, live, counts, top_level=True)
    stats = {"removed": counts.removed, "subsymbols_removed": counts.subsymbols_removed, "collapsed": counts.collapsed}
    if not any(stats.values()):
        return PassResult(trace, False, stats)
    names = frozenset(collect_names(trace.inputs, bsyms))
    return PassResult(trace.replace(bsyms=tuple(bsyms), names=names), True, stats)
