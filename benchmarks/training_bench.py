"""Section 8 of the benchmarks: training steps (forward, loss.backward(), an optimizer
step), traced by tracecli and captured by torch.compile with AOTAutograd
(`backend="aot_eager"`: dynamo's graphs and AOTAutograd's joint forward-backward, no
code generation), first call minus one eager step, in the same run. Each rep builds
the model and optimizer afresh, so every capture sees a first step."""

from __future__ import annotations

import importlib.util
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from tracecli.core.regions import backward_regions
from tracecli.frontend.loader import load_script
from tracecli.frontend.tracer import trace_callable

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class TrainingRow:
    name: str
    forward_bsyms: int  # the step's own bound symbols: forward, clipping, optimizer
    backward_bsyms: int  # the backward region's members
    trace_ms: float
    aot_ms: float

    @property
    def vs_aot(self) -> float:
        return self.trace_ms / self.aot_ms


def _sample_step() -> tuple[Callable, tuple]:
    script = load_script(str(ROOT / "sample_programs" / "train_step.py"))
    return script.namespace["train_step"], script.sample_inputs("cpu")


def _gpt2_step() -> tuple[Callable, tuple]:
    # Loaded afresh each time: a new model and optimizer, so every capture sees a first step.
    script = load_script(str(ROOT / "sample_programs" / "hf_train_step.py"))
    return script.namespace["train_step"], script.sample_inputs("cpu")


def _aot_first_call_ms(make: Callable) -> float:
    step, args = make()
    torch._dynamo.reset()
    compiled = torch.compile(step, backend="aot_eager")
    start = time.perf_counter()
    compiled(*args)
    seconds = time.perf_counter() - start
    # The first call also runs one step: take an eager step's time away.
    step, args = make()
    start = time.perf_counter()
    step(*args)
    return (seconds - (time.perf_counter() - start)) * 1e3


def bench_training(reps: int = 3) -> list[TrainingRow]:
    makers = [("train_step", _sample_step)]
    if importlib.util.find_spec("transformers") is not None:
        makers.append(("gpt2 step", _gpt2_step))
    rows = []
    for name, make in makers:
        times = []
        for _ in range(reps):
            step, args = make()
            start = time.perf_counter()
            program = trace_callable(step, args)
            times.append((time.perf_counter() - start) * 1e3)
        regions = backward_regions(program.trace)
        backward = sum(len(r.subsymbols) for r in regions)
        forward = len(program.trace.bsyms) - len(regions)
        try:
            aot = statistics.median(_aot_first_call_ms(make) for _ in range(reps))
        except Exception:  # noqa: BLE001 - torch.compile's own failure: the reference is missing
            aot = math.nan
        rows.append(TrainingRow(name, forward, backward, statistics.median(times), aot))
    return rows


def print_training(rows: list[TrainingRow]) -> None:
    print("8. Training steps: tracecli trace (forward + backward + optimizer) vs torch.compile capture "
          "(backend=aot_eager, first call)")
    print(f"   {'step':<12}{'forward':>9}{'backward':>10}{'tracecli':>12}{'aot_eager':>12}{'ratio':>8}")
    for r in rows:
        print(f"   {r.name:<12}{r.forward_bsyms:>9}{r.backward_bsyms:>10}{r.trace_ms:>9.1f} ms{r.aot_ms:>9.1f} ms"
              f"{r.vs_aot:>8.2f}")
    print("   forward/backward: bound symbols of the step and of its backward region; "
          "ratio = tracecli / aot_eager (lower is faster)")
    print()
