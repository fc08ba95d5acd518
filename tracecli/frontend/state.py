"""Python state a traced call writes: found, put back, and stored by the trace itself.

While the entry is traced, whatever it keeps in Python state holds traced tensors: a
cache a layer fills on its first call (`self.bias_cache[key] = ...`), a list it appends
to, a global, an attribute of a module or of an object. Left so, the state would hold
tensors that exist only inside the trace. Tracing is therefore a transaction for the
state the entry can reach:

- before the call, every container and object it can reach is looked at, shallowly
  (`StateWatch`): the entry module and its submodules (attributes, parameters and
  buffers), its arguments, the script's globals, its closure's variables, and the dicts,
  lists and objects in those, a few levels down;
- after it, each slot that now holds a traced tensor is a `StateWrite`: it is put back
  as it was, and the trace stores the value there itself, at its end
  (`ltorch.store_item(attention_bias_cache, "cpu", t3)`), so every call the compiled
  trace runs leaves what eager leaves;
- the caller compares eager's and the trace's values in those places, and guards that a
  later call finds each place as this one did (a cache filled since is read, not filled:
  that is another trace, which shows the cached tensor as a captured input).

What changed without a traced tensor in it (a counter, a log line in a list) is left as
the entry left it; the caller notes it. Where the entry wrote is named as Python spells
the way there: `model.blocks[0].attn.attention_bias_cache['cpu']`.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from collections import deque
from types import BuiltinFunctionType, CellType, FunctionType, MethodType, ModuleType

import torch

from tracecli.frontend.arguments import bind_entry
from tracecli.frontend.loader import referenced_names
from tracecli.frontend.places import (
    MISSING,
    Place,
    StateWrite,
    cell_contents,
    part_name,
    traced_in,
    unchanged,
)
from tracecli.frontend.source import is_program_path, is_user_code

# How far below a root (or a module) containers and objects are looked into, and the
# most entries one may have: a write deeper down, or into a bigger one, is not followed.
DEPTH = 4
_ENTRIES = 10_000
_HOLDERS = 50_000

# What every nn.Module keeps for torch itself: no program state of its own.
_MODULE_INTERNALS = frozenset(vars(torch.nn.Module())) - {"training"}
# Objects whose insides are not program state (or are followed elsewhere: an optimizer's
# state is put back by the training support).
_OPAQUE = (type, ModuleType, FunctionType, MethodType, BuiltinFunctionType, torch.Tensor, torch.optim.Optimizer,
           torch.Generator, torch.dtype, torch.device, str, bytes)


class _Holder:
    """A dict, list, tuple, cell or attribute dict, and a shallow copy of it."""

    __slots__ = ("kind", "owner", "backing", "path", "parts", "argument", "user", "only", "copy")

    def __init__(self, kind: str, owner: object, backing: object, path: str, parts: tuple[str, ...],
                 argument: str | None, user: bool = True, skip: frozenset = frozenset(),
                 only: frozenset | None = None):
        self.kind, self.owner, self.backing, self.path, self.parts = kind, owner, backing, path, parts
        self.argument, self.user, self.only = argument, user, only
        if kind == "cell":
            self.copy = cell_contents(backing)
        elif isinstance(backing, (list, tuple)):
            self.copy = list(backing)
        else:
            if only is not None:  # the keys that can change: a copy of those alone, in the dict's order
                self.copy = {k: v for k, v in _items(backing) if k in only}
            else:
                items = _items(backing)  # as held, below a subclass's __getitem__
                self.copy = {k: v for k, v in items if k not in skip} if skip else dict(items)

    def place(self, key: object, kind: str | None = None) -> Place:
        name = "_".join(self.parts)
        kind = kind or self.kind
        if kind == "modules":
            kind = "attr"
        if kind == "cell":
            return Place("cell", self.owner, None, self.backing, self.path, name or "cell", self.argument)
        if kind == "tail":
            return Place("tail", self.owner, key, self.backing, self.path, name or "items", self.argument)
        if kind == "item" and self.parts == ("globals",):  # a global is spelled by its own name
            path = str(key)
        elif kind != "attr":
            path = f"{self.path}[{key!r}]"
        elif isinstance(key, str) and key.isdigit():  # an nn.Sequential's or ModuleList's item
            path = f"{self.path}[{key}]"
        else:
            path = f"{self.path}.{key}" if self.path else str(key)
        return Place(kind, self.owner, key, self.backing, path, name or "self", self.argument)


class StateWatch:
    """The state the entry can reach, looked at before it runs.

    `roots`: (object, how the program names it, the entry parameter it is or None); an
    empty name is the entry module itself (its attributes are named bare, as its
    parameters are). `globals_`: the script's globals, and the names in them the call can
    reach (the rest is not looked at). `originals`: for a container
    argument the tracer copied to put traced tensors in (id of the copy -> the caller's
    own), where the call's writes really go."""

    def __init__(self, roots: list[tuple[object, str, str | None]],
                 globals_: tuple[dict, frozenset[str]] | None = None, originals: dict[int, object] | None = None):
        self.holders: list[_Holder] = []
        self._tensors: dict[int, tuple[_Holder, object]] = {}  # id(tensor) -> (holder, key) it was found in
        self.originals = originals or {}
        seen: set[int] = set()
        queue: deque = deque((obj, name, (name,) if name else (), 0, argument, True) for obj, name, argument in roots)
        self._walk(queue, seen)
        # The globals last: what the entry reaches itself is named the way it reaches it.
        if globals_ is not None and id(globals_[0]) not in seen:
            scope, names = globals_
            seen.add(id(scope))
            self._hold(_Holder("item", scope, scope, "", ("globals",), None, only=names), queue, 0, global_names=True)
            self._walk(queue, seen)

    def _walk(self, queue: deque, seen: set[int]) -> None:
        while queue and len(self.holders) < _HOLDERS:
            obj, path, parts, depth, argument, user = queue.popleft()
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            # A module's attributes are looked into afresh, however deep the module is.
            below = 0 if isinstance(obj, torch.nn.Module) else depth + 1
            for holder in _holders_of(obj, path, parts, argument, user):
                self._hold(holder, queue, below)
            kind = type(obj)
            if id(kind) not in seen and kind.__module__ not in _BUILTIN_MODULES and _users_class(kind):
                # `type(self).calls += 1` reaches the class through its instance.
                queue.append((kind, kind.__qualname__, (kind.__name__,), 0, None, True))

    def _hold(self, holder: _Holder, queue: deque, depth: int, global_names: bool = False) -> None:
        self.holders.append(holder)
        entries = [(None, holder.copy)] if holder.kind == "cell" else (
            enumerate(holder.copy) if isinstance(holder.copy, list) else holder.copy.items())
        for key, value in entries:
            if value is MISSING or (global_names and isinstance(key, str) and key.startswith("__")):
                continue
            if isinstance(value, torch.Tensor):
                self._tensors.setdefault(id(value), (holder, key))
                continue
            if not _looked_into(value) or (depth >= DEPTH and not isinstance(value, torch.nn.Module)):
                continue
            if global_names:  # a global is named by itself, not as an entry of the globals
                path, parts = str(key), (str(key),)
            elif holder.kind == "cell":  # what a closure variable holds is named by the variable
                path, parts = holder.path, holder.parts
            else:
                path, parts = holder.place(key).path, (*holder.parts, part_name(key))
            queue.append((value, path, parts, depth, holder.argument, holder.user))

    def place_of(self, tensor: torch.Tensor) -> Place | None:
        """A place the tensor was found in, before the call."""
        found = self._tensors.get(id(tensor))
        return found[0].place(found[1]) if found is not None else None

    def writes(self) -> list[StateWrite]:
        """Every slot the call changed (set, added to, emptied), in the order the state
        was looked at; a slot of a copied argument as the caller's own."""
        found = []
        for holder in self.holders:
            if holder.kind in ("tuple", "modules"):
                continue
            if holder.kind == "cell":
                now = cell_contents(holder.backing)
                changed = [] if unchanged(holder.copy, now) else [StateWrite(holder.place(None), holder.copy, now)]
            elif isinstance(holder.backing, list):
                changed = _list_writes(holder)
            else:
                changed = _dict_writes(holder)
            # What a library's object changes with no traced tensor in it is its own
            # bookkeeping, left as the call left it (a flag it raises with the hooks it
            # installs, which tracing does not put back); beside a traced tensor it is put
            # back and made again with it (a cache layer's `is_initialized` with its keys).
            if holder.user or any(traced_in(write.after) for write in changed):
                found += changed
        return [_on_original(write, self.originals) for write in found]

    def rollback(self, writes: list[StateWrite]) -> None:
        """Each written slot as it was before the call."""
        for write in reversed(writes):
            write.place.put(write.before)


