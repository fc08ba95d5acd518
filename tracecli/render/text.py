"""Showing trace text: syntax highlighted on a terminal, byte-for-byte plain otherwise."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table

from tracecli.executors.compare import RunReport


def print_trace(console: Console, text: str) -> None:
    if console.is_terminal and console.color_system is not None:
        console.print(Syntax(text.rstrip("\n"), "python", theme="ansi_dark", background_color="default"))
    else:
        # Plain text must be exactly the trace text: goldens and pipes compare it.
        console.file.write(text)


def _fmt_error(value: float | None) -> str:
    if value is None:
        return "-"
    return "0" if value == 0 else f"{value:.3g}"


def print_report(console: Console, report: RunReport, executor: str = "torch") -> None:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for column in ("output", "shape", "dtype", "match", "max abs err", "max rel err"):
        table.add_column(column, justify="right" if column.startswith("max") else "left")
    colored = console.color_system is not None
    for out in report.outputs:
        mark = ("[green]yes[/]" if colored else "yes") if out.match else ("[red]NO[/]" if colored else "NO")
        shape = str(list(out.shape)) if out.shape is not None else "-"
        table.add_row(out.name, shape, out.dtype or "-", mark, _fmt_error(out.max_abs_error), _fmt_error(out.max_rel_error))
    console.print(table)
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
    console.print(f"{timing} · {verdict}", markup=False)
