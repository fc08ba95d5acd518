"""Running a call traced in segments (frontend/segments.py), and checking it.

A segment runs where the trace is cut, so the Python after it gets real values. While a
call is being traced (`shadow`), segments run on copies of its tensors and the last one
does not run: nothing the script holds changes. A call served afterwards is traced again
as it runs, its Python between the segments running for real, and each segment it meets
runs compiled: the passes applied and the code made once per segment (keyed by its code
and the objects it binds), looked up on every later call that records the same one. So
nothing a segment's Python reads is ever a value of another call.
"""

from __future__ import annotations

import collections
import contextlib
import enum
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import torch

from tracecli.core.bindings import Held, path_of
from tracecli.core.dims import Dim
from tracecli.core.dtypes import DType
from tracecli.core.functions import is_function_call
from tracecli.core.printing import format_constant, type_comment
from tracecli.core.pytree import rebuild_call, tree_leaves, values_in
from tracecli.core.rewrite import map_trace, renamer
from tracecli.core.symbol import BoundSymbol
from tracecli.core.trace import Trace, written_inputs
from tracecli.core.values import NumberValue, TensorValue
from tracecli.executors import compile_for, uncompiled
from tracecli.frontend.state import entry_function
from tracecli.frontend.tracer import TracedProgram, trace_callable
from tracecli.jobs.compare import (
    RunReport,
    apart_from,
    cloned,
    compare_grad,
    compare_kept,
    compare_one,
    compare_outputs,
    put_back,
    quiet,
    restore_tensors,
    time_calls,
    working_dtypes,
)
from tracecli.jobs.steps import EagerSteps, grads_set, trains
from tracecli.passes.pipeline import Stage, Step, run_pipeline


@dataclass
class Compiled:
    """One segment as it runs: its stages through the passes and its callable."""

    stages: list[Stage]
    run: Callable


@dataclass(frozen=True)
class SegmentShown:
    """A segment of a traced call as the job shows it: the break before it (None for the
    first), its stages through the passes, and the values its Python read that an
    earlier segment made, as (line, how, name, got)."""

    after: object
    stages: list[Stage]
    reads: tuple = ()


MAX_COMPILED = 256  # segments' code kept per program traced in segments


@dataclass
class SegmentRunner:
    """Runs the segments of traced calls for the tracer, with the job's passes and
    executor. `shadow`: the call is being traced (see the module's docstring)."""

    executor: str
    steps: list[Step]
    check: bool = True
    shadow: bool = False
    trains: bool = False  # a backward of its own: segments run with autograd off
    compiled: dict[tuple, Compiled] = field(default_factory=dict)
    keys: list[tuple] = field(default_factory=list)  # the segments of the last call, in order
    compile_ms: float = 0.0
    breaks_met: list = field(default_factory=list)  # the breaks of the call served last

    def run(self, segment: Trace, inputs: list, last: bool) -> list | None:
        if self.shadow and last:
            # It writes the program's state: not while tracing. (Compiled once the call is
            # traced, from its final text: `traced`.)
            self.keys.append(_key(segment) if self.keys else None)
            return None
        key = _key(segment)
        # Made and run below the tracer: its mode would look at every call the passes and
        # the segment make (a cut at a print comes from outside the mode's own call, where
        # the mode is on: the verifier running an opaque op's meta kernel was recorded as
        # an op of the program), and inductor's compiler must not see it. Autograd off
        # where a backward of its own or the shadow of a traced call would otherwise
        # record one.
        with torch._C.DisableTorchFunction():
            found = self._compiled(key, segment)
        self.keys.append(key)
        grad = torch.no_grad() if self.trains or self.shadow else contextlib.nullcontext()
        with torch._C.DisableTorchFunction(), grad:
            return found.run(*inputs)

    def ran(self, segment: Trace) -> None:
        # Run by the tracer, eagerly: shown with the others, never compiled to run.
        self.keys.append(_key(segment))

    def _compiled(self, key: tuple, segment: Trace) -> Compiled:
        found = self.compiled.pop(key, None)
        if found is not None:
            self.compiled[key] = found  # the most recently used last
        else:
            start = time.perf_counter()
            stages = run_pipeline(segment, self.steps, check=self.check)
            found = self.compiled[key] = Compiled(stages, compile_for(stages[-1].trace, self.executor))
            self.compile_ms += (time.perf_counter() - start) * 1e3
            self._forget_oldest()
        return found

    def _forget_oldest(self) -> None:
        """A number Python reads and hands on is a constant of the segment after it: a loop
        of 10 000 steps could make as many. The code least recently run goes first once
        there are MAX_COMPILED (a segment met again is made again)."""
        while len(self.compiled) > MAX_COMPILED:
            del self.compiled[next(iter(self.compiled))]

    def begin(self) -> None:
        self.keys = []

    def traced(self, segments) -> list[SegmentShown]:
        """Once a call is traced: each of its segments through the passes, as printed, and
        the code made from that, which later calls that record the same segment run (their
        bound symbols are the same; the traced call's also carry the user's names). The
        runner serves calls from then on. (break before it, stages) per segment."""
        shown = []
        final: dict[str, str] = {}  # a value's name -> its name once its segment went through the passes
        for key, segment in zip(self.keys, segments, strict=True):
            # What an earlier segment hands on keeps the name the passes gave it there.
            trace = _renamed_inputs(segment.trace, _handed_names(segment.trace.inputs, final))
            stages = _handing_on_unique(run_pipeline(trace, self.steps, check=self.check), final, trace)
            if key is not None and key == _key(segment.trace):
                self.compiled[key] = Compiled(stages, compile_for(stages[-1].trace, self.executor))
            # (Else it is other code than when it was cut: under --dynamic, sizes found equal
            # or to be a number since, which its code may spell as that number, where the
            # segment cut serves every size. A later call makes its own code from what it cuts.)
            after = segment.after
            if after is not None and after.reads:  # what Python read, by the names the passes gave
                after = replace(after, reads=tuple((how, final.get(name, name), got) for how, name, got in after.reads))
            reads = tuple((source, how, final.get(name, name), got) for source, how, name, got in segment.reads)
            shown.append(SegmentShown(after, stages, reads))
            final.update((old.name, new.name) for old, new in zip(values_in(trace.output),
                                                                   values_in(stages[-1].trace.output), strict=False))
        self.shadow = False
        return shown


