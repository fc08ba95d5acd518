"""`tracecli examine`: which ops a program uses, which are modelled, and what could not
be traced at all."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from tracecli.core.errors import TracingError
from tracecli.core.functions import flatten_calls
from tracecli.core.printing import type_comment
from tracecli.core.trace import walk
from tracecli.jobs.runner import JobResult, trace_script


@dataclass
class OpUse:
    name: str  # qualified: ltorch.mul, torch.cumsum
    count: int
    modeled: bool
    lines: list[str] = field(default_factory=list)  # "file:line:  source" for opaque ops


@dataclass
class BreakUse:
    line: str  # "file:line:  source"
    reason: str
    count: int  # how often the calls traced cut there


@dataclass
class ExamineReport:
    job: JobResult | None
    ops: list[OpUse] = field(default_factory=list)
    prims: dict[str, int] = field(default_factory=dict)  # prims reached through decompositions
    untraceable: list[str] = field(default_factory=list)  # "file:line: message (at `source`)"
    # Inputs the entry read from outside itself (globals, closures, modules it did not get
    # as an argument): "name: cpu f32[3, 4]". Their values at trace time are not frozen:
    # each call reads them afresh.
    captured: list[str] = field(default_factory=list)
    # The Python state the entry keeps traced values in, which the trace stores on every
    # call: `model.attention_bias_cache['cpu']`.
    state: list[str] = field(default_factory=list)
    # Where the trace was cut because Python read a value (graph breaks), most frequent
    # first: as torch._dynamo.explain lists them, with the user's line.
    breaks: list[BreakUse] = field(default_factory=list)
    # The sizes the data decide, one line each: "u0: made_by  (file:line  source)".
    unbacked: list[str] = field(default_factory=list)

    @property
    def opaque(self) -> list[OpUse]:
        return [op for op in self.ops if not op.modeled]

    @property
    def bound_symbols(self) -> int:
        return sum(op.count for op in self.ops)


def examine_script(target: str, *, device: str, input_specs: list[str] | None, seed: int,
                   script_args: list[str] | None = None, fullgraph: bool = False) -> ExamineReport:
    try:
        job = trace_script(target, device=device, input_specs=input_specs, seed=seed, execute=False,
                           script_args=script_args, fullgraph=fullgraph)
    except TracingError as exc:
        return ExamineReport(None, untraceable=[str(exc)])
    counts: Counter[str] = Counter()
    opaque: set[str] = set()
    lines: dict[str, list[str]] = {}
    prims: Counter[str] = Counter()
    for call in job.calls:
        # A region (fused ops, a training step's backward) and a call kept whole (a custom
        # autograd.Function's) are the ops they hold.
        for depth, bsym in walk(list(flatten_calls(call.final.bsyms))):
            name = bsym.symbol.qualname
            if depth:
                if bsym.symbol.namespace == "prims":
                    prims[name] += 1
                continue
            counts[name] += 1
            if bsym.symbol.namespace in ("ltorch", "prims"):
                continue
            opaque.add(name)
            if bsym.source is not None:
                where = f"{bsym.source.file}:{bsym.source.line}:  {bsym.source.text}"
                if where not in lines.setdefault(name, []):
                    lines[name].append(where)
    ops = [
        OpUse(name, n, name not in opaque, lines.get(name, []))
        for name, n in sorted(counts.items(), key=lambda item: (item[0].startswith("ltorch."), -item[1], item[0]))
    ]
    captured = sorted({
        f"{v.name}: {type_comment(v)}" for call in job.calls for v in call.final.inputs
        if v.name in call.final.info.captured
    })
    state = list(dict.fromkeys(written.place.path for call in job.calls for written in call.program.writes
                               if written.traced))
    unbacked = list(dict.fromkeys(
        f"{d.name}: {d.made_by}" + (f"  ({d.where[0]}:{d.where[1]}  {d.where[2]})" if d.where else "")
        for call in job.calls for trace in _traces_of(call) for d in trace.dims if d.unbacked))
    return ExamineReport(job, ops, dict(sorted(prims.items())), captured=captured, state=state,
                         breaks=_breaks(job), unbacked=unbacked)


def _traces_of(call) -> list:
    """The call's trace, or each of its segments' where it was cut."""
    segments = getattr(call.program, "segments", ()) or ()
    return [segment.trace for segment in segments] or [call.final]


def _breaks(job: JobResult) -> list[BreakUse]:
    """Each place the calls' traces were cut, with why and how often (each call served
    counts: a break in a loop's step is met on every step)."""
    counts: Counter[tuple[str, str]] = Counter()
    for call in job.calls:
        # Each call served met its own breaks; a call made once (sample_inputs), its trace's.
        met = call.breaks_met or [[segment.after for segment in call.segments[1:]]]
        for breaks in met:
            for after in breaks:
                if after.resumes:  # a call run eagerly is one break, not two
                    continue
                source = after.source
                line = f"{source.file}:{source.line}:  {source.text}" if source is not None else "(no line of yours)"
                counts[(line, after.reason)] += 1
    return [BreakUse(line, reason, n) for (line, reason), n in counts.most_common()]
