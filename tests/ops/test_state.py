"""Python state the traced code writes: each store keeps a traced value where the program
kept it, and returns it too, so the matrix compares what was stored with eager's (the
places themselves are tested through whole scripts in tests/test_python_state.py)."""

import types

import pytest

from tests.ops.harness import Case, T, case_adder, check_case
from tracecli.core.bindings import Held
from tracecli.ops import prims

CASES: list[Case] = []
case = case_adder(CASES)


class _Holder:
    pass


_CACHE: dict = {}
_LOG: list = []
_OBJECT = _Holder()


def _store_in_dict(x):
    _CACHE["scaled"] = x * 2
    return _CACHE["scaled"] + 1


def _store_attribute(x):
    _OBJECT.last = x.exp()
    return _OBJECT.last


def _append(x):
    _LOG.append(x.sum())
    return _LOG[-1]


def _closure():
    kept = None

    def fn(x):
        nonlocal kept
        kept = x.neg()
        return kept

    return fn


case(("store_item", "mul", "add"), "cache[key] = ...", _store_in_dict, T("f32", (3, 4)))
case(("store_attr", "exp"), "obj.attr = ...", _store_attribute, T("f32", (3, 4)))
case(("store_extend", "sum"), "items.append(...)", _append, T("f32", (3, 4)))
case(("store_cell", "neg"), "nonlocal v; v = ...", _closure(), T("f32", (3, 4)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


@pytest.mark.parametrize("name", ["delete_item", "delete_attr"])
def test_removal_meta_matches_impl(name):
    # A removal changes the state for good, which the matrix's three runs of a case cannot
    # repeat (tests/test_python_state.py removes through a script's calls).
    holder = {"stale": 1} if name == "delete_item" else types.SimpleNamespace(stale=1)
    prim = prims.ALL[name]
    assert prim.meta(holder, "stale") is None
    prim.impl(Held(holder, "holder"), "stale")
    assert "stale" not in (holder if name == "delete_item" else vars(holder))