def _globals_kept(namespace: dict) -> Callable[[], None]:
    """What puts a module's globals back as they are now: its plain numbers, strings and
    flags, and the contents of its lists, dicts, sets and deques (nested ones too, in
    place, since the entry holds them). The check runs the Python twice, eagerly and served;
    the program, once: a global counter, switch, history or tally the Python between the
    segments changes is put back after each run, on whichever side of a branch it wrote."""
    numbers = {k: v for k, v in namespace.items() if type(v) in _PLAIN}
    seen: set[int] = set()
    # Not the module's own dunders: `__builtins__` is a dict that Python itself runs on.
    contents = [(box, _contents(box)) for k, v in namespace.items() if not k.startswith("__")
                for box in _boxes(v, seen)]

    def put_back() -> None:
        namespace.update(numbers)
        for box, held in contents:
            _refill(box, held)

    return put_back


_PLAIN = (int, float, bool, str, type(None))
_BOXES = (list, dict, set, collections.deque)


def _boxes(value: object, seen: set[int]) -> list:
    """`value` and the containers inside it, each once (a container may hold itself)."""
    if not isinstance(value, _BOXES) or id(value) in seen:
        return []
    seen.add(id(value))
    inner = dict.values(value) if isinstance(value, dict) else value
    return [value, *(box for item in inner for box in _boxes(item, seen))]


def _contents(box: object) -> object:
    # What a dict holds, not what its class's __getitem__ makes of it: transformers'
    # ACT2FN (in every modeling module's globals) builds a new module on each lookup.
    return dict(dict.items(box)) if isinstance(box, dict) else list(box)


def _refill(box: object, held: object) -> None:
    box.clear()
    if isinstance(box, (dict, set)):
        box.update(held)
    else:
        box.extend(held)


def _handing_on_unique(stages: list[Stage], final: dict[str, str], trace: Trace) -> list[Stage]:
    """The stages, the last one's outputs named apart from what earlier segments hand on
    under another value: each segment's passes name its values alone (`a` reassigned
    across a cut is `a` in both), and a later segment may be handed both."""
    last = stages[-1].trace
    ours = {v.name for v in values_in(trace.output)}
    taken = {name for old, name in final.items() if old not in ours}
    clashing = [v.name for v in values_in(last.output) if v.name in taken and v not in last.inputs]
    if not clashing:
        return stages
    in_use = taken | last.names
    names = {}
    for name in dict.fromkeys(clashing):
        n = 1
        while f"{name}_{n}" in in_use:
            n += 1
        names[name] = f"{name}_{n}"
        in_use = in_use | {names[name]}
    return [*stages[:-1], replace(stages[-1], trace=map_trace(last, renamer(names)))]


