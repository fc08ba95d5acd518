"""The reach set of small functions (benchmarks/reach/functions), written the way compiler
test suites write them: every function recorded in benchmarks/reach/expected.txt as
matching eager still traces and matches. One that starts to match asks for the file to be
rewritten, and says which."""

import warnings

from benchmarks.reach import functions
from benchmarks.reach.harness import MATCH, run_tracecli
from benchmarks.reach.run import EXPECTED, read_expected

UPDATE = "python -m benchmarks.reach.run --set functions --update-expected"


def test_functions_recorded_as_matching_still_match(tmp_path):
    expected = read_expected()
    cases = functions.cases()
    assert sorted(expected) == sorted(c.name for c in cases), f"{EXPECTED.name} lists other functions: {UPDATE}"
    outcomes = {c.name: run_tracecli(c, tmp_path, examine=False) for c in cases}
    regressions = [f"{name}: {o.outcome}: {o.reason}" for name, o in outcomes.items()
                   if expected[name] == MATCH and o.outcome != MATCH]
    improved = [name for name, o in outcomes.items() if expected[name] != MATCH and o.outcome == MATCH]
    if improved:
        warnings.warn(f"now matching eager, recorded otherwise in {EXPECTED.name} ({UPDATE}): {', '.join(improved)}",
                      stacklevel=1)
    assert not regressions, "no longer matching eager:\n" + "\n".join(regressions)
