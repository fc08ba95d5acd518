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

A region whose members make a size the data decide (`prims.nonzero`: the rows are
counted as it runs) compiles as one graph with torch.compile's
`capture_dynamic_output_shape_ops` set while it is called (dynamo would otherwise cut
the graph at the op and run the rest piecewise, the op eagerly). Should inductor refuse
such a region (a lowering that needs a number for the count), the region runs as
generated, as the torch executor runs it, from then on; `uncompiled` says which and why,
and the run's result line repeats it.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from tracecli.core.bindings import Bindings
from tracecli.core.dims import Dim, symbols_in
from tracecli.core.functions import inlined
from tracecli.core.printing import format_trace
from tracecli.core.regions import is_backward, is_region
from tracecli.core.symbol import Symbol
from tracecli.core.trace import Trace, walk
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


def makes_sizes(region: Trace) -> bool:
    """Whether a member's type has a size none of the region's inputs give: one the data
    decide, counted by a member as it runs."""
    given = set()
    for value in region.inputs:
        given |= symbols_in(value.shape if type(value) is TensorValue else value.value)
    return any(type(out) is TensorValue and not symbols_in(out.shape) <= given
               for _, member in walk(region.bsyms) for out in member.output_values())


class _Counted:
    """A region that makes sizes the data decide: compiled as one graph with dynamo's
    `capture_dynamic_output_shape_ops` on around each call (a call may compile again,
    for a count of 0 or 1 say), the config as it was afterwards. If the compiled call
    raises and the generated function does not, inductor could not compile it: the
    region runs as generated from then on, and `uncompiled` says why. (A region is pure,
    so running it twice changes nothing; an error the generated function raises too is
    the program's, and is raised.)"""

    def __init__(self, name: str, plain: Callable, compiled: Callable):
        self.name = name
        self.plain = plain
        self.compiled = compiled
        self.uncompiled: str | None = None
        self.__tracecli_source__ = plain.__tracecli_source__

    def __call__(self, *args):
        if self.uncompiled is not None:
            return self.plain(*args)
        config = torch._dynamo.config
        before = config.capture_dynamic_output_shape_ops
        config.capture_dynamic_output_shape_ops = True
        try:
            return self.compiled(*args)
        except Exception as exc:
            out = self.plain(*args)
            first = (str(exc).strip().splitlines() or [""])[0]
            self.uncompiled = f"inductor could not compile it ({type(exc).__name__}: {first[:160]})"
            return out
        finally:
            config.capture_dynamic_output_shape_ops = before


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
    if makes_sizes(region):
        # One graph or none: a graph cut at the op would run it, and what follows, apart.
        compiled = _Counted(region.name, plain, torch.compile(plain, backend="inductor", dynamic=dynamic,
                                                              fullgraph=True))
    else:
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
