"""Places of Python state a traced call changes, and how a trace keeps each change.

A `Place` is one slot: a dict's entry, a list's element or tail, an attribute, a closure
variable. A `StateWrite` is what the call did to it; `store_calls` is how the trace makes
the change again (`ltorch.store_item(cache, "cpu", t3)`); `Written` is what a later call
must find there for the trace to serve it (frontend/state.py finds the writes).
"""

from __future__ import annotations

import dataclasses
from types import CellType
from typing import NamedTuple

import torch

from tracecli.core.bindings import Held
from tracecli.core.pytree import rebuild_call, tree_leaves
from tracecli.core.symbol import Symbol
from tracecli.frontend.proxy import TensorProxy
from tracecli.ops import ltorch

MISSING = object()  # a slot that holds nothing: a dict without the key, an unset attribute


class Place:
    """One slot of Python state: `owner[key]` (a dict entry, a list element), an
    attribute `key` of `owner`, a closure variable (`owner` is its cell), or a list's
    elements from index `key` on ("tail"). `backing` is the dict, list or cell the slot
    lives in; `path` spells the way there, `name` the owner's; `argument` is the entry
    parameter the way starts from (None: the state outside the call)."""

    __slots__ = ("kind", "owner", "key", "backing", "path", "name", "argument")

    def __init__(self, kind: str, owner: object, key: object, backing: object, path: str, name: str,
                 argument: str | None = None):
        self.kind, self.owner, self.key, self.backing = kind, owner, key, backing
        self.path, self.name, self.argument = path, name, argument

    def read(self) -> object:
        backing = self.backing
        if self.kind == "cell":
            return cell_contents(backing)
        if self.kind == "tail":
            return list(backing[self.key:])
        if isinstance(backing, (list, tuple)):
            return backing[self.key] if self.key < len(backing) else MISSING
        # What the dict holds, not what a subclass's __getitem__ makes of it (transformers'
        # ACT2FN makes an instance of the class it holds).
        return dict.get(backing, self.key, MISSING) if isinstance(backing, dict) else backing.get(self.key, MISSING)

    def put(self, value: object) -> None:
        """The slot set to `value` (MISSING: emptied) directly in what holds it, below any
        __setattr__ of its owner: exactly as it was."""
        backing = self.backing
        if self.kind == "cell":
            if value is MISSING:
                del backing.cell_contents
            else:
                backing.cell_contents = value
        elif self.kind == "tail":
            backing[self.key:] = [] if value is MISSING else value
        elif not isinstance(backing, dict):  # a class's attribute: its dict is read-only
            if value is not MISSING:
                setattr(self.owner, self.key, value)
            elif self.key in backing:
                delattr(self.owner, self.key)
        elif value is MISSING:
            if self.key in backing:
                del backing[self.key]
        else:
            backing[self.key] = value

    def exists(self) -> bool:
        return self.read() is not MISSING

    @property
    def value_name(self) -> str:
        """A name for what the slot holds: `attention_bias_cache_cpu`, `blocks_0_cache`."""
        if self.kind in ("cell", "tail"):
            return self.name
        key = part_name(self.key)
        return key if self.name in ("self", "globals") else f"{self.name}_{key}"

    def __repr__(self) -> str:
        return self.path


@dataclasses.dataclass(frozen=True, eq=False)
class StateWrite:
    """A slot the traced call set to something holding traced tensors: what it held
    before (MISSING: nothing) and what the call put there."""

    place: Place
    before: object
    after: object


# Values a later call must find equal to what the traced call found, where the call
# changed them; other objects must be the same object.
_SCALARS = (bool, int, float, complex, str, bytes, type(None))


def unchanged(old: object, new: object) -> bool:
    return old is new or (type(old) is type(new) and isinstance(old, (*_SCALARS, tuple)) and _equal(old, new))


def _equal(a: object, b: object) -> bool:
    try:
        return bool(a == b)
    except Exception:  # a tuple holding tensors: not a plain value
        return False


class Written(NamedTuple):
    """A place a traced call changes, as the trace keeps it: what a later call must find
    there to be served (`how`, `what`: see `expectation`), and whether a traced tensor
    is what the call put there."""

    place: Place
    how: str
    what: object
    traced: bool

    def as_expected(self) -> bool:
        return as_expected(self.place, self.how, self.what)

    @classmethod
    def of(cls, write: StateWrite) -> Written:
        return cls(write.place, *expectation(write), holds_traced(write.after))


