"""Showing a job's traces: one trace as it is; many (a main block calling its entry
again and again) grouped by the text they print, a few at most, then a summary.

A failure is never hidden: a trace whose compiled run disagrees with eager is printed,
with its comparison table, whatever the cap.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.text import Text

from tracecli.core.printing import format_backward, format_trace
from tracecli.jobs.runner import JobResult, TracedCall
from tracecli.jobs.segment_text import segments_text
from tracecli.render.groups import TraceGroup, call_numbers, group_calls, specialised_arguments, value_list
from tracecli.render.text import print_report, print_trace

# Distinct traces printed before the rest is summarised (`--all-traces` prints them all).
MAX_TRACES = 3


def _heading(k: int, n: int, group: TraceGroup) -> str:
    served = group.served
    calls = f"call {served[0] + 1}" if len(served) == 1 else f"{len(served)} calls: {call_numbers(served)}"
    return f"── trace {k} of {n} · {calls} ──"


def show_groups(console: Console, job: JobResult, groups: list[TraceGroup], show: Callable[[TraceGroup], None],
                *, all_traces: bool, dynamic_option: str | None) -> None:
    """Each group under a heading, at most MAX_TRACES of them unless `all_traces` or the
    group failed, then a summary line and what made the traces differ."""
    if len(groups) == 1 and len(groups[0].served) <= 1:
        show(groups[0])  # one call, one trace: just that, as it always was
        return
    hidden: list[TraceGroup] = []
    shown = 0
    for k, group in enumerate(groups, 1):
        if not all_traces and shown >= MAX_TRACES and group.match:
            hidden.append(group)
            continue
        if shown:
            console.print()
        console.print(Text(_heading(k, len(groups), group), style="bold"), soft_wrap=True)
        show(group)
        shown += 1
    console.print()
    console.print(_summary(job, groups, hidden), soft_wrap=True, markup=False)
    for note in specialisation_notes(job.calls, dynamic_option):
        console.print(note, soft_wrap=True, markup=False)


def _summary(job: JobResult, groups: list[TraceGroup], hidden: list[TraceGroup]) -> str:
    total = sum(len(g.served) for g in groups)
    line = f"{job.entry}: {total} calls, {len(groups)} distinct trace{'s' if len(groups) != 1 else ''}"
    failing = [str(k) for k, group in enumerate(groups, 1) if not group.match]
    if failing:
        # After a hundred traces the reader should not have to scroll back for the verdict.
        line += f"; {len(failing)} differ{'s' if len(failing) == 1 else ''} from eager (trace {', '.join(failing)})"
    if hidden:
        served = [n for g in hidden for n in g.served]
        checked = any(c.report is not None for g in hidden for c in g.calls)
        line += f"; {len(hidden)} not shown (calls {call_numbers(served)})"
        # Hidden groups all match: a failing one is always shown.
        line += ", all matching eager" if checked else ""
        line += "; --all-traces prints them"
    return line


def specialisation_notes(calls: list[TracedCall], dynamic_option: str | None) -> list[str]:
    notes = []
    for arg in specialised_arguments(calls):
        kinds = "/".join(arg.types)
        note = f"{arg.name} took {len(arg.values)} {kinds} values: {value_list(arg.values)}; each value is traced separately"
        if dynamic_option:
            note += f" ({dynamic_option} makes it symbolic)"
        notes.append(note)
    return notes


def call_text(call: TracedCall, depth: float, show: str = "all") -> str:
    """A call's trace as printed; with --grad, the forward that saves what the backward
    reads, then the backward; for a training step, the step, then the function each of
    its backward() calls runs (`show`: one of them, or all)."""
    if call.segments:
        return segments_text(call.segments, {v.name for v in call.program.trace.inputs}, depth)
    if call.grad is None:
        texts = {"forward": format_trace(call.final, depth), "backward": format_backward(call.final, depth)}
    else:
        texts = {"forward": format_trace(call.grad.forward, depth), "backward": format_trace(call.grad.backward, depth)}
    return "\n".join(text for part, text in texts.items() if text and show in (part, "all"))


def print_job(console: Console, job: JobResult, depth: float, *, all_traces: bool = False,
              dynamic_option: str | None = None, part: str = "all") -> None:
    """`tracecli run` / `trace` text output; `part`: with --grad, the forward, the backward
    or all."""

    def show(group: TraceGroup) -> None:
        print_trace(console, group.text)
        # (call number, report): each trace's first call, then the later calls it served
        # that were compared too.
        checked = [(c.served[0], c.report) for c in group.calls if c.report is not None]
        checked += [(number, report) for c in group.calls for number, report in c.rechecks.items()]
        failing = [item for item in checked if not item[1].match]
        matching = [item for item in checked if item[1].match]
        # Every failing comparison, and one that matched: the rest of those only counted.
        for number, report in sorted(failing + matching[:1], key=lambda item: item[0]):
            console.print()
            if len(group.served) > 1:
                console.print(f"call {number + 1}:", markup=False)
            print_report(console, report, job.executor_label)
        if len(matching) > 1:
            more = len(matching) - 1
            console.print(f"{more} more call{'s' if more > 1 else ''} with this trace match{'es' if more == 1 else ''} "
                          "eager", markup=False)
        for note in dict.fromkeys(note for c in group.calls for note in c.program.notes):
            console.print(f"note: {note}", soft_wrap=True, markup=False)
        later = sorted(number + 1 for c in group.calls for number, report in c.rechecks.items() if not report.match)
        if later:
            why = ("the note above says why" if any(c.program.notes for c in group.calls) else
                   "if something it holds as a constant changed since it was made (a Python number where the "
                   "guards do not look, such as an attribute three objects deep), pass such a number to the "
                   "entry as an argument, and each value gets a trace of its own; if nothing did, the trace is "
                   "wrong for these calls")
            console.print(f"call{'s' if len(later) > 1 else ''} {call_numbers([n - 1 for n in later])} reused this "
                          f"trace and differ from eager: {why}", soft_wrap=True, markup=False)

    groups = group_calls(job.calls, lambda call: call_text(call, depth, part))
    show_groups(console, job, groups, show, all_traces=all_traces, dynamic_option=dynamic_option)
