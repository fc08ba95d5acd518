"""The grad transform on torch's op database: every OpInfo tests/opinfo/expected.py lists
as modeled, whose op torch differentiates, traced on its float64 samples as the harness
traces them (tests/opinfo/harness.py), transformed (tracecli.passes.grad) and run
forward and backward by the torch executor; each gradient is held against
torch.autograd.grad of the same function on the same inputs and cotangents.

The function is the one torch's own gradient tests differentiate: the OpInfo's
gradcheck_wrapper around its op, the sample's output_process_fn_grad after it. The
cotangents are random from a fixed seed (ones would hide a transposed or negated
gradient); every floating tensor input that requires grad in the sample gets one.

    python -m tests.opinfo.gradients              the counts per family, then each
                                                  mismatch, crash and refusal with why
    python -m tests.opinfo.gradients NAME...      those OpInfos only
"""

from __future__ import annotations

import itertools
import sys
import time
import warnings
from collections import Counter
from dataclasses import dataclass

import torch
from torch.testing._internal.opinfo.core import OpInfo

from tests.opinfo.checks import describe, one_line, op_tolerances
from tests.opinfo.coverage import family_table, print_each, timing_line
from tests.opinfo.expected import GRAD_DEFECTS, MODELED
from tests.opinfo.harness import OP_SEED, SEED, full_name, opinfos, seeds_itself, split
from tests.ops.grad_matrix import _tolerance
from tracecli.core.errors import UserError
from tracecli.core.grad_contract import verify_grad_contract
from tracecli.core.pytree import tree_leaves
from tracecli.core.verify import verify
from tracecli.executors.grad import run_grad
from tracecli.frontend.tracer import trace_callable
from tracecli.jobs.compare import quiet
from tracecli.ops.grads.base import NotDifferentiable
from tracecli.ops.promotion import ShapeError
from tracecli.passes.grad import GradError, grad_transform

DTYPE = torch.float64
# Worst first: an OpInfo's class is its worst sample's. "mismatch": a gradient differs
# from torch's (the transform is wrong), "crash": an exception other than the transform's
# refusal (tracing, verifying, running; a backward rule that builds an op its shape rule
# rejects, though the transform reports that as a GradError too), "refused": the
# transform stopped with GradError (an op without a backward rule, named in the message),
# or tracing refused a float64 sample the forward samples did not reach (a UserError,
# "tracing in float64: ..."), "pass": every gradient agrees,
# "no-autograd": torch differentiates none of its float64 samples (or the op at all).
KINDS = ("mismatch", "crash", "refused", "pass", "no-autograd")
# The first SAMPLES samples eager differentiates are checked, among the first SCANNED (a
# gradient sample set is longer than the forward's harness.SAMPLES, and cheap to check).
SAMPLES = 10
SCANNED = 20
TABLE = "tests/opinfo/expected.py"
COLUMNS = ("pass", "refused", "mismatch", "crash", "no-autograd")


@dataclass(frozen=True)
class GradOutcome:
    kind: str
    detail: str = ""


@dataclass
class GradResult:
    name: str
    kind: str
    detail: str = ""
    samples: int = 0
    seconds: float = 0.0


def population() -> dict[str, OpInfo]:
    """The OpInfos whose gradients are checked: those expected modeled."""
    return {name: op for name, op in opinfos().items() if name in MODELED}


# --- one sample ---------------------------------------------------------------------------


def _eager(fn, tensors: tuple, wants: list[bool], seed: int):
    """(output leaves, their tensors' leaves requiring grad) of fn on fresh leaves."""
    leaves = [t.detach().clone().requires_grad_(w) for t, w in zip(tensors, wants, strict=True)]
    torch.manual_seed(seed)
    with torch.enable_grad(), quiet():
        out = fn(*leaves)
    return tree_leaves(out), [leaf for leaf, w in zip(leaves, wants, strict=True) if w]


def _cotangents(outputs: list) -> list:
    """A random cotangent for each tensor output, from a fixed seed (None for the rest)."""
    gen = torch.Generator().manual_seed(SEED + 1)
    return [torch.randn(o.shape, generator=gen, dtype=o.dtype) if isinstance(o, torch.Tensor)
            and (o.is_floating_point() or o.is_complex()) else None for o in outputs]


