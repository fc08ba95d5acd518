"""Golden snapshots of calls traced in segments: where a call's trace was cut, as a
snapshot keeps it, and the comparison of a stored trace (or segmented call) with the one
made now, segment with segment.

Segments pair up by their place in the call. A cut is where it was when the user's line
says the same thing for the same reason (the line number counts with `strict_lines`,
as it does for bound symbols); a cut elsewhere, another number of segments, or a call
that is now cut where it was one trace (or the other way round) is a difference, said
in words before the segments' own changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from tracecli.core.equivalence import Change, Comparison, Outline, compare_traces, outline
from tracecli.core.trace import Trace
from tracecli.jobs.segment_text import split_segments


@dataclass(frozen=True)
class Cut:
    """Where the trace of a call was cut before a segment: the script's file (as the
    segment's heading names it), the line, its source text, and why."""

    file: str
    line: int | None
    source: str
    reason: str

    def to_json(self) -> dict:
        return {"file": self.file, "line": self.line, "source": self.source, "reason": self.reason}

    @staticmethod
    def from_json(data: dict | None) -> Cut | None:
        return None if data is None else Cut(data["file"], data["line"], data["source"], data["reason"])

    @staticmethod
    def of(after) -> Cut | None:
        """The cut of a segment's break (frontend/segments.py's Break; None: the first)."""
        if after is None:
            return None
        source = after.source
        if source is None:
            return Cut("", None, "", after.reason)
        return Cut(source.file.rsplit("/", 1)[-1], source.line, source.text.strip(), after.reason)

    def same(self, other: Cut, strict_lines: bool) -> bool:
        return ((self.file, self.source, self.reason) == (other.file, other.source, other.reason)
                and (not strict_lines or self.line == other.line))

    @property
    def place(self) -> str:
        return f"{self.file}:{self.line}: `{self.source}`"

    @property
    def where(self) -> str:
        return f"{self.place} ({self.reason})"

    def moved_from(self, old: Cut) -> str:
        """`cut at br.py:6: `...`, was at br.py:5: `...` (why)`: the reason once when it is the same."""
        why = f"({self.reason})" if self.reason == old.reason else f"({self.reason}; was: {old.reason})"
        return f"cut at {self.place}, was at {old.place} {why}"


# A call traced in segments as a snapshot takes it: per segment, the cut before it (None
# for the first) and its trace after the passes; once stored, its outline.
Segmented = list[tuple[Cut | None, Trace]]
StoredSegments = list[tuple[Cut | None, Outline]]


@dataclass(frozen=True)
class Compared:
    """One trace of a snapshot against the one made now, or one segment of a call
    traced in segments against its counterpart (`segment`, from 1)."""

    trace: int  # which of the snapshot's traces, from 0
    segment: int | None
    label: str  # how a report heads it: "", "trace 2 of 3", "segment 2 of 3", ...
    before: str  # the stored text ("" for a segment the snapshot lacks)
    after: str  # the new text ("" for a segment the call no longer has)
    comparison: Comparison
    old: Outline | None = None
    new: Outline | None = None


def _cuts(parts) -> str:
    cuts = [cut.where for cut, _ in parts if cut is not None]
    return f" (cut at {'; '.join(cuts)})" if cuts else ""


def _segments(count: int) -> str:
    return f"{count} segment{'s' if count != 1 else ''}"


def compare_item(k: int, label: str, old: Outline | StoredSegments, new: Trace | Segmented, before: str, after: str,
                 levels: float, strict_lines: bool) -> tuple[list[Compared], list[str]]:
    """The snapshot's `k`-th trace against the new one: what to report of each trace or
    segment, and notes on the call as a whole (where it is cut)."""
    if isinstance(old, Outline) and isinstance(new, Trace):
        now = outline(new, levels)
        return [Compared(k, None, label, before, after, compare_traces(old, now, strict_lines=strict_lines),
                         old, now)], []
    if isinstance(old, Outline) or isinstance(new, Trace):
        # One trace where there were segments, or segments where there was one trace.
        prefix = f"{label}: " if label else ""
        if isinstance(new, Trace):
            note = f"{prefix}the call is one trace now; the snapshot has {_segments(len(old))}{_cuts(old)}"
        else:
            note = f"{prefix}the call is now traced in {_segments(len(new))}{_cuts(new)}; the snapshot has one trace"
        return [Compared(k, None, label, before, after, Comparison((Change("segments", note),)))], []
    return _compare_segments(k, label, old, new, before, after, levels, strict_lines)


def _compare_segments(k: int, label: str, old: StoredSegments, new: Segmented, before: str, after: str,
                      levels: float, strict_lines: bool) -> tuple[list[Compared], list[str]]:
    notes = []
    if len(old) != len(new):
        prefix = f"{label}: " if label else ""
        notes.append(f"{prefix}the call is now traced in {_segments(len(new))}{_cuts(new)}; the snapshot has "
                     f"{len(old)}{_cuts(old)}")
    befores, afters = split_segments(before), split_segments(after)
    out = []
    for i in range(max(len(old), len(new))):
        head = f"segment {i + 1} of {len(new) if i < len(new) else len(old)}"
        head = f"{label} · {head}" if label else head
        old_text = befores[i] if i < len(old) and i < len(befores) else ""
        new_text = afters[i] if i < len(new) and i < len(afters) else ""
        if i >= len(old):
            cut = new[i][0]
            change = Change("added", f"segment {i + 1}" + (f", cut at {cut.where}" if cut else ""))
            out.append(Compared(k, i + 1, head, "", new_text, Comparison((change,))))
            continue
        if i >= len(new):
            cut = old[i][0]
            change = Change("removed", f"segment {i + 1}" + (f", cut at {cut.where}" if cut else ""))
            out.append(Compared(k, i + 1, f"{head} in the snapshot", old_text, "", Comparison((change,))))
            continue
        (old_cut, old_outline), (new_cut, new_trace) = old[i], new[i]
        now = outline(new_trace, levels)
        comparison = compare_traces(old_outline, now, strict_lines=strict_lines)
        if old_cut is not None and new_cut is not None and not old_cut.same(new_cut, strict_lines):
            moved = Change("cut", new_cut.moved_from(old_cut))
            comparison = Comparison((moved, *comparison.changes), comparison.value_map)
        out.append(Compared(k, i + 1, head, old_text, new_text, comparison, old_outline, now))
    return out, notes


__all__ = ["Compared", "Cut", "Segmented", "StoredSegments", "compare_item"]
