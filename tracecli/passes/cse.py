"""cse: merge pure bound symbols that compute the same thing.

Before:
    t0 = ltorch.mul(x, y)   # hint: a
    t2 = ltorch.mul(x, y)   # hint: c
    t5 = ltorch.mul(t2, t3)
After:
    t0 = ltorch.mul(x, y)   # hints: a, c
    t5 = ltorch.mul(t0, t3)

Arguments are compared after substitution, so chains of duplicates merge in one walk.
RANDOM and SIDE_EFFECT symbols (and anything whose decomposition holds one) are never
merged, nor calls that read or produce a value an INPLACE call overwrites. The survivor
inherits the merged values' name hints, so `rename` still gives it a user's name when
any of them had one.

Two equal calls that make sizes the data decide (`nonzero(mask)` twice) merge too: the
same data gives the same count, so the duplicate's `u1` becomes the survivor's `u0` in
every type, size argument, binding and fact, and its header line goes (passes/sizes.py).
"""

from __future__ import annotations

from tracecli.core.dims import Dim
from tracecli.core.pytree import map_values
from tracecli.core.rewrite import map_bsym, substituter
from tracecli.core.symbol import BoundSymbol
from tracecli.core.trace import Trace
from tracecli.passes.base import PassResult, register
from tracecli.passes.effects import mergeable, overwritten
from tracecli.passes.keys import call_key
from tracecli.passes.sizes import equal_sizes, merge_sizes, prune_unbacked, unbacked_names


@register("cse", "merge pure bound symbols with the same symbol and arguments (never random ones)")
def cse(trace: Trace) -> PassResult:
    env: dict = {}  # merged value name -> surviving value
    survivors: dict[tuple, int] = {}  # call key -> index in `out`
    out: list[BoundSymbol] = []
    merged = 0
    replace = substituter(env)
    # `sin(x)` before and after `x.mul_(2)` differ, and a value merged with one that is
    # later overwritten would change too: leave everything touching those values alone.
    mutated = overwritten(trace.bsyms)
    unbacked = unbacked_names(trace)
    sizes: dict = {}  # merged unbacked size -> the survivor's size in its place
    for bsym in trace.bsyms:
        if env:
            bsym = map_bsym(bsym, replace, env)
        if not mergeable(bsym, mutated):
            out.append(bsym)
            continue
        outputs = list(bsym.iter_outputs())
        key = call_key(bsym)
        at = survivors.get(key)
        if at is None:
            survivors[key] = len(out)
            out.append(bsym)
            continue
        survivor = out[at]
        if unbacked:
            sizes.update(equal_sizes(bsym, survivor, unbacked))
        renames = {}
        for dup, kept in zip(outputs, survivor.iter_outputs(), strict=True):
            env[dup.name] = kept
            renames[dup.name] = kept.name
        extra = tuple((renames[o], var) for o, var in bsym.name_hints if o in renames)
        if extra:
            out[at] = survivor.replace(name_hints=survivor.name_hints + extra)
        merged += 1
    if not merged:
        return PassResult(trace, False, {"merged": 0})
    output = map_values(replace, trace.output)
    value_map = {old: new.name for old, new in env.items()}
    result = trace.replace(bsyms=tuple(out), output=output)
    if unbacked:
        if sizes:
            result = merge_sizes(result, sizes)
            # A merged binding's value is now named as its survivor's size.
            value_map = {old: _size_name(new, sizes) for old, new in value_map.items()}
            value_map.update((old, new.as_symbol()) for old, new in sizes.items() if isinstance(new, Dim))
            value_map = {old: new for old, new in value_map.items() if old != new}
        result = prune_unbacked(result)
    return PassResult(result, True, {"merged": merged}, value_map)


def _size_name(name: str, sizes: dict) -> str:
    target = sizes.get(name)
    return target.as_symbol() or name if isinstance(target, Dim) else name
