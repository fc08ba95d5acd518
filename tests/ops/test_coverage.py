"""Every ltorch symbol has a case in the op matrix, whichever tests/ops module holds it,
and case ids are unique across those modules."""

import importlib
from pathlib import Path

from tracecli.ops import ltorch

OP_MODULES = sorted(p.stem for p in Path(__file__).parent.glob("test_*.py") if p.stem != "test_coverage")


def _all_cases() -> list:
    return [case for name in OP_MODULES for case in importlib.import_module(f"tests.ops.{name}").CASES]


def test_every_ltorch_symbol_has_a_case():
    covered = {symbol for case in _all_cases() for symbol in case.symbols}
    missing = sorted(set(ltorch.ALL) - covered)
    assert not missing, f"ltorch symbols without a test case: {missing}"


def test_case_ids_are_unique():
    # Ids name the failing case in pytest's output: two cases with one id would hide one.
    ids = [case.id for case in _all_cases()]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
