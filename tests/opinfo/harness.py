"""PyTorch's own op database (`op_db`, the OpInfos of torch's test suite) run through
tracecli: each OpInfo's first samples traced, verified, run by the torch executor and by
the prims executor, and compared with eager; each OpInfo classified by how far tracecli
takes it (see KINDS).

A sample is called as `op.op(sample.input, *sample.args, **sample.kwargs)` through a
function of the sample's tensors alone (`split`): the tensors, wherever the sample holds
them (lists of tensors included), are the trace's inputs, and everything else is a
constant of that function, as a script's own constants are.
"""

from __future__ import annotations

import itertools
import time
import warnings
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.opinfo.core import OpInfo

from tests.opinfo.checks import (
    Found,
    declared_as_eager,
    describe,
    differences,
    fresh,
    one_line,
    op_tolerances,
    recorded_types,
    stage,
)
from tracecli.core.errors import UserError
from tracecli.core.pytree import tree_flatten, tree_unflatten
from tracecli.core.trace import Trace, walk
from tracecli.core.verify import verify
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable
from tracecli.jobs.compare import quiet, working_dtypes
from tracecli.passes.lower import lower

SEED = 0
SAMPLES = 3  # per dtype: the first ones the OpInfo gives, drawn from SEED
# The integer dtype a sample set is drawn in besides float32: the first the op supports.
INT_DTYPES = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)
# For an op that takes neither float32 nor an integer dtype: the first of these it takes.
FALLBACK_DTYPES = (torch.float64, torch.bool, torch.complex64, torch.bfloat16, torch.float16)

# What tracecli makes of an OpInfo, worst first: a sample is classified by the first check
# it fails, an OpInfo by its worst sample. "crash": an internal exception (tracing,
# verifying, lowering, compiling or running the trace), "wrong": a result, an in-place
# effect or a declared type that differs from eager, "refused": tracing stopped with
# tracecli's error for the user, "opaque": the trace calls a torch callable tracecli does
# not model, "modeled": none of these, "skipped": no sample eager runs.
KINDS = ("crash", "wrong", "refused", "opaque", "modeled", "skipped")

# The seed torch's `wrapper_set_seed` gives the generator before calling a random op (and
# puts the generator back after). The trace records that `torch.manual_seed`; the
# executors start from the same seed all the same, as eager's call did.
OP_SEED = 42

# Ops whose results are uninitialised memory: only their types can be compared.
UNINITIALISED = frozenset({"empty", "empty_like", "empty_strided", "empty_permuted", "new_empty",
                           "new_empty_strided"})


def full_name(op: OpInfo) -> str:
    """The OpInfo's name, with its variant: `max.reduction_with_dim`."""
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def opinfos() -> dict[str, OpInfo]:
    """Every OpInfo that runs on CPU, by full name."""
    found = {full_name(op): op for op in op_db if op.supported_dtypes("cpu")}
    assert len(found) == len([op for op in op_db if op.supported_dtypes("cpu")]), "two OpInfos share a name"
    return found


@dataclass(frozen=True)
class SampleOutcome:
    kind: str  # one of KINDS
    detail: str = ""
    opaque: tuple[str, ...] = ()  # the opaque callables its trace calls, at every level


@dataclass
class OpResult:
    name: str
    kind: str
    detail: str = ""
    opaque: dict[str, int] = field(default_factory=dict)  # each opaque callable its traces call: in how many samples
    samples: int = 0  # samples eager ran (the ones checked)
    seconds: float = 0.0


# --- one sample ---------------------------------------------------------------------------


def split(op: OpInfo, sample, for_grad: bool = False) -> tuple[Callable, tuple]:
    """(fn, tensors): `fn(*tensors)` calls the op on the sample; the sample's other
    arguments are constants of `fn`. `for_grad`: called as torch's gradient tests call
    it, through the OpInfo's gradcheck_wrapper (a Hermitian input made so, ...) and the
    sample's output_process_fn_grad (the outputs whose gradient is defined)."""
    leaves, spec = tree_flatten((sample.input, sample.args, sample.kwargs))
    where = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]

    def fn(*tensors):
        filled = list(leaves)
        for i, tensor in zip(where, tensors, strict=True):
            filled[i] = tensor
        first, args, kwargs = tree_unflatten(filled, spec)
        if for_grad:
            return sample.output_process_fn_grad(op.gradcheck_wrapper(op.op, first, *args, **kwargs))
        return op.op(first, *args, **kwargs)

    return fn, tuple(leaves[i] for i in where)


def _run(fn: Callable, args: tuple, seed: int = SEED):
    """fn on copies of args, from `seed`: (result, the copies as fn left them)."""
    args = fresh(args)
    torch.manual_seed(seed)
    with torch.no_grad():
        return fn(*args), args


