"""Name registry: hands out legal, unique identifiers within one trace.

A trace's names are the ones it defines (`Trace.names`, derived from its values); a
pass that needs new names starts a registry seeded from them, so traces never share a
mutable set and a name frees once nothing defines it.
"""

from __future__ import annotations

import keyword
import re

# Names the generated code needs for itself: a value may never shadow them.
# `inductor` is the namespace of fusion regions (core/regions.py).
RESERVED = frozenset({"torch", "ltorch", "prims", "inductor", "math", "inf", "nan"})

_NOT_IDENT = re.compile(r"\W")
GENERATED = re.compile(r"^[tifb](\d+)$")


def sanitize(hint: str) -> str:
    """Turn any hint (`fc1.weight`, `0`, `class`) into a Python identifier."""
    name = _NOT_IDENT.sub("_", hint) or "_"
    if name[0].isdigit():
        name = "_" + name
    if keyword.iskeyword(name) or name in RESERVED:
        name += "_"
    return name


class NameRegistry:
    def __init__(self, taken: frozenset[str] | set[str] = frozenset()):
        self._taken: set[str] = set(taken)
        self._next: dict[str, int] = {}

    def __contains__(self, name: str) -> bool:
        return name in self._taken

    def fresh(self, prefix: str = "t") -> str:
        """The next unused generated name: t0, t1, ..."""
        n = self._next.get(prefix, 0)
        taken = self._taken
        name = f"{prefix}{n}"
        while name in taken:
            n += 1
            name = f"{prefix}{n}"
        self._next[prefix] = n + 1
        taken.add(name)
        return name

    def take(self, hint: str) -> str:
        """`hint` made legal, suffixed `_1`, `_2`, ... while taken."""
        base = sanitize(hint)
        name = base
        n = 0
        while name in self._taken:
            n += 1
            name = f"{base}_{n}"
        self._taken.add(name)
        return name

    def frozen(self) -> frozenset[str]:
        return frozenset(self._taken)
