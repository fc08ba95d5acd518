"""Run the compiled trace and eager PyTorch on the same inputs and compare."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from tracecli.core.pytree import tree_leaves, tree_map
from tracecli.core.trace import Trace

# (rtol, atol) per dtype, as torch.testing.assert_close uses by default.
TOLERANCES = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex64: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}


@dataclass
class OutputCheck:
    name: str
    shape: tuple | None
    dtype: str | None
    match: bool
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    problem: str = ""


@dataclass
class RunReport:
    outputs: list[OutputCheck] = field(default_factory=list)
    eager_ms: float = 0.0
    compiled_ms: float = 0.0

    @property
    def match(self) -> bool:
        return all(o.match for o in self.outputs)


def compare_outputs(names: list[str], eager, compiled) -> list[OutputCheck]:
    expected, actual = tree_leaves(eager), tree_leaves(compiled)
    if len(expected) != len(actual):
        return [OutputCheck("(structure)", None, None, False,
                            problem=f"eager returned {len(expected)} values, the trace {len(actual)}")]
    checks = []
    for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
        name = names[i] if i < len(names) else f"out{i}"
        checks.append(_compare_one(name, e, a))
    return checks


def _compare_one(name: str, e, a) -> OutputCheck:
    if not isinstance(e, torch.Tensor) or not isinstance(a, torch.Tensor):
        same = type(e) is type(a) and e == a
        return OutputCheck(name, None, type(e).__name__, bool(same), problem="" if same else f"{e!r} != {a!r}")
    shape, dtype = tuple(e.shape), str(e.dtype).removeprefix("torch.")
    if tuple(a.shape) != shape:
        return OutputCheck(name, shape, dtype, False, problem=f"shape {list(a.shape)} != eager {list(shape)}")
    if a.dtype != e.dtype:
        return OutputCheck(name, shape, dtype, False, problem=f"dtype {a.dtype} != eager {e.dtype}")
    if a.device != e.device:
        return OutputCheck(name, shape, dtype, False, problem=f"device {a.device} != eager {e.device}")
    if e.numel() == 0:
        return OutputCheck(name, shape, dtype, True, 0.0, 0.0)
    if not (e.is_floating_point() or e.is_complex()):
        diff = (e.to(torch.int64) - a.to(torch.int64)).abs() if e.dtype != torch.bool else (e != a).to(torch.int64)
        err = float(diff.max())
        return OutputCheck(name, shape, dtype, err == 0, err, err, "" if err == 0 else "values differ")
    rtol, atol = TOLERANCES.get(e.dtype, (1e-5, 1e-8))
    wide = torch.complex128 if e.is_complex() else torch.float64
    e64, a64 = e.detach().to(wide), a.detach().to(wide)
    both_nan = torch.isnan(e64) & torch.isnan(a64)
    same_inf = torch.isinf(e64) & (e64 == a64)
    diff = (e64 - a64).abs().masked_fill(both_nan | same_inf, 0)
    ok = bool(((diff <= atol + rtol * e64.abs()) | both_nan | same_inf).all())
    max_abs = float(diff.max()) if not torch.isnan(diff).any() else float("nan")
    rel = diff / e64.abs().clamp_min(torch.finfo(torch.float64).tiny)
    max_rel = float(rel.max()) if not torch.isnan(rel).any() else float("nan")
    return OutputCheck(name, shape, dtype, ok, max_abs, max_rel, "" if ok else "values differ beyond tolerance")


def _clone(obj):
    return tree_map(lambda leaf: leaf.detach().clone() if isinstance(leaf, torch.Tensor) else leaf, obj)


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def time_call(fn: Callable, device: str, budget_s: float = 0.2, max_runs: int = 50) -> float:
    """Median wall time of `fn()` in milliseconds over repeated runs."""
    times = []
    deadline = time.perf_counter() + budget_s
    while len(times) < max_runs and (len(times) < 3 or time.perf_counter() < deadline):
        _sync(device)
        start = time.perf_counter()
        fn()
        _sync(device)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def check_against_eager(
    trace: Trace, compiled: Callable, eager: Callable, eager_args: tuple, eager_kwargs: dict,
    trace_inputs: list, *, seed: int, device: str, timing: bool = True,
) -> RunReport:
    """Run both on cloned inputs with the same RNG seed and compare every output."""
    torch.manual_seed(seed)
    with torch.no_grad():
        expected = eager(*_clone(eager_args), **_clone(eager_kwargs))
    torch.manual_seed(seed)
    with torch.no_grad():
        actual = compiled(*_clone(trace_inputs))
    names = [getattr(leaf, "name", repr(leaf)) for leaf in tree_leaves(trace.output)]
    report = RunReport(compare_outputs(names, expected, actual))
    if timing:
        with torch.no_grad():
            report.eager_ms = time_call(lambda: eager(*eager_args, **eager_kwargs), device)
            report.compiled_ms = time_call(lambda: compiled(*trace_inputs), device)
    return report
