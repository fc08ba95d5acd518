"""Profile tracing a chain of N elementwise ops: where trace_callable's time goes.

    .venv/bin/python benchmarks/profile_trace.py                 # N=10000, pyinstrument if installed
    .venv/bin/python benchmarks/profile_trace.py --profiler cprofile --ops 1000

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


def plain_run(fn, x, n_ops: int) -> None:
    gc.collect()
    with GCTimer() as gct:
        start = time.thread_time()
        trace_callable(fn, (x,))
        wall = time.thread_time() - start
    print(f"unprofiled trace_callable, N={n_ops}: {wall * 1e3:.0f} ms, {wall / n_ops * 1e6:.1f} µs/op (thread CPU time)")
    gc_total = sum(gct.seconds)
    print(
        f"  of which garbage collection: {gc_total * 1e3:.0f} ms ({gc_total / wall:.0%}); collections per "
        f"generation {gct.count}, ms {[round(s * 1e3, 1) for s in gct.seconds]}"
    )
    print()


def profile_pyinstrument(fn, x) -> None:
    profiler = Profiler(interval=0.0005)
    profiler.start()
    trace_callable(fn, (x,))
    profiler.stop()
    print(profiler.output_text(unicode=True, color=False))


def profile_cprofile(fn, x, top: int) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    trace_callable(fn, (x,))
    profiler.disable()
    for order in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).strip_dirs().sort_stats(order).print_stats(top)
        print(out.getvalue())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=10000, help="ops in the chain (default 10000)")
    parser.add_argument("--top", type=int, default=25, help="rows of cProfile output")
    parser.add_argument("--profiler", choices=("auto", "pyinstrument", "cprofile"), default="auto")
    args = parser.parse_args(argv)
    use_pyinstrument = args.profiler == "pyinstrument" or (args.profiler == "auto" and Profiler is not None)
    if use_pyinstrument and Profiler is None:
        parser.error("pyinstrument is not installed: pip install pyinstrument")

    x = torch.randn(8)
    # Under the working directory, as in benchmarks/run.py.
    with tempfile.TemporaryDirectory(prefix="tracecli-profile-") as tmp, contextlib.chdir(tmp):
        workdir = Path(tmp)
        trace_callable(write_chain(workdir, 100), (x,))  # one-off costs, not per-op ones
        # Each run gets a fresh function so per-file caches are as cold as in a CLI run.
        plain_run(write_chain(workdir, args.ops), x, args.ops)
        fn = write_chain(workdir, args.ops)
        if use_pyinstrument:
            profile_pyinstrument(fn, x)
        else:
            profile_cprofile(fn, x, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
