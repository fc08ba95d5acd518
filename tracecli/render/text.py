"""Showing trace text: coloured on a terminal (see trace_style), byte-for-byte plain otherwise."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tracecli.jobs.compare import RunReport
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


def print_report(console: Console, report: RunReport, executor: str = "torch executor") -> None:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for column in ("output", "shape", "dtype", "match", "max abs err", "max rel err"):
        table.add_column(column, justify="right" if column.startswith("max") else "left")
    rows = ([(out, out.name) for out in report.outputs] + [(w, f"{w.name} (written)") for w in report.written]
            + [(k, f"{k.name} (state)") for k in report.state] + [(g, g.name) for g in report.gradients])
    for out, label in rows:
        mark = Text("yes", style="green") if out.match else Text("NO", style="bold red")
        shape = str(list(out.shape)) if out.shape is not None else "-"
        table.add_row(label, shape, out.dtype or "-", mark, _fmt_error(out.max_abs_error), _fmt_error(out.max_rel_error))
    print_table(console, table)
    for out, label in rows:
        if out.problem and not out.match:
            console.print(f"{label}: {out.problem}", markup=False)
    verdict = _verdict(report) + _state_verdict(report) + _gradients_verdict(report)
    console.print(Text(f"{_timing(report, executor)} · ").append(verdict, style="" if report.match else "bold red"))
    for name, why in report.uncompiled:
        console.print(f"{name}: {why}; it ran as the torch executor runs it", markup=False, soft_wrap=True)


def _state_verdict(report: RunReport) -> str:
    n = len(report.state)
    if not n:
        return ""
    differ = sum(not k.match for k in report.state)
    if not differ:
        return "; what it keeps in Python state matches eager's" if n == 1 else \
            f"; all {n} tensors it keeps in Python state match eager's"
    return f"; {differ} of {n} tensors it keeps in Python state differ from eager's"


def _gradients_verdict(report: RunReport) -> str:
    n = len(report.gradients)
    if not n:
        return ""
    differ = sum(not g.match for g in report.gradients)
    if not differ:
        return f"; {'the gradient matches' if n == 1 else f'all {n} gradients match'} eager autograd"
    return f"; {differ} of {n} gradients differ from eager autograd"


def _verdict(report: RunReport) -> str:
    n, w = len(report.outputs), len(report.written)
    if n + w == 0:
        return "nothing returned or written, as in eager" if report.match else "the structure differs from eager"
    what = "the output" if n == 1 else f"{n} outputs"
    if w:
        what += f" and {w} input{'s' if w > 1 else ''} written in place"
    if report.match:
        if n == 1 and not w:
            return "the output matches eager"
        return f"{'all ' if n != 1 and (n + w > 2 or not w) else ''}{what} match eager"
    differ = sum(not o.match for o in (*report.outputs, *report.written))
    if not w:
        return f"{differ} of {n} outputs differ from eager"
    return f"{differ} of {n + w} ({n} output{'s' if n != 1 else ''}, {w} written input{'s' if w != 1 else ''}) differ from eager"


def _ms(ms: float) -> str:
    # Three significant places or so: tiny calls need the decimals, a compile does not.
    if ms >= 1e3:
        return f"{ms / 1e3:.2f} s"
    return f"{ms:.0f} ms" if ms >= 100 else f"{ms:.1f} ms" if ms >= 10 else f"{ms:.3f} ms"


def _timing(report: RunReport, executor: str) -> str:
    if report.uncompiled:
        # What the executor did not compile ran as the torch executor runs it: said where the executor is named.
        executor += f"; {', '.join(name for name, _ in report.uncompiled)} run by torch, uncompiled"
    if report.eager_ms is None:
        return f"compiled ({executor}), not timed"
    line = f"eager {_ms(report.eager_ms)} · compiled ({executor}) {_ms(report.compiled_ms)}"
    if report.speedup is not None:
        line += f", {report.speedup:.2f}x eager's speed"
    if report.compile_ms is not None and report.first_call_ms is not None:
        line += f" · compiling {_ms(report.compile_ms)}, first call {_ms(report.first_call_ms)}"
    return line
