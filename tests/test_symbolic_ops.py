"""The op matrix under symbolic shapes: every case traced with each input dim a symbol
(tests/ops/harness.py, `symbolic_result`) must never give a trace that its guards
accept and that disagrees with eager, and each family keeps at least as many cases
fully symbolic (served at two larger sizes by the one trace) as it reaches today.

`make test` checks the sample that `check_case` runs (about one case in five), and one
case of each op whose sizes the data decide; `make symbolic-matrix`
(TRACECLI_SYMBOLIC_MATRIX=1) checks every case and prints the count of each class per
family.
"""

from __future__ import annotations

import os

import pytest

from tests.ops.harness import symbolic_result, symbolic_sampled
from tests.ops.symbolic_matrix import FAMILIES, details, family_cases, table
from tracecli.frontend.tracer import trace_callable

FULL = os.environ.get("TRACECLI_SYMBOLIC_MATRIX") == "1"

# The fewest "symbolic" cases per family: over the whole matrix, and over the sample.
# Raise them when an op rule gets more symbolic; never lower them to make a test pass.
MIN_SYMBOLIC = {
    "activations": 260, "attention": 39, "autograd": 1, "checks": 2, "conv": 35, "conversions": 51, "elementwise": 1028,
    "elementwise_binary": 274, "elementwise_special": 164, "elementwise_unary": 414, "factories": 89, "fft": 139,
    "fft_windows": 76, "indexing": 127, "indexing_scatter": 146, "inplace": 41, "library": 6, "linalg": 155,
    "linalg_decompositions": 86, "linalg_products": 85, "linalg_solvers": 108, "logical": 57, "losses": 102,
    "movement": 109, "movement_joins": 37, "nn": 84, "pooling": 73, "reductions": 327, "reductions_norms": 106,
    "reductions_order": 113, "sampling": 13, "selection": 149, "shapes": 145, "state": 4,
}
MIN_SYMBOLIC_SAMPLED = {
    "activations": 45, "attention": 6, "autograd": 0, "checks": 0, "conv": 5, "conversions": 12, "elementwise": 201,
    "elementwise_binary": 47, "elementwise_special": 30, "elementwise_unary": 100, "factories": 20, "fft": 26,
    "fft_windows": 10, "indexing": 23, "indexing_scatter": 27, "inplace": 10, "library": 3, "linalg": 35,
    "linalg_decompositions": 18, "linalg_products": 14, "linalg_solvers": 22, "logical": 9, "losses": 7,
    "movement": 16, "movement_joins": 8, "nn": 20, "pooling": 13, "reductions": 51, "reductions_norms": 20,
    "reductions_order": 17, "sampling": 7, "selection": 30, "shapes": 28, "state": 0,
}


def _cases(family: str) -> list:
    cases = family_cases(family)
    return cases if FULL else [case for case in cases if symbolic_sampled(case)]


def test_every_family_is_listed():
    assert sorted(MIN_SYMBOLIC) == FAMILIES
    assert sorted(MIN_SYMBOLIC_SAMPLED) == FAMILIES


@pytest.mark.parametrize("family", FAMILIES)
def test_family_under_symbolic_shapes(family):
    results = [(case, symbolic_result(case)) for case in _cases(family)]
    wrong = [f"{case.id}: {result.detail}" for case, result in results if result.kind == "mismatch"]
    assert not wrong, "symbolic traces that their guards accept and that disagree with eager:\n" + "\n".join(wrong)
    symbolic = sum(result.kind == "symbolic" for _, result in results)
    least = (MIN_SYMBOLIC if FULL else MIN_SYMBOLIC_SAMPLED)[family]
    assert symbolic >= least, (
        f"{family}: {symbolic} cases symbolic, down from {least}; the others:\n"
        + details({family: [(c, r) for c, r in results if r.kind != "symbolic"]})
    )


# The ops whose output sizes the data decide (`u0`), and the families that hold their cases.
DATA_DEPENDENT = {"nonzero": "selection", "argwhere": "selection", "unique": "selection",
                  "unique_consecutive": "selection", "bincount": "selection", "masked_select": "indexing",
                  "getitem": "indexing", "one_hot": "indexing", "repeat_interleave": "movement"}


def _data_dependent_cases(symbol: str) -> list:
    """The cases of `symbol` whose traces have a size the data decide (x[mask], not x[0]):
    all of them for the whole matrix, the first for `make test`."""
    found = [case for case in family_cases(DATA_DEPENDENT[symbol]) if case.symbols[0] == symbol
             and any(info.unbacked for info in trace_callable(case.fn, case.make_args(), name="fn").trace.dims)]
    return found if FULL else found[:1]


@pytest.mark.parametrize("symbol", sorted(DATA_DEPENDENT))
def test_sizes_the_data_decide_stay_symbolic(symbol):
    # One trace with symbolic inputs serves larger inputs, whose data select other counts.
    cases = _data_dependent_cases(symbol)
    assert cases, f"no case of {symbol} makes a size the data decide"
    results = [(case, symbolic_result(case)) for case in cases]
    others = [f"{case.id}: {result.kind}: {result.detail}" for case, result in results
              if result.kind != "symbolic" and "output_size" not in case.id and "output-size" not in case.id]
    assert not others, "\n".join(others)


@pytest.mark.skipif(not FULL, reason="the whole matrix: make symbolic-matrix")
def test_print_the_matrix():
    print("\n" + table({family: [(case, symbolic_result(case)) for case in family_cases(family)]
                        for family in FAMILIES}))
