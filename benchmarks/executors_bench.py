"""Section 7 of the benchmarks: the executors against eager and `torch.compile` on the
same programs in the same run, at sizes real code runs: wall-clock time per call
(medians, candidates taking turns) and peak memory (benchmarks/memory.py).

Programs: a 20-op elementwise chain on 1024x1024 float32, the MLP and GPT block samples
at batch 8, sequence 256, width 512, and the Hugging Face GPT-2 sample. Candidates: eager,
the torch executor, every other registered executor that compiles (inductor, once
registered), and torch.compile(fn) itself. Compilation is paid before timing and
reported apart.
"""

from __future__ import annotations

import importlib.util
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch
from memory import peak_bytes
from timing import WALL_CLOCK, calibrate, per_call_seconds

from tracecli.executors import EXECUTORS, compile_for
from tracecli.frontend.loader import load_script
from tracecli.frontend.tracer import trace_callable

ROOT = Path(__file__).resolve().parent.parent
# The targets: torch executor within 10% of eager in time and 20% in peak memory;
# a fusing executor at least 2x eager on the chain and within 10% of torch.compile.
TARGET_TORCH_TIME = 1.10
TARGET_TORCH_MEMORY = 1.20
TARGET_CHAIN_SPEEDUP = 2.0
TARGET_VS_TORCH_COMPILE = 1.10


@dataclass
class ExecutorRow:
    program: str
    ms: dict[str, float] = field(default_factory=dict)  # candidate -> median ms per call
    peak_mb: dict[str, float] = field(default_factory=dict)
    compile_s: dict[str, float] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)  # candidate -> why it could not run


def _chain(x):
    for i in range(20):
        x = torch.sin(x) if i % 4 == 0 else x * 1.01 if i % 4 == 1 else x + 0.5 if i % 4 == 2 else torch.relu(x)
    return x


def _sample(name: str, attribute: str, factory: Callable | None = None):
    script = load_script(str(ROOT / "sample_programs" / name))
    return script, (factory(script.namespace) if factory else script.namespace[attribute])


def _programs() -> list[tuple[str, Callable, tuple]]:
    torch.manual_seed(0)
    x = torch.randn(8, 256, 512)
    _, mlp_module = _sample("gpt_block.py", "MLP", lambda ns: ns["MLP"](512).eval())
    _, block = _sample("gpt_block.py", "Block", lambda ns: ns["Block"](512, 8).eval())
    programs = [
        ("chain 20 ops, 1024x1024", _chain, (torch.randn(1024, 1024),)),
        ("MLP b8 s256 w512", mlp_module, (x,)),
        ("GPT block b8 s256 w512", block, (x,)),
    ]
    if importlib.util.find_spec("transformers") is not None:
        script, model = _sample("hf_gpt2.py", "model")
        args, kwargs = script.sample_inputs("cpu")
        programs.append(("HF GPT-2 sample", lambda ids: model(ids, **kwargs), args))
    return programs


def _executors() -> list[str]:
    # prims checks decompositions; it is not meant to be fast.
    return ["torch", *sorted(name for name in EXECUTORS if name not in ("torch", "prims"))]


def bench_executors(rounds: int) -> list[ExecutorRow]:
    rows = []
    with torch.no_grad():
        for label, fn, args in _programs():
            row = ExecutorRow(label)
            program = trace_callable(fn, args)
            inputs = program.inputs_for(args, {})
            calls: dict[str, Callable[[], object]] = {"eager": lambda fn=fn, args=args: fn(*args)}
            expected = fn(*args)
            for name in _executors():
                start = time.perf_counter()
                compiled = compile_for(program.trace, name)
                actual = compiled(*inputs)  # lazy compilers do their work here
                row.compile_s[name] = time.perf_counter() - start
                torch.testing.assert_close(actual, expected, rtol=1e-3, atol=1e-3)  # a wrong program's speed means nothing
                calls[name] = lambda compiled=compiled, inputs=inputs: compiled(*inputs)
            torch._dynamo.reset()
            start = time.perf_counter()
            reference = torch.compile(fn)
            try:
                reference(*args)
            except Exception as exc:  # dynamo cannot capture some programs on some builds: say so, time the rest
                row.failed["torch.compile"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
            else:
                row.compile_s["torch.compile"] = time.perf_counter() - start
                calls["torch.compile"] = lambda reference=reference, args=args: reference(*args)
            number = calibrate(calls["eager"], target_s=0.05, clock=WALL_CLOCK)
            per_call = per_call_seconds(calls, number=number, rounds=rounds, clock=WALL_CLOCK)
            row.ms = {name: seconds * 1e3 for name, seconds in per_call.items()}
            row.ms.update({name: math.nan for name in row.failed})
            for name in ("eager", "torch"):
                row.peak_mb[name] = peak_bytes(calls[name]) / 1e6
            rows.append(row)
    return rows


def print_executors(rows: list[ExecutorRow]) -> None:
    if not rows:
        return
    names = list(dict.fromkeys(name for r in rows for name in r.ms))
    print("7. Executors vs eager and torch.compile: wall-clock ms per call (median), peak MB, compile s")
    print(f"   {'program':<24} " + " ".join(f"{n:>14}" for n in names) + f" {'peak eager':>11} {'peak torch':>11}")
    for r in rows:
        cells = " ".join(f"{r.ms.get(n, math.nan):>8.3f} {r.ms['eager'] / r.ms.get(n, math.nan):>4.2f}x" for n in names)
        print(f"   {r.program:<24} {cells} {r.peak_mb['eager']:>11.1f} {r.peak_mb['torch']:>11.1f}")
    compiles = ", ".join(f"{n} {max(r.compile_s.get(n, 0.0) for r in rows):.1f} s"
                         for n in dict.fromkeys(n for r in rows for n in r.compile_s))
    print(f"   each cell: ms per call and speed-up over eager; slowest first compile: {compiles}")
    for r in rows:
        for name, why in r.failed.items():
            print(f"   {name} failed on {r.program}: {why}")
    print()


def executor_targets(rows: list[ExecutorRow]) -> list[tuple[str, str, str, bool]]:
    """(what, measured, target, met) lines for the summary."""
    lines = []
    for r in rows:
        ratio = r.ms["torch"] / r.ms["eager"]
        lines.append((f"torch executor time vs eager, {r.program}", f"{ratio:.2f}x", f"<= {TARGET_TORCH_TIME:.2f}x",
                      ratio <= TARGET_TORCH_TIME))
        memory = r.peak_mb["torch"] / max(r.peak_mb["eager"], 1e-9)
        lines.append((f"torch executor peak memory vs eager, {r.program}", f"{memory:.2f}x",
                      f"<= {TARGET_TORCH_MEMORY:.2f}x", memory <= TARGET_TORCH_MEMORY))
        for name in r.ms:
            if name in ("eager", "torch", "torch.compile"):
                continue
            if "torch.compile" in r.failed:
                continue
            versus = r.ms[name] / r.ms["torch.compile"]
            lines.append((f"{name} executor vs torch.compile, {r.program}", f"{versus:.2f}x",
                          f"<= {TARGET_VS_TORCH_COMPILE:.2f}x", versus <= TARGET_VS_TORCH_COMPILE))
            if r.program.startswith("chain"):
                speedup = r.ms["eager"] / r.ms[name]
                lines.append((f"{name} executor speed-up on the chain", f"{speedup:.2f}x",
                              f">= {TARGET_CHAIN_SPEEDUP:.1f}x", speedup >= TARGET_CHAIN_SPEEDUP))
    return lines
