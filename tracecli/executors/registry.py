"""Executors: how a trace runs. Each is registered by name, as passes are.

An executor prepares the trace it is given (the prims executor lowers it to prims; a
fusing executor fuses it) and may implement symbols itself: its implementation of a
symbol replaces the symbol's torch implementation wherever the generated code calls
it; every symbol it does not implement runs as the torch executor runs it. So a user's
executor that runs `ltorch.matmul` with a kernel of their own is one function:

    from tracecli.executors import register_executor

    @register_executor("mymatmul", "matmul by my kernel, everything else by torch")
    def implement(symbol):
        return my_matmul if symbol.qualname == "ltorch.matmul" else None

`tracecli run script.py --executor-file mine.py --executor mymatmul` loads the file and
runs the trace that way; `tracecli executors` lists them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

import torch

from tracecli.core.functions import flatten_calls
from tracecli.core.printing import format_trace
from tracecli.core.symbol import Symbol
from tracecli.core.trace import Trace
from tracecli.executors.codegen import TORCH_GLOBALS, compile_trace


class CompiledRunError(Exception):
    """The compiled trace failed to compile or run although eager ran: a fault of the trace."""


def _as_printed(trace: Trace) -> Trace:
    return trace


def _runs_as_torch(symbol: Symbol) -> Callable | None:
    return None


@dataclass(frozen=True)
class Executor:
    name: str
    description: str  # one line, shown by `tracecli executors`
    # Its own implementation of a symbol, or None: the symbol's torch implementation runs.
    implement: Callable[[Symbol], Callable | None] = _runs_as_torch
    # The trace it runs, made from the one it is given (lowered, fused, ...).
    prepare: Callable[[Trace], Trace] = _as_printed
    # How it compiles a fusion region's generated function, `(region trace, globals) ->
    # callable`; None: the function runs as generated (executors/codegen.py).
    compile_region: Callable | None = None


EXECUTORS: dict[str, Executor] = {}
# Every registration in order, repeats included: loading a file twice still tells which
# executors it registered.
REGISTRATIONS: list[str] = []


def register_executor(name: str, description: str, *, prepare: Callable[[Trace], Trace] | None = None,
                      compile_region: Callable | None = None):
    """Register the decorated `Symbol -> Callable | None` function as executor `name`;
    `prepare` maps the trace it is given to the one it runs; `compile_region` compiles
    each fusion region's function."""

    def add(implement: Callable[[Symbol], Callable | None]) -> Callable[[Symbol], Callable | None]:
        EXECUTORS[name] = Executor(name, description, implement, prepare or _as_printed, compile_region)
        REGISTRATIONS.append(name)
        return implement

    return add


def _implementations(executor: Executor, trace: Trace) -> dict[str, Callable]:
    """qualified name -> the executor's implementation, for the symbols it implements at
    the top level of `trace`, in order of first use. Opaque calls are spelled by their
    torch path in the generated code and always run as torch's."""
    found: dict[str, Callable] = {}
    # A region's function calls its members' symbols; a call kept whole runs its members.
    for bsym in flatten_calls(trace.bsyms):
        symbol = bsym.symbol
        if symbol.namespace in ("", "torch") or symbol.qualname in found:
            continue
        impl = executor.implement(symbol)
        if impl is not None:
            found[symbol.qualname] = impl
    return found


def claimed(executor: Executor, trace: Trace) -> list[str]:
    """The qualified names of the symbols this executor runs itself in the trace it runs."""
    return list(_implementations(executor, trace))


def _globals_for(executor: Executor, trace: Trace) -> dict:
    overrides = _implementations(executor, trace)
    if not overrides:
        return TORCH_GLOBALS
    scope = dict(TORCH_GLOBALS)
    copied: set[str] = set()
    for qualname, impl in overrides.items():
        namespace, _, name = qualname.rpartition(".")
        if namespace not in copied:  # the shared namespaces stay as they are
            scope[namespace] = SimpleNamespace(**vars(scope.get(namespace, SimpleNamespace())))
            copied.add(namespace)
        setattr(scope[namespace], name, impl)
    return scope


def compile_for(trace: Trace, executor: str | Executor) -> Callable:
    """The callable `executor` runs for `trace`. A trace that does not compile is our
    fault, reported as a compiled-run failure (exit 1), by `trace` too."""
    chosen = EXECUTORS[executor] if isinstance(executor, str) else executor
    prepared = chosen.prepare(trace)
    try:
        run = _without_autocast(compile_trace(prepared, _globals_for(chosen, prepared), chosen.compile_region))
    except SyntaxError as exc:
        raise CompiledRunError(f"the trace does not compile as Python: {exc}\n{format_trace(prepared)}") from exc
    run.__tracecli_claimed__ = claimed(chosen, prepared)
    # Compiled regions round differently from eager: the comparison allows for it.
    run.__tracecli_fused__ = chosen.compile_region is not None
    return run


def _without_autocast(fn: Callable) -> Callable:
    """The trace already holds every cast autocast made while tracing: run it as written,
    even when called inside an autocast region."""

    def run(*args):
        if torch.is_autocast_enabled("cpu") or torch.is_autocast_enabled("cuda"):
            with torch.autocast("cpu", enabled=False), torch.autocast("cuda", enabled=False):
                return fn(*args)
        return fn(*args)

    run.__tracecli_source__ = fn.__tracecli_source__
    run.__tracecli_regions__ = fn.__tracecli_regions__
    return run


def uncompiled(run: Callable) -> list[tuple[str, str]]:
    """(region, why) for each fusion region of `run` (from `compile_for`) that its
    executor could not compile and ran as generated instead, as the torch executor runs
    it; known once the calls that compile have run."""
    found = []
    for region in getattr(run, "__tracecli_regions__", ()):
        why = getattr(region, "uncompiled", None)
        if why:
            found.append((region.name, why))
    return found
