"""Showing trace text: coloured on a terminal (see trace_style), byte-for-byte plain otherwise."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tracecli.executors.compare import RunReport
from tracecli.render.console import colored, print_table
from tracecli.render.trace_style import style_trace


def print_trace(console: Console, text: str) -> None:
    if not colored(console):
        # Plain text must be exactly the trace text: goldens and pipes compare it.
        console.file.write(text)
        return
    # Line by line, never wrapped or cropped by rich: the terminal wraps long lines.
    for line in style_trace(text):
        console.print(line, soft_wrap=True)


def _fmt_error(value: float | None) -> str:
    if value is None:
        return "-"
    return "0" if value == 0 else f"{value:.3g}"


def print_report(console: Console, report: RunReport, executor: str = "torch") -> None:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for column in ("output", "shape", "dtype", "match", "max abs err", "max rel err"):
        table.add_column(column, justify="right" if column.startswith("max") else "left")
    for out in report.outputs:
        mark = Text("yes", style="green") if out.match else Text("NO", style="bold red")
        shape = str(list(out.shape)) if out.shape is not None else "-"
        table.add_row(out.name, shape, out.dtype or "-", mark, _fmt_error(out.max_abs_error), _fmt_error(out.max_rel_error))
    print_table(console, table)
    for out in report.outputs:
        if out.problem and not out.match:
            console.print(f"{out.name}: {out.problem}", markup=False)
    n = len(report.outputs)
    if report.match:
        verdict = "the output matches eager" if n == 1 else f"all {n} outputs match eager"
    else:
        verdict = f"{sum(not o.match for o in report.outputs)} of {n} outputs differ from eager"
    if report.eager_ms is None:
        timing = f"compiled ({executor} executor), not timed"
    else:
        timing = f"eager {report.eager_ms:.3f} ms · compiled ({executor} executor) {report.compiled_ms:.3f} ms"
    console.print(Text(f"{timing} · ").append(verdict, style="" if report.match else "bold red"))