def _handed_names(inputs: tuple, final: dict[str, str]) -> dict[str, str]:
    """The new name of each input an earlier segment hands on under the name its passes
    gave it, unless another input has that name: an input written in place in an
    earlier segment, which lower hands on as that input itself (written back), is one
    tensor with the input a later segment reads for its sizes (--dynamic), and a trace
    names each of its inputs once."""
    names = {}
    taken = {v.name for v in inputs}
    for value in inputs:
        new = final.get(value.name, value.name)
        if new != value.name and new not in taken:
            names[value.name] = new
            taken.add(new)
    return names


def _renamed_inputs(trace: Trace, names: dict[str, str]) -> Trace:
    """`trace` with the inputs named in `names` renamed, wherever it reads them."""
    if not names:
        return trace
    rename = renamer(names)
    return map_trace(trace, rename).replace(inputs=tuple(rename(v) for v in trace.inputs))


def _key(segment: Trace) -> tuple:
    """What makes two segments the same code: the code generated from it, as a structure
    rather than its text (a served call computes one per segment it meets, and printing
    was half the cost of a boundary). Two segments with equal keys print the same code
    (format_trace with codegen=True) binding the same objects: the key holds every value
    and constant the text shows, at least as finely (a constant tagged with its kind, as
    `1`, `1.0` and `True` print apart but compare equal; a float by its printed digits, as
    0.0 == -0.0 and nan != nan), and each object the code binds by identity. (Its inputs'
    shapes are not in it: a size the code uses is a constant it shows, or, under
    --dynamic, a symbol it binds from an input.)"""
    return (segment.name, tuple(v.name for v in segment.inputs), tuple(_call(b) for b in segment.bsyms),
            _constant(segment.output))


class _Same:
    """An object the generated code binds, compared by identity: holding it keeps its id
    from being reused while the key is cached."""

    __slots__ = ("obj", "name")

    def __init__(self, obj: object, name: str | None):
        self.obj = obj
        self.name = name  # a Held's name (the code binds the object under it)

    def __eq__(self, other: object) -> bool:
        return type(other) is _Same and other.obj is self.obj and other.name == self.name

    def __hash__(self) -> int:
        return id(self.obj)


def _spelled(obj: object) -> object:
    """As Bindings.spell spells it: its torch path, or the object itself, bound."""
    if type(obj) is Held:
        return _Same(obj.obj, obj.name)
    path = path_of(obj)
    return ("path", path) if path is not None else _Same(obj, None)


def _leaf(value) -> tuple:
    """A value where the code makes it (an input, an output): its name and its type
    comment's parts. Where it is read, its name says which (names are unique in a trace)."""
    if type(value) is TensorValue:
        return ("t", value.name, value.shape, value.dtype.name, value.device, value.requires_grad)
    return ("n", value.name, type_comment(value))


def _call(bsym: BoundSymbol) -> tuple:
    sym = bsym.symbol
    callee = sym.qualname if sym.namespace else _spelled(sym.impl)
    args = tuple([a.name if type(a) is TensorValue else _constant(a) for a in bsym.args])
    kwargs = tuple([(k, _constant(v)) for k, v in bsym.kwargs])
    key = (callee, args, kwargs, _target(bsym.output))
    if is_function_call(bsym):  # kept whole: the code is what it runs (its dels follow from it)
        return (*key, tuple(_call(sub) for sub in bsym.subsymbols))
    return key


def _target(output: object) -> object:
    """An output as format_bsym writes it: its values (with their type comments) in their
    tuples and lists, anything else `_`."""
    kind = type(output)
    if kind is TensorValue or kind is NumberValue:
        return _leaf(output)
    if isinstance(output, tuple):
        return ("(", *(_target(o) for o in output))
    if isinstance(output, list):
        return ("[", *(_target(o) for o in output))
    return "_"


def _constant(obj: object) -> object:
    """`obj` read by a call, as format_constant spells it, its cases in the same order: a
    value by its name (a bare str), an int as itself, everything else a tuple tagged with
    its kind."""
    kind = type(obj)
    if kind is TensorValue or kind is NumberValue:
        return obj.name
    if kind is int:
        return obj
    if isinstance(obj, (TensorValue, NumberValue)):
        return obj.name
    if isinstance(obj, DType):
        return ("dtype", obj.name)
    if isinstance(obj, Dim):
        return ("dim", obj.text())
    if isinstance(obj, enum.Enum):
        return ("obj", _spelled(obj))
    if isinstance(obj, bool) or obj is None:
        return ("bool", obj)
    if isinstance(obj, float):
        return ("float", format_constant(obj))
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, str):
        return ("str", str(obj))
    if kind is tuple:
        return ("(", *(_constant(x) for x in obj))
    if kind is list:
        return ("[", *(_constant(x) for x in obj))
    if kind is dict:
        return ("{", *((_constant(k), _constant(v)) for k, v in obj.items()))
    call = rebuild_call(obj)
    if call is not None:
        return ("call", _spelled(call.callee), tuple(_constant(a) for a in call.args),
                tuple((k, _constant(v)) for k, v in call.kwargs))
    if isinstance(obj, slice):
        return ("slice", _constant(obj.start), _constant(obj.stop), _constant(obj.step))
    if obj is Ellipsis:
        return ("...",)
    if isinstance(obj, complex):
        return ("complex", format_constant(obj))
    return ("obj", _spelled(obj))


