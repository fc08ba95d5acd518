"""dce: drop what nothing uses, at the top level and inside subsymbols.

Before:
    t0 = ltorch.sin(x)                <- nothing reads t0
    t3 = ltorch.mul(x, 2.0)
      # t1 = prims.abs(x)             <- dead subsymbol (left by an earlier rewrite)
      # t3 = prims.mul(x, 2.0)
    return t3
After:
    t3 = ltorch.mul(x, 2.0)
      # t3 = prims.mul(x, 2.0)
    return t3

Inside subsymbols it also collapses duplicates: a pure subsymbol with the same symbol
and arguments as an earlier one is replaced by it (a decomposition that computes one
thing twice, such as the repeated shape reads and comparisons of a trace compiler's
symbolic-value mode); when the duplicate produces the parent's result, the earlier one
takes over its name. Calls reading or producing a value that an INPLACE
call overwrites are not duplicates. Bound symbols tagged CHECK, SIDE_EFFECT, RANDOM or
INPLACE, or holding such a subsymbol, are never dropped.

Sizes the data decide: a call that makes one (`t1 = ltorch.nonzero(mask)`, `i64[u0, 2]`)
is dropped like any other when nothing reads it, and kept when something does, the
`(u0, _) = prims.shape(t1)` that binds a size a kept call reads at any depth included
(the binding reads `t1`). Then the size is gone from every type, and its header line
with it. A subsymbol that makes one is never collapsed into an equal one: the sizes
would differ in name, and a decomposition has no binding to merge them with (cse
merges equal top-level calls, sizes and all).
"""

from __future__ import annotations

from tracecli.core.regions import is_backward, outside_reads
from tracecli.core.rewrite import map_bsym, renamer, substituter
from tracecli.core.symbol import BoundSymbol
from tracecli.core.trace import Trace, sizes_read
from tracecli.passes.base import PassResult, register
from tracecli.passes.effects import has_effect, mergeable, overwritten
from tracecli.passes.keys import call_key
from tracecli.passes.sizes import prune_unbacked, sizes_made, unbacked_names


class _Counts:
    def __init__(self):
        self.removed = 0
        self.subsymbols_removed = 0
        self.collapsed = 0
        # Collapsed duplicates are merged values: old name -> the name of the value
        # that now stands for it, as cse reports its merges, so diffs show identity.
        self.value_map: dict[str, str] = {}


def _collapse_duplicates(subsymbols, parent_outputs: set[str], counts: _Counts,
                         unbacked: frozenset[str] = frozenset()) -> list[BoundSymbol]:
    seen: dict[tuple, BoundSymbol] = {}
    env: dict = {}
    out: list[BoundSymbol] = []
    mutated = overwritten(subsymbols)
    # first occurrence's output name -> the parent result a duplicate of it produced
    takeover: dict[str, str] = {}
    for sub in subsymbols:
        if env:
            sub = map_bsym(sub, substituter(env), env)
        if not mergeable(sub, mutated) or (unbacked and sizes_made(sub, unbacked)):
            out.append(sub)
            continue
        outputs = list(sub.iter_outputs())
        key = call_key(sub)
        first = seen.get(key)
        if first is None:
            seen[key] = sub
            out.append(sub)
            continue
        first_outputs = list(first.iter_outputs())
        if any(o.name in parent_outputs for o in outputs):
            # The parent is defined by this duplicate's names. Keeping it would leave the
            # value computed twice (when the first occurrence is still read, e.g. by a
            # check); instead the first occurrence takes over these names below. Two
            # results of the parent that are equal both stay: each needs its own name.
            if any(o.name in parent_outputs or o.name in takeover for o in first_outputs):
                out.append(sub)
                continue
            takeover.update((kept.name, dup.name) for kept, dup in zip(first_outputs, outputs, strict=True))
        for dup, kept in zip(outputs, first_outputs, strict=True):
            env[dup.name] = kept
        counts.collapsed += 1
    if takeover:
        rename = renamer(takeover)
        out = [map_bsym(sub, rename, takeover) for sub in out]
    for dup, kept in env.items():
        target = takeover.get(kept.name, kept.name)
        if target != dup:
            counts.value_map[dup] = target
    counts.value_map.update(takeover)
    return out


def _sweep(bsyms, live: set[str], counts: _Counts, top_level: bool, symbolic: bool = False,
           unbacked: frozenset[str] = frozenset()) -> list[BoundSymbol]:
    """One backward walk: keep what is live or pinned, recurse into what is kept. In a
    symbolic trace a kept call's size reads, at any depth, keep their `prims.shape`."""
    kept: list[BoundSymbol] = []
    for bsym in reversed(bsyms):
        outputs = [o.name for o in bsym.iter_outputs()]
        if not has_effect(bsym) and not any(name in live for name in outputs):
            if top_level:
                counts.removed += 1
            else:
                counts.subsymbols_removed += 1
            continue
        if bsym.parts and type(bsym.parts) is tuple:  # one primitive restating a call has nothing to drop
            subs = _collapse_duplicates(bsym.subsymbols, set(outputs), counts, unbacked)
            subs = _sweep(subs, set(outputs), counts, top_level=False, unbacked=unbacked)
            if len(subs) != len(bsym.subsymbols) or any(a is not b for a, b in zip(subs, bsym.subsymbols, strict=False)):
                bsym = bsym.with_subsymbols(tuple(subs))
                if is_backward(bsym):
                    # A backward is a function of its arguments: one no member reads any more
                    # (what only a gradient nobody asked for needed) need not be kept alive for it.
                    read = outside_reads(subs)
                    bsym = bsym.replace(args=tuple(a for a in bsym.args if a.name in read))
        live.update(v.name for v in bsym.iter_args())
        if symbolic:
            live.update(sizes_read(bsym))
        kept.append(bsym)
    kept.reverse()
    return kept


@register("dce", "drop unused bound symbols and subsymbols, collapse duplicated pure subsymbols")
def dce(trace: Trace) -> PassResult:
    counts = _Counts()
    live = {v.name for v in trace.iter_outputs()}
    unbacked = unbacked_names(trace)
    bsyms = _sweep(trace.bsyms, live, counts, top_level=True, symbolic=bool(trace.dims), unbacked=unbacked)
    stats = {"removed": counts.removed, "subsymbols_removed": counts.subsymbols_removed, "collapsed": counts.collapsed}
    if not any(stats.values()):
        return PassResult(trace, False, stats)
    result = trace.replace(bsyms=tuple(bsyms))
    return PassResult(prune_unbacked(result) if unbacked else result, True, stats, counts.value_map)
