"""The built-in executors: torch runs the trace as printed, prims runs it lowered,
inductor compiles its fusion regions (executors/inductor.py)."""

from __future__ import annotations

from collections.abc import Callable

from tracecli.core.symbol import Symbol
from tracecli.core.trace import Trace
from tracecli.executors import inductor  # noqa: F401 - registers it
from tracecli.executors.registry import register_executor
from tracecli.passes.lower import lower


@register_executor("torch", "runs the trace as printed: each top-level op by its torch implementation")
def runs_as_printed(symbol: Symbol) -> Callable | None:
    return None


def lowered_to_prims(trace: Trace) -> Trace:
    return lower(trace).trace


register_executor("prims", "runs the trace lowered to prims, checking every decomposition against eager",
                  prepare=lowered_to_prims)(runs_as_printed)

BUILTIN = frozenset({"torch", "prims", "inductor"})
