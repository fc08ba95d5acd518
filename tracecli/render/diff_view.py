"""Showing diffs on a console: unified with identity, side by side, or as a summary."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tracecli.render.diff import DiffLine, TraceDiff, hunks, intraline

_STYLES = {"-": "red", "+": "green", "~": "yellow", " ": "dim"}


def _line(line: DiffLine, colored: bool) -> Text:
    body = f"{line.kind} {line.text}"
    if line.kind == "~" and line.renames:
        body += "    [" + ", ".join(f"{old} -> {new}" for old, new in line.renames) + "]"
    text = Text(body)
    if colored:
        text.stylize(_STYLES[line.kind])
        if line.kind == "~":
            for _, new in line.renames:
                text.highlight_regex(rf"\b{new}\b", "bold yellow")
    return text


def print_diff(console: Console, diff: TraceDiff, *, context: int = 3) -> None:
    colored = console.color_system is not None
    for item in hunks(diff, context):
        if item is None:
            console.print(Text("  ...", style="dim" if colored else ""))
        else:
            console.print(_line(item, colored))


def print_side_by_side(console: Console, diff: TraceDiff) -> None:
    colored = console.color_system is not None
    table = Table(box=box.SIMPLE, show_header=True, pad_edge=False, expand=True)
    table.add_column("before", ratio=1, overflow="fold")
    table.add_column("after", ratio=1, overflow="fold")
    lines = diff.lines
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.kind in (" ", "~"):
            left, right = Text(line.before), Text(line.after)
            if line.kind == "~":
                _mark_changes(left, right, line.before, line.after, colored)
            table.add_row(left, right)
            i += 1
            continue
        removed = []
        while i < len(lines) and lines[i].kind == "-":
            removed.append(lines[i].before)
            i += 1
        added = []
        while i < len(lines) and lines[i].kind == "+":
            added.append(lines[i].after)
            i += 1
        for k in range(max(len(removed), len(added))):
            before = removed[k] if k < len(removed) else None
            after = added[k] if k < len(added) else None
            left, right = Text(before or ""), Text(after or "")
            if before is not None and after is not None:
                _mark_changes(left, right, before, after, colored)
            else:
                if colored:
                    left.stylize("red")
                    right.stylize("green")
                left = Text("- ") + left if before is not None else left
                right = Text("+ ") + right if after is not None else right
            table.add_row(left, right)
    console.print(table)


def _mark_changes(left: Text, right: Text, before: str, after: str, colored: bool) -> None:
    """Highlight the characters that differ within a pair of lines."""
    spans_left, spans_right = intraline(before, after)
    for text, spans, style in ((left, spans_left, "bold red"), (right, spans_right, "bold green")):
        at = 0
        for chunk, differs in spans:
            if differs:
                if colored:
                    text.stylize(style, at, at + len(chunk))
                else:
                    text.stylize("underline", at, at + len(chunk))
            at += len(chunk)


def print_stat(console: Console, rows: list[dict]) -> None:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for column in ("pass", "+added", "-removed", "~renamed", "merged", "subsymbols removed", "time"):
        table.add_column(column, justify="left" if column == "pass" else "right")
    for row in rows:
        table.add_row(
            row["name"], str(row["added"]), str(row["removed"]), str(row["renamed"]), str(row["merged"]),
            str(row["subsymbols_removed"]), f"{row['ms']:.2f} ms",
        )
    console.print(table)
