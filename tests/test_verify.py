"""The verifier rejects every broken trace it promises to, with the lines around it."""

import pytest
import torch

from tracecli.core import dtypes, typecheck
from tracecli.core.dims import DimInfo
from tracecli.core.symbol import BoundSymbol, Symbol, pop_handler, push_handler
from tracecli.core.trace import Trace
from tracecli.core.values import TensorType, TensorValue
from tracecli.core.verify import VerificationError, verify
from tracecli.frontend.symbolic import DimPolicy
from tracecli.frontend.tracer import trace_callable
from tracecli.ops import ltorch, prims
from tracecli.passes.lower import lower


def tv(name, shape=(3,), dtype=dtypes.float32):
    return TensorValue(name, shape, dtype, "cpu")


def bsym(symbol, args, out, subsymbols=()):
    return BoundSymbol(symbol, tuple(args), (), out, tuple(subsymbols))


def make_trace(inputs, bsyms, output):
    return Trace("f", tuple(inputs), tuple(bsyms), output)


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


def test_outputs_must_be_defined():
    with pytest.raises(VerificationError, match="never defined"):
        verify(make_trace([X], [], tv("t5")))


def test_the_name_registry_is_what_the_trace_defines():
    # Derived, not kept: a trace rebuilt with other values has their names and no others.
    t0, t1 = tv("t0"), tv("t1")
    trace = make_trace([X], [bsym(prims.neg, [X], t0), bsym(prims.abs, [t0], t1, [bsym(prims.abs, [t0], t1)])], t1)
    assert trace.names == {"x", "t0", "t1"}
    neg, t2 = tv("neg"), tv("t2")
    rebuilt = trace.replace(bsyms=(bsym(prims.neg, [X], neg), bsym(prims.exp, [neg], t2)), output=t2)
    assert rebuilt.names == {"x", "neg", "t2"} and trace.names == {"x", "t0", "t1"}
    verify(rebuilt)
    # A size symbol is taken even where no call binds it: it is in the types.
    sized = rebuilt.replace(dims=(DimInfo("s0", 3, "x.shape[0]", named=False),))
    assert sized.names == {"x", "neg", "t2", "s0"}


# --- types: every bound symbol is re-checked against its rule ----------------------------


def _rejects(trace, match: str, marked: str) -> None:
    """`trace` fails verification with a problem matching `match`, its `>>` line `marked`."""
    with pytest.raises(VerificationError, match=match) as info:
        verify(trace)
    assert any(line.startswith(">> ") and marked in line for line in info.value.context.splitlines()), str(info.value)
    verify(trace, types=False)  # the structure itself is sound: only the types are wrong


def test_a_prim_recording_the_wrong_shape():
    x, t3 = tv("x", (5, 7)), tv("t3")
    trace = make_trace([x], [bsym(prims.sin, [x], t3)], t3)
    _rejects(trace, r"^prims\.sin records t3 as cpu f32\[3\] but its rule gives cpu f32\[5, 7\] for its arguments",
             "t3 = prims.sin(x)")


def test_a_prim_recording_the_wrong_dtype():
    t0 = tv("t0", dtype=dtypes.float64)
    _rejects(make_trace([X], [bsym(prims.exp, [X], t0)], t0),
             r"prims\.exp records t0 as cpu f64\[3\] but its rule gives cpu f32\[3\]", "t0 = prims.exp(x)")
    b0 = tv("b0")  # a comparison gives bools
    _rejects(make_trace([X, Y], [bsym(prims.lt, [X, Y], b0)], b0),
             r"prims\.lt records b0 as cpu f32\[3\] but its rule gives cpu bool\[3\]", "b0 = prims.lt(x, y)")


def test_a_prim_recording_the_wrong_device():
    t0 = TensorValue("t0", (3,), dtypes.float32, "cuda:0")
    _rejects(make_trace([X], [bsym(prims.neg, [X], t0)], t0),
             r"prims\.neg records t0 as cuda:0 f32\[3\] but its rule gives cpu f32\[3\]", "t0 = prims.neg(x)")


def test_a_prim_whose_rule_refuses_its_arguments():
    x4, t0 = tv("x4", (4,)), tv("t0")
    trace = make_trace([X, x4], [bsym(prims.add, [X, x4], t0)], t0)
    _rejects(trace, r"prims\.add refuses its recorded arguments \(x: cpu f32\[3\], x4: cpu f32\[4\]\): "
             r"prims\.add operands differ", "t0 = prims.add(x, x4)")


def test_an_ltorch_symbol_recording_what_its_decomposition_does_not_give():
    # f32 + f64 promotes to f64. The subsymbol is a sound prim call, but not what the
    # decomposition computes: only the parent's own rule can tell.
    y64, t0 = tv("y", dtype=dtypes.float64), tv("t0")
    trace = make_trace([X, y64], [bsym(ltorch.add, [X, y64], t0, [bsym(prims.add, [X, X], t0)])], t0)
    _rejects(trace, r"ltorch\.add records t0 as cpu f32\[3\] but its rule gives cpu f64\[3\]",
             "t0 = ltorch.add(x, y)")


def test_a_mistyped_subsymbol_under_a_correct_parent():
    t0, t1 = tv("t0", dtype=dtypes.float64), tv("t1")
    parent = bsym(ltorch.cos, [X], t1, [bsym(prims.cos, [X], t0), bsym(prims.convert_element_type, [t0, dtypes.float32], t1)])
    _rejects(make_trace([X], [parent], t1), r"prims\.cos records t0 as cpu f64\[3\] but its rule gives cpu f32\[3\]",
             "# t0 = prims.cos(x)")


