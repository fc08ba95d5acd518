"""lower: replace bound symbols by their subsymbols, down to prims.

Before:
    t0 = ltorch.mul(x, 1)
      # t0 = prims.mul(x, 1.0)
After:
    t0 = prims.mul(x, 1.0)

A subsymbol has no source line of its own; it inherits its parent's, so the lowered
trace still says which user line each prim came from.
"""

from __future__ import annotations

import math

from tracecli.core.symbol import BoundSymbol
from tracecli.core.trace import Trace
from tracecli.passes.base import PassResult, register


def _lower(bsyms, depth: float, parent: BoundSymbol | None, out: list[BoundSymbol]) -> int:
    replaced = 0
    for bsym in bsyms:
        if parent is not None and bsym.source is None:
            bsym = bsym.replace(source=parent.source, scope=parent.scope)
        if bsym.subsymbols and depth > 0:
            replaced += 1 + _lower(bsym.subsymbols, depth - 1, bsym, out)
        else:
            out.append(bsym)
    return replaced


@register("lower", "replace bound symbols by their subsymbols, down to prims (--depth limits it)")
def lower(trace: Trace, depth: float = math.inf) -> PassResult:
    out: list[BoundSymbol] = []
    replaced = _lower(trace.bsyms, depth, None, out)
    if not replaced:
        return PassResult(trace, False, {"lowered": 0})
    return PassResult(trace.after_pass("lower", bsyms=tuple(out)), True, {"lowered": replaced})
