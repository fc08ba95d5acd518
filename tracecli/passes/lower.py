"""lower: replace bound symbols by their subsymbols, down to prims.

Before:
    t0 = ltorch.mul(x, 1)
      # t0 = prims.mul(x, 1.0)
After:
    t0 = prims.mul(x, 1.0)

A subsymbol has no source line of its own; it inherits its parent's, so the lowered
trace still says which user line each prim came from, and the parent's name hints
for the outputs it produces, so `rename` still works after `lower`.

A call kept whole (a custom autograd.Function's, core/functions.py) stays: the ops
inside it are lowered, and its gradient is still the function's own backward.

An in-place op on an input (`x.add_(y)`) decomposes into prims that compute its result
out of place; once lowered, the trace ends by writing each such input's last value back
into it (`prims.copy_to(x, t3)`), so the caller sees the same input afterwards.
"""

from __future__ import annotations

import math

from tracecli.core.functions import is_function_call
from tracecli.core.pytree import map_values
from tracecli.core.symbol import BoundSymbol
from tracecli.core.trace import Trace, input_versions, written_inputs
from tracecli.ops import prims
from tracecli.passes.base import PassResult, register


def _lower(bsyms, depth: float, parent: BoundSymbol | None, out: list[BoundSymbol]) -> int:
    replaced = 0
    for bsym in bsyms:
        if parent is not None:
            bsym = _inherit(bsym, parent)
        if is_function_call(bsym):
            # Kept: the call carries the function's own backward. What it ran is lowered
            # as if it stood at this level.
            members: list[BoundSymbol] = []
            inside = _lower(bsym.subsymbols, depth, bsym, members)
            if inside:
                replaced += inside
                bsym = bsym.with_subsymbols(tuple(members))
            out.append(bsym)
        elif bsym.subsymbols and depth > 0:
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


def _depth(text: str) -> dict[str, float]:
    """`lower:N` stops N levels down; `lower:all` (like plain `lower`) goes down to prims."""
    if text == "all":
        return {"depth": math.inf}
    if not text.isdigit():
        raise ValueError("expected a depth: a number or 'all'")
    return {"depth": int(text)}


@register(
    "lower", "replace bound symbols by their subsymbols, down to prims (lower:N stops N levels down)", options=_depth
)
def lower(trace: Trace, depth: float = math.inf) -> PassResult:
    out: list[BoundSymbol] = []
    replaced = _lower(trace.bsyms, depth, None, out)
    if not replaced:
        return PassResult(trace, False, {"lowered": 0})
    lowered = trace.replace(bsyms=tuple(out))
    write_backs = _write_backs(trace, lowered)
    output = lowered.output
    if write_backs:
        # What the program returns of an input it wrote in place (`x.add_(1); return x`)
        # is that input, as in eager, written back: not a copy of its values. So is a
        # `.grad` a step accumulated into in place: the same tensor stays the `.grad`.
        inputs = {v.name: v for v in trace.inputs}
        versions = input_versions(trace)

        def as_input(value):
            return inputs[versions[value.name]] if value.name in versions else value

        output = map_values(as_input, output)
        out = [b.replace(args=map_values(as_input, b.args)) if b.symbol is prims.set_grad else b for b in out]
    return PassResult(lowered.replace(bsyms=(*out, *write_backs), output=output), True, {"lowered": replaced})


def _write_backs(before: Trace, after: Trace) -> list[BoundSymbol]:
    """`prims.copy_to` for each input an in-place op wrote and lowering made functional."""
    still_inplace = set(written_inputs(after).values())
    inputs = {v.name: v for v in before.inputs}
    values = {v.name: v for b in after.bsyms for v in b.output_values()}
    return [
        BoundSymbol(prims.copy_to, (inputs[name], values[final]), (), None, source=None)
        for name, final in written_inputs(before).items()
        if final not in still_inplace and final in values
    ]