def expectation(write: StateWrite) -> tuple[str, object]:
    """What a later call must find in the place for the trace to serve it, as (how, what):
    the trace replays what this call wrote there, which holds only where the call found
    the place as this one did. A tensor is for the trace to read (as a captured input,
    with a guard of its own) or to overwrite: only whether there is one matters. What was
    appended to a list is appended again on any call, unless some of it is no traced value
    (an object made on a first call): then the list must be as long as it was."""
    before, place = write.before, write.place
    if place.kind == "tail":
        if not write.before and all(holds_traced(item) for item in write.after):
            return "any", None
        return "length", len(write.before) if write.before else place.key
    if before is MISSING or isinstance(before, torch.Tensor) or holds_traced(write.after) and not isinstance(
            before, _SCALARS):
        return "exists", before is not MISSING
    if isinstance(before, (*_SCALARS, tuple)):
        return "equal", before
    return "same", before


def as_expected(place: Place, how: str, what: object) -> bool:
    if how == "any":
        return True
    if how == "length":
        return len(place.backing) == what
    now = place.read()
    if how == "exists":
        return (now is not MISSING) is what
    if how == "equal":
        return unchanged(what, now)
    return now is what


def store_calls(writes: list[StateWrite]) -> list[tuple[Symbol, tuple]]:
    """(ltorch symbol, arguments) storing each write again, its traced tensors as the
    proxies they are (the tracer makes them values). The object written is held under
    the name the program reaches it by."""
    calls = []
    for write in writes:
        place = write.place
        held = Held(place.owner, place.name)
        if write.after is MISSING:  # emptied: `del cache[key]`, `del self.cached`
            if place.kind == "item":
                calls.append((ltorch.delete_item, (held, place.key)))
            else:
                calls.append((ltorch.delete_attr, (held, "cell_contents" if place.kind == "cell" else place.key)))
        elif place.kind == "cell":
            calls.append((ltorch.store_cell, (held, write.after)))
        elif place.kind == "attr":
            calls.append((ltorch.store_attr, (held, place.key, write.after)))
        elif place.kind == "item":
            calls.append((ltorch.store_item, (held, place.key, write.after)))
        elif write.before:  # a list rewritten: its contents from `key` on
            calls.append((ltorch.store_item, (held, slice(place.key, None), write.after)))
        else:  # appended to
            calls.append((ltorch.store_extend, (held, write.after)))
    return calls


def part_name(key: object) -> str:
    """A key as part of a name: `cache[(3, 4)]` is `cache_3_4`."""
    if isinstance(key, tuple):
        return "_".join(part_name(k) for k in key)
    return key if isinstance(key, str) else str(key)


def cell_contents(cell: CellType) -> object:
    try:
        return cell.cell_contents
    except ValueError:
        return MISSING


def traced_in(value: object) -> bool:
    """Whether a traced tensor is in `value`, in its containers or inside an object."""
    return holds_traced(value) or hidden_traced(value) is not None


def holds_traced(value: object) -> bool:
    """Whether `value` is a traced tensor or a container (tuple, list, dict, named tuple,
    dataclass) holding one."""
    if type(value) is TensorProxy:
        return True
    if isinstance(value, (int, float, str, bool, type(None), torch.Tensor)):
        return False
    return any(type(leaf) is TensorProxy for leaf in tree_leaves(value))


def hidden_traced(value: object) -> tuple[str, TensorProxy] | None:
    """(the type, the traced tensor) of an object among `value` that keeps a traced
    tensor inside it where no container rule reaches (an instance of a plain class), or
    None."""
    if isinstance(value, (int, float, str, bool, type(None), torch.Tensor)):
        return None
    for leaf in tree_leaves(value):
        if type(leaf) is TensorProxy or rebuild_call(leaf) is not None:
            continue
        own = getattr(leaf, "__dict__", None)
        if isinstance(own, dict):
            for item in own.values():
                traced = next((t for t in tree_leaves(item) if type(t) is TensorProxy), None)
                if traced is not None:
                    return type(leaf).__qualname__, traced
    return None
