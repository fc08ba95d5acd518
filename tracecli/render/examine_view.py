"""Showing an examine report: a table of ops, opaque call sites, untraceable constructs."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tracecli.jobs.examine import ExamineReport
from tracecli.render.console import print_table
from tracecli.render.json_report import FORMAT_VERSION
from tracecli.render.trace_style import OPAQUE_OP, op_style, style_call_site


def print_examine(console: Console, report: ExamineReport) -> None:
    if report.untraceable:
        for problem in report.untraceable:
            console.print(f"could not trace: {problem}", markup=False)
        return
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("op")
    table.add_column("count", justify="right")
    table.add_column("modeled")
    for op in report.ops:
        # Opaque ops are what the reader should act on: the trace's warning colour.
        modeled = Text("yes") if op.modeled else Text("OPAQUE", style=f"bold {OPAQUE_OP}")
        table.add_row(Text(op.name, style=op_style(op.name)), str(op.count), modeled)
    print_table(console, table)
    for op in report.opaque:
        console.print(Text.assemble((op.name, OPAQUE_OP), " is opaque, reached from:"))
        for line in op.lines:
            console.print(Text("  ") + style_call_site(line))
    if report.captured:
        console.print("captured from outside the entry (inputs of the trace, read on every call):", markup=False)
        for line in report.captured:
            console.print(f"  {line}", markup=False)
    if report.breaks:
        total = sum(b.count for b in report.breaks)
        console.print(f"graph breaks: the trace is cut {total} time{'s' if total != 1 else ''}, where Python reads a "
                      "value or a call cannot be traced (the piece before runs, then the Python goes on with the "
                      "value, or the call runs eagerly):", markup=False)
        for found in report.breaks:
            console.print(f"  {found.count}x  {found.line}  ({found.reason})", markup=False)
    if report.state:
        console.print("Python state the entry keeps traced tensors in (the trace stores them on every call):",
                      markup=False)
        for path in report.state:
            console.print(f"  {path}", markup=False)
    if report.unbacked:
        console.print("sizes the data decide (one trace serves every count; see `# u0:` in the trace):", markup=False)
        for line in report.unbacked:
            console.print(f"  {line}", markup=False)
    opaque = report.opaque
    summary = (
        f"{report.bound_symbols} bound symbols, {len(report.ops)} distinct ops, "
        f"{sum(op.count for op in opaque)} opaque ({len(opaque)} distinct)"
    )
    if report.prims:
        summary += f", {sum(report.prims.values())} prims in the decompositions"
    console.print(summary, markup=False)


def examine_json(report: ExamineReport) -> dict:
    out = {"format": FORMAT_VERSION, "command": "examine", "untraceable": report.untraceable}
    if report.job is not None:
        out.update(script=report.job.script.display, entry=report.job.entry, device=report.job.device)
    out["ops"] = [{"name": op.name, "count": op.count, "modeled": op.modeled, "lines": op.lines} for op in report.ops]
    out["opaque"] = sum(op.count for op in report.opaque)
    out["prims"] = report.prims
    out["captured"] = report.captured
    out["state"] = report.state
    out["unbacked"] = report.unbacked
    out["breaks"] = [{"line": b.line.split(":  ", 1)[0], "source": b.line.split(":  ", 1)[-1], "reason": b.reason,
                      "count": b.count} for b in report.breaks]
    return out
