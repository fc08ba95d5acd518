"""Section 3 of the benchmarks: each pass on synthetic traces of N bound symbols.

The traces are built from IR records directly (tracing 100 000 ops would time the
tracer, not the passes) and look like traced user code: ltorch calls with prims
subsymbols, a recomputed call every fifth (cse merges it), a dead one every seventh
(dce drops it), a random op every eleventh (never merged or dropped), and variable
hints that reuse a few dozen names (rename versions them).
"""

from __future__ import annotations

import gc
import statistics
from dataclasses import dataclass

from timing import Clock, time_once

from tracecli.core import dtypes
from tracecli.core.gc_pause import gc_paused
from tracecli.core.names import NameRegistry
from tracecli.core.symbol import BoundSymbol
from tracecli.core.trace import Trace
from tracecli.core.values import TensorValue
from tracecli.ops import ltorch, prims
from tracecli.passes import REGISTRY

PASSES = ("dce", "cse", "rename", "renumber", "lower", "fuse")


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


def bench_passes(sizes: list[int], reps: int, clock: Clock) -> list[PassRow]:
    rows = []
    for n in sizes:
        trace = synthetic_trace(n)
        for name in PASSES:
            samples = []
            for _ in range(reps):
                gc.collect()
                # As the pipeline runs a pass: with the cyclic collector paused.
                with gc_paused():
                    seconds, result = time_once(lambda name=name, trace=trace: REGISTRY[name].run(trace), clock)
                samples.append(seconds * 1e3)
            work = sum(v for v in result.stats.values() if isinstance(v, int))
            rows.append(PassRow(name, n, statistics.median(samples), work))
    return rows


def print_passes(rows: list[PassRow]) -> None:
    print("3. Each pass on a synthetic trace of N bound symbols (median ms per run)")
    sizes = sorted({r.n for r in rows})
    header = "".join(f"{f'N={n}':>14}" for n in sizes)
    print(f"   {'pass':<10}{header}{'µs/bsym growth':>16}   work done at the largest N")
    for name in PASSES:
        mine = {r.n: r for r in rows if r.name == name}
        cells = "".join(f"{mine[n].ms:>11.1f} ms" for n in sizes)
        growth = mine[sizes[-1]].us_per_bsym / mine[sizes[0]].us_per_bsym
        print(f"   {name:<10}{cells}{growth:>15.2f}x   {mine[sizes[-1]].changed}")
    print("   growth: µs per bound symbol at the largest N over the smallest (1.00x = linear)")
    print()
