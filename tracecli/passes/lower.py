"""lower: replace bound symbols by their subsymbols, down to prims.

Before:
    t0 = ltorch.mul(x, 1)
      # t0 = prims.mul(x, 1.0)
After:
    t0 = prims.mul(x, 1.0)

A subsymbol has no source line of its own; it inherits its parent's, so the lowered
trace still says which user line each prim came from, and the parent's name hints
for the outputs it produces, so `rename` still works after `lower`.
"""

from __future__ import annotations

import math

from tracecli.core.symbol import BoundSymbol
from tracecli.core.trace import Trace
from tracecli.passes.base import PassResult, register


def _lower(bsyms, depth: float, parent: BoundSymbol | None, out: list[BoundSymbol]) -> int:
    replaced = 0
    for bsym in bsyms:
        if parent is not None:
            bsym = _inherit(bsym, parent)
        if bsym.subsymbols and depth > 0:
            replaced += 1 + _lower(bsym.subsymbols, depth - 1, bsym, out)
        else:
            out.append(bsym)
    return replaced


def _inherit(sub: BoundSymbol, parent: BoundSymbol) -> BoundSymbol:
    """A subsymbol takes its parent's source line, and its parent's name hints for the
    outputs it produces on the parent's behalf."""
    produced = {o.name for o in sub.iter_outputs()}
    hints = sub.name_hints + tuple(h for h in parent.name_hints if h[0] in produced and h not in sub.name_hints)
    return sub.replace(source=sub.source or parent.source, scope=sub.scope or parent.scope, name_hints=hints)


@register("lower", "replace bound symbols by their subsymbols, down to prims (lower:N stops N levels down)")
def lower(trace: Trace, depth: float = math.inf) -> PassResult:
    out: list[BoundSymbol] = []
    replaced = _lower(trace.bsyms, depth, None, out)
    if not replaced:
        return PassResult(trace, False, {"lowered": 0})
    return PassResult(trace.replace(bsyms=tuple(out)), True, {"lowered": replaced})