def grad_sample(op: OpInfo, sample, tolerances: dict) -> GradOutcome | None:
    """The sample's class, or None when eager gives no gradient to compare with."""
    fn, tensors = split(op, sample, for_grad=True)
    wants = [t.requires_grad and t.is_floating_point() for t in tensors]
    if not any(wants):
        return None
    seed = OP_SEED if seeds_itself(op) else SEED
    try:
        outputs, leaves = _eager(fn, tensors, wants, seed)
    except Exception:  # eager refuses the sample: nothing to compare with
        return None
    args = tuple(t.detach().clone() for t in tensors)
    try:
        with quiet():
            program = trace_callable(fn, args, name="fn")
    except UserError as exc:
        return GradOutcome("refused", f"tracing in float64: {one_line(exc.message)}")
    except Exception as exc:
        return GradOutcome("crash", f"tracing raised {describe(exc)}")
    trace = program.trace
    position = {id(a): i for i, a in enumerate(args)}
    wanted = [v.name for v, obj in zip(trace.inputs, program.inputs, strict=True)
              if id(obj) in position and wants[position[id(obj)]]]
    names = [getattr(v, "name", None) for v in tree_leaves(trace.output)]
    if len(names) != len(outputs):
        return GradOutcome("crash", f"the trace has {len(names)} outputs, eager {len(outputs)}")
    cotangents = _cotangents(outputs)
    # One cotangent per output value: an output returned twice is seeded once, as the
    # transform seeds it.
    first = {}
    for i, name in enumerate(names):
        first.setdefault(name, i)
    seeded = [i for name, i in first.items() if isinstance(outputs[i], torch.Tensor) and outputs[i].requires_grad]
    if not seeded:
        return None
    try:
        expected = torch.autograd.grad([outputs[i] for i in seeded], leaves, [cotangents[i] for i in seeded],
                                       allow_unused=True)
    except Exception:  # torch has no gradient for it here
        return None
    try:
        with quiet():
            traces = grad_transform(trace, wanted)
    except GradError as exc:
        cause = exc.__cause__
        if (isinstance(cause, ShapeError) and not isinstance(cause, NotDifferentiable)) or \
                str(exc).startswith("the backward rule of"):
            # Not a refusal: a backward rule made an op its shape rule rejects, or a gradient
            # of the wrong type.
            return GradOutcome("crash", f"a backward rule is broken: {_without_line(one_line(str(exc)))}")
        return GradOutcome("refused", _without_line(one_line(str(exc))))
    except Exception as exc:
        return GradOutcome("crash", f"the grad transform raised {describe(exc)}")
    try:
        with quiet():
            verify(traces.forward)
            verify(traces.backward)
            verify_grad_contract(traces.forward, traces.backward)
            torch.manual_seed(seed)
            _, grads = run_grad(traces, [a.clone() if isinstance(a, torch.Tensor) else a for a in program.inputs],
                                [cotangents[first[name]] for name in traces.cotangent_of])
    except Exception as exc:
        return GradOutcome("crash", f"verifying or running forward and backward raised {describe(exc)}")
    got = dict(zip(traces.requires_grad, grads, strict=True))
    problems = []
    for name, leaf, want in zip(wanted, leaves, expected, strict=True):
        problem = _difference(got[name], want, leaf, tolerances)
        if problem:
            problems.append(f"grad_{name}: {problem}")
    return GradOutcome("mismatch", "; ".join(problems)) if problems else GradOutcome("pass")


def _without_line(message: str) -> str:
    """A GradError's message without the line it names, always the sample's call here:
    `prims.sort: has no backward rule`."""
    head, where, _ = message.partition(" (tests/opinfo/harness.py:")
    return f"{head}: {message.rsplit('): ', 1)[-1]}" if where else message


def _difference(got, want, leaf: torch.Tensor, tolerances: dict) -> str:
    want = torch.zeros_like(leaf) if want is None else want
    got = torch.zeros_like(leaf) if got is None else got
    if (got.dtype, tuple(got.shape)) != (want.dtype, tuple(want.shape)):
        return f"{got.dtype}{list(got.shape)}, torch's {want.dtype}{list(want.shape)}"
    if want.numel() == 0:
        return ""
    rtol, atol = _tolerance(DTYPE).values()
    rtol, atol = max(rtol, tolerances.get(DTYPE, (0, 0))[0]), max(atol, tolerances.get(DTYPE, (0, 0))[1])
    largest = float(want.detach().abs().nan_to_num(posinf=0, neginf=0).max())
    if torch.allclose(got, want, rtol=rtol, atol=atol * max(1.0, largest), equal_nan=True):
        return ""
    err = (got - want).abs().nan_to_num(nan=float("inf")).max().item()
    return f"max abs error {err:.3g} (largest element {largest:.3g})"


