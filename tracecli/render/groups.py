"""Many traces from one script: its calls grouped by the trace they print, and the
arguments whose values made new traces.

A main block that calls its entry in a loop with a changing Python number gets one
trace per value, since numbers are specialised. The views print each distinct trace
once with the calls it covers, print only a few, and name those arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tracecli.core.values import NumberValue
from tracecli.jobs.runner import TracedCall


@dataclass
class TraceGroup:
    """Traced calls whose traces print the same text, in the order the script made them."""

    text: str
    calls: list[TracedCall] = field(default_factory=list)

    @property
    def served(self) -> list[int]:
        """The script's calls of the entry (0-based) that this trace answered."""
        return sorted(n for call in self.calls for n in call.served)

    @property
    def match(self) -> bool:
        return all((call.report is None or call.report.match) and all(r.match for r in call.rechecks.values())
                   for call in self.calls)


def group_calls(calls: list[TracedCall], text: Callable[[TracedCall], str]) -> list[TraceGroup]:
    """`calls` grouped by `text(call)`, groups in the order of their first call."""
    groups: dict[str, TraceGroup] = {}
    for call in sorted(calls, key=lambda c: min(c.served, default=0)):
        key = text(call)
        groups.setdefault(key, TraceGroup(key)).calls.append(call)
    return list(groups.values())


@dataclass(frozen=True)
class Specialised:
    """An argument that took several plain Python values, each traced on its own."""

    name: str
    types: tuple[str, ...]
    values: tuple  # distinct, in the order the calls brought them


def _plain(value) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, (int, float, bool, str))


def specialised_arguments(calls: list[TracedCall]) -> list[Specialised]:
    """The entry's arguments that are plain Python values (numbers, bools, strings, None,
    tuples of them) in every traced call and not the same in all of them."""
    if len(calls) < 2:
        return []
    ordered = sorted(calls, key=lambda c: min(c.served, default=0))
    per_call = [{v.name: v for v in call.program.trace.inputs} for call in ordered]
    out = []
    for name in per_call[0]:
        values = [inputs.get(name) for inputs in per_call]
        if not all(isinstance(v, NumberValue) and _plain(v.value) for v in values):
            continue
        # 1, 1.0 and True are equal in Python but three traces: tell them apart by type.
        distinct: dict[tuple[str, str], object] = {}
        for v in values:
            distinct.setdefault((type(v.value).__name__, repr(v.value)), v.value)
        if len(distinct) > 1:
            types = tuple(dict.fromkeys(kind for kind, _ in distinct))
            out.append(Specialised(name, types, tuple(distinct.values())))
    return out


def call_numbers(served: list[int], limit: int = 4) -> str:
    """0-based call indices as the 1-based ranges people read: `1-3, 7, 9-12`, the
    first `limit` ranges then `...` and the last."""
    ranges: list[list[int]] = []
    for n in sorted(served):
        if ranges and n == ranges[-1][1] + 1:
            ranges[-1][1] = n
        else:
            ranges.append([n, n])
    words = [f"{a + 1}" if a == b else f"{a + 1}-{b + 1}" for a, b in ranges]
    if len(words) > limit + 1:
        words = [*words[:limit], "...", words[-1]]
    return ", ".join(words)


def value_list(values: tuple, limit: int = 3) -> str:
    """`0, 1, 2, ..., 99`: the first `limit` values and the last."""
    shown = [repr(v) for v in values]
    if len(shown) > limit + 2:
        shown = [*shown[:limit], "...", shown[-1]]
    return ", ".join(shown)
