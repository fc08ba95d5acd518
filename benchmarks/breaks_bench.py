"""Section 9 of the benchmarks: what a graph break costs a served call.

A program traced in segments is served by tracing each call again as it runs, each
segment it meets looked up and run compiled (jobs/segments.py). Here one chain of N
elementwise ops carries k reads (`s = x.sum().item()`, k = 0, 1, 4, 16, spread along
it), and each call is timed, in the same run, as:

    eager     the program itself
    whole     the same program with `.item()` dropped (`s = x.sum()`, the same ops),
              traced whole and served by its one compiled trace, as main-block runs do
    retrace   that whole program served as a segmented one is: traced again on every
              call, its one segment run compiled (the cost of serving without any cut)
    served    the program with its k reads, served in k + 1 segments
    dynamo    torch.compile(backend="eager") of the program with its reads: dynamo
              breaks its graph at each `.item()` too; `dyn whole` is it on the
              program without them

One boundary's cost is (served - retrace) / k: what a cut adds beyond tracing the same
ops again, shown in µs and as a multiple of one eager op (eager of the whole program
over its op count); dynamo's is (dynamo - dyn whole) / k.
"""

from __future__ import annotations

import importlib.util
import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch
from programs import CHAIN_LINES
from timing import Clock, calibrate, per_call_seconds

from tracecli.executors import compile_for
from tracecli.frontend.tracer import trace_callable
from tracecli.jobs.segments import SegmentRunner, replay

BREAKS = (0, 1, 4, 16)
CANDIDATES = ("eager", "whole", "retrace", "served", "dynamo", "dyn whole")

_variants = itertools.count()


