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


# Reads the text after `name:` in `-p name:TEXT` into the pass's keyword arguments;
# raises ValueError saying what it expected (the message ends up on the command line).
OptionParser = Callable[[str], dict[str, object]]


@dataclass(frozen=True)
class Pass:
    name: str
    description: str  # one line, shown by `tracecli passes`
    run: Callable[..., PassResult]
    options: OptionParser | None = None  # None: the pass takes no options


REGISTRY: dict[str, Pass] = {}
# Every registration in order, repeats included: loading a pass file twice still
# tells which passes it registered.
REGISTRATIONS: list[str] = []


def register(name: str, description: str, *, options: OptionParser | None = None):
    """Register the decorated `Trace -> PassResult` function under `name`.

    `options`, when given, parses `-p name:TEXT`: it gets TEXT and returns the keyword
    arguments the function is called with, or raises ValueError saying what it expected."""

    def add(fn: Callable[..., PassResult]) -> Callable[..., PassResult]:
        REGISTRY[name] = Pass(name, description, fn, options)
        REGISTRATIONS.append(name)
        return fn

    return add
