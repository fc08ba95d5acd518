"""The inductor executor: each fusion region compiled by torch's inductor, the rest of
the trace run as the torch executor runs it.

A region runs as the function generated from its members (`region_trace`), the same
code the torch executor runs, handed to `torch.compile(backend="inductor")`. A trace
without regions is fused first (`-p fuse` lets you see and diff the regions). Compiled
regions are kept by their text for the life of the process, so a region that prints
alike in another trace, or in another call of a main block, is not compiled again;
inductor's own cache on disk makes the next process start fast. A region of a symbolic
trace (its types use size symbols) compiles with dynamic shapes, so one compilation
serves every size the trace's guards allow.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from tracecli.core.bindings import Bindings
from tracecli.core.dims import Dim
from tracecli.core.functions import inlined
from tracecli.core.printing import format_trace
from tracecli.core.regions import is_backward, is_region
from tracecli.core.symbol import Symbol
from tracecli.core.trace import Trace
from tracecli.core.values import NumberValue, TensorValue
from tracecli.executors.codegen import TORCH_GLOBALS, compile_trace
from tracecli.executors.registry import compile_for, register_executor
from tracecli.passes.fuse import fuse

# (region text, dynamic) -> its compiled function
_compiled: dict[tuple[str, bool], Callable] = {}


def _symbolic(region: Trace) -> bool:
    return any(
        (type(v) is NumberValue and v.is_size) or (type(v) is TensorValue and any(type(d) is Dim for d in v.shape))
        for v in region.inputs
    )


def compile_region(region: Trace, globals_: dict | None = None) -> Callable:
    """The region's generated function, compiled by inductor (on its first call, as
    torch.compile does), or the one compiled before for the same text."""
    dynamic = _symbolic(region)
    key = None
    # The text is the whole function only with the torch executor's globals and nothing
    # bound by name: otherwise equal texts may call different objects.
    if (globals_ is None or globals_ is TORCH_GLOBALS) and not Bindings.for_trace(region, codegen=True).bound:
        key = (format_trace(region, codegen=True), dynamic)
        found = _compiled.get(key)
        if found is not None:
            return found
    plain = compile_trace(region, globals_)
    compiled = torch.compile(plain, backend="inductor", dynamic=dynamic)
    compiled.__tracecli_source__ = plain.__tracecli_source__
    if key is not None:
        _compiled[key] = compiled
    return compiled


def fused(trace: Trace) -> Trace:
    """The trace the executor runs: as given when it has fusion regions (`-p fuse`),
    else fused. A training step's backward is a region too, compiled as one function.
    The ops a call kept whole ran (a custom autograd.Function's) fuse with those around
    them: the executor runs the forward only, whose calls are what they hold."""
    if any(is_region(b) and not is_backward(b) for b in trace.bsyms):
        return trace
    return fuse(trace.replace(bsyms=inlined(trace.bsyms))).trace


def _as_torch(symbol: Symbol) -> Callable | None:
    return None


register_executor("inductor", "compiles each fusion region with torch's inductor (fuses first without -p fuse)",
                  prepare=fused, compile_region=compile_region)(_as_torch)


def compile_inductor(trace: Trace) -> Callable:
    """The callable the inductor executor runs for `trace`."""
    return compile_for(trace, "inductor")


def clear_cache() -> None:
    _compiled.clear()
