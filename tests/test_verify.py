"""The verifier rejects every broken trace it promises to, with the lines around it."""

import pytest
import torch

from tracecli.core import dtypes
from tracecli.core.symbol import BoundSymbol
from tracecli.core.trace import Trace, collect_names
from tracecli.core.values import TensorValue
from tracecli.core.verify import VerificationError, verify
from tracecli.frontend.tracer import trace_callable
from tracecli.ops import ltorch, prims


def tv(name, shape=(3,), dtype=dtypes.float32):
    return TensorValue(name, shape, dtype, "cpu")


def bsym(symbol, args, out, subsymbols=()):
    return BoundSymbol(symbol, tuple(args), (), out, tuple(subsymbols))


def make_trace(inputs, bsyms, output):
    return Trace("f", tuple(inputs), tuple(bsyms), output, frozenset(collect_names(inputs, bsyms)))


X, Y = tv("x"), tv("y")


def test_a_real_trace_verifies():
    def f(x):
        return torch.cos(x) + torch.sin(x)

    verify(trace_callable(f, (torch.randn(10, 10),)).trace)


def test_the_second_seeds_collision_is_rejected():
    # t1 = ltorch.add(t0, t1): the output name is also an input.
    t0, t1 = tv("t0"), tv("t1")
    trace = make_trace(
        [X],
        [bsym(ltorch.cos, [X], t0), bsym(ltorch.sin, [X], t1), bsym(ltorch.add, [t0, t1], t1, [bsym(prims.add, [t0, t1], t1)])],
        t1,
    )
    with pytest.raises(VerificationError) as info:
        verify(trace)
    assert "t1 is defined twice" in info.value.problem or "both input and output" in info.value.problem
    assert ">> " in str(info.value)


def test_use_before_definition():
    t0, t1 = tv("t0"), tv("t1")
    trace = make_trace([X], [bsym(prims.neg, [t0], t1), bsym(prims.neg, [X], t0)], t1)
    with pytest.raises(VerificationError, match="reads t0 before it is defined"):
        verify(trace)


def test_a_name_for_two_values():
    t0 = tv("t0")
    trace = make_trace([X], [bsym(prims.neg, [X], t0), bsym(prims.neg, [tv("t0", (4,))], tv("t1", (4,)))], t0)
    with pytest.raises(VerificationError, match="two different values"):
        verify(trace)


def test_subsymbol_must_produce_the_parents_output():
    t0, t9 = tv("t0"), tv("t9")
    trace = make_trace([X, Y], [bsym(ltorch.add, [X, Y], t0, [bsym(prims.add, [X, Y], t9)])], t0)
    with pytest.raises(VerificationError, match="not produced by its subsymbols"):
        verify(trace)


def test_subsymbols_see_only_their_parents_arguments():
    t0, t1 = tv("t0"), tv("t1")
    trace = make_trace(
        [X, Y], [bsym(prims.neg, [Y], t0), bsym(ltorch.neg, [X], t1, [bsym(prims.add, [X, t0], t1)])], t1
    )
    with pytest.raises(VerificationError, match="reads t0 before it is defined"):
        verify(trace)


def test_subsymbol_intermediate_may_not_reuse_a_top_level_name():
    t0, t1 = tv("t0"), tv("t1")
    trace = make_trace(
        [X],
        [bsym(prims.neg, [X], t0), bsym(ltorch.sigmoid, [X], t1, [bsym(prims.exp, [X], t0), bsym(prims.neg, [t0], t1)])],
        t1,
    )
    with pytest.raises(VerificationError, match="t0 is defined twice"):
        verify(trace)


def test_outputs_must_be_defined_and_registered():
    with pytest.raises(VerificationError, match="never defined"):
        verify(make_trace([X], [], tv("t5")))
    t0 = tv("t0")
    trace = Trace("f", (X,), (bsym(prims.neg, [X], t0),), t0, frozenset({"x"}))
    with pytest.raises(VerificationError, match="missing from the trace's registry: t0"):
        verify(trace)
