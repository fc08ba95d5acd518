"""Structural keys for bound symbols: equal keys mean the same call."""

from __future__ import annotations

from tracecli.core.symbol import BoundSymbol
from tracecli.core.values import NumberValue, TensorValue


def _key(obj) -> object:
    if isinstance(obj, (TensorValue, NumberValue)):
        return ("value", obj.name)
    if isinstance(obj, (tuple, list)):
        return (type(obj).__name__, *(_key(o) for o in obj))
    if isinstance(obj, dict):
        return ("dict", *((k, _key(v)) for k, v in obj.items()))
    if isinstance(obj, slice):
        return ("slice", _key(obj.start), _key(obj.stop), _key(obj.step))
    # The type is part of the key: 1, 1.0 and True are different arguments.
    try:
        hash(obj)
    except TypeError:
        return (type(obj).__name__, repr(obj))
    return (type(obj), obj)


def call_key(bsym: BoundSymbol) -> tuple:
    """Symbol, arguments and keyword arguments, with values identified by name."""
    return (bsym.symbol, _key(bsym.args), tuple((k, _key(v)) for k, v in bsym.kwargs))
