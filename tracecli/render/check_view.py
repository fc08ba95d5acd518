"""What `tracecli snapshot` and `tracecli check` report, as text and as JSON.

A difference is shown as the identity-aware diff of the stored trace text against the
new one, values aligned by the comparison of the two traces (core/equivalence.py): a
value that only changed its name is no change, and neither is a source comment whose
line moved (unless lines are strict), so what shows is the real change, first first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.console import Console
from rich.text import Text

from tracecli.core.equivalence import Change, Comparison, Outline
from tracecli.jobs.snapshots import Checked, Taken, trace_files
from tracecli.render.diff import DiffLine, TraceDiff, diff_texts
from tracecli.render.diff_view import print_diff
from tracecli.render.json_report import FORMAT_VERSION

_SOURCE = re.compile(r"^(\s*# [^\s:]+:)(\d+)(:  .*)$")
_LISTED = 10  # changes listed before the diff; the diff shows them all
_STATUS = {"equal": "equal", "different": "DIFFERENT", "missing": "MISSING", "updated": "updated"}
_STYLE = {"equal": "green", "different": "bold red", "missing": "bold red", "updated": "yellow"}


def _key(strict_lines: bool):
    """What a line is matched by: a source comment by its line number only when lines
    are strict, otherwise not at all (the user's own text may have changed names too)."""

    def key(line: str) -> str:
        m = _SOURCE.match(line)
        if m is None:
            return line
        return m.group(1) + m.group(2) if strict_lines else m.group(1)

    return key


def trace_diff(before: str, after: str, comparison: Comparison, strict_lines: bool = False) -> TraceDiff:
    """The stored text against the new one; lines that differ only in names, or in a
    moved source line, are context. (A segment only one side has: all of it added or removed.)"""
    if not before or not after:
        kind = "+" if after else "-"
        return TraceDiff([DiffLine(kind, None if after else line, line if after else None)
                          for line in (after or before).splitlines()])
    diff = diff_texts(before, after, comparison.value_map, key=_key(strict_lines))
    return TraceDiff([DiffLine(" ", line.before, line.after, header=line.header) if line.kind == "~" else line
                      for line in diff.lines])


def _line_of(outline: Outline | None, index: int | None) -> int | None:
    if outline is None or index is None:
        return None
    return outline.ops[index].line


def describe(change: Change, old: Outline | None, new: Outline | None) -> str:
    if change.kind in ("cut", "segments"):  # where a call is cut: said in full already
        return change.what
    line = _line_of(new, change.new) or _line_of(old, change.old)
    where = f" (line {line})" if line else ""
    if change.kind == "changed":
        symbol = new.ops[change.new].symbol if new is not None else ""
        if change.what.startswith("moved"):
            return f"{symbol} {change.what} to {line}"
        what = change.what if "->" in change.what else f"{symbol}: {change.what}"
        return f"changed {what}{where}"
    if change.kind in ("added", "removed"):
        return f"{change.kind} {change.what}{where}"
    return f"{change.what} changed" if change.kind != "inputs" else change.what


@dataclass
class CheckReport:
    results: list[Checked]
    folder: str
    strict_lines: bool = False
    depth: float = 1

    @property
    def ok(self) -> bool:
        return all(r.status in ("equal", "updated") for r in self.results)

    def _traces(self, checked: Checked):
        """What was compared: per trace, or per segment of a call traced in segments."""
        if checked.stored is None or checked.taken is None:
            return []
        return checked.compared

    def text(self, console: Console) -> None:
        counts: dict[str, int] = {}
        for checked in self.results:
            counts[checked.status] = counts.get(checked.status, 0) + 1
            name = f"{checked.stored.script if checked.stored else checked.target}"
            name += f":{checked.entry}" if checked.entry else ""
            head = Text(f"{_STATUS[checked.status]:<10} ", style=_STYLE[checked.status]) + Text(name)
            changes = [c for cmp in checked.comparisons for c in cmp.changes]
            if checked.status == "missing":
                head.append(f": no snapshot in {self.folder}; run `tracecli snapshot {checked.target} --dir "
                            f"{self.folder}` (or `tracecli check --update`)")
            elif changes:
                head.append(f": {len(changes)} change{'s' if len(changes) > 1 else ''}")
            console.print(head)
            for note in checked.notes:
                console.print(f"  {note}", markup=False)
            if checked.status != "different":
                continue
            for item in self._traces(checked):
                comparison = item.comparison
                if comparison.equal:
                    continue
                if item.label:
                    console.print(f"── {item.label} ──", markup=False, style="bold")
                for change in comparison.changes[:_LISTED]:
                    console.print(f"  {describe(change, item.old, item.new)}", markup=False)
                if len(comparison.changes) > _LISTED:
                    console.print(f"  ... and {len(comparison.changes) - _LISTED} more", markup=False)
                print_diff(console, trace_diff(item.before, item.after, comparison, self.strict_lines))
        summary = ", ".join(f"{counts[status]} {status}" for status in _STATUS if status in counts)
        console.print(summary or "no scripts", markup=False)

    def json(self) -> dict:
        results = []
        for checked in self.results:
            traces: dict[int, dict] = {}
            for item in self._traces(checked):
                comparison = item.comparison
                diff = trace_diff(item.before, item.after, comparison, self.strict_lines)
                # A call traced in segments is one trace: each change and line says its segment.
                where = {} if item.segment is None else {"segment": item.segment}
                entry = traces.setdefault(item.trace, {"equal": True, "changes": [], "lines": []})
                entry["equal"] = entry["equal"] and comparison.equal
                entry["changes"] += [{"kind": c.kind, "what": c.what, "description": describe(c, item.old, item.new),
                                      "old": c.old, "new": c.new, **where} for c in comparison.changes]
                entry["lines"] += [{"kind": line.kind, "before": line.before, "after": line.after, **where}
                                   for line in diff.lines if line.kind != " " and not line.header]
            results.append({
                "script": checked.stored.script if checked.stored else checked.target,
                "entry": checked.entry or None, "status": checked.status, "notes": checked.notes,
                "snapshot": checked.stored.path if checked.stored else None, "traces": list(traces.values()),
            })
        return {"format": FORMAT_VERSION, "command": "check", "dir": self.folder,
                "strict_lines": self.strict_lines, "equal": self.ok, "results": results}


@dataclass
class SnapshotReport:
    made: list[Taken]
    folder: str

    def text(self, console: Console) -> None:
        for taken in self.made:
            files = trace_files(taken.script.rsplit("/", 1)[-1].removesuffix(".py"), taken.entry, len(taken.traces))
            console.print(f"wrote {taken.script}:{taken.entry} -> {', '.join(files)}", markup=False)

    def json(self) -> dict:
        return {"format": FORMAT_VERSION, "command": "snapshot", "dir": self.folder,
                "scripts": [{"script": t.script, "entry": t.entry, "traces": len(t.traces)} for t in self.made]}