def copied_containers(original: object, copy: object, found: dict[int, object] | None = None) -> dict[int, object]:
    """id(container of `copy`) -> the container of `original` it copies, for a container
    argument the tracer rebuilt with traced tensors in it (same structure, new objects)."""
    found = {} if found is None else found
    if copy is original or type(copy) is not type(original):
        return found
    if isinstance(copy, dict):
        found[id(copy)] = original
        for key, item in copy.items():
            if key in original:
                copied_containers(original[key], item, found)
    elif isinstance(copy, (list, tuple)) and len(copy) == len(original):
        if isinstance(copy, list):
            found[id(copy)] = original
        for a, b in zip(original, copy, strict=True):
            copied_containers(a, b, found)
    elif dataclasses.is_dataclass(copy) and not isinstance(copy, type):
        found[id(copy)] = original
        for field in dataclasses.fields(copy):
            copied_containers(getattr(original, field.name, None), getattr(copy, field.name, None), found)
    return found


def _on_original(write: StateWrite, originals: dict[int, object]) -> StateWrite:
    """A write into a copy the tracer made of a container argument, as one into the
    caller's container (what the copy stood for): nothing to put back in the copy."""
    original = originals.get(id(write.place.owner))
    if original is None:
        return write
    place = write.place
    backing = vars(original) if place.kind == "attr" else original
    moved = Place(place.kind, original, place.key, backing, place.path, place.name, place.argument)
    return StateWrite(moved, moved.read(), write.after)


