"""Structural keys for bound symbols: equal keys mean the same call."""

from __future__ import annotations

from tracecli.core.pytree import tree_key
from tracecli.core.symbol import BoundSymbol
from tracecli.core.values import NumberValue, TensorValue


def _leaf_key(obj) -> object:
    if isinstance(obj, (TensorValue, NumberValue)):
        return ("value", obj.name)
    # The type is part of the key: 1, 1.0 and True are different arguments.
    try:
        hash(obj)
    except TypeError:
        return (type(obj).__name__, repr(obj))
    return (type(obj), obj)


def call_key(bsym: BoundSymbol) -> tuple:
    """Symbol, arguments and keyword arguments, with values identified by name; the
    containers' types are part of the key (a tuple and a list are different arguments)."""
    return (bsym.symbol, tree_key(bsym.args, _leaf_key), tree_key(bsym.kwargs, _leaf_key))
