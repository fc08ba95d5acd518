"""Section 1 of the benchmarks: the whole `tracecli trace` command per op, against torch.fx.

The command is the CLI's own `trace` function, called in this process on a script of N
elementwise ops (`tracecli trace chainN.py -i f32[8]`), its output going to a null
stream: loading the script, choosing the entry, tracing, verifying, generating and
compiling the code, and printing the trace at the default depth. Process start-up is
not in it (section 1 of issue 28's start-up figure is measured apart). Its phases are
also timed one by one, in the order the command runs them and on the same objects, so
that work one phase leaves for the next (the text codegen formats, which printing
reuses) is counted where the command does it; "other" is what the command does beyond
them (loading the script, choosing the entry, making the inputs, freeing the trace).

The per-op figure that the design's target reads is marginal: the difference between
N=500 and N=10 000 over the 9 500 ops between, so that what a run costs whatever its
size (start-up of the command's machinery, a console) drops out, for fx as for us.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import os
import statistics
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.fx
from programs import chain_source, write_chain
from timing import Clock, time_once

from tracecli.cli import app as cli
from tracecli.core.printing import format_trace
from tracecli.core.verify import verify
from tracecli.executors import compile_for
from tracecli.frontend.tracer import trace_callable

PHASES = ("trace", "verify", "codegen", "print", "other", "command", "fx")


@dataclass
class TraceRow:
    n_ops: int
    reps: int
    us: dict[str, float]  # per phase, µs per op, medians over reps (marginal rows: the marginal cost)
    marginal: bool = False

    @property
    def vs_fx(self) -> float:
        return self.us["command"] / self.us["fx"]

    @property
    def label(self) -> str:
        return "marginal" if self.marginal else str(self.n_ops)


def run_trace_command(path: Path) -> None:
    """`tracecli trace PATH -i f32[8]` as the CLI runs it, output to a null stream."""
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null), contextlib.redirect_stderr(null):
        cli.trace(str(path), inputs=["f32[8]"], color=cli.opt.Color.never)


_scripts = itertools.count()


def script(workdir: Path, n_ops: int) -> Path:
    """A new file each time: per-file caches (source lines, display paths) are cold, as
    when the CLI traces a script once."""
    number = next(_scripts)
    path = workdir / f"command{n_ops}_{number}.py"
    path.write_text(chain_source(n_ops, number))
    return path.relative_to(workdir)


def _traced_phases(fn, x: torch.Tensor, clock: Clock) -> dict[str, float]:
    """Seconds for each phase, in the command's order, on one trace (freed on return)."""
    t_trace, program = time_once(lambda: trace_callable(fn, (x,)), clock)
    trace = program.trace
    t_verify, _ = time_once(lambda: verify(trace), clock)
    t_codegen, _ = time_once(lambda: compile_for(trace, "torch"), clock)
    t_print, _ = time_once(lambda: format_trace(trace, 1), clock)
    return {"trace": t_trace, "verify": t_verify, "codegen": t_codegen, "print": t_print}


def _phases(workdir: Path, n_ops: int, x: torch.Tensor, clock: Clock) -> dict[str, float]:
    """Seconds per phase of one run, the whole command's, and fx's on the same chain."""
    fn = write_chain(workdir, n_ops)
    gc.collect()
    phases = _traced_phases(fn, x, clock)
    path = script(workdir, n_ops)
    gc.collect()
    t_command, _ = time_once(lambda: run_trace_command(path), clock)
    gc.collect()
    t_fx, _ = time_once(lambda: torch.fx.symbolic_trace(fn), clock)
    return {**phases, "other": t_command - sum(phases.values()), "command": t_command, "fx": t_fx}


def bench_tracing(sizes: list[int], reps_for: dict[int, int], workdir: Path, clock: Clock) -> list[TraceRow]:
    x = torch.randn(8)
    # First calls pay one-off costs (imports, torch's lazy init, tracecli's per-callable
    # caches) that are not per-op costs: pay them before timing anything.
    _phases(workdir, 100, x, clock)
    rows, seconds = [], {}
    for n in sizes:
        reps = reps_for.get(n, 3)
        samples = [_phases(workdir, n, x, clock) for _ in range(reps)]
        seconds[n] = {phase: statistics.median(s[phase] for s in samples) for phase in PHASES}
        rows.append(TraceRow(n, reps, {phase: t / n * 1e6 for phase, t in seconds[n].items()}))
    small, large = sizes[0], sizes[-1]
    if len(sizes) > 1:
        marginal = {phase: (seconds[large][phase] - seconds[small][phase]) / (large - small) * 1e6 for phase in PHASES}
        rows.append(TraceRow(large - small, 0, marginal, marginal=True))
    return rows


def print_tracing(rows: list[TraceRow]) -> None:
    print("1. `tracecli trace` of a chain of N elementwise ops, in process (µs per op, median)")
    print(f"   {'N':>8} {'reps':>4}" + "".join(f" {phase:>8}" for phase in PHASES) + f" {'cmd/fx':>7}")
    for r in rows:
        reps = "" if r.marginal else str(r.reps)
        print(f"   {r.label:>8} {reps:>4}" + "".join(f" {r.us[p]:>8.1f}" for p in PHASES) + f" {r.vs_fx:>7.2f}")
    marginal = next((r for r in rows if r.marginal), None)
    if marginal is not None:
        sizes = [r.n_ops for r in rows if not r.marginal]
        print(f"   marginal: (time at N={sizes[-1]} - time at N={sizes[0]}) / {marginal.n_ops} ops")
    print("   command = the CLI's trace function (load, trace, verify, codegen, print), output to a null stream;")
    print("   its phases timed one by one in its order; other = command - phases (loading the script, choosing")
    print("   the entry, the inputs, freeing the trace); fx = torch.fx.symbolic_trace of the same function")
    print()