def replay(fn: Callable, args: tuple, kwargs: dict, runner: SegmentRunner, **options) -> object:
    """A call of a program traced in segments, served: traced again as it runs, each
    segment it meets run compiled. What it returns."""
    runner.begin()
    program = trace_callable(fn, args, kwargs, segments=runner, **options)
    runner.breaks_met = [segment.after for segment in program.segments[1:]]
    return program.result


def check_segmented(program: TracedProgram, runner: SegmentRunner, fn: Callable, args: tuple, kwargs: dict, *,
                    seed: int, device: str, repeat: int = 0, options: dict | None = None,
                    eager: Callable | None = None) -> RunReport:
    """The call run eagerly and served by its segments, each from the same state with the
    same seed; every output, every input written in place, every gradient and the Python
    state it keeps compared, as `check_against_eager` does for one trace. The state the
    script sees is put back after each run."""
    options = options or {}
    eager = eager or fn
    trace = program.trace  # the whole call: which inputs it writes, which gradients it sets
    state = program.state
    saved = [cloned(t) for t in state]
    places = [written.place for written in program.writes]
    compared = [written.traced and written.place.argument is None for written in program.writes]
    found = [place.read() for place in places]
    training = trains(trace)
    # The optimizers the eager run steps are kept from the start of the traced one.
    optimizers: list = []
    steps = (lambda: EagerSteps(state, optimizers)) if training else contextlib.nullcontext

    # The module globals the entry's code reads and writes (`global N; N += 1`).
    module_globals = getattr(entry_function(eager), "__globals__", {})

    def run(call: Callable) -> tuple:
        torch.manual_seed(seed)
        call_args, call_kwargs = cloned(args), cloned(kwargs)
        inputs = program.inputs_for(call_args, call_kwargs)
        put_back_globals = _globals_kept(module_globals)
        with steps():
            got = apart_from(call(call_args, call_kwargs), state)
            after = inputs[: len(inputs) - len(state)] + [cloned(t) for t in state]
            grads = [cloned(t.grad) if isinstance(t, torch.Tensor) and t.is_leaf else None for t in inputs]
            kept = [apart_from(place.read(), state) for place in places]
        restore_tensors(state, saved)
        put_back(places, found)
        put_back_globals()
        return got, after, grads, kept

    expected, eager_after, eager_grads, eager_kept = run(lambda a, k: eager(*a, **k))
    runner.trains = training
    start = time.perf_counter()
    with quiet():  # the Python between the segments prints what the eager run printed already
        actual, traced_after, traced_grads, traced_kept = run(lambda a, k: replay(fn, a, k, runner, **options))
    first_call_ms = (time.perf_counter() - start) * 1e3
    names = [getattr(leaf, "name", repr(leaf)) for leaf in tree_leaves(trace.output)]
    report = RunReport(compare_outputs(names, expected, actual, working_dtypes(trace)),
                       compile_ms=runner.compile_ms, first_call_ms=first_call_ms)
    written = written_inputs(trace)
    for i, value in enumerate(trace.inputs):
        if value.name in written:
            report.written.append(compare_one(value.name, eager_after[i], traced_after[i]))
    for place, eager_value, value, checked in zip(places, eager_kept, traced_kept, compared, strict=True):
        if checked:
            report.state.extend(compare_kept(place.path, eager_value, value, False))
    for i in grads_set(trace) if training else {}:
        report.gradients.append(compare_grad(f"{trace.inputs[i].name}.grad", eager_grads[i], traced_grads[i]))
    if repeat:
        with steps(), quiet():
            times = time_calls({"eager": lambda: eager(*args, **kwargs),
                                "compiled": lambda: replay(fn, args, kwargs, runner, **options)}, device, repeat)
        report.eager_ms, report.compiled_ms, report.repeat = times["eager"], times["compiled"], repeat
        restore_tensors(state, saved)
        put_back(places, found)
    report.uncompiled = [found for compiled in runner.compiled.values() for found in uncompiled(compiled.run)]
    return report


__all__ = ["MAX_COMPILED", "Compiled", "SegmentRunner", "SegmentShown", "check_segmented", "replay"]
