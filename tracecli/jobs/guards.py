"""What a trace took for granted beyond its input signature, checked before it serves a
later call of the entry in a script's main block.

A trace specialises on more than the shapes of its arguments: the train/eval mode of
the modules it ran, the Python numbers in the globals its code read, and the captured
tensors it found in globals or module attributes. A later call after `model.train()`,
`SCALE = 3`, or `W = torch.randn(...)` needs a new trace; the guard says so (as
torch.compile's guards do, for these cases).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from tracecli.core.pytree import tree_leaves
from tracecli.frontend.loader import referenced_names

# Global values a trace may have used as constants.
_SCALARS = (bool, int, float, complex, str, type(None))


@dataclass
class Guard:
    modes: list[tuple[torch.nn.Module, bool]] = field(default_factory=list)
    scalars: list[tuple[dict, str, object]] = field(default_factory=list)
    homes: list[tuple[torch.Tensor, Callable[[], object]]] = field(default_factory=list)

    def holds(self) -> bool:
        return (
            all(module.training == training for module, training in self.modes)
            and all(_same(scope.get(name, _GONE), value) for scope, name, value in self.scalars)
            and all(home() is tensor for tensor, home in self.homes)
        )


_GONE = object()


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and (a == b or a != a and b != b)  # NaN equals NaN here


def guard_for(entry: object, args: tuple, kwargs: dict, homes: list, settings: list = ()) -> Guard:
    globals_read = _globals_read(entry)
    modules = [entry] if isinstance(entry, torch.nn.Module) else []
    modules += [leaf for leaf in tree_leaves((args, kwargs)) if isinstance(leaf, torch.nn.Module)]
    modules += [value for _, _, value in globals_read if isinstance(value, torch.nn.Module)]
    modes = [(m, m.training) for module in modules for m in module.modules()]
    scalars = [(scope, name, value) for scope, name, value in globals_read if isinstance(value, _SCALARS)]
    return Guard(modes, scalars + list(settings), list(homes))


def _globals_read(entry: object) -> list[tuple[dict, str, object]]:
    """(globals, name, value) for the globals the entry's own code reads."""
    target = entry.forward if isinstance(entry, torch.nn.Module) else entry
    fn = inspect.unwrap(getattr(target, "__func__", target))
    code, scope = getattr(fn, "__code__", None), getattr(fn, "__globals__", None)
    if code is None or scope is None:
        return []
    return [(scope, name, scope[name]) for name in sorted(referenced_names(code)) if name in scope]
