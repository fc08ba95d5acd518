"""Which calls of a VIEW-tagged op return a view: memory shared with its input.

By default a call does when it reads one tensor (with index tensors, or a second einsum
operand, the result is new). An op whose arguments decide otherwise declares its own rule
(`@symbol(..., view=rule)`): getitem with an index list copies, as with an index tensor.
"""

from __future__ import annotations

from collections.abc import Callable

from tracecli.core.symbol import BoundSymbol, Symbol, Tag
from tracecli.core.values import TensorValue

# Filled by the ltorch declarations: symbol -> rule(args, kwargs) -> whether this call is a view.
VIEW_RULES: dict[Symbol, Callable[[tuple, dict], bool]] = {}


def is_view(bsym: BoundSymbol) -> bool:
    if Tag.VIEW not in bsym.symbol.tags:
        return False
    rule = VIEW_RULES.get(bsym.symbol)
    if rule is not None:
        return rule(bsym.args, dict(bsym.kwargs))
    return sum(isinstance(a, TensorValue) for a in bsym.arg_values()) == 1