# --- one OpInfo -----------------------------------------------------------------------------


def grad_opinfo(op: OpInfo) -> GradResult:
    start = time.perf_counter()
    name = full_name(op)
    if not op.supports_autograd:
        return GradResult(name, "no-autograd", "the OpInfo says torch does not differentiate it")
    if DTYPE not in op.supported_backward_dtypes("cpu"):
        return GradResult(name, "no-autograd", f"torch differentiates it in no {DTYPE}")
    tolerances = op_tolerances(op)
    outcomes: list[GradOutcome] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(SEED)
        try:
            samples = list(itertools.islice(op.sample_inputs_func(op, "cpu", DTYPE, True), SCANNED))
        except Exception as exc:
            return GradResult(name, "no-autograd", f"sample_inputs({DTYPE}) raised {describe(exc)}")
        for sample in samples:
            outcome = grad_sample(op, sample, tolerances)
            if outcome is not None:
                outcomes.append(outcome)
                if len(outcomes) == SAMPLES:
                    break
    result = GradResult(name, "no-autograd", "torch differentiates none of its samples")
    if outcomes:
        worst = min(outcomes, key=lambda o: KINDS.index(o.kind))
        result = GradResult(name, worst.kind, worst.detail, samples=len(outcomes))
    result.seconds = time.perf_counter() - start
    return result


def against_table(result: GradResult) -> str:
    """How the result disagrees with GRAD_DEFECTS ('' when it does not): a mismatch or a
    crash not listed as that known defect, or a listed defect gone."""
    listed = GRAD_DEFECTS.get(result.name)
    found = f"{result.kind}: {result.detail}" if result.detail else result.kind
    if result.kind in ("mismatch", "crash") and (listed is None or listed[0] != result.kind):
        return f"{result.name}'s gradient is {found}, not a defect GRAD_DEFECTS in {TABLE} lists"
    if listed is not None and listed[0] != result.kind:
        return f"{result.name} is listed in GRAD_DEFECTS as a known {listed[0]}, but is {found} now: update its line"
    return ""


# --- the report ---------------------------------------------------------------------------


def refusing_ops(results: dict[str, GradResult]) -> list[tuple[str, int]]:
    """The ops named by refusals ('prims.cumprod'), by how many OpInfos they refuse."""
    counts = Counter()
    for r in results.values():
        if r.kind == "refused":
            counts[r.detail.split(":")[0] if not r.detail.startswith("tracing") else "(tracing)"] += 1
    return counts.most_common()


def report(results: dict[str, GradResult], seconds: float) -> str:
    lines = [family_table(results, COLUMNS), ""]
    defects = [f"  {r.kind:<8} {r.name}: {GRAD_DEFECTS.get(r.name, ('', r.detail))[1]}" for r in results.values()
               if r.kind in ("mismatch", "crash")]
    lines += [f"mismatch and crash ({len(defects)}):", *defects, ""]
    lines += ["refusals by the op refused (OpInfos):",
              *(f"  {op:<40} {n:>4}" for op, n in refusing_ops(results)), ""]
    lines += ["refused:", *(f"  {r.name}: {r.detail}" for r in results.values() if r.kind == "refused"), ""]
    stale = [text for text in map(against_table, results.values()) if text]
    lines += [f"disagreements with GRAD_DEFECTS in {TABLE} ({len(stale)}):", *(f"  {t}" for t in stale), ""]
    lines.append(timing_line(results, seconds))
    return "\n".join(lines)


def run_all(names: list[str] | None = None) -> dict[str, GradResult]:
    ops = population()
    return {name: grad_opinfo(ops[name]) for name in sorted(names or ops)}


def main(argv: list[str]) -> int:
    names = [a for a in argv if not a.startswith("-")]
    start = time.perf_counter()
    results = run_all(names or None)
    if names:
        print_each(results.values(), against_table, width=11)
    else:
        print(report(results, time.perf_counter() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
