"""Trace -> Python source (+ globals) -> callable.

The source is the printer's own output (`format_trace(codegen=True)`), so the code
that runs is the code users read. In the globals, `ltorch.<op>` and `prims.<op>` are
bound straight to each symbol's torch implementation; the prims executor runs the trace
lowered to prims (executors/runner.py), not a different namespace. Objects the source
names but cannot spell (a module passed to an opaque call, say) are bound under the
names the printer chose.

A fusion region (`inductor.fusion0(...)`) is bound to a function of its own, generated
the same way from its members: the torch executor runs them one by one, and an executor
that fuses passes `compile_region` to compile that function instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import SimpleNamespace

import torch

from tracecli.core.bindings import Bindings
from tracecli.core.printing import format_trace
from tracecli.core.regions import is_region, region_trace
from tracecli.core.symbol import Symbol
from tracecli.core.trace import Trace
from tracecli.ops import ltorch, prims
from tracecli.ops.ltorch.autograd import SETS_GRAD_MODE


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


def compile_trace(trace: Trace, globals_: dict | None = None, compile_region: Callable | None = None) -> Callable:
    """`compile_region(region_trace, globals_)`, when given, makes each region's function."""
    bindings = Bindings.for_trace(trace, codegen=True)
    source = format_trace(trace, codegen=True, bindings=bindings)
    # A filename that names the trace makes tracebacks from generated code readable.
    code = compile(source, f"<trace {trace.name}>", "exec")
    scope = dict(TORCH_GLOBALS if globals_ is None else globals_)
    spaces = _region_namespaces(trace, globals_, compile_region)
    scope.update(spaces)
    scope.update(bindings.bound)
    exec(code, scope)  # noqa: S102 - the source is our own printer's output
    fn = scope[trace.name]
    if any(b.symbol in SETS_GRAD_MODE for b in trace.bsyms):
        fn = _grad_mode_kept(fn)
    fn.__tracecli_source__ = source
    # Each region's function, for what an executor says of them after a run (executors/registry.py `uncompiled`).
    fn.__tracecli_regions__ = tuple(f for space in spaces.values() for f in vars(space).values())
    return fn


def _grad_mode_kept(fn: Callable) -> Callable:
    """`fn`, leaving the grad mode it was called in as it found it when a call in it
    raises between a set_grad_enabled and its restore (a failed check), as leaving the
    program's `with torch.no_grad():` block does; and the saved modes as they were. (One
    that returns leaves them as it set them: a segment of a call cut inside the block
    sets the mode, the next one restores it.)"""
    saved = prims.autograd.SAVED_GRAD_MODES

    def run(*args):
        depth, mode = len(saved), torch.is_grad_enabled()
        try:
            return fn(*args)
        except BaseException:
            torch._C._set_grad_enabled(mode)
            del saved[depth:]
            raise

    return run


def _region_namespaces(trace: Trace, globals_: dict | None, compile_region: Callable | None) -> dict:
    """`inductor.fusion0` and its kin: each region's function under its namespace."""
    spaces: dict[str, SimpleNamespace] = {}
    for bsym in trace.bsyms:
        if is_region(bsym):
            region = region_trace(bsym)
            fn = compile_trace(region, globals_) if compile_region is None else compile_region(region, globals_)
            setattr(spaces.setdefault(bsym.symbol.namespace, SimpleNamespace()), bsym.symbol.name, fn)
    return spaces


def script_header() -> str:
    """Imports that make a printed trace a runnable Python file."""
    return "import torch\nfrom math import inf, nan\n\nfrom tracecli.ops import ltorch, prims\n"
