"""Run the compiled trace and eager PyTorch on the same inputs and compare."""

from __future__ import annotations

import io
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass, field, replace

import numpy
import torch

from tracecli.core.dtypes import DType
from tracecli.core.printing import format_constant
from tracecli.core.pytree import TreeSpec, same_structure, tree_flatten, tree_leaves, tree_map
from tracecli.core.trace import Trace, walk, written_inputs
from tracecli.core.values import NumberValue, TensorValue
from tracecli.executors import uncompiled
from tracecli.frontend.places import MISSING
from tracecli.frontend.tracer import TracedProgram
from tracecli.jobs.steps import EagerSteps, grads_set, trains
from tracecli.ops import prims
from tracecli.ops.torch_bridge import TO_TORCH

# (rtol, atol) per dtype, as torch.testing.assert_close uses by default.
TOLERANCES = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex64: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}

# For an executor that fuses (`__tracecli_fused__` on the compiled callable): one kernel
# keeps intermediates in registers at float32 and reorders reductions, so it rounds
# differently from eager's op-by-op results; a chain of float16 ops rounded once instead
# of per op differs by more than float16's own tolerance.
FUSED_TOLERANCES = {
    **TOLERANCES,
    torch.float16: (1e-2, 1e-4),
    torch.bfloat16: (5e-2, 1e-4),
    torch.float32: (1e-5, 1e-5),
    torch.complex64: (1e-5, 1e-5),
}

