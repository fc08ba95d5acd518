"""The op matrix under the grad transform: each case with floating inputs (in float64
where the case traces so) traced, transformed, run forward and backward through the
torch executor, its gradients held against torch.autograd.grad of the same function on
the same inputs and cotangents.

`python -m tests.ops.grad_matrix` prints the result of every case and the coverage per
ltorch op (`-q`: the summary only). tests/test_grad_matrix.py asserts on the sample.
"""

from __future__ import annotations

import sys
import zlib
from collections import defaultdict
from dataclasses import dataclass, replace

import torch

from tests.ops.harness import SEED, Case, T, data_sizes
from tests.ops.symbolic_matrix import FAMILIES, family_cases
from tracecli.core.dims import evaluate
from tracecli.core.grad_contract import verify_grad_contract
from tracecli.core.pytree import tree_leaves
from tracecli.core.values import TensorValue
from tracecli.core.verify import verify
from tracecli.executors.grad import run_grad
from tracecli.frontend.tracer import trace_callable
from tracecli.passes.grad import GradError, grad_transform

# "pass": gradients agree with torch.autograd; "refused": the transform refused with a
# reason (GradError); "torch-refuses": eager autograd has no gradient for it either;
# "no-grad": no floating input, or no output a gradient flows to; "skip": the case does
# not trace here (its float64 form is refused, ...); "mismatch": a wrong gradient (never
# acceptable); "error": anything else that failed (a fault of ours).
# "edge": differs only where an input, an output or torch's own gradient is not finite (a
# NaN where torch masks a branch to zero: the decomposition's where() multiplies 0 by inf).
KINDS = ("pass", "edge", "refused", "torch-refuses", "no-grad", "skip", "error", "mismatch")
SAMPLE_EVERY = 4


@dataclass(frozen=True)
class GradResult:
    kind: str
    detail: str = ""


def sampled(case: Case) -> bool:
    return zlib.crc32(case.id.encode()) % SAMPLE_EVERY == 0


def as_float64(case: Case) -> Case:
    args = tuple(replace(a, dtype="f64") if isinstance(a, T) and a.dtype in ("f32", "f16", "bf16") else a
                 for a in case.args)
    return replace(case, args=args)


def _tolerance(dtype: torch.dtype) -> dict:
    return {torch.float64: {"rtol": 1e-6, "atol": 1e-6}, torch.float32: {"rtol": 1e-3, "atol": 1e-4}}.get(
        dtype, {"rtol": 2e-2, "atol": 2e-2})