def watch_entry(fn: object, args: tuple, kwargs: dict, call_args: tuple, call_kwargs: dict) -> StateWatch:
    """The state a call of `fn` can reach: the entry module (or the object of a bound
    method), its arguments as the call gets them (`call_args`: with traced tensors, in
    copies of the containers that hold them), its closure's variables and its globals."""
    roots: list[tuple[object, str, str | None]] = []
    if isinstance(fn, torch.nn.Module):
        roots.append((fn, "", None))
    elif inspect.ismethod(fn):
        roots.append((fn.__self__, "self", None))
    given = bind_entry(fn, args, kwargs).arguments
    originals: dict[int, object] = {}
    for name, value in bind_entry(fn, call_args, call_kwargs).arguments.items():
        if _looked_into(value):  # (an optimizer's state is the training support's to put back)
            copied_containers(given.get(name), value, originals)
            roots.append((value, name, name))
    code_fn = entry_function(fn)
    code = getattr(code_fn, "__code__", None)
    if code is None or not is_user_code(code):
        # A library's module as the entry: its attributes are looked at, not the globals
        # of the library's own files.
        return StateWatch(roots, None, originals)
    if getattr(code_fn, "__closure__", None):
        roots += [(cell, var, None) for var, cell in zip(code.co_freevars, code_fn.__closure__, strict=True)]
    scope = getattr(code_fn, "__globals__", None)
    return StateWatch(roots, (scope, _globals_read(code, scope)) if scope is not None else None, originals)


def entry_function(fn) -> object:
    """The Python function whose code an entry runs: a module's forward, a method's
    function, past decorators that wrap it."""
    target = fn.forward if isinstance(fn, torch.nn.Module) else fn
    return inspect.unwrap(getattr(target, "__func__", target))


def _globals_read(code, scope: dict) -> frozenset[str]:
    """The script's globals the entry can reach by name: those its code reads, and those
    read by the script's functions and classes it names, in turn (a module namespace can
    hold far more than a call reaches: a test suite's table of a thousand cases). Where
    they are written is the globals dict itself: the view shares its entries' names."""
    names: set[str] = set()
    pending, seen = [code], set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        for name in referenced_names(current):
            value = scope.get(name, MISSING)
            if value is MISSING or name in names:
                continue
            names.add(name)
            pending += _code_of(value, scope)
    return frozenset(names)


def _code_of(value: object, scope: dict) -> list:
    """The code of the script's own function or class (its methods) a global holds."""
    if isinstance(value, FunctionType) and value.__globals__ is scope:
        return [inspect.unwrap(value).__code__]
    kind = value if isinstance(value, type) else type(value)
    if scope.get(kind.__name__) is not kind:
        return []
    found = []
    for member in vars(kind).values():
        if isinstance(member, (staticmethod, classmethod)):  # an autograd.Function's forward
            member = member.__func__
        elif isinstance(member, property):
            member = member.fget
        if isinstance(member, FunctionType):
            found.append(member.__code__)
    return found


