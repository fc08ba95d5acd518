"""Diffs of traces that know identity.

The pipeline records which value became which (renames, merged duplicates), so a
line whose only change is a renamed value shows as one `~` line annotated
`[t3 -> loss]`, not as a removed and an added line. `text_diff` is the plain
unified diff for when that is what you want.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from tracecli.core.printing import format_trace
from tracecli.core.symbol import BoundSymbol
from tracecli.core.trace import Trace, walk

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Source and scope comments quote the user's code and module names, not values.
_SOURCE_COMMENT = re.compile(r"^\s*# (\S+:\d+:  |── )")
_CODE_LINE = re.compile(r"^  (?!#)\S")


@dataclass
class DiffLine:
    kind: str  # " " unchanged, "~" changed only by renames, "-" removed, "+" added
    before: str | None
    after: str | None
    renames: list[tuple[str, str]] = field(default_factory=list)
    header: bool = False  # the header comment names the passes: its change is no change of code

    @property
    def text(self) -> str:
        return self.after if self.after is not None else self.before


@dataclass
class TraceDiff:
    lines: list[DiffLine]

    @property
    def changed(self) -> bool:
        return any(line.kind != " " and not line.header for line in self.lines)

    def count(self, kind: str, code_only: bool = True) -> int:
        return sum(
            1 for line in self.lines if line.kind == kind and (not code_only or _CODE_LINE.match(line.text))
        )


def compose(first: dict[str, str], second: dict[str, str], names: Iterable[str]) -> dict[str, str]:
    """The value map of two passes run one after the other, over the first's `names`."""
    out = {}
    for name in names:
        middle = first.get(name, name)
        final = second.get(middle, middle)
        if final != name:
            out[name] = final
    return out


def _definition_order(trace: Trace) -> list[str]:
    """Every name the trace defines, parents before their subsymbols; a parent and the
    subsymbol that produces its result share a name: it is listed once."""
    return list(dict.fromkeys(
        [v.name for v in trace.inputs] + [o.name for _, b in walk(trace.bsyms) for o in b.iter_outputs()]
    ))


def _merged(before: Trace, value_map: dict[str, str]) -> set[str]:
    """Values merged into another (cse): of the values that end up with one name, all
    but the first defined. The others only changed their name."""
    survivors: set[str] = set()
    merged: set[str] = set()
    for name in _definition_order(before):
        target = value_map.get(name, name)
        if target in survivors and name != target:
            merged.add(name)
        survivors.add(target)
    return merged


@dataclass(frozen=True)
class ValueChanges:
    """What a pass did to the values, read from the traces and its value map, so that
    every pass, a user's too, is summarised alike whatever its own stats say."""

    renamed: int  # values that changed their name, not merged into another
    merged: int  # calls whose values became an earlier equal call's (cse's merges, dce's collapses)
    subsymbols_removed: int  # decomposition steps gone from bound symbols that stay


def value_changes(before: Trace, after: Trace, value_map: dict[str, str]) -> ValueChanges:
    order = _definition_order(before)
    target = {name: value_map.get(name, name) for name in order}
    # Values that took another's name were merged into it: they are not renames.
    renamed = sum(name != new for name, new in target.items()) - (len(order) - len(set(target.values())))
    defined = after.names
    # A call without outputs has no name to follow: it is known by its symbol and the
    # values it reads.
    outputless = Counter(_read_key(b, {}) for _, b in walk(after.bsyms) if not b.output_values())
    merged = 0

    def stays(bsym: BoundSymbol, names: list[str]) -> bool:
        if names:
            return any(target[name] in defined for name in names)
        key = _read_key(bsym, value_map)
        if outputless[key] > 0:
            outputless[key] -= 1
            return True
        return False

    def lost(bsyms, top_level: bool) -> tuple[int, bool]:
        """(subsymbols gone, whether every one of `bsyms` is gone). One that goes takes
        its decomposition with it and counts once; one replaced by its decomposition
        (lowered) counts what of that is gone; a top-level one that goes is a removed
        line, not counted here. A call whose values went to an earlier call beside it
        (which may have taken their names) is merged."""
        nonlocal merged
        count, every = 0, True
        seen: set[str] = set()
        for bsym in bsyms:
            names = [o.name for o in bsym.iter_outputs()]
            if names:
                if target[names[0]] in seen:
                    merged += 1
                    continue
                seen.add(target[names[0]])
            if stays(bsym, names):
                count += lost(bsym.subsymbols, False)[0]
                every = False
            elif not top_level:
                inner, all_gone = lost(bsym.subsymbols, False)
                count += 1 if all_gone else inner
                every = every and all_gone
        return count, every

    subsymbols_removed = lost(before.bsyms, True)[0]
    return ValueChanges(renamed, merged, subsymbols_removed)


