"""tracecli benchmarks: trace/print/codegen cost per op against torch.fx, and the
compiled torch-executor call against eager, printed next to the design targets.

    .venv/bin/python benchmarks/run.py           # full run, 30-60 s
    .venv/bin/python benchmarks/run.py --quick   # smaller sizes, fewer repeats
    .venv/bin/python benchmarks/run.py --wall    # wall-clock time instead of thread CPU time
    .venv/bin/python benchmarks/run.py --only startup   # start-up against `import torch` alone

Each section is one function returning rows, and the summary reads those rows: a new
section (per-pass timings, say) is a new function plus its lines in `main`.
Numbers are medians; they are benchmarks, not timed tests, so nothing here fails.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import platform
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.fx
from breaks_bench import bench_breaks, print_breaks
from executors_bench import bench_executors, executor_targets, print_executors
from models_bench import bench_models, print_models
from passes_bench import PassRow, bench_passes, print_passes
from programs import MLPModule, mlp, mlp_inputs, write_chain
from startup_bench import bench_startup, print_startup, startup_targets
from symbolic_bench import bench_symbolic, print_symbolic
from timing import CPU_CLOCK, WALL_CLOCK, Clock, calibrate, per_call_seconds, time_once
from training_bench import bench_training, print_training
from verify_bench import VerifyRow, bench_verify, print_verify

from tracecli.core.printing import format_trace
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable

# The design's targets (design.md, "Performance").
TARGET_US_PER_OP = 20.0  # trace + passes + codegen (the passes are timed separately, section 3)
TARGET_TRACE_VS_FX = 0.5  # tracing at most half of torch.fx.symbolic_trace's cost per op, at the largest size
TARGET_VS_FX = 1.0  # trace + codegen (fx's own work) at most as slow as fx per op, at the largest size
TARGET_GROWTH = 1.5  # "linear": µs/op at the largest size over µs/op at the smallest
TARGET_VS_EAGER = 1.10  # compiled torch-executor call within 10% of eager
TARGET_PASS_MS = 1000.0  # each pass on 100 000 bound symbols "in well under a second"
TARGET_RENAME_MS = 300.0  # rename, the pass that rebuilds every bound symbol at every level


# -- section 1: tracing cost per op ------------------------------------------------------


@dataclass
class TraceRow:
    n_ops: int
    reps: int
    trace_us: float  # all per op, medians over reps
    print_us: float
    codegen_us: float
    core_us: float  # trace + codegen: what the design's per-op target measures, and what fx does
    total_us: float  # trace + print + codegen
    fx_us: float

    @property
    def trace_vs_fx(self) -> float:
        return self.trace_us / self.fx_us

    @property
    def core_vs_fx(self) -> float:
        return self.core_us / self.fx_us

    @property
    def total_vs_fx(self) -> float:
        return self.total_us / self.fx_us


def _trace_phases(fn, x, clock: Clock) -> dict[str, float]:
    """Seconds for each phase of one tracecli run, and for fx on the same function."""
    t_trace, program = time_once(lambda: trace_callable(fn, (x,)), clock)
    t_print, _ = time_once(lambda: format_trace(program.trace), clock)
    t_codegen, _ = time_once(lambda: compile_trace(program.trace), clock)
    t_fx, _ = time_once(lambda: torch.fx.symbolic_trace(fn), clock)
    return {"trace": t_trace, "print": t_print, "codegen": t_codegen, "fx": t_fx}


def bench_tracing(sizes: list[int], reps_for: dict[int, int], workdir: Path, clock: Clock) -> list[TraceRow]:
    x = torch.randn(8)
    # First calls pay one-off costs (imports, torch's lazy init, tracecli's per-callable
    # caches) that are not per-op costs: pay them before timing anything.
    _trace_phases(write_chain(workdir, 100), x, clock)
    rows = []
    for n in sizes:
        samples: dict[str, list[float]] = {}
        reps = reps_for.get(n, 3)
        for _ in range(reps):
            fn = write_chain(workdir, n)
            # Garbage left by the previous run is collected now, not charged to this one.
            gc.collect()
            for phase, seconds in _trace_phases(fn, x, clock).items():
                samples.setdefault(phase, []).append(seconds / n * 1e6)
        med = {phase: statistics.median(values) for phase, values in samples.items()}
        # Sums of the phase medians, so that the columns add up as printed.
        core = med["trace"] + med["codegen"]
        rows.append(TraceRow(n, reps, med["trace"], med["print"], med["codegen"], core, core + med["print"], med["fx"]))
    return rows


def print_tracing(rows: list[TraceRow]) -> None:
    print("1. Tracing a chain of N elementwise ops (µs per op, median)")
    print(
        f"   {'N':>6} {'reps':>4} {'trace':>7} {'print':>7} {'codegen':>7} {'total':>7} {'fx':>7} {'total/fx':>8}"
        f" {'trace+cg':>8} {'/fx':>5} {'trace/fx':>8}"
    )
    for r in rows:
        print(
            f"   {r.n_ops:>6} {r.reps:>4} {r.trace_us:>7.1f} {r.print_us:>7.1f} {r.codegen_us:>7.1f}"
            f" {r.total_us:>7.1f} {r.fx_us:>7.1f} {r.total_vs_fx:>8.2f} {r.core_us:>8.1f} {r.core_vs_fx:>5.2f}"
            f" {r.trace_vs_fx:>8.2f}"
        )
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        print(
            f"   growth N={first.n_ops}->{last.n_ops}, µs/op ratio (1.00x = linear): total "
            f"{last.total_us / first.total_us:.2f}x, trace {last.trace_us / first.trace_us:.2f}x, "
            f"print {last.print_us / first.print_us:.2f}x, codegen {last.codegen_us / first.codegen_us:.2f}x, "
            f"fx {last.fx_us / first.fx_us:.2f}x"
        )
    print("   trace = trace_callable, print = format_trace, codegen = compile_trace, total = all three;")
    print("   fx = torch.fx.symbolic_trace of the same function; trace+cg = the work fx does (trace, generate code)")
    print("   codegen is mostly CPython's compile() of the generated function, which fx's own time includes too")
    print()


# -- section 2: compiled call vs eager ---------------------------------------------------


@dataclass
class ExecRow:
    program: str
    ops: int  # top-level bound symbols in the trace
    eager_us: float  # per call, medians
    compiled_us: float
    with_inputs_us: float  # compiled call plus TracedProgram.inputs_for, as the main-block runner calls it

    @property
    def vs_eager(self) -> float:
        return self.compiled_us / self.eager_us


def _exec_programs(workdir: Path) -> list[tuple[str, object, tuple]]:
    return [
        ("chain N=100", write_chain(workdir, 100), (torch.randn(8),)),
        ("mlp function", mlp, mlp_inputs()),
        ("mlp nn.Module", MLPModule(), (torch.randn(4, 16),)),
    ]


def bench_execution(workdir: Path, rounds: int, clock: Clock) -> list[ExecRow]:
    # One intra-op thread: tiny tensors gain nothing from the pool, and on a shared
    # two-core machine its wake-ups swing eager and compiled calls alike by 2-10x.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return [_bench_program(label, fn, args, rounds, clock) for label, fn, args in _exec_programs(workdir)]
    finally:
        torch.set_num_threads(threads)


def _bench_program(label: str, fn, args: tuple, rounds: int, clock: Clock) -> ExecRow:
    program = trace_callable(fn, args)
    compiled = compile_trace(program.trace)
    inputs = program.inputs_for(args, {})
    # The compare step of `tracecli run` times both sides under no_grad: so do we.
    with torch.no_grad():
        torch.testing.assert_close(compiled(*inputs), fn(*args))  # timing a wrong program means nothing
        per_call = per_call_seconds(
            {
                "eager": lambda: fn(*args),
                "compiled": lambda: compiled(*inputs),
                "with_inputs": lambda: compiled(*program.inputs_for(args, {})),
            },
            number=calibrate(lambda: fn(*args), clock=clock), rounds=rounds, clock=clock,
        )
    return ExecRow(label, len(program.trace.bsyms), *(per_call[k] * 1e6 for k in ("eager", "compiled", "with_inputs")))


def print_execution(rows: list[ExecRow]) -> None:
    print("2. Compiled torch-executor call vs eager: tiny CPU tensors, no_grad, 1 thread (µs per call, median)")
    print(f"   {'program':<14} {'ops':>4} {'eager':>9} {'compiled':>9} {'ratio':>7} {'+inputs_for':>12}")
    for r in rows:
        print(
            f"   {r.program:<14} {r.ops:>4} {r.eager_us:>9.1f} {r.compiled_us:>9.1f} {r.vs_eager:>7.2f}"
            f" {r.with_inputs_us:>12.1f}"
        )
    print("   +inputs_for: compiled(*program.inputs_for(args, {})), the per-call path of main-block runs")
    print()


# -- summary -------------------------------------------------------------------------------


def _verdict(ok: bool) -> str:
    return "meets" if ok else "MISSES"


def print_summary(
    tracing: list[TraceRow], execution: list[ExecRow], passes: list[PassRow], verifying: list[VerifyRow],
    executors: list[tuple[str, str, str, bool]], startup: list[tuple[str, str, str, bool]],
) -> None:
    print("11. Against the design targets")
    lines = []
    for r in tracing:
        lines.append((f"trace+codegen, N={r.n_ops}", f"{r.core_us:.1f} µs/op", f"< {TARGET_US_PER_OP:.0f} µs/op",
                      r.core_us < TARGET_US_PER_OP))
    if len(tracing) > 1:
        growth = tracing[-1].total_us / tracing[0].total_us
        lines.append((f"linear: total µs/op N={tracing[-1].n_ops} / N={tracing[0].n_ops}", f"{growth:.2f}x",
                      f"<= {TARGET_GROWTH:.1f}x", growth <= TARGET_GROWTH))
    if tracing:
        last = tracing[-1]
        lines.append((f"trace vs torch.fx, N={last.n_ops}", f"{last.trace_vs_fx:.2f}x",
                      f"<= {TARGET_TRACE_VS_FX:.1f}x", last.trace_vs_fx <= TARGET_TRACE_VS_FX))
        lines.append((f"trace+codegen vs torch.fx, N={last.n_ops}", f"{last.core_vs_fx:.2f}x",
                      f"<= {TARGET_VS_FX:.1f}x", last.core_vs_fx <= TARGET_VS_FX))
        lines.append((f"total (with print) vs torch.fx, N={last.n_ops}", f"{last.total_vs_fx:.2f}x",
                      f"<= {TARGET_VS_FX:.1f}x", last.total_vs_fx <= TARGET_VS_FX))
    for r in execution:
        lines.append((f"compiled vs eager, {r.program}", f"{r.vs_eager:.2f}x", f"<= {TARGET_VS_EAGER:.2f}x",
                      r.vs_eager <= TARGET_VS_EAGER))
    largest = max((r.n for r in passes), default=0)
    for r in passes:
        if r.n == largest:
            target = TARGET_RENAME_MS if r.name == "rename" and r.n >= 100_000 else TARGET_PASS_MS
            lines.append((f"pass {r.name}, N={r.n}", f"{r.ms:.0f} ms", f"< {target:.0f} ms", r.ms < target))
    for name in dict.fromkeys(r.name for r in passes):
        mine = sorted((r for r in passes if r.name == name), key=lambda r: r.n)
        growth = mine[-1].us_per_bsym / mine[0].us_per_bsym
        lines.append((f"pass {name} linear: µs/bsym N={mine[-1].n} / N={mine[0].n}", f"{growth:.2f}x",
                      f"<= {TARGET_GROWTH:.1f}x", growth <= TARGET_GROWTH))
    # The pipeline verifies after every pass, so the verifier shares a pass's budget.
    synthetic = [r for r in verifying if r.name.startswith("synthetic")]
    if synthetic:
        r = max(synthetic, key=lambda r: r.bsyms)
        lines.append((f"verify with types, {r.name}", f"{r.cold_ms:.0f} ms", f"< {TARGET_PASS_MS:.0f} ms",
                      r.cold_ms < TARGET_PASS_MS))
    lines.extend(executors)
    lines.extend(startup)
    width = max(len(name) for name, *_ in lines)
    for name, measured, target, ok in lines:
        print(f"   {name:<{width}}  {measured:>12}  target {target:<12} {_verdict(ok)}")


def print_environment(clock: Clock) -> None:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"tracecli benchmarks · Python {platform.python_version()} · torch {torch.__version__} · "
        f"{os.cpu_count()} CPUs · load {load:.2f} · gc {'on' if gc.isenabled() else 'off'} · "
        f"{'wall-clock time' if clock is WALL_CLOCK else 'thread CPU time (--wall for wall-clock)'}"
    )
    print()


# A median of five: one pass at 100 000 bound symbols swings by a tenth from run to run.
PASS_REPS = 5


def _breaks(quick: bool, clock: Clock) -> list:
    # The chain at tiny and at 256x256 tensors: where a cut's cost shows, and where the
    # ops' own work begins to hide it.
    configs = [(16, (8,)), (64, (8,)), (64, (256, 256))]
    with tempfile.TemporaryDirectory(prefix="tracecli-bench-") as tmp, contextlib.chdir(tmp):
        return bench_breaks(Path(tmp), configs[:2] if quick else configs, 5 if quick else 15, clock)


def _pass_sizes(quick: bool) -> list[int]:
    return [1_000, 10_000] if quick else [10_000, 100_000]


def _startup(quick: bool, wall: bool) -> list:
    with tempfile.TemporaryDirectory(prefix="tracecli-bench-") as tmp:
        return bench_startup(Path(tmp), 3 if quick else 9, wall)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes 100 and 1000 only, fewer repeats")
    parser.add_argument("--wall", action="store_true", help="time with the wall clock instead of thread CPU time")
    parser.add_argument("--only", choices=["passes", "training", "breaks", "startup"],
                        help="run one section alone (no summary): passes, training, breaks, startup")
    args = parser.parse_args(argv)
    clock = WALL_CLOCK if args.wall else CPU_CLOCK
    sizes = [100, 1000] if args.quick else [100, 1000, 10000]
    # Fewer repeats where one run is long: the whole benchmark stays well under 3 minutes.
    reps_for = {100: 15, 1000: 7, 10000: 5} if not args.quick else {100: 5, 1000: 3}
    rounds = 7 if args.quick else 31

    # As the CLI does at start-up: what is imported stays, the collector need not rescan it.
    gc.freeze()
    print_environment(clock)
    if args.only == "passes":  # a pass's cost alone, while working on one, in about a minute
        print_passes(bench_passes(_pass_sizes(args.quick), PASS_REPS, clock))
        return 0
    if args.only == "training":
        print_training(bench_training(1 if args.quick else 3))
        return 0
    if args.only == "breaks":
        print_breaks(_breaks(args.quick, clock))
        return 0
    if args.only == "startup":
        print_startup(_startup(args.quick, args.wall))
        return 0
    # Measured first, printed in its place: after the sections before it ran in this
    # process, torch.compile of the Hugging Face GPT-2 training step fails.
    training = bench_training(1 if args.quick else 3)
    # The generated scripts live under the working directory, as a script given to
    # `tracecli run` usually does: the tracer shows their paths relative to it.
    with tempfile.TemporaryDirectory(prefix="tracecli-bench-") as tmp, contextlib.chdir(tmp):
        workdir = Path(tmp)
        tracing = bench_tracing(sizes, reps_for, workdir, clock)
        print_tracing(tracing)
        execution = bench_execution(workdir, rounds, clock)
        print_execution(execution)
    passes = bench_passes(_pass_sizes(args.quick), PASS_REPS, clock)
    print_passes(passes)
    print_models(bench_models(reps=1 if args.quick else 3))
    verifying = bench_verify([10_000, 100_000] if not args.quick else [1_000, 10_000], rounds, clock)
    print_verify(verifying)
    with tempfile.TemporaryDirectory(prefix="tracecli-bench-") as tmp, contextlib.chdir(tmp):
        print_symbolic(bench_symbolic(Path(tmp), 3 if args.quick else 7, clock))
    executors = bench_executors(3 if args.quick else 7)
    print_executors(executors)
    print_training(training)
    print_breaks(_breaks(args.quick, clock))
    startup = _startup(args.quick, args.wall)
    print_startup(startup)
    print_summary(tracing, execution, passes, verifying, executor_targets(executors), startup_targets(startup))
    return 0


if __name__ == "__main__":
    sys.exit(main())