def _dict_writes(holder: _Holder) -> list[StateWrite]:
    before, backing = holder.copy, holder.backing
    if holder.only is not None:  # the globals the call can reach
        now_items = [(key, value) for key, value in _items(backing) if key in holder.only]
    elif len(backing) > _ENTRIES:
        return []
    else:
        now_items = list(_items(backing))
    if isinstance(holder.owner, torch.nn.Module):
        skip = _MODULE_INTERNALS
    elif holder.parts == ("globals",) or isinstance(holder.owner, type):  # `__warningregistry__`, `__doc__`: Python's
        skip = frozenset(k for k, _ in (*now_items, *before.items()) if isinstance(k, str) and k.startswith("__"))
    else:
        skip = frozenset()
    found = [StateWrite(holder.place(key), before.get(key, MISSING), now) for key, now in now_items
             if key not in skip and not unchanged(before.get(key, MISSING), now)]
    found += [StateWrite(holder.place(key), old, MISSING) for key, old in before.items()
              if key not in backing and key not in skip]
    return found


def _items(backing) -> object:
    """A dict's items as it holds them (below a subclass's __getitem__), or a class's."""
    return dict.items(backing) if isinstance(backing, dict) else backing.items()


def _list_writes(holder: _Holder) -> list[StateWrite]:
    before, now = holder.copy, holder.backing
    if len(now) > _ENTRIES or (len(now) == len(before) and all(a is b for a, b in zip(before, now, strict=True))):
        return []
    if len(now) > len(before) and all(a is b for a, b in zip(before, now, strict=False)):
        # Appended: every call appends again, as eager does.
        return [StateWrite(holder.place(len(before), "tail"), [], list(now[len(before):]))]
    if len(now) == len(before):
        return [StateWrite(holder.place(i), old, new) for i, (old, new) in enumerate(zip(before, now, strict=True))
                if not unchanged(old, new)]
    # Rewritten as a whole (`items[:] = ...`, an insert, a pop): its contents are the write.
    return [StateWrite(holder.place(0, "tail"), list(before), list(now))]


def _holders_of(obj: object, path: str, parts: tuple[str, ...], argument: str | None, user: bool) -> list[_Holder]:
    """The holders of `obj`'s slots. `user`: whether the program's own code owns what holds
    `obj` (a container is its holder's; an object is its class's)."""
    if isinstance(obj, torch.nn.Module):
        # Its attributes live in four dicts: its own, its parameters and buffers (a tensor
        # set where one was goes there), and its submodules (looked into in turn).
        own, user = vars(obj), _users_class(type(obj))
        holders = [_Holder("attr", obj, own[store], path, parts, argument, user) for store in ("_parameters", "_buffers")
                   if own[store]]
        return [*holders, _Holder("attr", obj, own, path, parts, argument, user, skip=_MODULE_INTERNALS),
                _Holder("modules", obj, own["_modules"], path, parts, argument, user)]
    if isinstance(obj, CellType):
        return [_Holder("cell", obj, obj, path, parts, argument, user)]
    if isinstance(obj, type):  # one of the program's classes: its own attributes (`Counter.calls += 1`)
        return [_Holder("attr", obj, obj.__dict__, obj.__qualname__, (obj.__name__,), None, True)]
    if isinstance(obj, FunctionType):
        # One of the program's functions: the variables of its closure (`nonlocal`).
        cells = zip(obj.__code__.co_freevars, obj.__closure__ or (), strict=True)
        return [_Holder("cell", cell, cell, var, (var,), argument, True) for var, cell in cells]
    if isinstance(obj, (dict, list)):
        return [_Holder("item", obj, obj, path, parts, argument, user)] if len(obj) <= _ENTRIES else []
    if isinstance(obj, tuple):
        # Immutable, but what it holds may not be.
        return [_Holder("tuple", obj, obj, path, parts, argument, user)] if len(obj) <= _ENTRIES else []
    own = getattr(obj, "__dict__", None)
    if isinstance(own, dict) and len(own) <= _ENTRIES:
        return [_Holder("attr", obj, own, path, parts, argument, _users_class(type(obj)))]
    return []


_user_classes: dict[type, bool] = {}
_BUILTIN_MODULES = frozenset({"builtins", "collections", "types"})


def _users_class(kind: type) -> bool:
    """Whether the program's own files define `kind` (a library's class keeps its own
    bookkeeping: a flag it raises on a first call with the hooks it installed)."""
    found = _user_classes.get(kind)
    if found is None:
        module = sys.modules.get(kind.__module__)
        file = getattr(module, "__file__", None)
        found = _user_classes[kind] = isinstance(file, str) and is_program_path(file)
    return found


def _looked_into(value: object) -> bool:
    if isinstance(value, FunctionType):  # the program's own: a library's closures are its own business
        return bool(value.__closure__) and is_program_path(value.__code__.co_filename)
    if isinstance(value, type):
        return _users_class(value)
    if isinstance(value, _OPAQUE):
        return False
    return isinstance(value, (dict, list, tuple, CellType, torch.nn.Module)) or hasattr(value, "__dict__")


