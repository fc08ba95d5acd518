"""Showing diffs on a console: unified with identity, side by side, or as a summary.

Every changed line carries its marker (`-`, `+`, `~`) in a column of its own, so a
diff reads the same without colour; colour only adds emphasis.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tracecli.render.console import colored, print_table
from tracecli.render.diff import DiffLine, TraceDiff, hunks, intraline

_STYLES = {"-": "red", "+": "green", "~": "yellow", " ": "dim"}
_SEPARATOR = " │ "
# A wrapped line continues this much further in than the line itself, as Python's
# hanging indents do, so the continuation never reads as a line of its own.
_HANG = 4


def _line(line: DiffLine, color: bool) -> Text:
    body = f"{line.kind} {line.text}"
    if line.kind == "~" and line.renames:
        body += "    [" + ", ".join(f"{old} -> {new}" for old, new in line.renames) + "]"
    text = Text(body)
    if color:
        text.stylize(_STYLES[line.kind])
        if line.kind == "~":
            for _, new in line.renames:
                text.highlight_regex(rf"\b{new}\b", "bold yellow")
    return text


def print_diff(console: Console, diff: TraceDiff, *, context: int = 3) -> None:
    color = colored(console)
    for item in hunks(diff, context):
        if item is None:
            console.print(Text("  ...", style="dim" if color else ""))
        else:
            console.print(_line(item, color))


def print_text_diff(console: Console, text: str) -> None:
    """A unified text diff: exactly `text` in pipes, its lines coloured as git does on a terminal."""
    if not colored(console):
        console.file.write(text)
        return
    for line in text.splitlines():
        style = "bold" if line.startswith(("--- ", "+++ ")) else {"@": "cyan", "-": "red", "+": "green"}.get(line[:1], "")
        console.print(Text(line, style=style), soft_wrap=True)


# -- side by side ----------------------------------------------------------------------------


def _cell(mark: str, line: str | None, style: str) -> Text:
    """One side of a row: its marker column, then the line."""
    if line is None:
        return Text("")
    cell = Text(f"{mark} ")
    cell.stylize(_STYLES.get(mark, ""))
    cell.append(line, style=style)
    return cell


def _mark_changes(left: Text, right: Text, before: str, after: str) -> None:
    """Embolden the characters that differ within a pair of lines (after the marker column)."""
    spans_left, spans_right = intraline(before, after)
    for text, spans, style in ((left, spans_left, "bold red"), (right, spans_right, "bold green")):
        at = 2
        for chunk, differs in spans:
            if differs:
                text.stylize(style, at, at + len(chunk))
            at += len(chunk)


def _rows(diff: TraceDiff) -> list[tuple[Text, Text]]:
    rows = []
    lines = diff.lines
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.kind in (" ", "~"):
            style = _STYLES[line.kind] if line.kind == " " else ""
            left, right = _cell(line.kind, line.before, style), _cell(line.kind, line.after, style)
            if line.kind == "~":
                _mark_changes(left, right, line.before, line.after)
            rows.append((left, right))
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
            left, right = _cell("-", before, "red"), _cell("+", after, "green")
            if before is not None and after is not None:
                _mark_changes(left, right, before, after)
            rows.append((left, right))
    return rows


def wrap_cell(cell: Text, width: int) -> list[Text]:
    """`cell` cut to `width` columns: at a space when one is near, continuation lines
    indented past the line's own indentation."""
    plain = cell.plain
    if len(plain) <= width:
        return [cell]
    indent = 2 + len(plain[2:]) - len(plain[2:].lstrip(" "))  # past the marker column
    hang = min(indent + _HANG, width // 2)
    out = [cell[: _break(plain, 0, width)]]
    start = len(out[0].plain)
    while start < len(plain):
        while start < len(plain) and plain[start] == " ":
            start += 1
        if start >= len(plain):
            break
        room = width - hang
        end = start + room if start + room >= len(plain) else _break(plain, start, room)
        out.append(Text(" " * hang) + cell[start:end])
        start = end
    for piece in out:
        piece.rstrip()
    return out


def _break(plain: str, start: int, room: int) -> int:
    """Where a piece of at most `room` characters from `start` ends. Best before the
    line's type comment, then after a comma, then after any space (one just past the
    piece counts); never so early that the piece is less than a fifth full."""
    end = start + room
    for mark, keep in (("  # ", 0), (", ", 1), (" ", 1)):
        at = plain.rfind(mark, start, end + 1)
        if at >= 0 and at + keep - start >= room // 5:
            return min(at + keep, end)
    return end


def print_side_by_side(console: Console, diff: TraceDiff) -> None:
    column = max((console.width - len(_SEPARATOR)) // 2, 20)
    separator = Text(_SEPARATOR, style="dim")
    console.print(Text.assemble(("  before".ljust(column), "bold"), separator, ("  after", "bold")), soft_wrap=True)
    console.print(Text("─" * column + "─┼─" + "─" * column, style="dim"), soft_wrap=True)
    for left, right in _rows(diff):
        lefts, rights = wrap_cell(left, column), wrap_cell(right, column)
        for k in range(max(len(lefts), len(rights))):
            line = lefts[k].copy() if k < len(lefts) else Text("")
            line.pad_right(column - line.cell_len)
            line.append_text(separator)
            if k < len(rights):
                line.append_text(rights[k])
            line.rstrip()  # pipes get no trailing padding
            console.print(line, soft_wrap=True)


def print_stat(console: Console, rows: list[dict]) -> None:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for column in ("pass", "+added", "-removed", "~renamed", "merged", "subsymbols removed", "time"):
        table.add_column(column, justify="left" if column == "pass" else "right")
    for row in rows:
        # Counts that are not zero in their diff colour, zeros dim: what a pass did stands out.
        counts = [(row[key], style) for key, style in
                  (("added", "green"), ("removed", "red"), ("renamed", "yellow"), ("merged", "red"),
                   ("subsymbols_removed", "red"))]
        table.add_row(
            Text(row["name"], style="bold" if row["changed"] else "dim"),
            *(Text(str(n), style=style if n else "dim") for n, style in counts),
            Text(f"{row['ms']:.2f} ms", style="dim"),
        )
    print_table(console, table)
