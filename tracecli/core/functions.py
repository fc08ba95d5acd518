"""Calls kept whole: a user's function traced as one bound symbol.

A custom `torch.autograd.Function` (frontend/custom_functions.py) is the user's own
code, run by torch as one step with a backward of its own. The trace keeps its call as
one bound symbol named for it, its subsymbols the ops its forward ran:

    t13 = GeLUFunction_apply(t3)  # t13: "cpu f32[3, 4]"
      # t4 = ltorch.mul(t3, 0.5)  # t4: "cpu f32[3, 4]"
      ...

Its symbol (tagged FUNCTION) has no torch implementation: the generated code runs the
subsymbols in its place, as they stand after every pass, so what is printed is what
runs. Its arguments are every value the subsymbols read from outside (the tensors the
function was given first, in order), so it is a function of its arguments as any call
is. `lower` keeps the call and lowers what is inside it: its gradient is the function's
own backward, which only the call carries. `examine` counts the ops inside it, and the
executors see them as the calls they run.
"""

from __future__ import annotations

from collections.abc import Iterator

from tracecli.core.symbol import BoundSymbol, Tag
from tracecli.core.trace import Trace
from tracecli.core.values import TensorValue


def is_function_call(bsym: BoundSymbol) -> bool:
    tags = bsym.symbol.tags
    return bool(tags) and Tag.FUNCTION in tags


def flatten_calls(bsyms) -> Iterator[BoundSymbol]:
    """The calls that run: each region and each call kept whole replaced by its members,
    at every level."""
    for bsym in bsyms:
        tags = bsym.symbol.tags
        if tags and (Tag.REGION in tags or Tag.FUNCTION in tags):
            yield from flatten_calls(bsym.subsymbols)
        else:
            yield bsym


def inlined(bsyms) -> tuple[BoundSymbol, ...]:
    """`bsyms` with each call kept whole replaced by its subsymbols (at every level),
    which keep the call's line where they have none of their own."""
    out: list[BoundSymbol] = []
    for bsym in bsyms:
        if is_function_call(bsym):
            out.extend(sub.replace(source=sub.source or bsym.source, scope=sub.scope or bsym.scope)
                       for sub in inlined(bsym.subsymbols))
        else:
            out.append(bsym)
    return tuple(out)


def internal_tensors(bsym: BoundSymbol) -> list[str]:
    """The tensors the call's subsymbols make that it does not return: what the
    generated code frees once they have run."""
    returned = {v.name for v in bsym.output_values()}
    return [v.name for sub in bsym.subsymbols for v in sub.output_values()
            if type(v) is TensorValue and v.name not in returned]


def function_trace(bsym: BoundSymbol, name: str, taken: set[str] | frozenset[str]) -> Trace:
    """The call as a function of its own (what a saved file defines for it): its
    parameters its arguments, a value given twice taking a spare name the second time."""
    params: list = []
    seen: set[str] = set()
    spare = 0
    for value in bsym.arg_values():
        if value.name in seen:
            while f"_unused{spare}" in taken:
                spare += 1
            value = value.renamed(f"_unused{spare}")
            spare += 1
        seen.add(value.name)
        params.append(value)
    return Trace(name, tuple(params), bsym.subsymbols, bsym.output)

