"""What each command reports, rendering itself as text and as JSON: the commands build
a report and hand it to `emit`, which alone knows the two formats apart."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Protocol

from rich.console import Console
from rich.text import Text

from tracecli.core.printing import format_trace
from tracecli.jobs.examine import ExamineReport as Examined
from tracecli.jobs.runner import JobResult
from tracecli.jobs.segment_text import heading, later_reads, segments_text
from tracecli.render.calls_view import print_job, show_groups
from tracecli.render.console import make_console
from tracecli.render.diff import text_diff
from tracecli.render.diff_report import describe, diff_json, segments_diff_json, stat_rows, step_diffs, whole_diff
from tracecli.render.diff_view import print_diff, print_side_by_side, print_stat, print_text_diff
from tracecli.render.examine_view import examine_json, print_examine
from tracecli.render.groups import group_calls
from tracecli.render.json_report import FORMAT_VERSION, grouping_json, job_json
from tracecli.render.sizes_view import print_sized


class Report(Protocol):
    def text(self, console: Console) -> None: ...

    def json(self) -> dict: ...


def emit(report: Report, fmt: str, color: str) -> None:
    """The report on stdout: one JSON object, or text coloured as `color` says."""
    if fmt == "json":
        sys.stdout.write(json.dumps(report.json(), indent=2) + "\n")
    else:
        report.text(make_console(color))


@dataclass
class JobReport:
    """`run` and `trace`: each trace, and for `run` its comparison with eager."""

    command: str
    job: JobResult
    depth: float
    all_traces: bool = False
    dynamic_option: str | None = None  # how to spell --dynamic in a hint, when offered
    show: str = "all"  # with --grad: the forward, the backward, or all

    def text(self, console: Console) -> None:
        if self.job.symbolic:
            print_sized(console, self.job, self.depth)
        else:
            print_job(console, self.job, self.depth, all_traces=self.all_traces, dynamic_option=self.dynamic_option,
                      part=self.show)

    def json(self) -> dict:
        return job_json(self.command, self.job, self.depth)


@dataclass
class ExamineReport:
    examined: Examined

    def text(self, console: Console) -> None:
        print_examine(console, self.examined)

    def json(self) -> dict:
        return examine_json(self.examined)


@dataclass
class DiffLayout:
    """How `diff` lays out its text: per pass, in two columns, as a summary, or plain."""

    each: bool = False
    side_by_side: bool = False
    stat: bool = False
    text: bool = False


@dataclass
class DiffReport:
    """`diff`: the trace before and after the passes, per group of calls that print alike."""

    job: JobResult
    depth: float
    layout: DiffLayout
    all_traces: bool = False
    dynamic_option: str | None = None
    part: str = "all"  # with --grad: the forward's passes, the backward's, or all

    def __post_init__(self) -> None:
        self.per_call = []
        for call in self.job.calls:
            if call.segments:  # each segment through the passes, as `trace` shows them all
                self.per_call.append(segments_diff_json(self.job, call, self.depth))
                continue
            report = diff_json(self.job, call.stages, self.depth) if self._shows("forward", call) else {}
            if self._shows("backward", call):
                report["backward"] = diff_json(self.job, call.backward_stages, self.depth)
            self.per_call.append(report)

    def _shows(self, part: str, call) -> bool:
        if part == "backward":
            return bool(call.backward_stages) and self.part in ("backward", "all")
        return self.part in ("forward", "all")

    @property
    def changed(self) -> bool:
        return any(report.get("changed") or report.get("backward", {}).get("changed") for report in self.per_call)

    def _stages_text(self, call) -> str:
        if call.segments:  # where the call was cut and what it read are part of what prints
            whole = {v.name for v in call.program.trace.inputs}
            texts = [segments_text(call.segments, whole, self.depth)]
            texts += [format_trace(stage.trace, self.depth) for segment in call.segments for stage in segment.stages]
            return "\0".join(texts)
        stages = [*call.stages, *call.backward_stages]
        return "\0".join(format_trace(stage.trace, self.depth) for stage in stages)

    def json(self) -> dict:
        if len(self.per_call) == 1:
            return self.per_call[0]
        groups, grouping = grouping_json(self.job.calls, self._stages_text)
        calls = [{**report, **group} for report, group in zip(self.per_call, groups, strict=True)]
        return {"format": FORMAT_VERSION, "command": "diff", "calls": calls, **grouping}

    def text(self, console: Console) -> None:
        def show(group) -> None:
            call = group.calls[0]
            if call.segments:
                show_segments(console, call, self.depth, self.layout)
                return
            if self._shows("forward", call):
                show_stages(console, call.stages, self.depth, self.layout)
            if self._shows("backward", call):
                if self.part == "all":
                    console.print("── backward ──", markup=False, style="bold")
                show_stages(console, call.backward_stages, self.depth, self.layout)

        show_groups(console, self.job, group_calls(self.job.calls, self._stages_text), show,
                    all_traces=self.all_traces, dynamic_option=self.dynamic_option)


def show_segments(console: Console, call, depth: float, layout: DiffLayout) -> None:
    """Each segment's diff through the passes, headed as `trace` heads the segment (after
    the passes: the names it reads and hands on are theirs)."""
    whole = {v.name for v in call.program.trace.inputs}
    for number, segment in enumerate(call.segments, 1):
        if number > 1:
            console.print()
        for k, line in enumerate(heading(segment, number, len(call.segments), whole)):
            console.print(Text(line, style="bold" if k == 0 else ""), soft_wrap=True)
        show_stages(console, segment.stages, depth, layout)
        for line in later_reads(segment):
            console.print(Text(line), soft_wrap=True)


def show_stages(console: Console, stages, depth: float, layout: DiffLayout) -> None:
    if layout.stat:
        print_stat(console, stat_rows(stages))
        return
    if layout.text:
        print_text_diff(console, text_diff(stages[0].trace, stages[-1].trace, depth))
        return
    show = print_side_by_side if layout.side_by_side else print_diff
    if layout.each:
        unchanged = []
        for stage, diff in step_diffs(stages, depth):
            if not diff.changed:
                unchanged.append(stage.name)
                continue
            console.print(f"── {describe(stage)} ──", markup=False, style="bold")
            show(console, diff)
        if unchanged:
            console.print(f"unchanged: {', '.join(unchanged)}", markup=False)
        return
    diff = whole_diff(stages, depth)
    if not diff.changed:
        console.print(f"no change: {', '.join(s.name for s in stages[1:])} left the trace as it was", markup=False)
        return
    show(console, diff)