def _read_key(bsym: BoundSymbol, value_map: dict[str, str]) -> tuple:
    return (bsym.symbol, tuple([value_map.get(v.name, v.name) for v in bsym.arg_values()]))


def _map_line(line: str, value_map: dict[str, str], merged: set[str]):
    if _SOURCE_COMMENT.match(line) or not value_map:
        return line, []
    target = line.split(" = ", 1)[0].strip(" ()#") if " = " in line else ""
    if target and any(name.strip() in merged for name in target.split(",")):
        # The defining line of a merged duplicate is gone, not renamed: keep it raw so it shows as removed.
        return line, []
    renames: list[tuple[str, str]] = []

    def swap(match: re.Match) -> str:
        word = match.group(0)
        new = value_map.get(word)
        if new is None:
            return word
        if (word, new) not in renames:
            renames.append((word, new))
        return new

    # Quoted text (type comments' dtypes, string constants) holds no value names.
    parts = re.split(r'("[^"]*")', line)
    mapped = "".join(p if p.startswith('"') else _IDENT.sub(swap, p) for p in parts)
    return mapped, renames


def diff_traces(before: Trace, after: Trace, value_map: dict[str, str], depth: float = 1) -> TraceDiff:
    return diff_texts(format_trace(before, depth), format_trace(after, depth), value_map, _merged(before, value_map))


def diff_texts(before: str, after: str, value_map: dict[str, str], merged: set[str] = frozenset(),
               key: Callable[[str], str] | None = None) -> TraceDiff:
    """The identity-aware diff of two trace texts, given which value became which.
    `key`, when given, is what lines are matched by (after renaming): lines with equal
    keys but different text are `~` (a stored trace against a new one: source lines
    that moved)."""
    old, new = before.splitlines(), after.splitlines()
    if old[0] == new[0]:
        lines = [DiffLine(" ", old[0], new[0], header=True)]
    else:
        lines = [DiffLine("-", old[0], None, header=True), DiffLine("+", None, new[0], header=True)]
    old, new = old[1:], new[1:]
    mapped = [_map_line(line, value_map, merged) for line in old]
    key = key or (lambda line: line)
    matcher = difflib.SequenceMatcher(None, [key(m) for m, _ in mapped], [key(line) for line in new], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                renames = mapped[i][1]
                kind = " " if old[i] == new[j] else "~"
                lines.append(DiffLine(kind, old[i], new[j], renames if kind == "~" else []))
            continue
        lines.extend(DiffLine("-", old[i], None) for i in range(i1, i2))
        lines.extend(DiffLine("+", None, new[j]) for j in range(j1, j2))
    return TraceDiff(lines)


def text_diff(before: Trace, after: Trace, depth: float = 1, names: tuple[str, str] = ("before", "after")) -> str:
    old = format_trace(before, depth).splitlines(keepends=True)
    new = format_trace(after, depth).splitlines(keepends=True)
    return "".join(difflib.unified_diff(old, new, names[0], names[1]))


def hunks(diff: TraceDiff, context: int = 3) -> list[list[DiffLine] | None]:
    """The changed lines with `context` unchanged lines around them; None marks a gap."""
    changed = [i for i, line in enumerate(diff.lines) if line.kind != " " and not line.header]
    if not changed:
        return []
    # The header always shows: it says which passes the diff is about.
    keep = {i for i, line in enumerate(diff.lines) if line.header}
    for i in changed:
        keep.update(range(max(0, i - context), min(len(diff.lines), i + context + 1)))
    out: list = []
    previous = -1
    for i in sorted(keep):
        if previous != -1 and i != previous + 1:
            out.append(None)
        out.append(diff.lines[i])
        previous = i
    return out


def intraline(before: str, after: str) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """Both lines cut into (text, differs) spans, for side-by-side highlighting."""
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    left: list[tuple[str, bool]] = []
    right: list[tuple[str, bool]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if i2 > i1:
            left.append((before[i1:i2], tag != "equal"))
        if j2 > j1:
            right.append((after[j1:j2], tag != "equal"))
    return left, right
