"""The JSON report of `tracecli run` / `tracecli trace` (format documented in the README)."""

from __future__ import annotations

import math

from tracecli.core.printing import format_trace
from tracecli.core.pytree import tree_leaves
from tracecli.core.regions import backward_trace
from tracecli.core.trace import Trace
from tracecli.core.values import NumberValue, TensorValue
from tracecli.jobs.compare import RunReport
from tracecli.jobs.runner import JobResult
from tracecli.jobs.segment_text import segments_text
from tracecli.render.groups import group_calls, specialised_arguments

# The version of every JSON object tracecli prints (run, trace, diff, examine).
FORMAT_VERSION = 1


def _size(d) -> int | str:
    """A size in JSON: an int, or the symbolic size's expression (`n`, `n*m//2`)."""
    return d if isinstance(d, int) else str(d)


def _value(v) -> dict:
    if isinstance(v, TensorValue):
        return {"name": v.name, "kind": "tensor", "shape": [_size(d) for d in v.shape], "dtype": v.dtype.name,
                "device": v.device}
    if isinstance(v, NumberValue):
        value = v.value if isinstance(v.value, (int, float, bool, str, type(None))) else repr(v.value)
        return {"name": v.name, "kind": "constant", "type": v.python_type, "value": value}
    return {"name": None, "kind": "constant", "type": type(v).__name__, "value": repr(v)}


def _finite(x: float | None):
    return None if x is None or math.isnan(x) else x


def output_check_json(o) -> dict:
    return {
        "name": o.name, "shape": list(o.shape) if o.shape is not None else None, "dtype": o.dtype,
        "match": o.match, "max_abs_error": _finite(o.max_abs_error), "max_rel_error": _finite(o.max_rel_error),
        "problem": o.problem or None,
    }


def _report(report: RunReport) -> dict:
    return {
        "match": report.match,
        "eager_ms": report.eager_ms,
        "compiled_ms": report.compiled_ms,
        "speedup": report.speedup,
        "repeat": report.repeat,
        "compile_ms": report.compile_ms,
        "first_call_ms": report.first_call_ms,
        "outputs": [output_check_json(o) for o in report.outputs],
        "written": [output_check_json(w) for w in report.written],
        "state": [output_check_json(k) for k in report.state],
        "gradients": [output_check_json(g) for g in report.gradients],
        "uncompiled": [{"region": name, "why": why} for name, why in report.uncompiled],
    }


def trace_json(trace: Trace, depth: float) -> dict:
    out = {
        "text": format_trace(trace, depth),
        "inputs": [_value(v) for v in trace.inputs],
        "outputs": [_value(v) for v in tree_leaves(trace.output)],
        "bound_symbols": len(trace.bsyms),
    }
    if trace.dims:
        out["dims"] = [_dim(d) for d in trace.dims]
        out["guards"] = [_relation(g) for g in trace.guards]
        if trace.facts:
            out["facts"] = [_relation(f) for f in trace.facts]
    return out


def _dim(d) -> dict:
    if d.unbacked:
        # A size the data decide: what makes it and at which line, and its bounds.
        line = f"{d.where[0]}:{d.where[1]}" if d.where else None
        return {"name": d.name, "unbacked": True, "made_by": d.made_by, "line": line,
                "source": d.where[2] if d.where else None,
                "upper": None if d.upper is None else _size(d.upper)}
    return {"name": d.name, "origin": d.origin, "named": d.named,
            "same_as": None if d.same_as is None else _size(d.same_as)}


def _relation(g) -> dict:
    return {"expr": g.text(), "reason": g.reason, "line": g.where() or None, "source": g.source or None}


def _sized_json(job: JobResult, depth: float) -> dict:
    """One element per call: its sizes, the trace that served it and how, the result."""
    calls = []
    for call in job.sized:
        served = job.calls[call.trace_index - 1]
        entry = {
            "trace_index": call.trace_index, "reused": call.reused, "sizes": dict(call.sizes),
            "retraced_because": call.retraced, "trace": trace_json(served.final, depth),
        }
        if call.report is not None:
            entry["result"] = _report(call.report)
        calls.append(entry)
    return {"calls": calls, "traces": len(job.calls)}


