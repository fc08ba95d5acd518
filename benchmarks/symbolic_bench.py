"""Section 6 of the benchmarks: symbolic shapes. Tracing with every input dim a symbol
against static tracing of the same program (same run, same inputs), and a call at a new
size served by the symbolic trace (its size check, then the compiled call) against a
full retrace at that size (trace, compile, call), as a static run must do."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from models_bench import ROOT, SAMPLES
from programs import mlp, mlp_inputs, write_chain
from timing import Clock, calibrate, per_call_seconds

from tracecli.executors.codegen import compile_trace
from tracecli.frontend.loader import load_script
from tracecli.frontend.symbolic import DimPolicy
from tracecli.frontend.tracer import trace_callable
from tracecli.jobs.size_guards import size_check

DYNAMIC = DimPolicy(dynamic=True)


@dataclass
class SymbolicRow:
    name: str
    static_ms: float  # trace, static shapes
    dynamic_ms: float  # trace, every input dim a symbol
    reuse_ms: float  # a new size: size check + compiled call
    retrace_ms: float  # a new size: trace + compile + call

    @property
    def dynamic_vs_static(self) -> float:
        return self.dynamic_ms / self.static_ms

    @property
    def reuse_vs_retrace(self) -> float:
        return self.reuse_ms / self.retrace_ms


def _programs(workdir: Path) -> list[tuple[str, Callable, tuple, dict, tuple, dict]]:
    """(name, callable, example args, kwargs, args at a new size, kwargs)."""
    chain = write_chain(workdir, 1000)
    programs = [
        ("chain N=1000", chain, (torch.randn(8, 16),), {}, (torch.randn(5, 9),), {}),
        ("mlp", mlp, mlp_inputs(batch=4), {}, (torch.randn(7, 16), *mlp_inputs(batch=4)[1:]), {}),
    ]
    if importlib.util.find_spec("transformers") is not None:
        for sample in SAMPLES:
            script = load_script(str(ROOT / "sample_programs" / sample))
            args, kwargs = script.sample_inputs("cpu")
            resized = tuple(_shrunk(a) for a in args)
            resized_kwargs = {k: _shrunk(v) for k, v in kwargs.items()}
            programs.append((sample.removesuffix(".py"), script.namespace["model"], args, kwargs, resized, resized_kwargs))
    return programs


def _shrunk(x):
    """A token-id style input at batch 3, length 5."""
    return x[:1].expand(3, -1)[:, :5].contiguous() if isinstance(x, torch.Tensor) and x.dim() == 2 else x


def bench_symbolic(workdir: Path, rounds: int, clock: Clock) -> list[SymbolicRow]:
    rows = []
    for name, fn, args, kwargs, new_args, new_kwargs in _programs(workdir):
        with torch.no_grad():
            program = trace_callable(fn, args, kwargs, dims=DYNAMIC)
            compiled = compile_trace(program.trace)
            check = size_check(program.trace)
            new_inputs = program.inputs_for(new_args, new_kwargs)
            assert check.failure(new_inputs) is None, name

            def reuse(check=check, compiled=compiled, new_inputs=new_inputs):
                if check.failure(new_inputs) is None:
                    return compiled(*new_inputs)
                return None

            def retrace(fn=fn, new_args=new_args, new_kwargs=new_kwargs):
                again = trace_callable(fn, new_args, new_kwargs)
                return compile_trace(again.trace)(*again.inputs)

            calls = {
                "static": lambda fn=fn, args=args, kwargs=kwargs: trace_callable(fn, args, kwargs),
                "dynamic": lambda fn=fn, args=args, kwargs=kwargs: trace_callable(fn, args, kwargs, dims=DYNAMIC),
                "reuse": reuse,
                "retrace": retrace,
            }
            number = calibrate(calls["static"], target_s=0.02, clock=clock)
            seconds = per_call_seconds(calls, number=number, rounds=rounds, clock=clock)
        rows.append(SymbolicRow(name, *(seconds[k] * 1e3 for k in ("static", "dynamic", "reuse", "retrace"))))
    return rows


def print_symbolic(rows: list[SymbolicRow]) -> None:
    print("6. Symbolic shapes: tracing with --dynamic vs static, and a new size reusing the trace vs retracing"
          " (median ms)")
    print(f"   {'program':<15}{'static':>10}{'dynamic':>10}{'dyn/static':>12}{'reuse':>10}{'retrace':>10}"
          f"{'reuse/retrace':>15}")
    for r in rows:
        print(f"   {r.name:<15}{r.static_ms:>10.2f}{r.dynamic_ms:>10.2f}{r.dynamic_vs_static:>12.2f}"
              f"{r.reuse_ms:>10.3f}{r.retrace_ms:>10.2f}{r.reuse_vs_retrace:>15.4f}")
    print()