# For gradients (--grad): a backward sums over every use of a value, in another order
# than autograd's kernels, and terms much larger than the result cancel in it; atol is
# scaled by the gradient's largest element (never below the one given).
GRADIENT_TOLERANCES = {
    **TOLERANCES,
    torch.float16: (1e-2, 1e-3),
    torch.bfloat16: (5e-2, 1e-2),
    torch.float32: (1e-3, 1e-4),
    torch.complex64: (1e-3, 1e-4),
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
    # Medians over `repeat` calls each, after a warm-up; None: not timed (--no-timing).
    eager_ms: float | None = None
    compiled_ms: float | None = None
    written: list[OutputCheck] = field(default_factory=list)  # inputs the entry writes in place, afterwards
    repeat: int = 0
    # Making the callable (the executor's preparation and code generation), and the first
    # call of it, where executors that compile lazily (inductor) do their work.
    compile_ms: float | None = None
    first_call_ms: float | None = None
    gradients: list[OutputCheck] = field(default_factory=list)  # with --grad: each grad_<input> against autograd's
    # Python state the entry keeps traced values in (`model.cache['cpu']`), as each run left it.
    state: list[OutputCheck] = field(default_factory=list)
    # (region, why) for each fusion region the executor could not compile and ran as
    # generated, as the torch executor runs it (executors/registry.py `uncompiled`).
    uncompiled: list[tuple[str, str]] = field(default_factory=list)

    @property
    def match(self) -> bool:
        return all(o.match for o in (*self.outputs, *self.written, *self.gradients, *self.state))

    @property
    def speedup(self) -> float | None:
        """How many times faster than eager the compiled call ran (below 1: slower)."""
        if not self.eager_ms or not self.compiled_ms:
            return None
        return self.eager_ms / self.compiled_ms


def compare_outputs(names: list[str], eager, compiled, working: list | None = None,
                    unspecified: list | None = None, fused: bool = False,
                    gradients: bool = False) -> list[OutputCheck]:
    """Each output of the compiled run against eager's, within the tolerances of its dtype,
    or of its entry in `working`, the least precise floating dtype its computation passed
    through, when that is looser: a float32 result of bfloat16 work carries bfloat16's
    error, in eager too. An output whose entry in `unspecified` is true is computed from
    uninitialised memory (torch.empty): only its shape, dtype and device are compared."""
    expected, actual = tree_leaves(eager), tree_leaves(compiled)
    if len(expected) != len(actual):
        return [OutputCheck("(structure)", None, None, False,
                            problem=f"eager returned {len(expected)} values, the trace {len(actual)}")]
    checks = []
    for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
        if e is None and a is None:
            continue  # an absent field of a model output: nothing to compare
        name = names[i] if i < len(names) else f"out{i}"
        values = not (unspecified and i < len(unspecified) and unspecified[i])
        checks.append(compare_one(name, e, a, working[i] if working and i < len(working) else None, values, fused,
                                   gradients))
    return checks


def compare_one(name: str, e, a, working: torch.dtype | None = None, values: bool = True,
                 fused: bool = False, gradients: bool = False) -> OutputCheck:
    if isinstance(e, _NUMPY) or isinstance(a, _NUMPY):
        # A numpy array or scalar: of eager's very type, then compared as the tensors of its values.
        if type(e) is not type(a):
            return OutputCheck(name, None, type(e).__name__, False,
                               problem=f"{type(a).__name__} != eager {type(e).__name__}")
        if numpy.asarray(e).dtype.kind in "biufc":
            e, a = torch.from_numpy(numpy.asarray(e)), torch.from_numpy(numpy.asarray(a))
    if not isinstance(e, torch.Tensor) or not isinstance(a, torch.Tensor):
        same = _same_object(e, a)
        return OutputCheck(name, None, type(e).__name__, same, problem="" if same else f"{e!r} != {a!r}")
    shape, dtype = tuple(e.shape), str(e.dtype).removeprefix("torch.")
    if tuple(a.shape) != shape:
        return OutputCheck(name, shape, dtype, False, problem=f"shape {list(a.shape)} != eager {list(shape)}")
    if a.dtype != e.dtype:
        return OutputCheck(name, shape, dtype, False, problem=f"dtype {a.dtype} != eager {e.dtype}")
    if a.device != e.device:
        return OutputCheck(name, shape, dtype, False, problem=f"device {a.device} != eager {e.device}")
    if e.numel() == 0:
        return OutputCheck(name, shape, dtype, True, 0.0, 0.0)
    if not values:
        return OutputCheck(name, shape, dtype, True)
    e, a = _comparable(e), _comparable(a)
    if not (e.is_floating_point() or e.is_complex()):
        diff = (e.to(torch.int64) - a.to(torch.int64)).abs() if e.dtype != torch.bool else (e != a).to(torch.int64)
        err = float(diff.max())
        return OutputCheck(name, shape, dtype, err == 0, err, err, "" if err == 0 else "values differ")
    table = GRADIENT_TOLERANCES if gradients else FUSED_TOLERANCES if fused else TOLERANCES
    rtol, atol = table.get(e.dtype, (1e-5, 1e-8))
    if gradients and e.numel():
        atol *= max(1.0, float(e.detach().abs().max()))
    if working is not None and working in table:
        rtol, atol = max(rtol, table[working][0]), max(atol, table[working][1])
    wide = torch.complex128 if e.is_complex() else torch.float64
    e64, a64 = e.detach().to(wide), a.detach().to(wide)
    half = e.dtype if e.dtype in _HALF else working if working in _HALF else None
    if half is not None:
        # A half-precision result near zero carries the rounding of the larger values it
        # was computed from (`x + gelu(x @ w)` cancels): two steps of the dtype at the
        # result's own scale, which eager's op-by-op rounding is off by as well.
        atol = max(atol, 2 * torch.finfo(half).eps * float(e64.abs().max()))
    both_nan = torch.isnan(e64) & torch.isnan(a64)
    same_inf = torch.isinf(e64) & (e64 == a64)
    diff = (e64 - a64).abs().masked_fill(both_nan | same_inf, 0)
    ok = bool(((diff <= atol + rtol * e64.abs()) | both_nan | same_inf).all())
    max_abs = float(diff.max()) if not torch.isnan(diff).any() else float("nan")
    # Relative to eager's value where that is above the absolute tolerance: a value that
    # cancels to about zero has no relative error worth the name (1e+304 was shown).
    rel = diff / e64.abs().clamp_min(max(atol, torch.finfo(torch.float64).tiny))
    max_rel = float(rel.max()) if not torch.isnan(rel).any() else float("nan")
    return OutputCheck(name, shape, dtype, ok, max_abs, max_rel, "" if ok else "values differ beyond tolerance")


_HALF = (torch.float16, torch.bfloat16)
_NUMPY = (numpy.ndarray, numpy.generic)


def _same_object(e: object, a: object, comparing: set | None = None) -> bool:
    """Equal, or for an object whose class has no equality of its own (only identity,
    which a trace returning its own object never shares with eager's), of one class made
    alike (as for containers) with equal attributes. `comparing`: the pairs of objects
    whose attributes are being compared further up, which an object graph with a cycle
    (an optimizer holding its model's parameters, which hold it back) comes round to:
    such a pair is as alike as the rest of the comparison finds."""
    if e is a:
        return True
    if type(e).__eq__ is object.__eq__ and hasattr(e, "__dict__") and hasattr(a, "__dict__"):
        comparing = set() if comparing is None else comparing
        pair = (id(e), id(a))
        if pair in comparing:
            return True
        comparing.add(pair)
        same_class = type(e) is type(a) or same_structure(TreeSpec(type(e)), TreeSpec(type(a)))
        return same_class and vars(e).keys() == vars(a).keys() and all(
            _same_object(v, vars(a)[k], comparing) for k, v in vars(e).items())
    if isinstance(e, torch.Tensor) or isinstance(a, torch.Tensor):
        return isinstance(e, torch.Tensor) and isinstance(a, torch.Tensor) and compare_one("", e, a).match
    # A container's own equality asks its objects for theirs: identity, for those above.
    if type(e) is type(a) and type(e) in (list, tuple):
        return len(e) == len(a) and all(_same_object(x, y, comparing) for x, y in zip(e, a, strict=True))
    if type(e) is type(a) and isinstance(e, dict):
        return e.keys() == a.keys() and all(_same_object(v, a[k], comparing) for k, v in e.items())
    try:
        return type(e) is type(a) and bool(e == a)
    except Exception:  # an equality that does not answer with a bool
        return False


def compare_update(name: str, before, e, a, fused: bool = False, working: torch.dtype | None = None,
                   grads: tuple | None = None) -> OutputCheck:
    """A tensor a training step updates (a parameter, an optimizer's moments): as an
    output, or else by its update (after - before) at gradients' tolerances, scaled by
    the largest update. Adam divides each gradient by its own size, so an element whose
    gradient is at rounding level moves by up to the learning rate on rounding alone: up
    to one element in a thousand may differ so, never by more than twice the largest
    update (a sign flipped). `grads`: the parameter's gradient in eager and in the trace,
    when the step leaves them: an element whose two gradients agree only within the
    absolute tolerance may differ so however many there are; when most do (a bias before
    a batch norm, whose gradient is zero but for rounding), the whole update is rounding's
    and any difference is. `working`: the least precise dtype
    the update was computed in (bfloat16 under autocast), whose tolerance then holds."""
    check = compare_one(name, e, a, working, fused=fused)
    if check.match or check.max_abs_error is None or not e.is_floating_point():
        return check
    rtol = max(GRADIENT_TOLERANCES.get(dtype, (1e-3, 1e-4))[0] for dtype in (e.dtype, working or e.dtype))
    start = before.detach().double()
    expected, actual = e.detach().double() - start, a.detach().double() - start
    largest = float(expected.abs().max())
    off = (expected - actual).abs()
    outside = off > rtol * (expected.abs() + largest)
    count, allowed = int(outside.sum()), e.numel() // 1000
    noisy = _rounding_level(grads, e.shape, rtol)
    if noisy is not None and 2 * int(noisy.sum()) > e.numel():
        # Mostly rounding: the whole gradient is zero but for it, and so are the moments an
        # optimizer keeps of it; the update is rounding's, by as much as a step can be.
        note = (f"{count} of {e.numel()} elements off by up to {float(off.max()):.2g}: its gradient is zero but for "
                "rounding, in eager and in the trace, and so is the update") if count else ""
        return replace(check, match=True, problem=note)
    if noisy is not None:
        allowed = max(allowed, int((outside & noisy).sum()))
    if count <= allowed and float(off.max()) <= 2 * largest:
        note = f"{count} of {e.numel()} elements off by up to {float(off.max()):.2g}, the update's rounding" if count else ""
        return replace(check, match=True, problem=note)
    return replace(check, problem=f"the update differs beyond tolerance in {count} of {e.numel()} elements")


def _rounding_level(grads: tuple | None, shape, rtol: float):
    """Where a parameter's eager and traced gradients agree only in absolute terms: their
    direction there is rounding's (None when the gradients are not at hand)."""
    if grads is None or any(not isinstance(g, torch.Tensor) or g.shape != shape for g in grads):
        return None
    ge, ga = (g.detach().double() for g in grads)
    return (ge - ga).abs() > rtol * ge.abs()


def working_dtypes(trace: Trace, values: list | None = None) -> list[torch.dtype | None]:
    """Per output (or per value, or value name, of `values`), the least precise floating
    dtype among the values it is computed from, at every level of their decompositions."""
    producer = {v.name: b for b in trace.bsyms for v in b.output_values()}
    least_of: dict[int, DType | None] = {}  # per bound symbol, over its own values

    def least(name: str, seen: set[str]) -> DType | None:
        found = None
        stack = [name]
        while stack:
            current = stack.pop()
            bsym = producer.get(current)
            if bsym is None or current in seen:
                continue
            seen.add(current)
            own = least_of.get(id(bsym), _MISSING)
            if own is _MISSING:
                own = least_of[id(bsym)] = _least(v for _, b in walk([bsym]) for v in (*b.arg_values(),
                                                                                      *b.output_values()))
            found = _less_precise(found, own)
            stack.extend(v.name for v in bsym.arg_values())
        return found

    out = []
    for leaf in tree_leaves(trace.output) if values is None else values:
        name = leaf if isinstance(leaf, str) else leaf.name if isinstance(leaf, TensorValue) else None
        dtype = least(name, set()) if name is not None else None
        out.append(TO_TORCH[dtype] if dtype is not None else None)
    return out


# Opaque factories of uninitialised memory, beside prims.empty.
_UNINITIALISED = frozenset({torch.empty_strided, torch.empty_permuted, torch.Tensor.new_empty_strided})


def unspecified_values(trace: Trace) -> set[str]:
    """The names of the values computed from uninitialised memory (prims.empty), at every
    level: what eager and the trace need not agree on. A value that an op makes without
    reading the memory (`fill_`, `zero_`, `copy_` of another tensor) is specified again."""
    empty = set()
    for _, bsym in walk(trace.bsyms):
        if bsym.subsymbols or bsym.symbol is prims.shape:  # sizes are specified
            continue
        uninitialised = bsym.symbol is prims.empty or (bsym.symbol.namespace == "torch"
                                                       and bsym.symbol.impl in _UNINITIALISED)
        if uninitialised or any(v.name in empty for v in bsym.arg_values()):
            empty.update(v.name for v in bsym.output_values())
    return empty


def _unspecified(names: list[str], empty: set[str]) -> list[bool]:
    return [name in empty for name in names]


_MISSING = object()
_ANY = NumberValue("_", None)  # prints as `_`
# Significand bits: what a dtype's tolerance is for.
_PRECISION = {"bfloat16": 8, "float16": 11, "float32": 24, "float64": 53}


def _less_precise(a: DType | None, b: DType | None) -> DType | None:
    if a is None or b is None:
        return a or b
    return a if _PRECISION.get(a.name, 24) <= _PRECISION.get(b.name, 24) else b


def _least(values) -> DType | None:
    found = None
    for v in values:
        if isinstance(v, TensorValue) and v.dtype.is_float:
            found = _less_precise(found, v.dtype)
    return found


# Dtypes torch cannot convert (bit containers, sub-byte and packed types): compared as
# their bytes.
_AS_BYTES = frozenset({
    torch.bits1x8, torch.bits2x4, torch.bits4x2, torch.bits8, torch.bits16, torch.float4_e2m1fn_x2,
    *(getattr(torch, f"{sign}int{n}") for sign in ("u", "") for n in range(1, 8)),
})


def _comparable(t: torch.Tensor) -> torch.Tensor:
    if t.is_quantized:
        return t.dequantize()
    if t.dtype in _AS_BYTES:
        return t.view(torch.uint8)
    return t


def cloned(obj, requires_grad: bool = True):
    """A copy of each tensor: a leaf of its own, requiring grad as the original did
    (unless `requires_grad` is False)."""
    def copy(leaf):
        if not isinstance(leaf, torch.Tensor):
            return leaf
        made = leaf.detach().clone()
        return made.requires_grad_() if requires_grad and leaf.requires_grad else made

    return tree_map(copy, obj)


def apart_from(obj, state: list):
    """`obj` with each tensor that shares memory with one of `state` copied."""
    if not state:
        return obj
    memory = {t.untyped_storage().data_ptr() for t in state if isinstance(t, torch.Tensor)}

    def apart(leaf):
        if isinstance(leaf, torch.Tensor) and leaf.untyped_storage().data_ptr() in memory:
            return leaf.detach().clone()
        return leaf

    return tree_map(apart, obj)


@contextmanager
def quiet() -> Iterator[None]:
    """What the script prints is dropped: it runs again only to be timed (or traced)."""
    sink = io.StringIO()
    with redirect_stdout(sink), redirect_stderr(sink):
        yield


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _wall_ms(fn: Callable, device: str) -> float:
    _sync(device)
    start = time.perf_counter()
    fn()
    _sync(device)
    return (time.perf_counter() - start) * 1e3


def time_calls(calls: dict[str, Callable], device: str, repeat: int) -> dict[str, float]:
    """Median wall time in milliseconds of each call over `repeat` runs, after one warm-up
    each; the calls take turns, so what the machine does meanwhile hits them alike."""
    for fn in calls.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeat):
        for name, fn in calls.items():
            times[name].append(_wall_ms(fn, device))
    return {name: statistics.median(t) for name, t in times.items()}