def job_json(command: str, job: JobResult, depth: float) -> dict:
    out = {
        "format": FORMAT_VERSION,
        "command": command,
        "script": job.script.display,
        "entry": job.entry,
        "entry_reason": job.entry_reason,
        "device": job.device,
        "executor": job.executor,
        "claimed": job.claimed,
        "calls": [],
    }
    if job.symbolic and job.sized:
        out.update(_sized_json(job, depth))
        if command == "run":
            out["match"] = job.match
        return out
    per_call, grouping = grouping_json(job.calls, lambda call: _call_text(call, depth))
    for call, group in zip(job.calls, per_call, strict=True):
        entry = {"trace": trace_json(call.final, depth), **group}
        if call.segments:  # the call's text is its segments'; each is listed with its break
            entry["trace"]["text"] = _call_text(call, depth)
            entry["segments"] = segments_json(call, depth)
        backward = backward_trace(call.final)
        if backward is not None:  # a training step's own backward, as a trace
            entry["backward"] = trace_json(backward, depth)
        if call.grad is not None:
            entry["grad"] = {"forward": trace_json(call.grad.forward, depth),
                             "backward": trace_json(call.grad.backward, depth),
                             "requires_grad": list(call.grad.requires_grad)}
        if call.report is not None:
            entry["result"] = _report(call.report)
        if call.program.notes:
            entry["notes"] = list(call.program.notes)
        if call.rechecks:  # later calls this trace served, compared with eager too
            entry["rechecks"] = [{"call": number + 1, "result": _report(report)}
                                 for number, report in sorted(call.rechecks.items())]
        out["calls"].append(entry)
    out.update(grouping)
    if command == "run":
        out["match"] = job.match
    return out


def _call_text(call, depth: float) -> str:
    if call.segments:
        return segments_text(call.segments, {v.name for v in call.program.trace.inputs}, depth)
    return format_trace(call.final, depth)


def segments_json(call, depth: float) -> list[dict]:
    """Each segment of a call traced in segments: its trace, the break before it (where,
    why, what Python read), what earlier segments hand it, and what its Python read of
    values an earlier segment made."""
    whole = {v.name for v in call.program.trace.inputs}
    return [{"trace": trace_json(segment.stages[-1].trace, depth), **segment_json(segment, whole)}
            for segment in call.segments]


def segment_json(segment, whole_inputs: set[str]) -> dict:
    """A segment's place in its call: the break before it (where, why, what Python read;
    None for the first), what earlier segments hand it (`whole_inputs`: the call's own
    inputs, which none does), and what its Python read of values an earlier one made."""
    after = segment.after
    cut = None
    if after is not None:
        cut = {"line": _line(after.source), "source": after.source.text if after.source else None,
               "reason": after.reason, "reads": after.read_texts()}
    return {"break": cut, "hands_on": [v.name for v in segment.stages[0].trace.inputs if v.name not in whole_inputs],
            "reads": [{"read": how.format(name), "value": got, "line": _line(source)}
                      for source, how, name, got in segment.reads]}


def _line(source) -> str | None:
    return f"{source.file}:{source.line}" if source is not None else None


def grouping_json(calls: list, text) -> tuple[list[dict], dict]:
    """How the text output groups `calls` (by `text(call)`): per call its `group` and the
    script's calls it `served`; overall the `groups` and the `specialized` arguments.
    Every call stays in the JSON, which is for machines; this says how they group."""
    groups = group_calls(calls, text)
    position = {id(call): i for i, call in enumerate(calls)}
    group_of = {id(call): g for g, group in enumerate(groups) for call in group.calls}
    per_call = [{"group": group_of[id(call)], "served": list(call.served)} for call in calls]
    grouping = {
        "groups": [{"calls": [position[id(c)] for c in group.calls], "served": group.served} for group in groups],
        "specialized": [
            {"argument": arg.name, "types": list(arg.types), "values": [_json_value(v) for v in arg.values]}
            for arg in specialised_arguments(calls)
        ],
    }
    return per_call, grouping


def _json_value(value):
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # JSON has no nan or inf
    if isinstance(value, (tuple, list)):
        return [_json_value(v) for v in value]
    return value
