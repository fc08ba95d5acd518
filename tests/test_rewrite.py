"""The rewriting tool passes share (passes/rewrite.py) and the quick record builders it
uses: the records they make are the ones the constructors make, still frozen. A call
one primitive restates keeps the primitive, and its record follows the call."""

import dataclasses

import pytest
import torch

from tracecli.core import dtypes
from tracecli.core.symbol import BoundSymbol, new_bound_symbol
from tracecli.core.values import TensorValue
from tracecli.core.verify import VerificationError, verify
from tracecli.frontend.tracer import trace_callable
from tracecli.ops import ltorch, prims
from tracecli.passes import map_bsym, renamer


def value(name: str) -> TensorValue:
    return TensorValue(name, (8,), dtypes.float32, "cpu")


def call(out: TensorValue, *args, hint: str | None = None) -> BoundSymbol:
    sub = BoundSymbol(prims.mul, args, (), out)
    return BoundSymbol(ltorch.mul, args, (), out, (sub,), name_hints=((out.name, hint),) if hint else ())


def test_renamed_and_new_bound_symbol_make_frozen_records_like_the_constructors():
    x = TensorValue("x", (2, 3), dtypes.float16, "cuda:0", requires_grad=True)
    renamed = x.renamed("y")
    assert type(renamed) is TensorValue
    assert renamed == TensorValue("y", (2, 3), dtypes.float16, "cuda:0", True)
    assert hash(renamed) == hash(TensorValue("y", (2, 3), dtypes.float16, "cuda:0", True))
    with pytest.raises(dataclasses.FrozenInstanceError):
        renamed.name = "z"

    fields = (prims.mul, (x, 2), (("k", 1),), renamed, (), None, (("y", "y"),), "fc1")
    bsym = new_bound_symbol(*fields)
    assert type(bsym) is BoundSymbol
    assert [getattr(bsym, f.name) for f in dataclasses.fields(BoundSymbol)] == list(fields)
    with pytest.raises(dataclasses.FrozenInstanceError):
        bsym.args = ()


def test_map_bsym_renames_every_level_and_the_hints_as_any_value_map_does():
    x, t0, t1 = value("x"), value("t0"), value("t1")
    bsym = call(t1, t0, x, hint="a")
    names = {"t0": "b", "t1": "a"}
    by_table = map_bsym(bsym, renamer(names))
    by_function = map_bsym(bsym, lambda v: v.renamed(names[v.name]) if v.name in names else v)
    for mapped in (by_table, by_function):
        assert [v.name for v in mapped.args] == ["b", "x"]
        assert mapped.output.name == "a"
        assert mapped.name_hints == (("a", "a"),)
        assert [v.name for v in mapped.subsymbols[0].args] == ["b", "x"]
        assert mapped.subsymbols[0].output is mapped.output
    # The input record is untouched: passes never change a record another trace holds.
    assert bsym.output is t1 and bsym.subsymbols[0].args == (t0, x)


def test_map_bsym_keeps_what_the_map_leaves_unchanged():
    x, t0, t1 = value("x"), value("t0"), value("t1")
    bsym = call(t1, t0, x)
    assert map_bsym(bsym, renamer({"t7": "a"})) is bsym
    outer = BoundSymbol(ltorch.mul, (t0, x), (), t1, (call(t1, t0, x), BoundSymbol(prims.neg, (x,), (), value("t2"))))
    mapped = map_bsym(outer, renamer({"t0": "b"}))
    assert mapped is not outer
    assert mapped.subsymbols[1] is outer.subsymbols[1]  # reads and writes nothing renamed


def test_a_renamer_is_a_value_map_of_its_own():
    rename = renamer({"t0": "a"})
    t0, x = value("t0"), value("x")
    assert rename(x) is x
    assert rename(t0) == value("a")
    assert rename(t0) is rename(value("t0"))  # one renamed record per name


def traced_product():
    def f(x, y):
        a = x * y
        return torch.relu(a)

    return trace_callable(f, (torch.randn(2, 3), torch.randn(2, 3)), {}).trace


def test_a_call_one_primitive_restates_keeps_the_primitive_and_reads_as_its_record():
    trace = traced_product()
    mul, relu = trace.bsyms
    # ltorch.mul(x, y) is prims.mul(x, y) and nothing more: the trace keeps the primitive.
    assert mul.restated_by is prims.mul
    (sub,) = mul.subsymbols
    assert (sub.symbol, sub.args, sub.kwargs, sub.output, sub.subsymbols) == (prims.mul, mul.args, (), mul.output, ())
    assert mul.subsymbols[0] is sub  # made once: the trace reads the same record every time
    # relu is maximum(a, 0): its arguments differ from the primitive's, so it keeps a record.
    assert relu.restated_by is None and relu.subsymbols[0].symbol is prims.maximum
    verify(trace)


def test_a_restated_call_mapped_or_replaced_restates_its_new_values():
    mul = traced_product().bsyms[0]
    a = mul.output
    renamed = map_bsym(mul, renamer({a.name: "a", "x": "x0"}))
    assert renamed.restated_by is prims.mul  # nothing was built for the record
    assert [v.name for v in renamed.subsymbols[0].args] == ["x0", "y"]
    assert renamed.subsymbols[0].output is renamed.output and renamed.output.name == "a"
    b = value("b")
    assert mul.replace(output=b).subsymbols[0].output is b
    # A call whose one subsymbol restates it, however it was built, keeps the primitive
    # once a map changes it.
    x, t0, t1 = value("x"), value("t0"), value("t1")
    assert map_bsym(call(t1, t0, x), renamer({"t0": "b"})).restated_by is prims.mul


def test_the_verifier_still_checks_a_restated_call_itself():
    trace = traced_product()
    mul, relu = trace.bsyms
    ghost = value("ghost")
    broken = trace.replace(bsyms=(mul.replace(args=(ghost, mul.args[1])), relu))
    with pytest.raises(VerificationError, match="reads ghost before it is defined"):
        verify(broken)
