"""Every ltorch symbol has a case in the op matrix, whichever test_ops*.py file holds it."""

import importlib
from pathlib import Path

from tracecli.ops import ltorch

OP_MODULES = sorted(p.stem for p in Path(__file__).parent.glob("test_ops*.py"))


def test_every_ltorch_symbol_has_a_case():
    covered = set()
    for name in OP_MODULES:
        module = importlib.import_module(f"tests.{name}")
        covered |= {symbol for case in module.CASES for symbol in case.symbols}
    missing = sorted(set(ltorch.ALL) - covered)
    assert not missing, f"ltorch symbols without a test case: {missing}"
