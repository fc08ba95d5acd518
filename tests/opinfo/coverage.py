"""How much of torch's op database tracecli models: every OpInfo run through the harness
(tests/opinfo/harness.py) and summed up. `make coverage` prints, in order:

- per family (tests/opinfo/families.py), how many OpInfos are modeled, opaque, refused,
  crash, wrong and skipped (harness.KINDS says what each means), and the totals;
- each crash and wrong OpInfo with why: tracecli's defects, one line each;
- the opaque torch callables ranked by how many OpInfos call them ("alone": the OpInfos
  it is the only opaque callable of, which modelling it would finish), then each refused
  and skipped OpInfo with why;
- where the results disagree with the reviewed table, tests/opinfo/expected.py.

    python -m tests.opinfo.coverage              the whole report
    python -m tests.opinfo.coverage NAME...      those OpInfos only, each with its class and why
    python -m tests.opinfo.coverage --table      expected.py's tables as this run finds them,
                                                 to paste over the old ones and review in the diff
"""

from __future__ import annotations

import json
import sys
import textwrap
import time
from collections import Counter

from tests.opinfo.expected import MODELED, NOT_MODELED
from tests.opinfo.families import family
from tests.opinfo.harness import OpResult, opinfos, run_opinfo

COLUMNS = ("modeled", "opaque", "refused", "crash", "wrong", "skipped")
TABLE = "tests/opinfo/expected.py"


def run_all(names: list[str] | None = None) -> dict[str, OpResult]:
    ops = opinfos()
    return {name: run_opinfo(ops[name]) for name in sorted(names or ops)}


def against_table(result: OpResult) -> str:
    """How the result disagrees with the reviewed table ('' when it does not): an OpInfo
    expected modeled that is not, a crash or a wrong result not listed as the known
    defect it is, a listed defect gone, and an OpInfo listed as not modeled that is."""
    name, kind = result.name, result.kind
    found = f"{kind}: {result.detail}" if result.detail else kind
    if name in MODELED:
        return "" if kind == "modeled" else f"{name} is expected modeled, but is {found}"
    listed = NOT_MODELED.get(name)
    if listed is None:
        return f"{name} is in neither table of {TABLE}: add it ({found})"
    if kind == "modeled":
        return f"{name} is modeled now: move it from NOT_MODELED to MODELED in {TABLE}"
    if kind in ("crash", "wrong") and listed[0] != kind:
        return f"{name} is {found}, which {TABLE} does not list as a known defect (it says {listed[0]})"
    if listed[0] in ("crash", "wrong") and kind != listed[0]:
        return f"{name} is listed in {TABLE} as a known {listed[0]}, but is {found} now: update its line"
    return ""


def family_table(results: dict, columns: tuple[str, ...] = COLUMNS) -> str:
    """The count of each class (a result's `kind`) per family, and the totals."""
    ops = opinfos()
    counts: dict[str, Counter] = {}
    for name, result in results.items():
        counts.setdefault(family(ops[name]), Counter())[result.kind] += 1
    total = sum(counts.values(), Counter())
    width = max(len(f) for f in [*counts, "family"])
    widths = [max(9, len(c) + 2) for c in columns]
    head = f"{'family':<{width}}" + "".join(f"{c:>{w}}" for c, w in zip(columns, widths, strict=True)) + f"{'total':>8}"
    rows = [head, "-" * len(head)]
    for name, tally in [*sorted(counts.items()), ("total", total)]:
        if name == "total":
            rows.append("-" * len(head))
        rows.append(f"{name:<{width}}" + "".join(f"{tally[c]:>{w}}" for c, w in zip(columns, widths, strict=True))
                    + f"{sum(tally.values()):>8}")
    return "\n".join(rows)


def ranking(results: dict[str, OpResult]) -> list[tuple[str, int, int, int]]:
    """(opaque callable, OpInfos calling it, OpInfos it alone keeps opaque, samples
    calling it), most OpInfos first."""
    calls, alone, samples = Counter(), Counter(), Counter()
    for result in results.values():
        calls.update(result.opaque.keys())
        samples.update(result.opaque)
        if result.kind == "opaque" and len(result.opaque) == 1:
            alone.update(result.opaque.keys())
    rows = [(name, n, alone[name], samples[name]) for name, n in calls.items()]
    return sorted(rows, key=lambda row: (-row[1], -row[2], -row[3], row[0]))


