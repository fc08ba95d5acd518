"""What a trace took for granted beyond its input signature, checked before it serves a
later call of the entry in a script's main block.

A trace specialises on more than the shapes of its arguments: the train/eval mode of
the modules it ran, the Python numbers it read (a global `SCALE`, a module's
`self.temperature`, `config["shift"]`, `args.alpha`), and the captured tensors it found
in globals or module attributes. Those numbers are constants in the trace: a later call
after `model.train()`, `SCALE = 3`, `model.temperature = 2.0` or `W = torch.randn(...)`
needs a new trace, and the guard says so (as torch.compile's guards do, for these
cases). The numbers looked at: those in the globals and closure variables the entry's
code and the script's functions and classes it calls read, one or two levels into the containers and objects
among them (dicts, lists, namespaces, dataclasses, instances of the script's own
classes), and the Python attributes of every module the call can reach.
"""

from __future__ import annotations

import dataclasses
import inspect
from argparse import Namespace
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FunctionType, SimpleNamespace

import torch

from tracecli.core.pytree import tree_leaves
from tracecli.frontend.loader import referenced_names
from tracecli.frontend.state import entry_function
from tracecli.frontend.tracer import tensor_kind

# Values a trace may have used as constants.
_SCALARS = (bool, int, float, complex, str, type(None))
# A container with more numbers than this is not looked into: checking it on every call
# would cost more than the call.
_MAX_NUMBERS = 256


@dataclass
class Guard:
    modes: list[tuple[torch.nn.Module, bool]] = field(default_factory=list)
    scalars: list[tuple[dict, str, object]] = field(default_factory=list)
    homes: list[tuple[torch.Tensor, Callable[[], object]]] = field(default_factory=list)
    # (what it is, as the program names it; the object; how to read its numbers; the
    # numbers read when the call began)
    numbers: list[tuple[str, object, Callable[[object], tuple], tuple]] = field(default_factory=list)
    # (where a tensor read afresh is, what it was like when traced)
    rereads: list[tuple[Callable[[], object], tuple]] = field(default_factory=list)
    # The module's and captured tensors the trace reads, each with whether it required
    # grad: a parameter frozen between calls (`w.requires_grad_(False)`) is not updated.
    grad_needs: list[tuple[torch.Tensor, bool]] = field(default_factory=list)

    def holds(self) -> bool:
        return (
            all(module.training == training for module, training in self.modes)
            and all(_same(scope.get(name, _GONE), value) for scope, name, value in self.scalars)
            and all(home() is tensor for tensor, home in self.homes)
            and all(_same_numbers(read(obj), seen) for _, obj, read, seen in self.numbers)
            and all(tensor_kind(home()) == kind for home, kind in self.rereads)
            and all(tensor.requires_grad is needs for tensor, needs in self.grad_needs)
        )

    def changes(self) -> list[str]:
        """The Python numbers that differ now from when the guard was taken, as the
        program names them: `step` (0 -> 1), `config['steps']` (2 -> 3). A library's own
        bookkeeping (`_hooks_installed`, set on a first call) is not the program's state."""
        modules, named = [], []  # modules' attributes first, then globals by name
        for scope, name, value in self.scalars:
            if not _same(scope.get(name, _GONE), value):
                named.append((name, f"`{name}` ({value!r} -> {scope.get(name, _GONE)!r})"))
        for label, obj, read, seen in self.numbers:
            now = read(obj)
            change = None if _same_numbers(now, seen) else _first_change(label, seen, now)
            if change is not None:
                (modules.append(change) if isinstance(obj, torch.nn.Module) else named.append((label, change)))
        return modules + [change for _, change in sorted(named)]


_GONE = object()


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and (a == b or a != a and b != b)  # NaN equals NaN here


def _same_numbers(now: tuple, seen: tuple) -> bool:
    return len(now) == len(seen) and all(k == j and _same(a, b) for (k, a), (j, b) in zip(now, seen, strict=True))


def guard_for(entry: object, args: tuple, kwargs: dict) -> Guard:
    """What a call of `entry` finds and a trace of it may take for granted: modules' modes
    and Python numbers. The tensors the trace captured (`homes`, `rereads`) and the
    optimizer settings it read are added once it is made."""
    globals_read = _globals_read(entry)
    roots = [(getattr(entry, "__name__", type(entry).__name__), entry)] if isinstance(entry, torch.nn.Module) else []
    roots += [("an argument", leaf) for leaf in tree_leaves((args, kwargs)) if isinstance(leaf, torch.nn.Module)]
    roots += [(name, value) for _, name, value in globals_read if isinstance(value, torch.nn.Module)]
    modes, numbers = [], []
    seen: set[int] = set()
    for root_name, root in roots:
        for qualname, module in root.named_modules():
            if id(module) not in seen:
                seen.add(id(module))
                modes.append((module, module.training))
                label = f"{root_name}.{qualname}" if qualname else root_name
                numbers.append((label, module, _attributes, _attributes(module)))
    scalars = [(scope, name, value) for scope, name, value in globals_read if isinstance(value, _SCALARS)]
    for scope, name, value in globals_read:
        read = _reader(value, scope)
        if read is not None:
            found = read(value)
            if len(found) <= _MAX_NUMBERS:
                numbers.append((name, value, read, found))
    return Guard(modes, scalars, numbers=numbers)


