"""Which torch functions written in Python hand themselves whole to `__torch_function__`,
and what tracing makes of each (ops/composites.py).

The census reads the code of every Python function in `torch.nn.functional`, the `torch`
namespace and `torch.Tensor`: one that calls `handle_torch_function` names the callable
it hands over, and the tracer meets that callable as one call. Each is then what the
tracer's dispatch makes of it: modelled (an ltorch form takes it), traced through (its
body runs under the tracer), answered by the tracer itself (a metadata read, a read of
values it refuses, a backward), or kept whole as an opaque call, with why.
"""

from __future__ import annotations

import inspect
import types
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from tracecli.frontend.tracer import call_kind
from tracecli.ops.composites import STAYS_WHOLE, handed_over, hands_itself_off

MODELLED = "modelled"
TRACED_THROUGH = "traced through"
ANSWERED = "answered by the tracer"
ON_NUMBERS = "runs as Python"
OPAQUE = "opaque"

# torch's functions of sizes and Python numbers (SymInt, SymFloat), not of tensors: called
# with numbers, as they are meant to be, they run as Python.
_NUMBER_FUNCTIONS = frozenset(
    getattr(torch, name) for name in dir(torch) if name.startswith(("sym_", "_sym_")) and callable(getattr(torch, name))
)

# What the tracer does with the kinds of call it answers itself.
_ANSWERS = {
    "metadata": "answered from the traced tensor's metadata",
    "data": "refused at the user's line: it needs the tensor's values",
    "backward": "the backward of a training step",
    "numpy": "numpy's view of a traced tensor: a traced array (frontend/numpy_calls.py)",
    "rewrite": "the factory a legacy constructor means (frontend/legacy.py)",
}

_NAMESPACES = (("torch.nn.functional", F), ("torch", torch), ("torch.Tensor", torch.Tensor))


@dataclass(frozen=True)
class Composite:
    name: str  # the public path of the callable handed over: torch.nn.functional.fold
    func: Callable  # what the tracer meets
    outcome: str  # MODELLED, TRACED_THROUGH, ANSWERED, ON_NUMBERS or OPAQUE
    why: str = ""  # for all but MODELLED and TRACED_THROUGH


def census() -> list[Composite]:
    """Every callable that torch's Python functions hand whole to `__torch_function__`,
    by name, with what tracing makes of it."""
    found: dict[int, tuple[str, Callable, Callable]] = {}
    for prefix, namespace in _NAMESPACES:
        members = _members(namespace)
        names: dict[int, list[str]] = {}
        for name, obj in members:
            names.setdefault(id(obj), []).append(name)
        for name, func in members:
            if type(func) is not types.FunctionType:
                continue
            for handed in handed_over(func):
                if handed is None:
                    continue
                getter = getattr(handed, "__self__", None)
                if getattr(handed, "__name__", "") == "__get__" and isinstance(getter, property):
                    # A property's getter: the tracer meets a new bound __get__ each time; its fget decides.
                    entry = (f"{prefix}.{name}", handed, getter.fget)
                else:
                    # Named where it is public: torch.sym_int, not F's import of it as _sym_int.
                    public = min(names.get(id(handed), [name]), key=lambda n: (n.startswith("_"), n))
                    entry = (f"{prefix}.{public}", handed, handed)
                known = found.get(id(entry[2]))
                if known is None or _private(known[0]) and not _private(entry[0]):
                    found[id(entry[2])] = entry
    return sorted((_classified(*entry) for entry in found.values()), key=lambda c: c.name)


def counts(entries: list[Composite]) -> Counter:
    return Counter(entry.outcome for entry in entries)


def _private(name: str) -> bool:
    return name.rpartition(".")[2].startswith("_")


def _members(namespace) -> list[tuple[str, object]]:
    """(name, object) of a namespace, with static and class methods and property getters
    as the functions they hold."""
    out = []
    for name in dir(namespace):
        try:
            obj = inspect.getattr_static(namespace, name)
        except AttributeError:
            continue
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        elif isinstance(obj, property):
            obj = obj.fget
        out.append((name, obj))
    return out


def _classified(name: str, func: Callable, key: Callable) -> Composite:
    kind = call_kind(func)
    if kind == "ltorch":
        return Composite(name, func, MODELLED)
    if kind == "composite":
        return Composite(name, func, TRACED_THROUGH)
    if kind in _ANSWERS:
        return Composite(name, func, ANSWERED, _ANSWERS[kind])
    if key in _NUMBER_FUNCTIONS:
        return Composite(name, func, ON_NUMBERS, "a function of sizes and Python numbers, not of tensors")
    return Composite(name, func, OPAQUE, STAYS_WHOLE.get(key) or _why_not_traced(key))


def _why_not_traced(func) -> str:
    if type(func) is types.FunctionType and not hands_itself_off(func):
        return "it hands itself off through names it imports when called, which a copy cannot answer"
    return "it hands off a callable other than itself"


def main() -> int:
    """`python -m tracecli.frontend.composite_census`: each callable, what tracing makes of
    it and why, then the counts."""
    entries = census()
    for entry in entries:
        print(f"{entry.outcome:<24} {entry.name}" + (f": {entry.why}" if entry.why else ""))
    print(f"{len(entries)} callables: " + ", ".join(f"{n} {outcome}" for outcome, n in counts(entries).most_common()))
    return 0


__all__ = ["ANSWERED", "MODELLED", "ON_NUMBERS", "OPAQUE", "TRACED_THROUGH", "Composite", "census", "counts"]


if __name__ == "__main__":
    raise SystemExit(main())