def breaks_source(n_ops: int, reads: int, read: bool, variant: int) -> str:
    """A chain of `n_ops` ops with `reads` sums spread along it, each read by `.item()`
    when `read` (else left a tensor: the same ops, no cut). The docstring makes each
    function's code unique (see programs.chain_source)."""
    at = {(2 * j + 1) * n_ops // (2 * reads) for j in range(reads)}  # the middles of k equal parts
    assert len(at) == reads, "more reads than ops to put them between"
    lines = []
    for i in range(n_ops):
        if i in at:
            lines.append("s = x.sum().item()" if read else "s = x.sum()")
        lines.append(CHAIN_LINES[i % len(CHAIN_LINES)])
    body = "".join(f"    {line}\n" for line in lines)
    return (f'import torch\n\n\ndef chain(x):\n    """{n_ops} ops, {reads} reads, read={read}, variant {variant}"""\n'
            f"{body}    return x\n")


def _load(directory: Path, source: str) -> Callable:
    path = directory / f"breaks_{next(_variants)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.chain


@dataclass
class BreakRow:
    n_ops: int
    shape: tuple[int, ...]
    reads: int
    us: dict[str, float] = field(default_factory=dict)  # candidate -> median µs per call
    segments: int = 1

    @property
    def ops(self) -> int:  # the chain's ops and the sums
        return self.n_ops + self.reads

    @property
    def eager_op_us(self) -> float:
        return self.us["whole eager"] / self.ops

    def boundary_us(self, mine: str = "served", reference: str = "retrace") -> float:
        return (self.us[mine] - self.us[reference]) / self.reads


def _served(fn: Callable, args: tuple) -> tuple[Callable, int]:
    """A call of `fn` served as a main-block run serves a program traced in segments,
    after its first call traced it: (the call, how many segments it met)."""
    runner = SegmentRunner("torch", [], check=False, shadow=True)
    program = trace_callable(fn, args, segments=runner)
    runner.traced(program.segments)
    options = {"name": "chain", "info": program.trace.info}
    return (lambda: replay(fn, args, {}, runner, **options)), len(program.segments)


def _whole(fn: Callable, args: tuple) -> Callable:
    """A call of `fn` served by its one trace, as a main-block run does."""
    program = trace_callable(fn, args)
    compiled = compile_for(program.trace, "torch")
    return lambda: compiled(*program.inputs_for(args, {}))


def _dynamo(fn: Callable, args: tuple) -> Callable:
    compiled = torch.compile(fn, backend="eager", dynamic=False)
    compiled(*args)  # captures every graph, between the breaks too
    return lambda: compiled(*args)


def bench_breaks(workdir: Path, configs: list[tuple[int, tuple[int, ...]]], rounds: int,
                 clock: Clock) -> list[BreakRow]:
    # One intra-op thread, as section 2: tiny tensors gain nothing from the pool.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch._dynamo.reset()
    # Dynamo warns at each `.item()` it breaks at, which is what is measured here.
    dynamo_log = logging.getLogger("torch._dynamo")
    level = dynamo_log.level
    dynamo_log.setLevel(logging.ERROR)
    try:
        rows = []
        for n_ops, shape in configs:
            x = torch.randn(shape)
            for reads in BREAKS:
                variant = next(_variants)
                reading = _load(workdir, breaks_source(n_ops, reads, True, variant))
                plain = _load(workdir, breaks_source(n_ops, reads, False, variant))
                served, segments = _served(reading, (x,))
                retrace, _ = _served(plain, (x,))
                calls = {
                    "eager": lambda fn=reading, x=x: fn(x),
                    "whole eager": lambda fn=plain, x=x: fn(x),
                    "whole": _whole(plain, (x,)),
                    "retrace": retrace,
                    "dyn whole": _dynamo(plain, (x,)),
                }
                if reads:  # with no read the program is served whole
                    calls["served"] = served
                    calls["dynamo"] = _dynamo(reading, (x,))
                expected = reading(x)
                for name in ("whole", "retrace", "served", "dynamo"):
                    if name in calls:  # timing a wrong program means nothing
                        torch.testing.assert_close(calls[name](), expected)
                number = calibrate(calls["retrace"], target_s=0.01, clock=clock)
                seconds = per_call_seconds(calls, number=number, rounds=rounds, clock=clock)
                rows.append(BreakRow(n_ops, shape, reads, {k: v * 1e6 for k, v in seconds.items()}, segments))
        return rows
    finally:
        torch.set_num_threads(threads)
        dynamo_log.setLevel(level)
        torch._dynamo.reset()


def _per_cut(rows: list[BreakRow], mine: str, reference: str) -> float:
    """µs per cut: the least-squares slope through the origin of (mine - reference)
    against k, over the rows with reads (most weight on the most cuts)."""
    cut = [r for r in rows if r.reads]
    return sum(r.reads * (r.us[mine] - r.us[reference]) for r in cut) / sum(r.reads ** 2 for r in cut)


def print_breaks(rows: list[BreakRow]) -> None:
    print("9. Graph breaks: a served call of an N-op chain with k `.item()` reads vs eager, vs the same ops traced"
          " whole, and vs dynamo (µs per call, median; 1 thread)")
    print(f"   {'program':<14}{'k':>3}{'eager':>9}{'whole':>9}{'retrace':>9}{'served':>9}{'calls/s':>8}"
          f"{'/eager':>8}{'/whole':>8}{'µs/cut':>8}{'dynamo':>9}{'/eager':>8}{'µs/cut':>8}{'served/dyn':>11}")
    for r in rows:
        label = f"N={r.n_ops} {'x'.join(map(str, r.shape))}"
        served = r.us.get("served", r.us["whole"])  # no read: served whole
        dynamo = r.us.get("dynamo", r.us["dyn whole"])
        cut = f"{r.boundary_us():>8.1f}" if r.reads else f"{'':>8}"
        dyn_cut = f"{r.boundary_us('dynamo', 'dyn whole'):>8.1f}" if r.reads else f"{'':>8}"
        print(f"   {label:<14}{r.reads:>3}{r.us['eager']:>9.1f}{r.us['whole']:>9.1f}{r.us['retrace']:>9.1f}"
              f"{served:>9.1f}{1e6 / served:>8.0f}{served / r.us['eager']:>8.2f}{served / r.us['whole']:>8.2f}{cut}"
              f"{dynamo:>9.1f}{dynamo / r.us['eager']:>8.2f}{dyn_cut}{served / dynamo:>11.2f}")
    print("   one cut (slope over k = 1, 4, 16), in µs and in eager ops of the same program:")
    for config in dict.fromkeys((r.n_ops, r.shape) for r in rows):
        mine = [r for r in rows if (r.n_ops, r.shape) == config]
        op_us = mine[0].eager_op_us
        ours, theirs = _per_cut(mine, "served", "retrace"), _per_cut(mine, "dynamo", "dyn whole")
        label = f"N={config[0]} {'x'.join(map(str, config[1]))}"
        print(f"   {label:<14} tracecli {ours:>6.0f} µs = {ours / op_us:>5.1f} ops, dynamo {theirs:>5.0f} µs ="
              f" {theirs / op_us:>4.1f} ops (one eager op {op_us:.1f} µs); retracing the {mine[0].ops}-op chain"
              f" {mine[0].us['retrace'] / mine[0].us['whole']:.0f}x its compiled call")
    print("   whole: `.item()` dropped (the same ops), one trace, as main-block runs serve it; retrace: that traced"
          " again on every call, as a served call is; served: in k+1 segments (k = 0: served whole);")
    print("   µs/cut: (served - retrace) / k, dynamo's (dynamo - its whole program) / k;"
          " dynamo: torch.compile(backend=\"eager\"), breaking at each `.item()` too")
    print()
