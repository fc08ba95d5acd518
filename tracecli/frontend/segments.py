"""A call traced in segments: where Python needs a tensor's value, the trace is cut.

When the traced code reads a value (`loss.item()`, `if bool(mask.any()):`, `x.tolist()`),
tracing cannot go on with a proxy: the trace so far is a segment of its own. It is
compiled and run there and then (by the runner the caller gives), on real tensors, so
the read gets the real value, the user's Python goes on with it, and the ops after it are
the next segment:

    segment 1: the ops up to the read, returning what the Python still holds
    (Python reads t5.item() -> 0.734, and goes on)
    segment 2: the ops after it, reading segment 1's values as inputs

A segment's inputs are the values it reads that something before it made (the call's
inputs, captured tensors, an earlier segment's outputs); its outputs are the values the
program can still reach when it ends: those the user's objects hold (a proxy referenced
from anywhere but the tracer itself), and, in a training step, every value, since a
backward later on reads what the forward made. Names are unique across the segments of
a call: a value keeps its name from the segment that makes it to those that read it.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

import torch

from tracecli.core.dims import Dim, evaluate
from tracecli.core.errors import TracingError
from tracecli.core.pytree import tree_leaves, tree_map, values_in
from tracecli.core.symbol import BoundSymbol, SourceLocation, Symbol
from tracecli.core.trace import Trace
from tracecli.core.values import NumberValue, TensorValue, Value
from tracecli.frontend.stand_ins import ValuesNeeded, stands_for
from tracecli.ops.prims.autograd import SAVED_GRAD_MODES
from tracecli.ops.prims.checks import SIZE_RELATIONS


@dataclass(frozen=True)
class Break:
    """Where and why the trace of a call was cut: the user's line, the reason in a few
    words, and what Python read there, each as (how it reads, the value's name, what it
    got): `("{}.item()", "t5", "0.7342")`."""

    source: SourceLocation | None
    reason: str
    reads: tuple[tuple[str, str, str], ...] = ()
    resumes: bool = False  # the end of a call run eagerly: the other side of the break before it

    def read_texts(self, names: dict[str, str] | None = None) -> list[str]:
        """`loss.item() = 0.7342`: each read, the value by its name in `names` if there."""
        names = names or {}
        return [f"{how.format(names.get(name, name))} = {got}" for how, name, got in self.reads]


@dataclass(frozen=True)
class Segment:
    """One piece of a call's trace, and the break that ended the piece before it (None
    for the first). `reads`: what the Python between it and the next read of values an
    earlier segment already made (no cut needed), each as (line, how, name, got)."""

    trace: Trace
    after: Break | None = None
    reads: tuple = ()


class Runner(Protocol):
    """What runs a segment for the tracer (the jobs layer compiles it). `shadow`: the
    call is being traced, not served: what it runs on are copies of the call's tensors,
    and the last segment (which writes the program's state) is not run."""

    shadow: bool

    def run(self, segment: Trace, inputs: list, last: bool) -> list | None: ...

    def ran(self, segment: Trace) -> None:
        """A segment the tracer ran itself, eagerly (a call it could not trace)."""


# How many references a proxy has in `live_values` when only the tracer holds it: its
# entry in the tracer's table, the loop's variable, and the argument of sys.getrefcount.
_UNHELD = 3


@dataclass
class Segmenting:
    """The segments of one traced call as they are cut."""

    runner: Runner
    name: str
    start: int = 0  # where the segment being traced begins among the recorded calls
    cuts: list[tuple[int, tuple[Value, ...], Break]] = field(default_factory=list)  # (end, outputs, break)
    real: dict[str, object] = field(default_factory=dict)  # value name -> what it holds
    # Per segment (by number, from 1), the reads of values already made, which cut nothing.
    more_reads: dict[int, list] = field(default_factory=dict)
    copies: dict[int, torch.Tensor] = field(default_factory=dict)  # id(real tensor) -> its copy, when shadowing
    uncopied: set[str] = field(default_factory=set)  # inputs no segment has read yet, when shadowing
    # Per segment (by number), the bound symbols trace_of last split out and what they read.
    inputs_of: dict[int, tuple] = field(default_factory=dict)
    # With symbolic sizes: a segment with the sizes it reads bound (frontend/symbolic.py).
    bind_sizes: Callable[[Trace, tuple[Value, ...]], Trace] | None = None
    # The grad mode the call was entered in, and the one the segment being traced
    # starts in (the program's `with torch.no_grad():` may span a cut).
    entry_grad_mode: bool = True
    start_grad_mode: bool = True

    def hold(self, value: Value, obj: object) -> None:
        """An input of the call (an argument, a module's tensor, a captured tensor): what
        segments that read it run on (a copy of it, while the call is traced, made when a
        segment first reads it: a model's weights are not copied for a call that is never
        cut, and tracing changes no real tensor before then)."""
        self.real[value.name] = obj
        if isinstance(obj, torch.Tensor) and self.runner.shadow:
            self.uncopied.add(value.name)

    def held(self, name: str) -> object:
        """What a value holds, for a segment or an eager call to read (a copy of an input
        while the call is traced)."""
        obj = self.real[name]
        if name in self.uncopied:
            self.uncopied.discard(name)
            copy = self.copies.get(id(obj))
            if copy is None:
                # Below the tracer: the copy is no op of the program's.
                with torch._C.DisableTorchFunction(), torch.no_grad():
                    copy = self.copies[id(obj)] = obj.detach().clone().requires_grad_(obj.requires_grad)
            obj = self.real[name] = copy
        return obj

    def cut(self, bsyms: list[BoundSymbol], live: list[Value], why: Break, grad_mode: bool) -> None:
        """End the segment being traced at a break: run it, keeping the values of `live`.
        `grad_mode`: the one the calls recorded last ran in, where the next segment starts."""
        recorded = tuple(bsyms[self.start:])
        outputs = _kept(_made(recorded), live)
        trace = self.trace_of(recorded, outputs, len(self.cuts) + 1)
        with self._grad_mode_kept():
            got = self.runner.run(trace, [self.held(v.name) for v in trace.inputs], last=False)
        for value, obj in zip(outputs, got, strict=True):
            self.real[value.name] = obj
        self.cuts.append((len(bsyms), outputs, why))
        self.start = len(bsyms)
        self.start_grad_mode = grad_mode

    @contextmanager
    def _grad_mode_kept(self) -> Iterator[None]:
        """A segment runs in the grad mode it was traced in, and leaves the program's as it
        found it: the Python between the segments runs for real, its `with
        torch.no_grad():` too. A segment that starts inside such a block and leaves it
        (`restore_grad_enabled`) goes back to the entry's mode, as the whole trace would."""
        saved = SAVED_GRAD_MODES
        depth, mode = len(saved), torch.is_grad_enabled()
        if self.start_grad_mode is not self.entry_grad_mode:
            saved.append(self.entry_grad_mode)
        torch._C._set_grad_enabled(self.start_grad_mode)
        try:
            yield
        finally:
            del saved[depth:]
            torch._C._set_grad_enabled(mode)

    def ran_eagerly(self, bsyms: list[BoundSymbol], outputs: tuple[Value, ...], got: list, why: Break) -> None:
        """End a segment the tracer ran itself: the call it could not trace, run eagerly
        on the real values, whose results (`got`, for `outputs`) later segments read."""
        trace = self.trace_of(tuple(bsyms[self.start:]), outputs, len(self.cuts) + 1)
        self.runner.ran(trace)
        for value, obj in zip(outputs, got, strict=True):
            self.real[value.name] = obj
        self.cuts.append((len(bsyms), outputs, why))
        self.start = len(bsyms)

    def retitle(self, why: Break) -> None:
        """The last cut, said to be `why`: no op came after it before this break."""
        end, outputs, _ = self.cuts[-1]
        self.cuts[-1] = (end, outputs, why)

    def note_read(self, read: tuple[str, str, str], cut: bool, source: SourceLocation | None) -> None:
        """What Python read: at the break it made (shown between the two segments), or
        while the segment after it was traced (shown with that segment)."""
        if cut:
            end, outputs, why = self.cuts[-1]
            self.cuts[-1] = (end, outputs, Break(why.source, why.reason, (*why.reads, read)))
        else:
            self.more_reads.setdefault(len(self.cuts) + 1, []).append((source, *read))

    def value(self, value: Value) -> object:
        """What a value of an earlier segment holds, for the Python reading it."""
        return self.held(value.name)

    def trace_of(self, bsyms: tuple[BoundSymbol, ...], output, number: int, info=None) -> Trace:
        # `segments` splits the final bound symbols again, most often the very ones each
        # cut recorded (a served call meets every cut again): what they read is known then.
        known = self.inputs_of.get(number)
        if (known is not None and known[2] is output and len(known[0]) == len(bsyms)
                and all(map(operator.is_, known[0], bsyms))):
            inputs = known[1]
        else:
            # What it returns that an earlier segment made (`y = x * 2; print(y.sum().item());
            # return y`) it is handed too: read as if by one more call at its end.
            inputs = _read_before((*bsyms, BoundSymbol(_RETURNS, tuple(values_in(output)), (), None)))
            self.inputs_of[number] = (bsyms, inputs, output)
        missing = [v.name for v in inputs if v.name not in self.real]
        if missing:
            raise KeyError(f"segment {number} reads {', '.join(missing)}, which nothing before it kept")
        trace = (Trace(f"{self.name}_{number}", tuple(inputs), bsyms, output) if info is None
                 else Trace(f"{self.name}_{number}", tuple(inputs), bsyms, output, info))
        if self.bind_sizes is None:
            return trace
        # What the earlier segments kept, which may carry a size the data decide this one reads.
        return self.bind_sizes(trace, tuple(v for _, outputs, _ in self.cuts[:number - 1] for v in outputs))

    def segments(self, bsyms: tuple[BoundSymbol, ...], output, info) -> list[Segment]:
        """The call's segments once it is traced, from its final bound symbols (named after
        the user's variables by then) and what it returns."""
        out = []
        begin, after = 0, None
        for number, (end, outputs, why) in enumerate(self.cuts, 1):
            if self.bind_sizes is not None:  # symbolic: the sizes may be known better by now
                outputs = _as_made(outputs, bsyms[begin:end])
            out.append(Segment(self.trace_of(bsyms[begin:end], outputs, number, info), after,
                               tuple(self.more_reads.get(number, ()))))
            begin, after = end, why
        last = len(self.cuts) + 1
        out.append(Segment(self.trace_of(bsyms[begin:], output, last, info), after, tuple(self.more_reads.get(last, ()))))
        return out

    def finish(self, last: Segment) -> object:
        """Run the last segment (unless the call is being traced): what the call returns."""
        with self._grad_mode_kept():
            return self.runner.run(last.trace, [self.real[v.name] for v in last.trace.inputs], last=True)


def live_values(proxies: dict[str, object], everything: bool) -> list[Value]:
    """The values the program can still reach: each proxy something besides the tracer
    holds (a variable, a container, an object), or every one (`everything`: a training
    step, whose backward reads what the forward made)."""
    if everything:
        return [p.value for p in proxies.values()]
    return [p.value for p in proxies.values() if sys.getrefcount(p) > _UNHELD]


def _kept(made: list[Value], live: list[Value]) -> tuple[Value, ...]:
    """The values in `made` that are in `live`, each once, in the order made. Matched
    by name first: a value's hash is a Python call (its dtype's too), and `live` is
    every value a training step's backward may read, at every cut."""
    live_named: dict[str, list[Value]] = {}
    for value in live:
        live_named.setdefault(value.name, []).append(value)
    kept: dict[str, list[Value]] = {}
    out = []
    for value in made:
        alike = live_named.get(value.name)
        if alike is None or not _among(value, alike):
            continue
        seen = kept.setdefault(value.name, [])
        if not _among(value, seen):
            seen.append(value)
            out.append(value)
    return tuple(out)


def _among(value: Value, values: list[Value]) -> bool:
    """`value in values`, as a set's lookup tests it: the same object, or an equal one."""
    return any(other is value or other == value for other in values)


def _made(bsyms) -> list[Value]:
    return [v for b in bsyms for v in b.output_values() if isinstance(v, (TensorValue, NumberValue))]


def _as_made(outputs: tuple[Value, ...], bsyms) -> tuple[Value, ...]:
    """A cut's outputs as the final bound symbols make them. With symbolic sizes, the
    tracing may learn after a cut that two sizes are one (`z + x`: z's dims are x's), or
    that a size is a number (a call run eagerly): the whole trace's types say so from
    then on, and a value a segment hands on must be typed so where it is made and where
    a later segment reads it."""
    if not outputs:
        return outputs
    made = {v.name: v for v in _made(bsyms)}
    typed = tuple(made.get(v.name, v) for v in outputs)
    # The same tuple where nothing changed: trace_of knows what its segment reads then.
    return outputs if all(map(operator.is_, typed, outputs)) else typed


_RETURNS = Symbol("return", "segment")


def _read_before(bsyms) -> list[Value]:
    """The values the bound symbols read that none of them makes, in order of first read."""
    made: set[str] = set()
    read: dict[str, Value] = {}
    for bsym in bsyms:
        for value in bsym.arg_values():
            if value.name not in made and value.name not in read and not _is_size(value):
                read[value.name] = value
        made.update(v.name for v in bsym.output_values())
    return list(read.values())


def _is_size(value: Value) -> bool:
    return type(value) is NumberValue and value.is_size


def shown(got: object) -> str:
    """A value Python read, as the text between two segments shows it."""
    text = repr(got) if not isinstance(got, float) else f"{got:.6g}"
    return text if len(text) <= 60 else text[:57] + "..."




# While a call is traced in segments, reads of a traced value are breaks, not refusals:
# here is the tracer's reader of what printing a traced tensor shows, innermost last.
VALUE_READERS: list = []

# Reads that end a segment: Python gets the real value and goes on. (`nonzero` makes a
# tensor whose size is the data's, `data_ptr` an address: neither is a value to read.)
BREAKING_READS = {
    "__bool__": "bool() of a tensor: a branch on its value",
    "item": "Tensor.item reads its value",
    "tolist": "Tensor.tolist reads its values",
    "__int__": "int() of a tensor reads its value",
    "__float__": "float() of a tensor reads its value",
    "__complex__": "complex() of a tensor reads its value",
    "__index__": "a tensor used as an index reads its value",
    "__format__": "formatting a tensor reads its value",
    "__repr__": "printing a tensor reads its values",
    "__contains__": "`in` a tensor reads its values",
}
_READ_SPELLING = {
    "__bool__": "bool({})", "item": "{}.item()", "tolist": "{}.tolist()", "__int__": "int({})",
    "__float__": "float({})", "__complex__": "complex({})", "__index__": "index({})", "__format__": "format({})",
    "__repr__": "repr({})", "__contains__": "contains({})",
}


class EagerCallFailed(Exception):
    """A call run eagerly, where tracing could not follow it, raised: refused as when traced."""


def _live_at_cut(tracer) -> list[Value]:
    """What a segment cut now must keep: the values the program can still reach."""
    everything = tracer.training.may_differentiate()
    if everything:
        tracer.training.expose_for_backward()
    # A real tensor the program holds (a captured weight, an optimizer's moment)
    # written in place holds the value its last write made.
    live = live_values(tracer.proxies, everything) + list(tracer.known.values())
    if everything:  # what a backward may read: inside decompositions too, once exposed
        live += _made(tracer.recorder.bsyms[tracer.segmenting.start:])
    return live + _bases_of(tracer.aliasing, live)


def _bases_of(aliasing, live: list[Value]) -> list[Value]:
    """What the views among `live` were taken from, up to the tensor owning the memory
    (as it is now): a write into a view in a later segment writes them too."""
    out = []
    for value in live:
        view = aliasing.views.get(value.name)
        while view is not None:
            out.append(view.parent)
            current = aliasing.current.get(view.base)
            if current is not None:
                out.append(current)
            view = aliasing.views.get(view.parent.name)
    return out


def run_eagerly(tracer, func, vargs: tuple, vkwargs: dict, source: SourceLocation | None, reason: str,
                record) -> object:
    """A call tracing cannot follow while segmenting (`x[mask]`, `torch.nonzero`: sizes
    that are the data's; a call with no meta kernel): the segment so far is cut and run,
    the call runs eagerly on the real values as a segment of its own, and tracing goes
    on after it with its real results. `record(symbol)` records the call's bound symbol
    and returns its output values."""
    segmenting: Segmenting = tracer.segmenting
    read = [v for v in values_in((vargs, vkwargs)) if isinstance(v, TensorValue)]
    why = Break(source, f"{reason}; it runs eagerly")
    if len(tracer.recorder.bsyms) == segmenting.start and segmenting.cuts and all(v.name in segmenting.real for v in read):
        segmenting.retitle(why)  # right after another cut: the segment after it is this call
    else:
        segmenting.cut(tracer.recorder.bsyms, [*_live_at_cut(tracer), *read], why, tracer.recorder.grad_mode)
    def real(leaf):
        return segmenting.held(leaf.name) if isinstance(leaf, Value) and leaf.name in segmenting.real else leaf

    real_args, real_kwargs = tree_map(real, vargs), tree_map(real, vkwargs)
    with torch._C.DisableTorchFunction():
        try:
            got = func(*real_args, **real_kwargs)
        except Exception as exc:  # eager refuses it too: the arguments are at fault
            raise EagerCallFailed(str(exc)) from exc
    out = record(got)
    outputs = tuple(v for v in values_in(out) if isinstance(v, TensorValue))
    real_out = [leaf for leaf in tree_leaves(got) if isinstance(leaf, torch.Tensor)]
    name = tracer.recorder.bsyms[-1].symbol.qualname
    segmenting.ran_eagerly(tracer.recorder.bsyms, outputs, real_out, Break(source, f"after {name}, which ran eagerly", resumes=True))
    return out


def break_at_read(tracer, func, args: tuple, kwargs: dict, source: SourceLocation | None, inside: str | None = None):
    """`loss.item()` and kin while segmenting: the segment so far is cut and run, and the
    read gets the real value. A read right after another (no op between) reads what the
    last cut kept. `inside`: the library function that reads, when the user's line
    calls one (an optimizer's step), which the reason names."""
    segmenting: Segmenting = tracer.segmenting
    name = func.__name__
    value = tracer.value_of(args[0])
    cut = value.name not in segmenting.real
    if cut:
        reason = BREAKING_READS[name] + (f", in {inside}" if inside else "")
        segmenting.cut(tracer.recorder.bsyms, [*_live_at_cut(tracer), value], Break(source, reason),
                       tracer.recorder.grad_mode)
    real = segmenting.value(value)
    if stands_for(real) is not None:
        raise ValuesNeeded(source)
    if isinstance(real, torch.Tensor) and real.is_meta:
        # Computed from tensors on meta (a model built under `with torch.device("meta"):`).
        where = {"file": source.file, "line": source.line, "source": source.text} if source is not None else {}
        raise TracingError(f"{BREAKING_READS[name]}, and this one is on meta: meta tensors have no values, so the "
                           "trace cannot go on past this line. Tracing a model built on meta needs a program that "
                           "reads none of its values", **where)
    with torch._C.DisableTorchFunctionSubclass():
        got = func(real, *args[1:], **kwargs)
    segmenting.note_read((_READ_SPELLING[name], value.name, shown(got)), cut, source)
    return got


def break_at_size(tracer, open_, source: SourceLocation | None) -> bool:
    """A branch on sizes the data decide (`if idx.shape[0] > 3:` after a nonzero) while
    segmenting: the segment that makes them is cut and run, and the branch gets the real
    sizes. The trace after it is this call's, as after any read."""
    env = open_.env
    sizes = ", ".join(info.describe() for info in env.unbacked_in((open_.lhs, open_.rhs)))
    values, shown_as = _real_sizes(tracer, env, (open_.lhs, open_.rhs),
                                   f"a branch on {open_.text()}, sizes the data decide: {sizes}", source,
                                   lambda: env.open_error(open_))
    lhs, rhs = evaluate(env.canonical(open_.lhs), values), evaluate(env.canonical(open_.rhs), values)
    got = SIZE_RELATIONS[open_.op](lhs, rhs)
    shown_as(open_.text(), got)
    return got


def read_size(tracer, env, size, source: SourceLocation | None, refusal) -> int:
    """A size the data decide used as a plain int while segmenting (`len(x[mask])`,
    `range(n)`): Python needs its value, so the segment that makes it is cut and run."""
    sizes = ", ".join(info.describe() for info in env.unbacked_in(size))
    values, shown_as = _real_sizes(tracer, env, (size,), f"{size.text()} used as a plain int, sizes the data "
                                   f"decide: {sizes}", source, refusal)
    got = evaluate(env.canonical(size), values)
    shown_as(size.text(), got)
    return got


def _real_sizes(tracer, env, sizes: tuple, reason: str, source: SourceLocation | None, refusal):
    """The real values of the unbacked sizes in `sizes`, read off the first values that
    have them (cutting the segment that makes them, unless it already ran), with the
    note of the read to make once its answer is known."""
    segmenting: Segmenting = tracer.segmenting
    wanted = {info.name for info in env.unbacked_in(sizes)}
    carriers: dict[str, tuple[Value, int]] = {}
    for bsym in tracer.recorder.bsyms:
        for value in bsym.output_values():
            if type(value) is TensorValue:
                for axis, size in enumerate(value.shape):
                    name = size.as_symbol() if isinstance(size, Dim) else None
                    if name in wanted and name not in carriers:
                        carriers[name] = (value, axis)
    if wanted - carriers.keys():
        raise refusal()  # made where no value shows it (inside a call): nothing to read
    carrier_values = [value for value, _ in carriers.values()]
    cut = any(value.name not in segmenting.real for value in carrier_values)
    if cut:
        segmenting.cut(tracer.recorder.bsyms, [*_live_at_cut(tracer), *carrier_values], Break(source, reason),
                       tracer.recorder.grad_mode)
    values = {name: info.example for name, info in env.dims.items() if not info.unbacked}
    for name, (value, axis) in carriers.items():
        values[name] = int(segmenting.value(value).shape[axis])

    def shown_as(asked: str, got) -> None:
        read = asked if asked in carriers else f"{asked} ({', '.join(f'{n} = {values[n]}' for n in sorted(carriers))})"
        segmenting.note_read((read, carrier_values[0].name, str(got)), cut, source)

    return values, shown_as


__all__ = ["BREAKING_READS", "VALUE_READERS", "Break", "EagerCallFailed", "Runner", "Segment", "Segmenting", "break_at_read", "live_values",
           "break_at_size", "read_size", "run_eagerly", "shown"]
