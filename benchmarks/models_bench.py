"""Section 4 of the benchmarks: the Hugging Face samples, traced by tracecli and by
dynamo (`torch.compile(backend="eager")`, first call: what it costs to capture the
graph), in the same run. Skipped when transformers is not installed."""

from __future__ import annotations

import importlib.util
import math
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from tracecli.executors.codegen import compile_trace
from tracecli.frontend.loader import load_script
from tracecli.frontend.tracer import trace_callable
from tracecli.jobs.compare import compare_outputs

SAMPLES = ("hf_gpt2.py", "hf_llama.py", "hf_bert.py")
ROOT = Path(__file__).resolve().parent.parent


@dataclass
class ModelRow:
    name: str
    bsyms: int
    trace_ms: float
    dynamo_ms: float
    max_abs_error: float

    @property
    def vs_dynamo(self) -> float:
        return self.trace_ms / self.dynamo_ms


def _dynamo_first_call_ms(model, args, kwargs) -> float:
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="eager")
    start = time.perf_counter()
    with torch.no_grad():
        compiled(*args, **kwargs)
    seconds = time.perf_counter() - start
    # The first call also runs the model once; take that away to leave the capture cost.
    start = time.perf_counter()
    with torch.no_grad():
        model(*args, **kwargs)
    return (seconds - (time.perf_counter() - start)) * 1e3


def bench_models(reps: int = 3) -> list[ModelRow]:
    if importlib.util.find_spec("transformers") is None:
        return []
    rows = []
    for sample in SAMPLES:
        script = load_script(str(ROOT / "sample_programs" / sample))
        model = script.namespace["model"]
        args, kwargs = script.sample_inputs("cpu")
        times = []
        for _ in range(reps):
            start = time.perf_counter()
            program = trace_callable(model, args, kwargs)
            times.append((time.perf_counter() - start) * 1e3)
        try:
            dynamo = statistics.median(_dynamo_first_call_ms(model, args, kwargs) for _ in range(reps))
        except Exception:  # noqa: BLE001 - dynamo's own failure (seen: GPT-2 on a CPU-only build)
            dynamo = math.nan  # the reference is missing, the rest of the run still counts
        with torch.no_grad():
            expected = model(*args, **kwargs)
            actual = compile_trace(program.trace)(*program.inputs)
        checks = compare_outputs([], expected, actual)
        error = max((c.max_abs_error or 0.0) for c in checks)
        rows.append(ModelRow(sample.removesuffix(".py"), len(program.trace.bsyms), statistics.median(times), dynamo, error))
    return rows


def print_models(rows: list[ModelRow]) -> None:
    print("4. Hugging Face samples: tracecli trace vs dynamo capture (torch.compile backend=eager, first call)")
    if not rows:
        print("   skipped: transformers is not installed")
        print()
        return
    print(f"   {'model':<10}{'bsyms':>7}{'tracecli':>12}{'dynamo':>12}{'ratio':>8}{'max abs err':>13}")
    for r in rows:
        print(
            f"   {r.name:<10}{r.bsyms:>7}{r.trace_ms:>9.1f} ms{r.dynamo_ms:>9.1f} ms{r.vs_dynamo:>8.2f}"
            f"{r.max_abs_error:>13.3g}"
        )
    print("   ratio = tracecli trace time / dynamo capture time (lower is faster); nan: dynamo failed to capture")
    print()
