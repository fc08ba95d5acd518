"""The hand-written promotion and broadcasting rules against torch's own."""

from __future__ import annotations

import itertools

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes

from tracecli.core import dtypes
from tracecli.core.values import TensorValue
from tracecli.ops.promotion import ShapeError, broadcast_shapes, promote_types, result_type
from tracecli.ops.torch_bridge import FROM_TORCH, TO_TORCH

# The dtypes torch makes zero tensors of (not the quantized, bit and sub-byte ones).
DTYPES = (*dtypes.CORE, dtypes.complex32, dtypes.uint16, dtypes.uint32, dtypes.uint64, dtypes.float8_e4m3fn,
          dtypes.float8_e5m2, dtypes.float8_e8m0fnu)


LATTICE = (*dtypes.CORE, dtypes.complex32)


@pytest.mark.parametrize(
    ("a", "b"), list(itertools.product(LATTICE, LATTICE)), ids=lambda d: d.short
)
def test_promote_types_matches_torch(a, b):
    assert TO_TORCH[promote_types(a, b)] == torch.promote_types(TO_TORCH[a], TO_TORCH[b])


def test_promote_types_of_every_dtype_is_torchs_or_refused():
    """Every pair of the dtypes torch has: torch's answer, or a ShapeError where torch
    refuses (or, for its storage-only dtypes, where tracing declines to follow it)."""
    wrong = []
    for a, b in itertools.product(dtypes.ALL, dtypes.ALL):
        try:
            expected = torch.promote_types(TO_TORCH[a], TO_TORCH[b])
        except RuntimeError:
            expected = None
        try:
            ours = TO_TORCH[promote_types(a, b)]
        except ShapeError:
            ours = None
        in_lattice = {a, b} <= set(LATTICE)
        if ours != expected and (ours is not None or in_lattice):
            wrong.append(f"{a.short}+{b.short}: ours {ours}, torch {expected}")
    assert not wrong, wrong


# An operand is (kind, payload): a tensor as (dtype, ndim), or a Python number.
tensors = st.tuples(st.just("tensor"), st.tuples(st.sampled_from(DTYPES), st.integers(0, 2)))
numbers = st.tuples(
    st.just("number"),
    st.one_of(
        st.booleans(),
        st.integers(-5, 5),
        st.floats(-4, 4, allow_nan=False),
        st.complex_numbers(max_magnitude=4, allow_nan=False, allow_infinity=False),
    ),
)
operands = st.one_of(tensors, numbers)
# torch's reference promotion (`elementwise_dtypes`) is wrong for float8 and the unsigned
# dtypes (it answers where torch refuses and refuses where torch answers): mixes of many
# operands stay in the lattice, where it is right; pairs check the rest against torch.
lattice_operands = st.one_of(st.tuples(st.just("tensor"), st.tuples(st.sampled_from(LATTICE), st.integers(0, 2))),
                             numbers)


def _materialise(operand, index: int):
    """(the IR operand, the torch operand) for one drawn operand."""
    kind, payload = operand
    if kind == "number":
        return payload, payload
    dtype, ndim = payload
    shape = (2,) * ndim
    return TensorValue(f"t{index}", shape, dtype, "cpu"), torch.zeros(shape, dtype=TO_TORCH[dtype])


def _torch_or_unsupported(fn):
    """torch's answer, or None where torch refuses: then ours must refuse too."""
    try:
        out = fn()
    except (RuntimeError, KeyError):  # torch's reference promotion raises KeyError for float8
        return None
    return FROM_TORCH[out]


def _check_result_type(ours: tuple, expected) -> None:
    """Ours is torch's answer; where torch refuses, ours refuses too. Outside the
    lattice ours may also refuse where torch answers (torch's reference promotion,
    `elementwise_dtypes`, even answers where its kernels then refuse)."""
    outside = any(isinstance(op, TensorValue) and op.dtype not in LATTICE for op in ours)
    try:
        got = result_type(*ours)
    except ShapeError:
        assert expected is None or outside, f"refused, torch says {expected}"
        return
    assert got == expected


@settings(max_examples=400, deadline=None)
@given(st.tuples(operands, operands))
def test_result_type_matches_torch_for_pairs(pair):
    ours, theirs = zip(*(_materialise(op, i) for i, op in enumerate(pair)), strict=True)
    _check_result_type(ours, _torch_or_unsupported(lambda: torch.result_type(*theirs)))


@settings(max_examples=1000, deadline=None)
@given(st.lists(lattice_operands, min_size=1, max_size=5).filter(lambda ops: any(k == "tensor" for k, _ in ops)))
# complex32 arises between categories, then a dimensioned bfloat16 tensor outranks it.
@example([("tensor", (dtypes.float16, 0)), ("tensor", (dtypes.bfloat16, 1)), ("number", 0j)])
def test_result_type_matches_torch_for_mixes(mix):
    # torch.result_type takes two operands; torch's reference implementation of
    # elementwise promotion takes any number and applies the same categories.
    ours, theirs = zip(*(_materialise(op, i) for i, op in enumerate(mix)), strict=True)
    expected = _torch_or_unsupported(
        lambda: elementwise_dtypes(*theirs, type_promotion_kind=ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT)[1]
    )
    _check_result_type(ours, expected)


def test_result_type_complex_keeps_the_float_precision():
    # The rule a pairwise fold gets wrong: a float tensor meeting a complex zero-dim
    # tensor keeps its own precision, whatever the zero-dim tensor's.
    f32 = TensorValue("a", (2,), dtypes.float32, "cpu")
    f64 = TensorValue("b", (2,), dtypes.float64, "cpu")
    c64_0d = TensorValue("c", (), dtypes.complex64, "cpu")
    c128_0d = TensorValue("d", (), dtypes.complex128, "cpu")
    assert result_type(f32, c128_0d) == dtypes.complex64
    assert result_type(f64, c64_0d) == dtypes.complex128


shapes = st.lists(st.integers(0, 3), max_size=4).map(tuple)


def _related_shapes(draw_shapes):
    """Shapes that often broadcast: each dimension copied, set to 1 or dropped from the front."""
    base, picks = draw_shapes
    out = []
    for pick in picks:
        drop, ones = pick
        shape = list(base[min(drop, len(base)) :])
        for i in ones:
            if i < len(shape):
                shape[i] = 1
        out.append(tuple(shape))
    return out


related = st.tuples(
    shapes,
    st.lists(st.tuples(st.integers(0, 4), st.lists(st.integers(0, 3), max_size=2)), min_size=1, max_size=4),
).map(_related_shapes)


@settings(max_examples=400, deadline=None)
@given(st.one_of(related, st.lists(shapes, max_size=4)))
def test_broadcast_shapes_matches_torch(shape_list):
    try:
        expected = tuple(torch.broadcast_shapes(*shape_list))
    except (RuntimeError, ValueError):
        with pytest.raises(ShapeError):
            broadcast_shapes(*shape_list)
        return
    assert broadcast_shapes(*shape_list) == expected


@pytest.mark.parametrize("shape_list", [[(-1,), (1,)], [(2, -3), (2, 1)], [(3,), (-1,)]], ids=str)
def test_broadcast_shapes_rejects_negative_sizes(shape_list):
    with pytest.raises((RuntimeError, ValueError)):
        torch.broadcast_shapes(*shape_list)
    with pytest.raises(ShapeError):
        broadcast_shapes(*shape_list)
