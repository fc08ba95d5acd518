"""Section 5 of the benchmarks: the verifier, structure only against structure plus the
type re-checks, with the rule cache cold (cleared before each run) and warm (left from
the run before, as after every pass but the first of a pipeline), on the passes bench's
synthetic traces and on the Hugging Face samples' traces."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from models_bench import ROOT, SAMPLES
from passes_bench import synthetic_trace
from timing import Clock, calibrate, per_call_seconds, time_once

from tracecli.core import typecheck
from tracecli.core.trace import Trace, walk
from tracecli.core.verify import verify
from tracecli.frontend.loader import load_script
from tracecli.frontend.tracer import trace_callable


@dataclass
class VerifyRow:
    name: str
    bsyms: int  # at every level
    rules: int  # distinct calls whose rule ran: the cache's size after a cold run
    structural_ms: float  # medians per run
    cold_ms: float
    warm_ms: float

    @property
    def cold_ratio(self) -> float:
        return self.cold_ms / self.structural_ms

    @property
    def warm_ratio(self) -> float:
        return self.warm_ms / self.structural_ms


def _model_traces() -> list[tuple[str, Trace]]:
    if importlib.util.find_spec("transformers") is None:
        return []
    traces = []
    for sample in SAMPLES:
        script = load_script(str(ROOT / "sample_programs" / sample))
        args, kwargs = script.sample_inputs("cpu")
        traces.append((sample.removesuffix(".py"), trace_callable(script.namespace["model"], args, kwargs).trace))
    return traces


def _bench_one(name: str, trace: Trace, rounds: int, clock: Clock) -> VerifyRow:
    def cold():
        typecheck.clear_cache()
        verify(trace)

    seconds, _ = time_once(cold, clock)
    rules = len(typecheck._cache)
    # About two seconds a trace: fewer rounds where one run is long.
    rounds = max(3, min(rounds, int(2.0 / (3 * seconds))))
    # Candidates alternate, so each warm run follows a cold one: the cache holds exactly
    # this trace's calls.
    seconds = per_call_seconds(
        {"structural": lambda: verify(trace, types=False), "cold": cold, "warm": lambda: verify(trace)},
        number=calibrate(cold, target_s=0.005, clock=clock), rounds=rounds, clock=clock,
    )
    return VerifyRow(name, sum(1 for _ in walk(trace.bsyms)), rules,
                     *(seconds[k] * 1e3 for k in ("structural", "cold", "warm")))


def bench_verify(sizes: list[int], rounds: int, clock: Clock) -> list[VerifyRow]:
    traces = [(f"synthetic N={n}", synthetic_trace(n)) for n in sizes] + _model_traces()
    return [_bench_one(name, trace, rounds, clock) for name, trace in traces]


def print_verify(rows: list[VerifyRow]) -> None:
    print("5. The verifier: structure only vs with type re-checks, rule cache cold and warm (median ms per run)")
    print(f"   {'trace':<18}{'bsyms':>8}{'rules':>7}{'structural':>12}{'cold':>10}{'warm':>10}"
          f"{'cold/str':>10}{'warm/str':>10}")
    for r in rows:
        print(f"   {r.name:<18}{r.bsyms:>8}{r.rules:>7}{r.structural_ms:>12.2f}{r.cold_ms:>10.2f}{r.warm_ms:>10.2f}"
              f"{r.cold_ratio:>10.2f}{r.warm_ratio:>10.2f}")
    print("   bsyms: bound symbols at every level; rules: distinct calls whose rule ran (cold);")
    print("   cold: cache cleared before the run, warm: the run after it (every pipeline verify but the first);")
    print("   the synthetic traces repeat a few calls, so cold is warm there: the samples show what rules cost")
    print()
