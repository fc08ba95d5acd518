"""tracecli benchmarks: the `trace` command's cost per op against torch.fx, and the
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
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.fx
from breaks_bench import bench_breaks, print_breaks
from executors_bench import bench_executors, executor_targets, print_executors
from meta_bench import bench_meta, meta_targets, print_meta
from models_bench import bench_models, print_models
from passes_bench import PASSES, PassRow, bench_passes, print_passes
from programs import MLPModule, mlp, mlp_inputs, write_chain
from startup_bench import bench_startup, print_startup, startup_targets
from symbolic_bench import bench_symbolic, print_symbolic
from timing import CPU_CLOCK, WALL_CLOCK, Clock, calibrate, per_call_seconds
from tracing_bench import TraceRow, bench_tracing, print_tracing
from training_bench import bench_training, print_training
from verify_bench import VerifyRow, bench_verify, print_verify

from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable

# The design's targets (design.md, "Performance").
# The whole `tracecli trace` (trace, verify, codegen, print) at most half of
# torch.fx.symbolic_trace's cost per op, marginal between the smallest and largest size.
TARGET_COMMAND_VS_FX = 0.5
TARGET_GROWTH = 1.5  # "linear": µs/op at the largest size over µs/op at the smallest
TARGET_VS_EAGER = 1.10  # compiled torch-executor call within 10% of eager
TARGET_PASS_MS = 1000.0  # each pass on 100 000 bound symbols "in well under a second"
TARGET_RENAME_MS = 300.0  # rename, the pass that rebuilds every bound symbol at every level


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
    print("12. Against the design targets")
    lines = []
    sizes = [r for r in tracing if not r.marginal]
    marginal = next((r for r in tracing if r.marginal), None)
    if marginal is not None:
        lines.append((f"trace command vs torch.fx, marginal N={sizes[0].n_ops}->{sizes[-1].n_ops}",
                      f"{marginal.vs_fx:.2f}x", f"<= {TARGET_COMMAND_VS_FX:.1f}x", marginal.vs_fx <= TARGET_COMMAND_VS_FX))
        growth = sizes[-1].us["command"] / sizes[0].us["command"]
        lines.append((f"linear: command µs/op N={sizes[-1].n_ops} / N={sizes[0].n_ops}", f"{growth:.2f}x",
                      f"<= {TARGET_GROWTH:.1f}x", growth <= TARGET_GROWTH))
    for r in execution:
        lines.append((f"compiled vs eager, {r.program}", f"{r.vs_eager:.2f}x", f"<= {TARGET_VS_EAGER:.2f}x",
                      r.vs_eager <= TARGET_VS_EAGER))
    largest = max((r.n for r in passes), default=0)
    for r in passes:
        if r.n == largest and r.name in PASSES:
            target = TARGET_RENAME_MS if r.name == "rename" and r.n >= 100_000 else TARGET_PASS_MS
            lines.append((f"pass {r.name}, N={r.n}", f"{r.ms:.0f} ms", f"< {target:.0f} ms", r.ms < target))
    for name in dict.fromkeys(r.name for r in passes):
        mine = sorted((r for r in passes if r.name == name), key=lambda r: r.n)
        growth = mine[-1].us_per_bsym / mine[0].us_per_bsym
        what = f"pass {name}" if name in PASSES else name
        lines.append((f"{what} linear: µs/bsym N={mine[-1].n} / N={mine[0].n}", f"{growth:.2f}x",
                      f"<= {TARGET_GROWTH:.1f}x", growth <= TARGET_GROWTH))
        if len(mine) > 2:  # --huge: the last tenfold step alone, past the caches' sizes
            step = mine[-1].us_per_bsym / mine[-2].us_per_bsym
            lines.append((f"{what} linear: µs/bsym N={mine[-1].n} / N={mine[-2].n}", f"{step:.2f}x",
                          f"<= {TARGET_GROWTH:.1f}x", step <= TARGET_GROWTH))
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


def _huge(huge: bool) -> list[int]:
    """The size the design's "linear up to a million bound symbols" is read at: opt-in,
    since each pass, the printer and codegen take seconds to tens of seconds there."""
    return [1_000_000] if huge else []


def _startup(quick: bool, wall: bool) -> list:
    with tempfile.TemporaryDirectory(prefix="tracecli-bench-") as tmp:
        return bench_startup(Path(tmp), 3 if quick else 9, wall)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes 100 and 1000 only, fewer repeats")
    parser.add_argument("--wall", action="store_true", help="time with the wall clock instead of thread CPU time")
    parser.add_argument("--huge", action="store_true",
                        help="section 3 at 1 000 000 bound symbols too, timed once (a few minutes more)")
    parser.add_argument("--only", choices=["tracing", "passes", "training", "breaks", "startup", "meta"],
                        help="run one section alone: tracing, passes, training, breaks, startup, meta "
                             "(meta with its summary lines)")
    args = parser.parse_args(argv)
    clock = WALL_CLOCK if args.wall else CPU_CLOCK
    # The per-op target is the marginal cost between the smallest and the largest size.
    sizes = [100, 1000] if args.quick else [500, 2000, 10000]
    # Fewer repeats where one run is long: the whole benchmark stays well under 3 minutes.
    reps_for = {500: 9, 2000: 5, 10000: 5} if not args.quick else {100: 5, 1000: 3}
    rounds = 7 if args.quick else 31

    # As the CLI does at start-up: what is imported stays, the collector need not rescan it.
    gc.freeze()
    print_environment(clock)
    if args.only == "tracing":
        with tempfile.TemporaryDirectory(prefix="tracecli-bench-") as tmp, contextlib.chdir(tmp):
            print_tracing(bench_tracing(sizes, reps_for, Path(tmp), clock))
        return 0
    if args.only == "passes":  # a pass's cost alone, while working on one, in about a minute
        print_passes(bench_passes(_pass_sizes(args.quick), PASS_REPS, clock, _huge(args.huge)))
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
    if args.only == "meta":
        meta = bench_meta(1 if args.quick else 3, with_transformers=not args.quick)
        print_meta(meta)
        print_summary([], [], [], [], meta_targets(meta), [])
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
    passes = bench_passes(_pass_sizes(args.quick), PASS_REPS, clock, _huge(args.huge))
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
    meta = bench_meta(1 if args.quick else 3, with_transformers=not args.quick)
    print_meta(meta)
    print_summary(tracing, execution, passes, verifying, executor_targets(executors) + meta_targets(meta),
                  startup_targets(startup))
    return 0


if __name__ == "__main__":
    sys.exit(main())