def test_a_wrong_number_of_outputs():
    values = tv("t0")
    trace = make_trace([X], [BoundSymbol(prims.sort, (X, 0, False, False), (), (values,))], (values,))
    _rejects(trace, r"prims\.sort records \(t0: cpu f32\[3\],\) but its rule gives \(cpu f32\[3\], cpu i64\[3\]\)",
             "prims.sort(x, 0, False, False)")


def test_real_traces_with_tuple_outputs_and_constants_verify():
    def f(x):
        values, indices = torch.sort(x, dim=0)
        top = torch.topk(x, 2, dim=1)
        return values[1:, ::2].reshape(-1), indices.float().sum((0,), keepdim=True), top.values * 2

    trace = trace_callable(f, (torch.randn(5, 4),)).trace
    verify(trace)
    verify(lower(trace).trace)


def test_a_decomposition_returning_its_input_untouched_gives_the_inputs_type():
    # ltorch.reshape to the shape x already has returns x itself.
    t0 = tv("t0")
    verify(make_trace([X], [bsym(ltorch.reshape, [X, (3,)], t0)], t0))
    _rejects(make_trace([X], [bsym(ltorch.reshape, [X, (3,)], tv("t0", (1, 3)))], tv("t0", (1, 3))),
             r"ltorch\.reshape records t0 as cpu f32\[1, 3\] but its rule gives cpu f32\[3\]", "ltorch.reshape")


def test_the_cache_keys_on_constants_not_only_on_argument_types():
    # Same symbol, same argument types, different constants: the first outcome must not
    # answer for the second. 1, 1.0 and True are different constants too.
    x = tv("x", (3, 4))
    good = make_trace([x], [bsym(prims.reshape, [x, (4, 3)], tv("t0", (4, 3)))], tv("t0", (4, 3)))
    verify(good)
    bad = make_trace([x], [bsym(prims.reshape, [x, (2, 6)], tv("t0", (4, 3)))], tv("t0", (4, 3)))
    _rejects(bad, r"prims\.reshape records t0 as cpu f32\[4, 3\] but its rule gives cpu f32\[2, 6\]", "prims.reshape")
    i = tv("i", dtype=dtypes.int64)
    verify(make_trace([i], [bsym(prims.add, [i, 1], tv("t0", dtype=dtypes.int64))], tv("t0", dtype=dtypes.int64)))
    # A mistyped twin of a call already verified is still caught: the cache holds types, not verdicts.
    _rejects(make_trace([i], [bsym(prims.add, [i, 1], tv("t0", dtype=dtypes.float32))], tv("t0")),
             r"records t0 as cpu f32\[3\] but its rule gives cpu i64\[3\]", "prims.add(i, 1)")


def test_unhashable_constants_are_checked_without_caching():
    sym = Symbol("sized", "test", meta=lambda x, items: TensorType((len(items),), x.dtype, x.device))
    before = len(typecheck._cache)
    t0 = tv("t0", (2,))
    verify(make_trace([X], [bsym(sym, [X, [7, 8]], t0)], t0))  # a list constant: keyed as a tuple
    verify(make_trace([X], [bsym(sym, [X, {7, 8}], t0)], t0))  # a set: no key, so not cached
    _rejects(make_trace([X], [bsym(sym, [X, bytearray(b"abc")], t0)], t0),
             r"test\.sized records t0 as cpu f32\[2\] but its rule gives cpu f32\[3\]", "test.sized")
    assert len(typecheck._cache) == before + 1


def test_a_symbol_without_rules_is_not_type_checked():
    sym = Symbol("opaque_thing", "test", impl=lambda x: x)
    t0 = tv("t0", (9,))
    verify(make_trace([X], [bsym(sym, [X], t0)], t0))


def test_verify_leaves_the_handler_stack_as_it_found_it():
    # As if verify ran while tracing: a handler is already on the stack. The re-check
    # pushes its own on top, never calls the one below, and pops it, even on failure.
    calls = []
    push_handler(lambda sym, args, kwargs: calls.append(sym))
    try:
        typecheck.clear_cache()
        verify(trace_callable(lambda x: torch.softmax(x, -1) * 2, (torch.randn(3, 4),), name="f").trace)
        with pytest.raises(VerificationError):
            verify(make_trace([X, tv("x4", (4,))], [bsym(prims.add, [X, tv("x4", (4,))], tv("t0"))], tv("t0")))
        assert calls == []
        prims.neg(X)
        assert calls == [prims.neg]
    finally:
        pop_handler()


def test_a_rule_that_decides_on_example_sizes_is_checked_per_example():
    # torch.split(x, 2) makes as many pieces as the example length needs, under the same
    # symbol name s0 in both traces: the second must not be judged by the first's outcome.
    split = lambda x: torch.split(x, 2)  # noqa: E731
    policy = DimPolicy(dynamic=True)
    six = trace_callable(split, (torch.randn(6),), name="f", dims=policy).trace
    eight = trace_callable(split, (torch.randn(8),), name="f", dims=policy).trace
    assert len(six.output) == 3 and len(eight.output) == 4
    verify(six)
    verify(eight)
