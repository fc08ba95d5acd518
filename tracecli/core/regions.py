"""Fusion regions: one bound symbol standing for several, compiled as one.

A region is a bound symbol of a symbol made for it (`inductor.fusion0`): its subsymbols
are its members, in the order they run; its arguments are the values the members read
from outside (the size symbols they use included, so the region is a function of its
arguments alone); its outputs are the member outputs read after it. It is pure and has
no rule of its own: the verifier checks each member, and that each member may be fused.

Executors run a region as the function `region_trace` spells: the torch executor runs
its members one by one, an executor that fuses compiles that function.
"""

from __future__ import annotations

from collections.abc import Iterator

from tracecli.core.symbol import EFFECT_TAGS, BoundSymbol, Symbol, Tag
from tracecli.core.trace import Trace, sizes_read, walk

# Members are modelled operations: what an opaque call does is unknown to whoever fuses.
MODELLED = frozenset({"ltorch", "prims"})


# The namespace of a traced `loss.backward()`'s region (frontend/training.py): its members
# are the gradients' computation, which may call opaque backwards; it runs as one function
# like a fusion region, and prints as a function of its own after the trace.
BACKWARD = "autograd"


def region_symbol(name: str, namespace: str = "inductor") -> Symbol:
    """A symbol for one region: `namespace` is the executor it is fused for."""
    return Symbol(name, namespace, tags=frozenset({Tag.REGION}), doc="a fusion region: its subsymbols run as one")


def is_region(bsym: BoundSymbol) -> bool:
    return Tag.REGION in bsym.symbol.tags


def is_backward(bsym: BoundSymbol) -> bool:
    """Whether `bsym` is the region of a traced backward() call."""
    # The namespace first: the printer asks of every bound symbol, and few are regions.
    return bsym.symbol.namespace == BACKWARD and Tag.REGION in bsym.symbol.tags


def backward_regions(trace: Trace) -> list[BoundSymbol]:
    return [b for b in trace.bsyms if is_backward(b)]


def backward_trace(trace: Trace) -> Trace | None:
    """A training step's backward as a trace of its own (every backward region's
    members, in order): what `--show backward` and its diff show. None without one."""
    regions = backward_regions(trace)
    if not regions:
        return None
    if len(regions) == 1:
        region = regions[0]
        return Trace(f"{trace.name}_backward", tuple(region.arg_values()), region.subsymbols, region.output,
                     info=trace.info, dims=trace.dims)
    made = {v.name for r in regions for m in r.subsymbols for v in m.output_values()}
    inputs = {v.name: v for r in regions for v in r.arg_values() if v.name not in made}
    return Trace(f"{trace.name}_backward", tuple(inputs.values()), tuple(m for r in regions for m in r.subsymbols),
                 tuple(r.output for r in regions), info=trace.info, dims=trace.dims)


def region_trace(bsym: BoundSymbol) -> Trace:
    """The region as a function of its own: what an executor compiles."""
    return Trace(bsym.symbol.name, tuple(bsym.arg_values()), bsym.subsymbols, bsym.output)


def flatten_regions(bsyms) -> Iterator[BoundSymbol]:
    """The top-level bound symbols with each region replaced by its members: the calls
    the user's lines made, for passes that read their name hints."""
    for bsym in bsyms:
        # Most symbols have no tags at all: that case skips the lookup. Passes read the
        # hints of every top-level call through here.
        tags = bsym.symbol.tags
        if tags and Tag.REGION in tags:
            yield from flatten_regions(bsym.subsymbols)
        else:
            yield bsym


def outside_arguments(members, sizes: dict | None = None) -> dict[str, object]:
    """The values `members` read that none of them makes, by name, in the order first
    read: a region's arguments. With `sizes` (name -> the size value bound at the top
    level), the size symbols they use too."""
    produced: set[str] = set()
    args: dict[str, object] = {}
    for member in members:
        for value in member.arg_values():
            if value.name not in produced:
                args.setdefault(value.name, value)
        for name in sorted(sizes_read(member)) if sizes is not None else ():
            args.setdefault(name, sizes[name])
        produced.update(o.name for o in member.output_values())
    return args


def outside_reads(members) -> set[str]:
    """The names of the values (and size symbols) `members` read that none of them makes."""
    made: set[str] = set()
    read: set[str] = set()
    for member in members:
        read.update(v.name for v in member.arg_values() if v.name not in made)
        read.update(n for n in sizes_read(member) if n not in made)
        made.update(v.name for v in member.output_values())
    return read


def region_problem(bsym: BoundSymbol) -> str | None:
    """Why `bsym`, a region, holds a member it may not, or None."""
    if bsym.kwargs:
        return f"region {bsym.symbol.qualname} takes keyword arguments"
    names = [v.name for v in bsym.arg_values()]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        return f"region {bsym.symbol.qualname} takes {', '.join(twice)} twice: its function would name a parameter twice"
    for member in bsym.subsymbols:
        if is_backward(bsym) and not is_region(member):
            continue  # a backward may call opaque backwards, and its members never have effects
        if member.symbol.namespace not in MODELLED or is_region(member):
            return f"region {bsym.symbol.qualname} holds {member.symbol.qualname}, which is not a modelled operation"
        for _, sub in walk([member]):
            if sub.symbol.tags & EFFECT_TAGS:
                return f"region {bsym.symbol.qualname} holds {sub.symbol.qualname}, which has effects"
    return None