def seeds_itself(op: OpInfo) -> bool:
    """Whether the OpInfo's op seeds the generator itself (torch's wrapper_set_seed)."""
    code = getattr(op.op, "__code__", None)
    return code is not None and "wrapper_set_seed" in code.co_names


def run_sample(op: OpInfo, sample, tolerances: dict) -> SampleOutcome | None:
    """The sample's class, or None when eager itself refuses the sample."""
    fn, tensors = split(op, sample)
    try:
        with quiet():
            expected, eager_after = _run(fn, tensors)
    except Exception:  # the sample is not one eager takes: nothing to compare with
        return None
    try:
        with quiet():
            program = trace_callable(fn, tensors, name="fn")
    except UserError as exc:
        return SampleOutcome("refused", one_line(exc.message))
    except Exception as exc:  # tracing must stop with a UserError or not at all
        return SampleOutcome("crash", f"tracing raised {describe(exc)}")
    trace = program.trace
    opaque = tuple(dict.fromkeys(b.symbol.qualname for _, b in walk(trace.bsyms)
                                 if b.symbol.namespace not in ("ltorch", "prims")))
    try:
        _check(op, trace, program.inputs, len(tensors), expected, eager_after, tolerances)
    except Found as found:
        return SampleOutcome(found.kind, found.detail, opaque)
    return SampleOutcome("opaque" if opaque else "modeled", ", ".join(opaque), opaque)


def _check(op: OpInfo, trace: Trace, inputs: list, n_args: int, expected, eager_after: tuple,
           tolerances: dict) -> None:
    """Every check past tracing; raises Found with the first failure."""
    values = op.name not in UNINITIALISED
    seed = OP_SEED if seeds_itself(op) else SEED
    stage("verifying the trace", verify, trace)
    declared_as_eager(trace, expected)
    lowered = stage("lowering", lambda: lower(trace).trace)
    stage("verifying the lowered trace", verify, lowered)
    for level, t in (("torch", trace), ("prims", lowered)):
        recorded_types(level, t, inputs, seed)
        compiled = stage(f"compiling the {level}-level trace", compile_trace, t)
        actual, after = stage(f"the {level} executor", lambda c=compiled: _run(c, inputs, seed))
        problems = differences(expected, actual, tolerances, working_dtypes(t), values=values)
        problems += [f"input {i} (written): {p}" for i in range(n_args)
                     for p in differences(eager_after[i], after[i], tolerances, values=values)]
        if problems:
            raise Found("wrong", f"{level} executor: {problems[0]}")


# --- one OpInfo -----------------------------------------------------------------------------


def sample_dtypes(op: OpInfo) -> list[torch.dtype]:
    """float32 and the first integer dtype the op takes on CPU; for an op that takes
    neither, the first fallback dtype it takes."""
    supported = op.supported_dtypes("cpu")
    chosen = [torch.float32] if torch.float32 in supported else []
    chosen += [d for d in INT_DTYPES if d in supported][:1]
    return chosen or [d for d in FALLBACK_DTYPES if d in supported][:1]


def run_opinfo(op: OpInfo) -> OpResult:
    start = time.perf_counter()
    name = full_name(op)
    tolerances = op_tolerances(op)
    outcomes: list[SampleOutcome] = []
    problems = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dtype in sample_dtypes(op):
            torch.manual_seed(SEED)
            try:
                # The OpInfo's generator itself: `op.sample_inputs` wraps it in an iterator that
                # looks for the running unittest through inspect.stack(), which reads the source
                # of every frame (half the time of a whole run).
                samples = list(itertools.islice(op.sample_inputs_func(op, "cpu", dtype, False), SAMPLES))
            except Exception as exc:  # the OpInfo's own sample generator fails here: nothing to check
                problems.append(f"sample_inputs({dtype}) raised {describe(exc)}")
                continue
            for sample in samples:
                outcome = run_sample(op, sample, tolerances)
                if outcome is not None:
                    outcomes.append(outcome)
    result = OpResult(name, "skipped", "; ".join(problems) or "eager refuses every sample", seconds=0.0)
    if outcomes:
        worst = min(outcomes, key=lambda o: KINDS.index(o.kind))
        result = OpResult(name, worst.kind, worst.detail, samples=len(outcomes))
        result.opaque = dict(Counter(n for o in outcomes for n in o.opaque))
        if worst.kind == "opaque":
            result.detail = ", ".join(result.opaque)
    result.seconds = time.perf_counter() - start
    return result


def sampled(name: str, every: int, salt: bytes = b"") -> bool:
    """Whether `make test` runs this OpInfo: about one in `every`, chosen by name (a
    `salt` of its own gives a test another sample), so the sample does not move when
    torch adds OpInfos."""
    return zlib.crc32(salt + name.encode()) % every == 0
