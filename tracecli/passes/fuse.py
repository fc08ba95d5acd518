"""fuse: gather runs of fusible calls into regions that an executor compiles as one.

Before:
    t0 = ltorch.mul(x, y)
    t1 = ltorch.rand((3,), ...)       <- RANDOM: never fused, but nothing here reads it
    t2 = ltorch.exp(t0)
    t3 = ltorch.add(t2, t1)           <- reads t1, defined after the region starts
    return (t1, t2, t3)
After:
    t2 = inductor.fusion0(x, y)
      # t0 = ltorch.mul(x, y)
      # t2 = ltorch.exp(t0)
    t1 = ltorch.rand((3,), ...)
    t3 = ltorch.add(t2, t1)
    return (t1, t2, t3)

A call is fusible when it is modelled (ltorch or prims), pure at every level (no RANDOM,
SIDE_EFFECT, CHECK or INPLACE call in its decomposition) and returns tensors only. A
region runs where its first member did, so a fusible call joins the open region when
everything it reads was defined before that point or by a member: it may pass over
calls that do not feed it (the `rand` above), which then run after the region and may
read its results. Opaque calls and calls that write, check or act on the world end the
region: nothing moves across them. When the trace writes anything in place, views are
not fused at all, so a write through a view never meets a copy made by a compiler.

A region's arguments are what its members read from outside (with the size symbols
they use, in a symbolic trace), its outputs only the member results read after it.
A call that makes a size the data decide (`nonzero`, `x[mask]`) is fusible like any
other: inductor compiles such a region as one graph, the count captured
(executors/inductor.py), and runs one it cannot compile as generated, saying so. Its
size is bound after the region, from an output, before anything reads it: a member never
reads a size a member makes, so a region never takes a size it makes. A
region of one call, or one whose results nothing reads (dead code, for dce), is left
as it was. `fuse:inductor` names the executor the regions
are for (their namespace); `inductor` is the only one so far, and the default.
"""

from __future__ import annotations

from tracecli.core.regions import MODELLED, is_region, outside_arguments, region_symbol
from tracecli.core.symbol import BoundSymbol, Tag
from tracecli.core.trace import Trace, sizes_read, walk
from tracecli.core.values import NumberValue, TensorValue
from tracecli.passes.base import PassResult, register
from tracecli.passes.effects import has_effect, overwritten

FUSERS = ("inductor",)
MIN_MEMBERS = 2  # one call is not worth a region
# Effects that pin the order of everything around them.
_BARRIER_TAGS = frozenset({Tag.INPLACE, Tag.SIDE_EFFECT, Tag.CHECK})


def _fusible(bsym: BoundSymbol, views: bool, sizes: dict[str, NumberValue] | None) -> bool:
    sym = bsym.symbol
    if sym.namespace not in MODELLED or is_region(bsym) or has_effect(bsym):
        return False
    if Tag.VIEW in sym.tags and not views:
        return False
    outputs = bsym.output_values()
    if not outputs or any(type(o) is not TensorValue for o in outputs):
        return False
    # In a symbolic trace, a size bound below the top level could not be given to the region.
    return sizes is None or not sizes_read(bsym) - sizes.keys()


def _barrier(bsym: BoundSymbol) -> bool:
    if bsym.symbol.namespace not in MODELLED and not is_region(bsym):
        return True  # opaque: what it touches is unknown
    return any(sub.symbol.tags & _BARRIER_TAGS for _, sub in walk([bsym]))


OUTSIDE = -1  # in `_groups`' readers: a plain call or the return reads the value, or several groups do


