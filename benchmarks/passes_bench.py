"""Section 3 of the benchmarks: each pass, printing and code generation on synthetic
traces of N bound symbols, to show that each stays linear (up to 1 000 000 with --huge).

The traces are built from IR records directly (tracing 100 000 ops would time the
tracer, not the passes) and look like traced user code: ltorch calls with prims
subsymbols, a recomputed call every fifth (cse merges it), a dead one every seventh
(dce drops it), a random op every eleventh (never merged or dropped), and variable
hints that reuse a few dozen names (rename versions them).
"""

from __future__ import annotations

import gc
import itertools
import statistics
from dataclasses import dataclass

from timing import Clock, time_once

from tracecli.core import dtypes
from tracecli.core.gc_pause import gc_paused
from tracecli.core.names import NameRegistry
from tracecli.core.printing import format_trace
from tracecli.core.symbol import BoundSymbol
from tracecli.core.trace import Trace
from tracecli.core.values import TensorValue
from tracecli.executors import compile_for
from tracecli.ops import ltorch, prims
from tracecli.passes import REGISTRY

PASSES = ("dce", "cse", "rename", "renumber", "lower", "fuse")
# What the trace command does with the final trace besides the passes: print it at the
# default depth, and generate and compile its code for the torch executor.
OUTPUTS = ("print", "codegen")


def _output_work(name: str, trace: Trace):
    if name == "print":
        return lambda: format_trace(trace, 1)
    return lambda: compile_for(trace, "torch")


def synthetic_trace(n: int) -> Trace:
    registry = NameRegistry()
    x = TensorValue(registry.take("x"), (8,), dtypes.float32, "cpu")

    def value() -> TensorValue:
        return TensorValue(registry.fresh(), (8,), dtypes.float32, "cpu")

    def call(parent, prim, args, hint=None) -> BoundSymbol:
        # As the tracer records a call that one primitive restates: the primitive stands
        # for its subsymbol.
        out = value()
        hints = ((out.name, hint),) if hint else ()
        return BoundSymbol(parent, args, (), out, prim, name_hints=hints)

    bsyms: list[BoundSymbol] = []
    live = x
    for i in range(n):
        if i % 11 == 10:
            out = value()
            sub = BoundSymbol(prims.uniform, ((8,), 0.0, 1.0), (("device", "cpu"), ("dtype", dtypes.float32)), out)
            bsyms.append(BoundSymbol(ltorch.rand, ((8,),), (("device", "cpu"),), out, (sub,)))
        elif i % 7 == 6:
            bsyms.append(call(ltorch.sin, prims.sin, (live,)))  # dead: nothing reads it
        elif i % 5 == 4:
            # The previous call again, keyword arguments and all, into a fresh value.
            previous, out = bsyms[-1], value()
            parts = previous.parts  # a primitive follows the new output; a record is remade
            if type(parts) is tuple:
                parts = (parts[0].replace(output=out),)
            bsyms.append(previous.replace(output=out, subsymbols=parts, name_hints=((out.name, f"v{i % 40}"),)))
            live = out
        else:
            bsyms.append(call(ltorch.mul, prims.mul, (live, x), f"v{i % 40}"))
            live = bsyms[-1].output
    return Trace("synthetic", (x,), tuple(bsyms), live)


@dataclass
class PassRow:
    name: str
    n: int
    ms: float  # median per run
    changed: int  # bound symbols removed or merged, names changed: the pass did real work

    @property
    def us_per_bsym(self) -> float:
        return self.ms * 1e3 / self.n


def bench_passes(sizes: list[int], reps: int, clock: Clock, huge: list[int] = ()) -> list[PassRow]:
    """`huge`: sizes timed once each (a million bound symbols takes minutes in all)."""
    rows = []
    for n in [*sizes, *huge]:
        trace = synthetic_trace(n)
        for name in (*PASSES, *OUTPUTS):
            work = _output_work(name, trace) if name in OUTPUTS else lambda name=name, trace=trace: REGISTRY[name].run(trace)
            samples, done = [], 0
            for _ in range(1 if n in huge else reps):
                gc.collect()
                # As the pipeline runs a pass: with the cyclic collector paused.
                with gc_paused():
                    seconds, result = time_once(work, clock)
                samples.append(seconds * 1e3)
                if name in PASSES:
                    done = sum(v for v in result.stats.values() if isinstance(v, int))
                del result  # a million bound symbols' worth: gone before the next run
            rows.append(PassRow(name, n, statistics.median(samples), done))
        del trace
    return rows


def print_passes(rows: list[PassRow]) -> None:
    print("3. Each pass, printing and codegen on a synthetic trace of N bound symbols (median ms per run)")
    sizes = sorted({r.n for r in rows})
    steps = list(itertools.pairwise(sizes))
    header = "".join(f"{f'N={n}':>14}" for n in sizes)
    growths = "".join(f"{f'{_short(a)}->{_short(b)}':>11}" for a, b in steps)
    print(f"   {'':<10}{header}{growths}   work done at the largest N")
    for name in (*PASSES, *OUTPUTS):
        mine = {r.n: r for r in rows if r.name == name}
        cells = "".join(f"{mine[n].ms:>11.1f} ms" for n in sizes)
        cells += "".join(f"{mine[b].us_per_bsym / mine[a].us_per_bsym:>10.2f}x" for a, b in steps)
        work = str(mine[sizes[-1]].changed) if name in PASSES else ""
        print(f"   {name:<10}{cells}   {work}")
    print("   a->b: µs per bound symbol at N=b over N=a (1.00x = linear); print = the trace text at the default")
    print("   depth, codegen = its code generated and compiled for the torch executor; --huge adds N=1000000,")
    print("   timed once (a few minutes)")
    print()


def _short(n: int) -> str:
    return f"{n // 1_000_000}M" if n >= 1_000_000 else f"{n // 1000}k" if n >= 1000 else str(n)
