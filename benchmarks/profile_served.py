"""Profile a served call of a program traced in segments: where its time goes.

    .venv/bin/python benchmarks/profile_served.py              # a 16-op chain with 4 `.item()` reads
    .venv/bin/python benchmarks/profile_served.py --ops 64 --reads 16

The chain is section 9's (benchmarks/breaks_bench.py). Each call is traced again as it
runs (jobs/segments.py `replay`), each segment it meets keyed, looked up and run
compiled; the profile's cumulative times are split into those parts. cProfile slows
small Python functions most, so the shares lean towards the tracer's own work; a
sampling profiler (py-spy, `pip install py-spy`) gives truer ones. The garbage
collector's time is measured apart (cProfile does not see it).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import gc
import pstats
import tempfile
import time
from pathlib import Path

import torch
from breaks_bench import _load, _served, breaks_source
from profile_trace import GCTimer


def _cumulative(stats: pstats.Stats, file_end: str, name: str, caller: str | None = None) -> float:
    """Seconds in `name` (of a file ending `file_end`), all calls or those from `caller`."""
    total = 0.0
    for (file, _, func), (_, _, _, cumtime, callers) in stats.stats.items():
        if func == name and file.endswith(file_end):
            if caller is None:
                total += cumtime
            else:
                total += sum(c[3] for (_, _, f), c in callers.items() if f == caller)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=16)
    parser.add_argument("--reads", type=int, default=4)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    torch.set_num_threads(1)
    gc.freeze()
    with tempfile.TemporaryDirectory(prefix="tracecli-bench-") as tmp, contextlib.chdir(tmp):
        fn = _load(Path(tmp), breaks_source(args.ops, args.reads, True, 0))
        call, segments = _served(fn, (torch.randn(8),))
        for _ in range(20):  # compiled segments and torch's caches warm
            call()
        with GCTimer() as collector:
            start = time.thread_time()
            for _ in range(args.calls):
                call()
            plain = (time.thread_time() - start) / args.calls
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(args.calls):
            call()
        profile.disable()
    stats = pstats.Stats(profile)
    total = _cumulative(stats, "jobs/segments.py", "replay")
    user = _cumulative(stats, fn.__code__.co_filename, "chain")
    reads = _cumulative(stats, "frontend/segments.py", "break_at_read")
    cuts = _cumulative(stats, "frontend/segments.py", "cut")
    runs = _cumulative(stats, "jobs/segments.py", "run")
    key = _cumulative(stats, "jobs/segments.py", "_key")
    lookup = _cumulative(stats, "jobs/segments.py", "_compiled")
    execute = _cumulative(stats, "executors/registry.py", "run")
    resplit = _cumulative(stats, "frontend/segments.py", "segments")
    finish = _cumulative(stats, "frontend/segments.py", "finish")
    parts = {
        "retrace: the user's ops recorded": user - reads,
        "retrace: trace_callable's setup and teardown": total - user - resplit - finish,
        "cut: live values, outputs, inputs (Segmenting.cut)": cuts - _cumulative(stats, "jobs/segments.py", "run", "cut"),
        "the read itself, noted (break_at_read)": reads - cuts,
        "segment key (_key)": key,
        "lookup (SegmentRunner._compiled)": lookup,
        "the compiled segments' calls": execute,
        "SegmentRunner.run's own (grad mode, torch function off)": runs - key - lookup - execute,
        "final split into segments (Segmenting.segments)": resplit,
    }
    print(f"{args.ops}-op chain, {args.reads} reads, {segments} segments: {plain * 1e6:.0f} µs per served call"
          f" unprofiled (thread CPU time), of which the garbage collector {sum(collector.seconds) / args.calls * 1e6:.0f}"
          f" µs ({collector.count[0]} young and {collector.count[1] + collector.count[2]} older collections in"
          f" {args.calls} calls)")
    print(f"profiled: {total / args.calls * 1e6:.0f} µs per call; shares of it:")
    for name, seconds in sorted(parts.items(), key=lambda item: -item[1]):
        print(f"  {name:<58} {seconds / total * 100:5.1f}%")


if __name__ == "__main__":
    main()
