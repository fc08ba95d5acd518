"""Trace -> Python source (+ globals) -> callable.

The source is the printer's own output (`format_trace(codegen=True)`), so the code
that runs is the code users read. In the globals, `ltorch.<op>` and `prims.<op>` are
bound straight to each symbol's torch implementation; the prims executor runs the trace
lowered to prims (executors/runner.py), not a different namespace. Objects the source
names but cannot spell (a module passed to an opaque call, say) are bound under the
names the printer chose.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import SimpleNamespace

import torch

from tracecli.core.bindings import Bindings
from tracecli.core.printing import format_trace
from tracecli.core.symbol import Symbol
from tracecli.core.trace import Trace
from tracecli.ops import ltorch, prims


def namespace_of(symbols: dict[str, Symbol]) -> SimpleNamespace:
    """Symbol names bound straight to their torch implementations: no dispatch per call."""
    return SimpleNamespace(**{name: sym.impl for name, sym in symbols.items()})


TORCH_GLOBALS = {
    "torch": torch,
    "ltorch": namespace_of(ltorch.ALL),
    "prims": namespace_of(prims.ALL),
    "inf": math.inf,
    "nan": math.nan,
}


def compile_trace(trace: Trace, globals_: dict | None = None) -> Callable:
    bindings = Bindings.for_trace(trace, codegen=True)
    source = format_trace(trace, codegen=True, bindings=bindings)
    # A filename that names the trace makes tracebacks from generated code readable.
    code = compile(source, f"<trace {trace.name}>", "exec")
    scope = dict(TORCH_GLOBALS if globals_ is None else globals_)
    scope.update(bindings.bound)
    exec(code, scope)  # noqa: S102 - the source is our own printer's output
    fn = scope[trace.name]
    fn.__tracecli_source__ = source
    return fn


def script_header() -> str:
    """Imports that make a printed trace a runnable Python file."""
    return "import torch\nfrom math import inf, nan\n\nfrom tracecli.ops import ltorch, prims\n"
