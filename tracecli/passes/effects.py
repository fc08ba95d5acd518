"""Which bound symbols a pass may drop or merge: the effect rules dce and cse share.

A bound symbol whose symbol, or any subsymbol of its decomposition, is tagged CHECK,
SIDE_EFFECT, RANDOM or INPLACE (`EFFECT_TAGS`) is pinned: it is never dropped, even when
nothing reads its outputs, and never merged with an equal call. Two calls with equal
keys are not duplicates either when one of them reads or produces a value that an
INPLACE call overwrites: they may see different data.
"""

from __future__ import annotations

from tracecli.core.rewrite import touches
from tracecli.core.symbol import EFFECT_TAGS, BoundSymbol, Tag


def has_effect(bsym: BoundSymbol) -> bool:
    """Effects are pinned: in the symbol's own tags or anywhere in its decomposition."""
    if bsym.symbol.tags & EFFECT_TAGS:
        return True
    # `parts` read as it is, not through `restated_by`: this runs for every bound symbol
    # a dce or cse pass meets.
    parts = bsym.parts
    if type(parts) is not tuple:
        return bool(parts.tags & EFFECT_TAGS)  # restated by one primitive: its tags say
    return any(has_effect(s) for s in parts)


def overwritten(bsyms) -> set[str]:
    """Names an INPLACE call writes to, at any level. Two calls with equal keys that read
    or produce such a value may see different data, and merging them would alias a value
    with one that is later overwritten: neither dce nor cse may treat them as duplicates."""
    names: set[str] = set()
    stack = list(bsyms)  # order does not matter: a plain stack is cheaper than `walk`
    while stack:
        bsym = stack.pop()
        parts = bsym.parts
        restated = type(parts) is not tuple  # by one primitive, on the call's own arguments
        if Tag.INPLACE in bsym.symbol.tags or (restated and Tag.INPLACE in parts.tags):
            names.update(v.name for v in bsym.arg_values())
        if not restated:
            stack.extend(parts)
    return names


def mergeable(bsym: BoundSymbol, mutated: set[str]) -> bool:
    """Whether `bsym` may be merged with an equal call (cse) or collapsed into one (dce):
    pure, with outputs, and touching no value an in-place call overwrites (`mutated`,
    from `overwritten`)."""
    if has_effect(bsym) or not bsym.output_values():
        return False
    return not (mutated and touches(bsym, mutated))