def check_against_eager(
    trace: Trace, compiled: Callable, eager: Callable, eager_args: tuple, eager_kwargs: dict,
    program: TracedProgram, *, seed: int, device: str, repeat: int = 0, inputs: list | None = None,
    compile_ms: float | None = None,
) -> RunReport:
    """Run both from the same state with the same RNG seed; compare every output and every
    input the trace writes in place (as eager left it against as the trace did).

    Each run gets its own copies of the arguments. The real state the entry reads besides
    them (a module's weights and buffers, tensors captured from globals) is put back as it
    was after every eager run, so checking a call changes nothing the script can see.
    `inputs`: the compiled trace's arguments for this call, when it is not the call the
    trace was made from (a symbolic trace serving new sizes)."""
    state = program.state
    saved = [cloned(t) for t in state]
    # The Python state the entry writes: each run starts from it as the call found it.
    places = [written.place for written in program.writes]
    # Compared: what holds tensors the trace computed (a flag or a count is what the
    # trace replays as it was traced).
    compared = [written.traced and written.place.argument is None for written in program.writes]
    found = [place.read() for place in places]
    torch.manual_seed(seed)
    args, kwargs = cloned(eager_args), cloned(eager_kwargs)
    # A training step runs its backward with autograd on; anything else runs without.
    training = trains(program.trace)
    grad_mode = (lambda: EagerSteps(state)) if training else torch.no_grad
    # The objects the call gets, taken before it runs: what it appends to a list it is
    # given would be one more input afterwards.
    call_inputs = program.inputs_for(args, kwargs)
    with grad_mode():
        expected = eager(*args, **kwargs)
        eager_inputs = call_inputs[: len(program.inputs) - len(state)] + [cloned(t) for t in state]
        # Autograd keeps a .grad on leaves only (asking a computed tensor for one warns).
        eager_grads = [cloned(t.grad) if isinstance(t, torch.Tensor) and t.is_leaf else None
                       for t in call_inputs] if training else []
        # An output that is a view of the state (`return w.detach()` after opt.step())
        # must keep the values eager gave it once the state is put back.
        expected = apart_from(expected, state)
        eager_kept = [apart_from(place.read(), state) for place in places]
    restore_tensors(state, saved)
    put_back(places, found)
    torch.manual_seed(seed)
    # The trace runs its backward itself: its inputs need no autograd of their own.
    compiled_inputs = cloned(program.inputs if inputs is None else inputs, requires_grad=False)
    before = cloned(compiled_inputs) if training else None
    with torch.no_grad():
        _sync(device)
        start = time.perf_counter()
        actual = compiled(*compiled_inputs)
        _sync(device)
        first_call_ms = (time.perf_counter() - start) * 1e3
    kept = [place.read() for place in places]
    put_back(places, found)
    names = [getattr(leaf, "name", repr(leaf)) for leaf in tree_leaves(trace.output)]
    empty = unspecified_values(trace)
    fused = getattr(compiled, "__tracecli_fused__", False)
    report = RunReport(compare_outputs(names, expected, actual, working_dtypes(trace), _unspecified(names, empty), fused),
                       compile_ms=compile_ms, first_call_ms=first_call_ms)
    if not same_structure(tree_flatten(expected)[1], tree_flatten(actual)[1]):
        report.outputs.insert(0, OutputCheck("(structure)", None, None, False, problem=(
            f"eager returned {_structure(expected)}, the trace {_structure(actual)}")))
    # What the program writes (its first trace), whatever the passes made of it.
    written = written_inputs(program.trace)
    final = written_inputs(trace)
    grads = grads_set(trace) if training else {}
    position = {v.name: i for i, v in enumerate(trace.inputs)}
    for i, value in enumerate(trace.inputs):
        if value.name in written:
            values = final.get(value.name) not in empty
            if training and values:
                # Computed in half precision under autocast, an update carries its rounding.
                working = working_dtypes(trace, [final.get(value.name)])[0]
                # A parameter's update, or its optimizer state's (a momentum buffer), is
                # judged with the parameter's gradients.
                j = i if i in grads else position.get(program.state_params.get(value.name))
                left = (eager_grads[j], compiled_inputs[j].grad) if j in grads else None
                report.written.append(compare_update(value.name, before[i], eager_inputs[i], compiled_inputs[i], fused,
                                                     working, left))
            else:
                report.written.append(compare_one(value.name, eager_inputs[i], compiled_inputs[i], values=values,
                                                   fused=fused))
    for place, eager_value, value, checked in zip(places, eager_kept, kept, compared, strict=True):
        # (What each run wrote through an argument went into its own copy of it.)
        if checked:
            report.state.extend(compare_kept(place.path, eager_value, value, fused))
    workings = working_dtypes(trace, list(grads.values()))
    for (i, _), working in zip(grads.items(), workings, strict=True):
        report.gradients.append(compare_grad(f"{trace.inputs[i].name}.grad", eager_grads[i], compiled_inputs[i].grad,
                                              working))
    if repeat:
        # The script's own output was shown once, by the eager run above; the timed runs
        # work on copies, and the state the eager ones change is put back.
        with grad_mode(), quiet():
            times = time_calls({"eager": lambda: eager(*args, **kwargs),
                                "compiled": lambda: compiled(*compiled_inputs)}, device, repeat)
        report.eager_ms, report.compiled_ms, report.repeat = times["eager"], times["compiled"], repeat
        restore_tensors(state, saved)
        put_back(places, found)
    report.uncompiled = uncompiled(compiled)
    return report


