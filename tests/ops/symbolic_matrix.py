"""The symbolic check over the whole op matrix: every case of every family module
traced with symbolic dims and classified (tests/ops/harness.py, `symbolic_result`).

`python -m tests.ops.symbolic_matrix` prints the count of each class per family, then
every case that is not "symbolic" with why (`-q`: the counts only; `--floors`: the
"symbolic" counts as tests/test_symbolic_ops.py writes its floors; family names as
arguments: those families only). `make symbolic-matrix` runs tests/test_symbolic_ops.py,
which asserts on the same counts.
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

from tests.ops.harness import SYMBOLIC_KINDS, Case, SymbolicResult, symbolic_result, symbolic_sampled

# Modules that are not families of cases.
_NOT_CASES = {"test_coverage", "test_declarations"}
FAMILIES = sorted(p.stem.removeprefix("test_") for p in Path(__file__).parent.glob("test_*.py")
                  if p.stem not in _NOT_CASES)


def family_cases(family: str) -> list[Case]:
    return list(importlib.import_module(f"tests.ops.test_{family}").CASES)


def run(families=FAMILIES, sample: bool = False) -> dict[str, list[tuple[Case, SymbolicResult]]]:
    """family -> (case, result) for each case (of the `make test` sample only, if asked)."""
    out = {}
    for family in families:
        cases = family_cases(family)
        if sample:
            cases = [c for c in cases if symbolic_sampled(c)]
        out[family] = [(case, symbolic_result(case)) for case in cases]
    return out


def counts(results: list[tuple[Case, SymbolicResult]]) -> dict[str, int]:
    tally = dict.fromkeys(SYMBOLIC_KINDS, 0)
    for _, result in results:
        tally[result.kind] += 1
    return tally


def table(by_family: dict[str, list[tuple[Case, SymbolicResult]]]) -> str:
    width = max(len(f) for f in [*by_family, "total"])
    head = f"{'family':<{width}}  " + "  ".join(f"{k:>8}" for k in SYMBOLIC_KINDS) + f"  {'cases':>6}"
    lines = [head, "-" * len(head)]
    total = dict.fromkeys(SYMBOLIC_KINDS, 0)
    for family, results in by_family.items():
        tally = counts(results)
        for k, n in tally.items():
            total[k] += n
        lines.append(f"{family:<{width}}  " + "  ".join(f"{tally[k]:>8}" for k in SYMBOLIC_KINDS)
                     + f"  {len(results):>6}")
    lines.append("-" * len(head))
    lines.append(f"{'total':<{width}}  " + "  ".join(f"{total[k]:>8}" for k in SYMBOLIC_KINDS)
                 + f"  {sum(total.values()):>6}")
    return "\n".join(lines)


def details(by_family: dict[str, list[tuple[Case, SymbolicResult]]]) -> str:
    lines = []
    for kind in reversed(SYMBOLIC_KINDS[1:]):
        for family, results in by_family.items():
            for case, result in results:
                if result.kind == kind:
                    lines.append(f"{kind:<8} {family}/{case.id}: {result.detail}")
    return "\n".join(lines)


def floors(by_family: dict[str, list[tuple[Case, SymbolicResult]]]) -> str:
    def written(sample: bool) -> str:
        items = [f'"{family}": {sum(r.kind == "symbolic" for c, r in results if not sample or symbolic_sampled(c))}'
                 for family, results in by_family.items()]
        return "{" + ", ".join(items) + "}"

    return f"MIN_SYMBOLIC = {written(False)}\nMIN_SYMBOLIC_SAMPLED = {written(True)}"


def main(argv: list[str]) -> int:
    quiet = "-q" in argv
    families = [a for a in argv if not a.startswith("-")] or FAMILIES
    start = time.perf_counter()
    by_family = run(families)
    if "--floors" in argv:
        print(floors(by_family))
        return 0
    print(table(by_family))
    print(f"({time.perf_counter() - start:.0f} s)")
    if not quiet:
        print(details(by_family))
    return 1 if any(r.kind == "mismatch" for results in by_family.values() for _, r in results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
