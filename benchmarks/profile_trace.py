"""Profile tracing a chain of N elementwise ops: where trace_callable's time goes, or
with --command, the whole `tracecli trace` command's (as make bench's section 1 runs it).

    .venv/bin/python benchmarks/profile_trace.py                 # N=10000, pyinstrument if installed
    .venv/bin/python benchmarks/profile_trace.py --profiler cprofile --ops 1000
    .venv/bin/python benchmarks/profile_trace.py --command       # load, trace, verify, codegen, print

pyinstrument (`pip install pyinstrument`) samples wall time and reads better than cProfile.
The line printed first is the unprofiled cost, for comparison with the profile's.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import gc
import io
import pstats
import sys
import tempfile
import time
from pathlib import Path

import torch
from programs import write_chain
from tracing_bench import run_trace_command, script

from tracecli.frontend.tracer import trace_callable

try:
    from pyinstrument import Profiler
except ImportError:  # optional: not a project dependency
    Profiler = None


class GCTimer:
    """Time spent in garbage collection, per generation, via gc.callbacks."""

    def __init__(self):
        self.seconds = [0.0, 0.0, 0.0]
        self.count = [0, 0, 0]
        self._start = 0.0

    def _callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._start = time.thread_time()
        else:
            gen = info["generation"]
            self.seconds[gen] += time.thread_time() - self._start
            self.count[gen] += 1

    def __enter__(self) -> GCTimer:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc) -> None:
        gc.callbacks.remove(self._callback)


def plain_run(work, n_ops: int, what: str) -> None:
    gc.collect()
    with GCTimer() as gct:
        start = time.thread_time()
        work()
        wall = time.thread_time() - start
    print(f"unprofiled {what}, N={n_ops}: {wall * 1e3:.0f} ms, {wall / n_ops * 1e6:.1f} µs/op (thread CPU time)")
    gc_total = sum(gct.seconds)
    print(
        f"  of which garbage collection: {gc_total * 1e3:.0f} ms ({gc_total / wall:.0%}); collections per "
        f"generation {gct.count}, ms {[round(s * 1e3, 1) for s in gct.seconds]}"
    )
    print()


def profile_pyinstrument(work) -> None:
    profiler = Profiler(interval=0.0005)
    profiler.start()
    work()
    profiler.stop()
    print(profiler.output_text(unicode=True, color=False))


def profile_cprofile(work, top: int) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    work()
    profiler.disable()
    for order in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).strip_dirs().sort_stats(order).print_stats(top)
        print(out.getvalue())


def _work(workdir: Path, n_ops: int, command: bool, x: torch.Tensor):
    """What is profiled, fresh each time: per-file caches are as cold as in a CLI run."""
    if command:
        path = script(workdir, n_ops)
        return lambda: run_trace_command(path)
    fn = write_chain(workdir, n_ops)
    return lambda: trace_callable(fn, (x,))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=10000, help="ops in the chain (default 10000)")
    parser.add_argument("--top", type=int, default=25, help="rows of cProfile output")
    parser.add_argument("--profiler", choices=("auto", "pyinstrument", "cprofile"), default="auto")
    parser.add_argument("--command", action="store_true",
                        help="the whole trace command (the CLI's trace function), not trace_callable alone")
    args = parser.parse_args(argv)
    use_pyinstrument = args.profiler == "pyinstrument" or (args.profiler == "auto" and Profiler is not None)
    if use_pyinstrument and Profiler is None:
        parser.error("pyinstrument is not installed: pip install pyinstrument")

    x = torch.randn(8)
    # As the CLI does at start-up: what is imported stays, the collector need not rescan it.
    gc.freeze()
    # Under the working directory, as in benchmarks/run.py.
    with tempfile.TemporaryDirectory(prefix="tracecli-profile-") as tmp, contextlib.chdir(tmp):
        workdir = Path(tmp)
        _work(workdir, 100, args.command, x)()  # one-off costs, not per-op ones
        what = "trace command" if args.command else "trace_callable"
        plain_run(_work(workdir, args.ops, args.command, x), args.ops, what)
        work = _work(workdir, args.ops, args.command, x)
        if use_pyinstrument:
            profile_pyinstrument(work)
        else:
            profile_cprofile(work, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