_DATA_DEPENDENT = " cannot be traced: its output depends on the values in its input tensors, which tracing does not have"
_NO_META = "cannot be traced: aten::"


def _short(detail: str) -> str:
    """A refusal's message as a table line: the common ones in a few words."""
    if _DATA_DEPENDENT in detail:
        return detail.replace(_DATA_DEPENDENT, ": its output depends on tensor values")
    if _NO_META in detail and "no fake impl or Meta kernel" in detail:
        return detail.split(" cannot be traced")[0] + ": no meta kernel"
    return detail


def reason(result: OpResult) -> str:
    """Why the OpInfo is in its class: the table's reviewed words when it lists that
    class, else what the run found (for an opaque OpInfo, always its opaque callables)."""
    if result.kind == "opaque":
        return result.detail
    listed = NOT_MODELED.get(result.name)
    return listed[1] if listed and listed[0] == result.kind else _short(result.detail)


def listing(results: dict[str, OpResult], kinds: tuple[str, ...]) -> list[str]:
    return [f"  {r.kind:<8} {r.name}: {reason(r)}" for r in results.values() if r.kind in kinds]


def report(results: dict[str, OpResult], seconds: float, top: int = 40) -> str:
    lines = [family_table(results), ""]
    defects = listing(results, ("crash", "wrong"))
    lines += [f"crash and wrong ({len(defects)}): defects of tracecli", *defects, ""]
    ranked = ranking(results)
    width = max((len(row[0]) for row in ranked[:top]), default=8)
    lines += [f"opaque callables by the OpInfos that call them (top {min(top, len(ranked))} of {len(ranked)})",
              f"  {'callable':<{width}}  OpInfos  alone  samples"]
    lines += [f"  {name:<{width}}  {n:>7}  {sole:>5}  {m:>7}" for name, n, sole, m in ranked[:top]]
    lines += ["", "refused and skipped:", *listing(results, ("refused", "skipped")), ""]
    stale = [text for text in map(against_table, results.values()) if text]
    lines += [f"disagreements with {TABLE} ({len(stale)}):", *(f"  {text}" for text in stale), ""]
    lines.append(timing_line(results, seconds))
    return "\n".join(lines)


def timing_line(results: dict, seconds: float) -> str:
    """How long a run took, and its five slowest OpInfos (results carry `seconds`)."""
    slowest = sorted(results.values(), key=lambda r: -r.seconds)[:5]
    return (f"{len(results)} OpInfos in {seconds:.1f} s; slowest: "
            + ", ".join(f"{r.name} {r.seconds:.2f} s" for r in slowest))


def table_source(results: dict[str, OpResult]) -> str:
    """MODELED and NOT_MODELED as this run finds them, in expected.py's layout; the
    reasons of OpInfos already listed with the same class are kept as reviewed."""
    modeled = " ".join(name for name, r in results.items() if r.kind == "modeled")
    out = ['MODELED = frozenset("""', *textwrap.wrap(modeled, 100), '""".split())', "", "NOT_MODELED = {"]
    for name, result in results.items():
        if result.kind == "modeled":
            continue
        out.append(f"    {json.dumps(name)}: ({json.dumps(result.kind)}, {json.dumps(reason(result))}),")
    out.append("}")
    return "\n".join(out)


def print_each(results, disagreement_of, width: int) -> None:
    """One line per OpInfo asked for by name: its class and why, then where it disagrees
    with the reviewed table."""
    for result in results:
        print(f"{result.kind:<{width}} {result.name}: {result.detail}")
        disagreement = disagreement_of(result)
        if disagreement:
            print(" " * (width + 1) + disagreement)


def main(argv: list[str]) -> int:
    names = [a for a in argv if not a.startswith("-")]
    start = time.perf_counter()
    results = run_all(names or None)
    seconds = time.perf_counter() - start
    if "--table" in argv:
        print(table_source(results))
    elif names:
        print_each(results.values(), against_table, width=8)
    else:
        print(report(results, seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
