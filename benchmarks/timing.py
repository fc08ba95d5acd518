"""Timing helpers: medians of repeated runs, with candidates interleaved.

The machine may be shared (tests running beside the benchmark), so by default time is
the benchmarking thread's CPU time: being preempted does not count, which keeps the
numbers stable under load. Everything measured runs on that one thread (section 2
pins torch to one intra-op thread). Candidates are also timed in alternation, round
after round, so that what load does get through (cache and memory contention) hits
all of them alike.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

Clock = Callable[[], float]
CPU_CLOCK: Clock = time.thread_time
WALL_CLOCK: Clock = time.perf_counter


def time_once(fn: Callable[[], object], clock: Clock = CPU_CLOCK) -> tuple[float, object]:
    """(seconds, result) of one call."""
    start = clock()
    result = fn()
    return clock() - start, result


def per_call_seconds(
    calls: dict[str, Callable[[], object]], *, number: int, rounds: int, clock: Clock = CPU_CLOCK
) -> dict[str, float]:
    """Median over `rounds` of the mean time of `number` back-to-back calls, per candidate."""
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, fn in calls.items():
            start = clock()
            for _ in range(number):
                fn()
            samples[name].append((clock() - start) / number)
    return {name: statistics.median(s) for name, s in samples.items()}


def calibrate(fn: Callable[[], object], target_s: float = 0.01, clock: Clock = CPU_CLOCK) -> int:
    """How many calls of `fn` take about `target_s`: long enough to swamp timer noise."""
    number = 1
    while True:
        start = clock()
        for _ in range(number):
            fn()
        if clock() - start >= target_s:
            return number
        number *= 2
