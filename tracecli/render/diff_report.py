"""What `tracecli diff` reports: per-pass and whole-pipeline diffs, summaries, JSON."""

from __future__ import annotations

from functools import reduce

from tracecli.core.printing import format_trace
from tracecli.passes.pipeline import Stage
from tracecli.render.diff import TraceDiff, compose, diff_traces, value_changes
from tracecli.render.json_report import FORMAT_VERSION, segment_json


def pipeline_map(stages: list[Stage]) -> dict[str, str]:
    """Which value of the initial trace became which of the final one."""
    names = stages[0].trace.names
    return reduce(lambda acc, stage: compose(acc, stage.value_map, names), stages[1:], {})


def whole_diff(stages: list[Stage], depth: float) -> TraceDiff:
    return diff_traces(stages[0].trace, stages[-1].trace, pipeline_map(stages), depth)


def step_diffs(stages: list[Stage], depth: float) -> list[tuple[Stage, TraceDiff]]:
    return [(after, diff_traces(before.trace, after.trace, after.value_map, depth)) for before, after in zip(stages, stages[1:], strict=False)]


def stat_rows(stages: list[Stage]) -> list[dict]:
    """Per pass, what it did, read from the traces and the value map (not from the pass's
    own stats, whose keys are its own): every pass, a user's too, gets every column."""
    rows = []
    for before, (stage, diff) in zip(stages, step_diffs(stages, 0), strict=False):
        changes = value_changes(before.trace, stage.trace, stage.value_map)
        rows.append({
            "name": stage.name,
            "changed": stage.changed,
            "added": diff.count("+"),
            "removed": diff.count("-"),
            "renamed": changes.renamed,
            "merged": changes.merged,
            "subsymbols_removed": changes.subsymbols_removed,
            "ms": stage.seconds * 1e3,
            "stats": dict(stage.stats),
        })
    return rows


def describe(stage: Stage) -> str:
    stats = " · ".join(f"{k.replace('_', ' ')} {v}" for k, v in stage.stats.items() if v)
    return f"{stage.name}: {stats or 'changed'} ({stage.seconds * 1e3:.2f} ms)"


def _lines(diff: TraceDiff) -> list[dict]:
    return [
        {"kind": line.kind, "before": line.before, "after": line.after, "renames": [list(r) for r in line.renames]}
        for line in diff.lines
    ]


def _head(job, stages: list[Stage]) -> dict:
    return {
        "format": FORMAT_VERSION,
        "command": "diff",
        "script": job.script.display,
        "entry": job.entry,
        "device": job.device,
        "passes": [s.name for s in stages[1:]],
    }


def diff_json(job, stages: list[Stage], depth: float) -> dict:
    steps = step_diffs(stages, depth)
    rows = stat_rows(stages)
    whole = whole_diff(stages, depth)
    return {
        **_head(job, stages),
        "changed": whole.changed,
        "before": format_trace(stages[0].trace, depth),
        "after": format_trace(stages[-1].trace, depth),
        "value_map": pipeline_map(stages),
        "lines": _lines(whole),
        "stages": [
            {
                "name": stage.name,
                "changed": stage.changed,
                "stats": dict(stage.stats),
                "ms": stage.seconds * 1e3,
                "added": row["added"],
                "removed": row["removed"],
                "value_map": dict(stage.value_map),
                "lines": [line for line in _lines(diff) if line["kind"] != " "],
            }
            for (stage, diff), row in zip(steps, rows, strict=True)
        ],
    }


# What a diff says of one trace; a call traced in segments says it of each segment.
_PER_TRACE = ("changed", "before", "after", "value_map", "lines", "stages")


def segments_diff_json(job, call, depth: float) -> dict:
    """`diff_json` of a call traced in segments: per segment, its place in the call (as
    `run` lists it) and its own diff through the passes; `changed` if any changed."""
    whole = {v.name for v in call.program.trace.inputs}
    segments = []
    for segment in call.segments:
        report = diff_json(job, segment.stages, depth)
        segments.append({**segment_json(segment, whole), **{key: report[key] for key in _PER_TRACE}})
    return {
        **_head(job, call.segments[0].stages),
        "changed": any(segment["changed"] for segment in segments),
        "segments": segments,
    }
