"""Showing a run with symbolic sizes: each distinct trace once, then one row per call
(its sizes, the trace that served it, reused or traced again and why, the verdict)."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tracecli.core.dims import Dim
from tracecli.core.printing import format_trace
from tracecli.jobs.runner import JobResult, SizedCall
from tracecli.render.calls_view import call_text
from tracecli.render.console import print_table
from tracecli.render.groups import call_numbers
from tracecli.render.text import print_report, print_trace


def sizes_text(sizes: dict[str, int]) -> str:
    return ", ".join(f"{name}={size}" for name, size in sizes.items()) or "-"


def how(call: SizedCall) -> str:
    if call.reused:
        return "reused"
    if call.retraced:
        return f"traced again: {call.retraced}"
    return "traced"


def summary(job: JobResult) -> str:
    traces, calls = len(job.calls), len(job.sized)
    line = f"{traces} trace{'s' if traces != 1 else ''} for {calls} call{'s' if calls != 1 else ''}"
    checked = [c for c in job.sized if c.report is not None]
    if checked:
        failing = [n for n, c in enumerate(job.sized, 1) if c.report is not None and not c.report.match]
        if failing:
            line += f"; {len(failing)} differ{'s' if len(failing) == 1 else ''} from eager (call {', '.join(map(str, failing))})"
        else:
            line += "; every call matches eager" if len(checked) > 1 else "; the call matches eager"
    return line


def print_sized(console: Console, job: JobResult, depth: float) -> None:
    for k, traced in enumerate(job.calls, 1):
        if k > 1:
            console.print()
        if len(job.calls) > 1:
            served = [n for n in traced.served]
            calls = f"call {served[0] + 1}" if len(served) == 1 else f"calls {call_numbers(served)}"
            console.print(Text(f"── trace {k} of {len(job.calls)} · {calls} ──", style="bold"), soft_wrap=True)
        print_trace(console, call_text(traced, depth) if traced.segments else format_trace(traced.final, depth))
    console.print()
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    executed = any(c.report is not None for c in job.sized)
    for column in ("call", "sizes", "trace", "how", *(("match",) if executed else ())):
        table.add_column(column)
    # A symbol found equal to another shows in no type: its size is the other's.
    hidden = {d.name for traced in job.calls for d in traced.final.dims if isinstance(d.same_as, Dim)}
    for number, call in enumerate(job.sized, 1):
        shown = {name: size for name, size in call.sizes.items() if name not in hidden}
        row = [str(number), sizes_text(shown), str(call.trace_index), how(call)]
        if executed:
            match = call.report is None or call.report.match
            row.append(Text("yes", style="green") if match else Text("NO", style="bold red"))
        table.add_row(*row)
    print_table(console, table)
    for number, call in enumerate(job.sized, 1):
        if call.report is not None and not call.report.match:
            console.print()
            console.print(f"call {number} ({sizes_text(call.sizes)}):", markup=False)
            print_report(console, call.report, job.executor_label)
    console.print(summary(job), markup=False, soft_wrap=True)
