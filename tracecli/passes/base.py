"""The pass contract: a pass maps a Trace to a PassResult and never mutates its input."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tracecli.core.trace import Trace


@dataclass(frozen=True)
class PassResult:
    trace: Trace
    changed: bool
    stats: dict[str, int] = field(default_factory=dict)
    # Which value became which (old name -> new name): renamed values and merged
    # duplicates. Diffs use it to show identity rather than text.
    value_map: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Pass:
    name: str
    description: str  # one line, shown by `tracecli passes`
    run: Callable[..., PassResult]


REGISTRY: dict[str, Pass] = {}
# Every registration in order, repeats included: loading a pass file twice still
# tells which passes it registered.
REGISTRATIONS: list[str] = []


def register(name: str, description: str):
    """Register the decorated `Trace -> PassResult` function under `name`."""

    def add(fn: Callable[..., PassResult]) -> Callable[..., PassResult]:
        REGISTRY[name] = Pass(name, description, fn)
        REGISTRATIONS.append(name)
        return fn

    return add
