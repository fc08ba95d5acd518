"""Walking and rebuilding the nested containers that hold values in args and outputs."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from tracecli.core.values import NumberValue, TensorValue

_VALUE_TYPES = (TensorValue, NumberValue)
_VALUE_SET = frozenset(_VALUE_TYPES)


def iter_values(obj: object) -> Iterator[TensorValue | NumberValue]:
    """Every value inside `obj`, depth first, in order."""
    if isinstance(obj, _VALUE_TYPES):
        yield obj
    elif isinstance(obj, (tuple, list)):
        for item in obj:
            yield from iter_values(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from iter_values(item)


def values_in(obj: object) -> list[TensorValue | NumberValue]:
    """`list(iter_values(obj))`, without generators: passes call this on every bound symbol."""
    if type(obj) in _VALUE_SET:
        return [obj]
    out: list = []
    _collect(obj, out)
    return out


def _collect(obj: object, out: list) -> None:
    if type(obj) in _VALUE_SET:
        out.append(obj)
    elif isinstance(obj, (tuple, list)):
        for item in obj:
            _collect(item, out)
    elif isinstance(obj, dict):
        for item in obj.values():
            _collect(item, out)


def map_values(fn: Callable, obj: object) -> object:
    """`obj` with every value replaced by `fn(value)`; containers keep their kind."""
    kind = type(obj)
    if kind in _VALUE_SET:
        return fn(obj)
    if kind is tuple:
        return tuple([map_values(fn, item) for item in obj])
    if isinstance(obj, list):
        return [map_values(fn, item) for item in obj]
    if isinstance(obj, dict):
        return {k: map_values(fn, v) for k, v in obj.items()}
    if isinstance(obj, tuple):  # named tuples keep their type
        return rebuild_tuple(obj, [map_values(fn, item) for item in obj])
    return obj


def tree_leaves(obj: object) -> list:
    """The leaves of nested tuples, lists and dicts: values and constants alike."""
    if isinstance(obj, (tuple, list)):
        return [leaf for item in obj for leaf in tree_leaves(item)]
    if isinstance(obj, dict):
        return [leaf for item in obj.values() for leaf in tree_leaves(item)]
    return [obj]


def rebuild_tuple(like: tuple, items) -> tuple:
    """A tuple of `like`'s type (plain, namedtuple or torch's structseq) holding `items`."""
    kind = type(like)
    if kind is tuple:
        return tuple(items)
    if hasattr(kind, "_fields"):  # namedtuple: positional fields
        return kind(*items)
    return kind(tuple(items))  # structseq (torch.return_types.*): one sequence