def compare_kept(path: str, eager, compiled, fused: bool) -> list[OutputCheck]:
    """What eager and the trace left in one place of Python state: each tensor in it."""
    if (eager is MISSING) != (compiled is MISSING):
        left = "the trace" if eager is MISSING else "eager"
        return [OutputCheck(path, None, None, False, problem=f"only {left} left something there")]
    leaves = tree_leaves(eager)
    names = [path] if len(leaves) == 1 else [f"{path}[{i}]" for i in range(len(leaves))]
    checks = compare_outputs(names, eager, compiled, fused=fused)
    if tree_flatten(eager)[1] != tree_flatten(compiled)[1]:
        checks.insert(0, OutputCheck(path, None, None, False, problem=(
            f"eager left {_structure(eager)}, the trace {_structure(compiled)}")))
    return checks


def put_back(places: list, values: list) -> None:
    for place, value in zip(places, values, strict=True):
        place.put(value)


def compare_grad(name: str, eager, compiled, working: torch.dtype | None = None) -> OutputCheck:
    if eager is None or compiled is None:
        left = "eager" if compiled is not None else "the trace"
        if eager is None and compiled is None:
            return OutputCheck(name, None, None, True)
        return OutputCheck(name, None, None, False, problem=f"{left} left it None")
    return compare_outputs([name], [eager], [compiled], [working], gradients=True)[0]


def _structure(obj: object) -> str:
    """The containers of a result, its tensors as `_`: what differs when structures do."""
    return format_constant(tree_map(lambda leaf: _ANY, obj))


def restore_tensors(state: list, saved: list) -> None:
    with torch.no_grad():
        for tensor, copy in zip(state, saved, strict=True):
            if isinstance(tensor, torch.Tensor):
                tensor.copy_(copy)