def check(case: Case) -> GradResult:
    wide = as_float64(case)
    try:
        args = wide.make_args()
        program = trace_callable(wide.fn, args, name="fn")
        case = wide
    except Exception:
        try:
            args = case.make_args()
            program = trace_callable(case.fn, args, name="fn")
        except Exception as e:
            return GradResult("skip", f"{type(e).__name__}: {e}")
    trace = program.trace
    arg_ids = {id(a) for a in args if isinstance(a, torch.Tensor)}
    wanted = [v.name for v, obj in zip(trace.inputs, program.inputs, strict=True)
              if id(obj) in arg_ids and isinstance(v, TensorValue) and v.dtype.is_float]
    if not wanted:
        return GradResult("no-grad", "no floating input")
    try:
        traces = grad_transform(trace, wanted)
    except GradError as e:
        return GradResult("refused", str(e).splitlines()[0])
    if not traces.cotangents:
        return GradResult("no-grad", "no floating output depends on the inputs")
    try:
        verify(traces.forward)
        verify(traces.backward)
        verify_grad_contract(traces.forward, traces.backward)
        gen = torch.Generator().manual_seed(SEED + 1)
        sizes = _data_sizes(case, trace, args)
        cotangents = [torch.randn(tuple(evaluate(d, sizes) for d in c.shape), generator=gen,
                                  dtype=torch.float64).to(_torch_dtype(c))
                      for c in traces.cotangents]
        torch.manual_seed(SEED)
        _, grads = run_grad(traces, [a.clone() if isinstance(a, torch.Tensor) else a for a in program.inputs],
                            cotangents)
    except Exception as e:
        return GradResult("error", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    by_input = dict(zip(traces.requires_grad, grads, strict=True))
    try:
        expected, eager_out = _reference(case, program, args, traces, cotangents)
    except Exception as e:
        return GradResult("torch-refuses", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    problems = []
    worst = max((a.dtype for a in args if isinstance(a, torch.Tensor) and a.dtype.is_floating_point),
                key=lambda d: torch.finfo(d).eps, default=torch.float64)
    nonfinite = any(isinstance(a, torch.Tensor) and a.dtype.is_floating_point and not torch.isfinite(a).all()
                    for a in (*args, *tree_leaves(eager_out)))
    edge = True
    for name, want in expected.items():
        got = by_input[name]
        if got is None:
            got = torch.zeros_like(want)
        if got.dtype != want.dtype or got.shape != want.shape:
            problems.append(f"grad_{name}: {got.dtype}{list(got.shape)} vs torch's {want.dtype}{list(want.shape)}")
            edge = False
            continue
        if not torch.allclose(got, want, equal_nan=True, **_tolerance(worst)):
            finite = torch.isfinite(want)
            if not (nonfinite or torch.allclose(got[finite], want[finite], **_tolerance(worst))):
                edge = False
            err = (got - want).abs().nan_to_num(nan=float("inf")).max().item()
            problems.append(f"grad_{name}: max abs error {err:.3g}")
    if not problems:
        return GradResult("pass")
    return GradResult("edge" if edge else "mismatch", "; ".join(problems))


def _data_sizes(case: Case, trace, args: tuple) -> dict[str, int]:
    """What each size the data decide (`u0`) is on these arguments, read off eager's
    outputs: the cotangents of such outputs are shaped so."""
    if not any(info.unbacked for info in trace.dims):
        return {}
    with torch.no_grad():
        return dict(data_sizes(trace, case.fn(*(a.clone() if isinstance(a, torch.Tensor) else a for a in args))))


def _torch_dtype(value: TensorValue) -> torch.dtype:
    return getattr(torch, value.dtype.name)


def _reference(case: Case, program, args, traces, cotangents) -> dict:
    """torch.autograd.grad of the case's function, per required input, with the same cotangents."""
    trace = program.trace
    leaves = {}
    fresh = []
    for a in args:
        if isinstance(a, torch.Tensor):
            c = a.detach().clone()
            fresh.append(c)
        else:
            fresh.append(a)
    obj_to_fresh = {id(a): f for a, f in zip(args, fresh, strict=True) if isinstance(a, torch.Tensor)}
    for value, obj in zip(trace.inputs, program.inputs, strict=True):
        if value.name in traces.requires_grad:
            leaves[value.name] = obj_to_fresh[id(obj)].requires_grad_()
    torch.manual_seed(SEED)
    out = case.fn(*fresh)
    names = [getattr(v, "name", None) for v in tree_leaves(trace.output)]
    outs = dict(zip(names, tree_leaves(out), strict=True))
    chosen = [outs[name] for name in traces.cotangent_of]
    grads = torch.autograd.grad(chosen, list(leaves.values()), cotangents, allow_unused=True)
    expected = {name: torch.zeros_like(leaf) if g is None else g
                for (name, leaf), g in zip(leaves.items(), grads, strict=True)}
    return expected, [o.detach() for o in chosen]


_RESULTS: dict[str, GradResult] = {}


def result(case: Case) -> GradResult:
    found = _RESULTS.get(case.id)
    if found is None:
        found = _RESULTS[case.id] = check(case)
    return found


def coverage(results: list[tuple[Case, GradResult]]) -> dict[str, dict]:
    """Per ltorch op: the count of each kind over its cases."""
    by_op: dict[str, dict] = defaultdict(lambda: defaultdict(int))
    for case, res in results:
        by_op[case.symbols[0]][res.kind] += 1
    return by_op


def main(argv: list[str]) -> None:
    quiet = "-q" in argv
    families = [a for a in argv if not a.startswith("-")] or FAMILIES
    results = [(c, result(c)) for f in families for c in family_cases(f)]
    if not quiet:
        for case, res in results:
            if res.kind != "pass":
                print(f"{res.kind:14} {case.id}: {res.detail}")
    tally = defaultdict(int)
    for _, res in results:
        tally[res.kind] += 1
    print("cases:", dict(tally))
    ops = coverage(results)
    working = sorted(op for op, k in ops.items() if k["pass"] and not k["mismatch"] and not k["error"])
    differentiable = sorted(op for op, k in ops.items() if k["pass"] or k["refused"] or k["mismatch"] or k["error"])
    print(f"ltorch ops with a working backward: {len(working)} of {len(differentiable)} differentiable in the matrix")
    print("without:", ", ".join(op for op in differentiable if op not in working))


if __name__ == "__main__":
    main(sys.argv[1:])