def _first_change(label: str, before: tuple, now: tuple) -> str | None:
    """`config['steps']` (2 -> 3), `model.calls` (added): the first number that differs,
    or None when only private attributes did."""
    old, new = dict(before), dict(now)
    for key in dict.fromkeys([*old, *new]):
        if key.startswith("_"):
            continue  # a module's private attribute
        if key not in old or key not in new or not _same(old[key], new[key]):
            # A module's attribute comes by its bare name; a container's way there is spelled.
            where = label + (key if key[0] in ".[" else f".{key}")
            if key not in old:
                return f"`{where}` (added)"
            if key not in new:
                return f"`{where}` (removed)"
            return f"`{where}` ({old[key]!r} -> {new[key]!r})"
    return None


def _attributes(module: torch.nn.Module) -> tuple:
    """A module's own Python numbers (`self.temperature`, `self.eps`), by name."""
    return tuple((name, value) for name, value in vars(module).items()
                 if isinstance(value, _SCALARS) and name != "training")


def _reader(value: object, script: dict) -> Callable[[object], tuple] | None:
    """How to read the numbers a global holds (a config dict, an argparse namespace, a
    dataclass, an instance of one of the script's own classes), or None for anything
    else. `script`: the script's globals."""
    if isinstance(value, (dict, list, tuple, SimpleNamespace, Namespace)) or (
            dataclasses.is_dataclass(value) and not isinstance(value, type)) or _scripts_own(value, script):
        return lambda obj: tuple(_numbers_in(obj, 2, script))
    return None


def _scripts_own(obj: object, script: dict) -> bool:
    """An instance of a plain class the script defines (`h = Holder(); h.inner.k = 1.0`).
    Modules have guards of their own."""
    return (_defined_in(type(obj), script) and not isinstance(obj, (type, torch.nn.Module))
            and hasattr(obj, "__dict__"))


def _defined_in(kind: type, script: dict) -> bool:
    """Whether the script defines this class: one of its globals. (Its module name is no
    test: a main block runs with `__name__` set to "__main__".)"""
    return script.get(kind.__name__) is kind


def _numbers_in(obj: object, depth: int, script: dict, path: str = ""):
    """(where, number) for the numbers in `obj`, `where` as Python spells the way there
    (`['shift']`, `.alpha`, `[0]`)."""
    for key, value in _items(obj, script):
        if isinstance(value, _SCALARS):
            yield path + key, value
        elif depth > 1 and _items(value, script):
            yield from _numbers_in(value, depth - 1, script, path + key)


def _items(obj: object, script: dict) -> list[tuple[str, object]]:
    if isinstance(obj, dict):
        return [(f"[{k!r}]", v) for k, v in obj.items()]
    if isinstance(obj, (list, tuple)):
        return [(f"[{i}]", v) for i, v in enumerate(obj)] if len(obj) <= _MAX_NUMBERS else []
    if isinstance(obj, (SimpleNamespace, Namespace)) or (dataclasses.is_dataclass(obj) and not isinstance(obj, type)) \
            or _scripts_own(obj, script):
        return [(f".{k}", v) for k, v in vars(obj).items()]
    return []


def _globals_read(entry: object) -> list[tuple[dict, str, object]]:
    """(globals, name, value) for the globals the entry's own code reads, and those the
    script's functions (and module classes' methods) it reaches read."""
    fn = entry_function(entry)
    code, scope = getattr(fn, "__code__", None), getattr(fn, "__globals__", None)
    if code is None or scope is None:
        return []
    found: dict[str, object] = {}
    pending = [code]
    seen_code: set = set()
    closures = _closure_read(fn)
    while pending:
        code = pending.pop()
        if code in seen_code:
            continue
        seen_code.add(code)
        for name in referenced_names(code):
            if name not in scope or name in found:
                continue
            value = found[name] = scope[name]
            for reached in _code_reached(value, scope):
                pending.append(reached)
            if isinstance(value, FunctionType) and value.__globals__ is scope:
                closures += _closure_read(value)
    return [(scope, name, found[name]) for name in sorted(found)] + closures


class _Cells:
    """A function's closure, read like the dict of globals: what a guard looks up by name
    (`scope.get(name)`) is the variable's value now."""

    def __init__(self, fn: FunctionType):
        self.cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True))

    def get(self, name: str, default: object = None) -> object:
        try:
            return self.cells[name].cell_contents
        except (KeyError, ValueError):  # ValueError: a cell not filled yet
            return default


def _closure_read(fn: object) -> list[tuple[_Cells, str, object]]:
    """(closure, name, value) for the variables of the enclosing function `fn` reads
    (`state = {"k": 1.0}` in the function that made it)."""
    if not isinstance(fn, FunctionType) or not fn.__closure__:
        return []
    cells = _Cells(fn)
    found = []
    for name in fn.__code__.co_freevars:
        value = cells.get(name, _GONE)
        if value is not _GONE and not isinstance(value, FunctionType):
            found.append((cells, name, value))
    return found


def _code_reached(value: object, scope: dict) -> list:
    """The code of the script's own functions, and of the methods of its own classes,
    that a global names: what they read is read too."""
    if isinstance(value, FunctionType) and value.__globals__ is scope:
        return [inspect.unwrap(value).__code__]
    kind = value if isinstance(value, type) else type(value)  # a class, or an instance of one (a module)
    if not _defined_in(kind, scope):
        return []
    return [member.__code__ for member in vars(kind).values() if isinstance(member, FunctionType)]