def _groups(trace: Trace, sizes: dict[str, NumberValue] | None) -> tuple[list[list[int]], dict[str, int]]:
    """Indices of the members of each candidate region, in order (single calls too), and
    for each value read, the one candidate that reads it, or OUTSIDE."""
    views = not overwritten(trace.bsyms)
    defined_at = {v.name: -1 for v in trace.inputs}  # name -> index of the call defining it
    groups: list[list[int]] = []
    readers: dict[str, int] = {}
    current: list[int] = []
    produced: set[str] = set()  # what the open candidate's members define
    for i, bsym in enumerate(trace.bsyms):
        args = [v.name for v in bsym.arg_values()]
        group = OUTSIDE
        if _fusible(bsym, views, sizes):
            start = current[0] if current else i
            reads = args + list(sizes_read(bsym)) if sizes is not None else args
            if current and all(n in produced or defined_at.get(n, -1) < start for n in reads):
                current.append(i)
            else:
                current = [i]
                produced = set()
                groups.append(current)
            produced.update(o.name for o in bsym.output_values())
            group = len(groups) - 1
        elif _barrier(bsym):
            current = []
        for name in args:
            readers[name] = group if readers.get(name, group) == group else OUTSIDE
        for out in bsym.output_values():
            defined_at[out.name] = i
    for value in trace.iter_outputs():
        readers[value.name] = OUTSIDE
    return groups, readers


def _read_after(name: str, group: int, readers: dict[str, int]) -> bool:
    return readers.get(name, group) != group


def _region(members: list[BoundSymbol], index: int, group: int, readers: dict[str, int], namespace: str,
            sizes: dict[str, NumberValue] | None) -> BoundSymbol:
    args = outside_arguments(members, sizes)
    outputs = [o for m in members for o in m.output_values() if _read_after(o.name, group, readers)]
    output = outputs[0] if len(outputs) == 1 else tuple(outputs)
    scopes = {m.scope for m in members}
    return BoundSymbol(
        region_symbol(f"fusion{index}", namespace), tuple(args.values()), (), output, tuple(members),
        source=members[0].source, scope=scopes.pop() if len(scopes) == 1 else "",
    )


def _namespace(text: str) -> dict[str, str]:
    if text not in FUSERS:
        raise ValueError(f"expected the executor to fuse for: {', '.join(FUSERS)}")
    return {"namespace": text}


@register("fuse", "gather runs of fusible calls into regions compiled as one (fuse:inductor)", options=_namespace)
def fuse(trace: Trace, namespace: str = "inductor") -> PassResult:
    if namespace in trace.names:
        # A value of that name would hide the regions' namespace from the generated code.
        return PassResult(trace, False, {"regions": 0, "fused": 0})
    # Size symbols bound at the top level (a symbolic trace's `prims.shape`); None: no sizes.
    sizes = {o.name: o for b in trace.bsyms for o in b.output_values() if type(o) is NumberValue and o.is_size} \
        if trace.dims else None
    candidates, readers = _groups(trace, sizes)
    # Candidate number -> members, for those worth a region and read after it.
    groups = {
        k: g for k, g in enumerate(candidates)
        if len(g) >= MIN_MEMBERS and any(_read_after(o.name, k, readers) for i in g for o in trace.bsyms[i].output_values())
    }
    if not groups:
        return PassResult(trace, False, {"regions": 0, "fused": 0})
    fused_at = {i for g in groups.values() for i in g}
    # Numbered after the regions the trace already has (fused before, for another run).
    taken = {b.symbol.name for b in trace.bsyms if is_region(b)}
    numbers = (n for n in range(len(taken) + len(groups) + 1) if f"fusion{n}" not in taken)
    firsts = {group[0]: k for k, group in groups.items()}
    bsyms: list[BoundSymbol] = []
    for i, bsym in enumerate(trace.bsyms):
        k = firsts.get(i)
        if k is not None:
            members = [trace.bsyms[j] for j in groups[k]]
            bsyms.append(_region(members, next(numbers), k, readers, namespace, sizes))
        elif i not in fused_at:
            bsyms.append(bsym)
    fused = sum(len(g) for g in groups.values())
    return PassResult(trace.replace(bsyms=tuple(bsyms)), True, {"regions": len(groups), "fused": fused})
