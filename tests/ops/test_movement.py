"""The data movement ops: split, chunk, unbind, stack, unflatten, repeat,
repeat_interleave, triu, tril and diff. They decompose into shape, indexing and
elementwise prims, and repeat_interleave with a tensor of repeats into its one prim of
its own, repeat_index, which gives as many positions as the repeats' sum: a size the
data decide (`u0`), whose cases also run on new draws of the repeats."""

from __future__ import annotations

import math

import pytest
import torch

from tests.ops.harness import (
    X3,
    Case,
    L,
    T,
    case_adder,
    check_case,
    check_refused,
    refusal_tests,
    rows_by_id,
)

CASES: list[Case] = []
case = case_adder(CASES)

# --- split, chunk, unbind, stack, unflatten ------------------------------------------------------

case("split", "fn", lambda x: torch.split(x, 2), T("f32", (5, 3)))
case("split", "method-dim", lambda x: x.split(2, dim=1), T("f32", (3, 5)))
case("split", "sizes", lambda x: x.split([1, 3], -1), X3)
case("split", "sizes-with-zero", lambda x: torch.split(x, [2, 0, 3]), T("i64", (5,)))
case("split", "kw", lambda x: torch.split(x, split_size_or_sections=2, dim=1), T("f32", (2, 4)))
case("split", "method-kw", lambda x: x.split(split_size=3), T("bool", (7,)))
case("split", "gpt2-qkv", lambda x: x.split(4, dim=2), T("f32", (2, 3, 12)))
case("split", "tuple-sizes", lambda x: x.split((2, 2), 0), T("bf16", (4, 2)))
case("chunk", "method", lambda x: x.chunk(2, -1), X3)
case("chunk", "fn-uneven", lambda x: torch.chunk(x, 3), T("f32", (5, 3)))
case("chunk", "fewer-pieces", lambda x: x.chunk(4), T("i64", (6,)))
case("chunk", "dim-kw", lambda x: torch.chunk(x, 2, dim=1), T("f16", (3, 4)))
case("unbind", "fn", torch.unbind, T("f32", (3, 4)))
case("unbind", "method-dim", lambda x: x.unbind(1), X3)
case("unbind", "size-1", lambda x: x.unbind(-1), T("i64", (3, 1)))
case("unbind", "kw", lambda x: torch.unbind(x, dim=0), T("bool", (2, 2)))
case("stack", "fn", lambda a, b: torch.stack([a, b]), T("f32", (3, 4)), T("f32", (3, 4)))
case("stack", "last-dim", lambda a, b: torch.stack((a, b), dim=-1), T("f32", (3, 4)), T("f32", (3, 4)))
case("stack", "middle", lambda a, b, c: torch.stack([a, b, c], 1), T("i64", (2, 3)), T("i64", (2, 3)),
     T("i64", (2, 3)))
case("stack", "promote", lambda a, b: torch.stack([a, b]), T("f32", (2,)), T("f64", (2,)))
case("stack", "promote-int-half", lambda a, b: torch.stack([a, b]), T("i64", (2,)), T("f16", (2,)))
case("stack", "0d", lambda a, b: torch.stack([a, b]), T("f32", ()), T("i64", ()))
case("stack", "single", lambda a: torch.stack([a]), T("f32", (3,)))
case(("unbind", "clone"), "unbind_copy", lambda x: torch.unbind_copy(x, 1), T("f32", (2, 3)))
case(("split", "clone"), "split_copy", lambda x: torch.split_copy(x, 2), T("i64", (5,)))
case(("split", "clone"), "split_with_sizes_copy",
     lambda x: [p.add_(1) for p in torch.split_with_sizes_copy(x, [1, 2], 1)] + [x], T("f32", (2, 3)))
case("unflatten", "method", lambda x: x.unflatten(1, (3, 4)), T("f32", (2, 12)))
case("unflatten", "fn-minus-one", lambda x: torch.unflatten(x, -1, (2, -1)), T("f32", (2, 12)))
case("unflatten", "heads", lambda x: x.unflatten(-1, (2, 2, 3)), T("bf16", (2, 12)))

# --- tensor_split, hsplit, vsplit, dsplit, split_with_sizes, unsafe_split: split in disguise -----

case("split", "tensor_split-sections", lambda x: torch.tensor_split(x, 3), T("f32", (7, 2)))
case("split", "tensor_split-even", lambda x: x.tensor_split(2, dim=1), T("i64", (2, 6)))
case("split", "tensor_split-more-sections", lambda x: x.tensor_split(5), T("f32", (3,)))
case("split", "tensor_split-indices", lambda x: torch.tensor_split(x, [1, 3], 1), T("f32", (2, 5)))
case("split", "tensor_split-negative-and-past", lambda x: x.tensor_split((-2, 9)), T("bool", (5, 2)))
case("split", "tensor_split-kw", lambda x: x.tensor_split(indices=[2]), T("f32", (4,)))
case("split", "tensor_split-aten", lambda x: torch.ops.aten.tensor_split.indices(x, [1, 2]), T("f32", (4,)))
case("split", "hsplit", lambda x: torch.hsplit(x, 2), T("f32", (3, 4)))
case("split", "hsplit-vector", lambda x: x.hsplit([1, 2]), T("i64", (5,)))
case("split", "vsplit", lambda x: torch.vsplit(x, [2]), X3)
case("split", "dsplit", lambda x: x.dsplit(2), X3)
case("split", "split_with_sizes", lambda x: torch.split_with_sizes(x, [1, 3], 1), T("f32", (2, 4)))
case("split", "split_with_sizes-method", lambda x: x.split_with_sizes([2, 1]), T("bf16", (3, 2)))
case("split", "unsafe_split", lambda x: torch.unsafe_split(x, 2), T("f32", (5,)))
case("split", "unsafe_split_with_sizes", lambda x: x.unsafe_split_with_sizes([1, 1], 0), T("i64", (2, 3)))
case(("split", "mul_", "setitem_"), "tensor_split-write-through",
     lambda x: (x.tensor_split(2)[1].mul_(2), x)[1], T("f32", (4, 3)))

# --- repeat, repeat_interleave ---------------------------------------------------------------------------

case("repeat", "method", lambda x: x.repeat(2, 1), T("f32", (3, 4)))
case("repeat", "new-dims", lambda x: x.repeat(2, 1, 3), T("f32", (3, 4)))
case("repeat", "tuple", lambda x: x.repeat((2, 2)), T("i64", (2, 3)))
case("repeat", "0d", lambda x: x.repeat(3), T("f32", ()))
case("repeat", "bool", lambda x: x.repeat(1, 2, 1), T("bool", (2, 3)))
case("repeat", "zero", lambda x: x.repeat(0, 2), T("f32", (3, 4)))
case("repeat", "ones", lambda x: x.repeat(1, 1), T("f32", (3, 4)))
case("repeat", "empty-counts", lambda x: x.repeat(()), T("i64", ()))
case("repeat_interleave", "once", lambda x: torch.repeat_interleave(x, 1, dim=0), T("f32", (3, 4)))
case("repeat_interleave", "flat", lambda x: x.repeat_interleave(2), T("f32", (2, 3)))
case("repeat_interleave", "fn-dim", lambda x: torch.repeat_interleave(x, 3, dim=1), T("f32", (2, 3)))
case("repeat_interleave", "negative-dim", lambda x: x.repeat_interleave(2, -1), T("i64", (2, 3, 2)))
case("repeat_interleave", "kv-heads", lambda x: x.repeat_interleave(2, dim=1), T("bf16", (2, 2, 3, 4)))
case("repeat_interleave", "output-size", lambda x: x.repeat_interleave(2, dim=0, output_size=6), T("f32", (3,)))
# Tensor repeats: as many elements as their sum, which the data decide (`u0`), unless
# output_size says it.
case("repeat_interleave", "tensor-dim", lambda x, r: torch.repeat_interleave(x, r, dim=0), T("f32", (4, 3)),
     T("i64", (4,), "small"))
case("repeat_interleave", "tensor-flat", lambda x, r: x.repeat_interleave(r), T("f32", (2, 3)), T("i64", (6,), "small"))
case("repeat_interleave", "tensor-negative-dim", lambda x, r: x.repeat_interleave(r, dim=-1), T("bf16", (2, 5)),
     T("i32", (5,), "small"))
case("repeat_interleave", "one-tensor-repeat", lambda x, r: x.repeat_interleave(r, dim=1), T("i64", (2, 3)),
     T("i64", (1,), "small"))
case("repeat_interleave", "0d-tensor-repeat", lambda x, r: torch.repeat_interleave(x, r), T("f32", (2, 2)),
     L(3, "i64"))
case("repeat_interleave", "tensor-output-size", lambda x, r: x.repeat_interleave(r, dim=0, output_size=4),
     T("f32", (3, 2)), L((1, 0, 3), "i64"))
case("repeat_interleave", "repeats-alone", torch.repeat_interleave, T("i64", (5,), "small"))
case("repeat_interleave", "repeats-alone-i32", lambda r: torch.repeat_interleave(r, output_size=6),
     L((2, 0, 4), "i32"))
case(("repeat_interleave", "sum"), "segment-ids", lambda x, r: x.repeat_interleave(r).sum() * r.repeat_interleave(r),
     T("f32", (4,)), T("i64", (4,), "small"))

# --- tile: repeat in disguise ----------------------------------------------------------------------

case("repeat", "tile", lambda x: torch.tile(x, (2, 1)), T("f32", (3, 4)))
case("repeat", "tile-fewer", lambda x: x.tile(2), T("i64", (2, 3)))
case("repeat", "tile-more", lambda x: x.tile(2, 1, 3), T("f32", (3,)))
case("repeat", "tile-0d", lambda x: x.tile(()), T("f32", ()))
case("repeat", "tile-kw", lambda x: torch.tile(x, dims=(1, 2)), T("bool", (2, 2)))

# --- flip, roll, rot90 -------------------------------------------------------------------------------

for _dtype in ("f32", "i64", "bool", "bf16"):
    case("flip", "fn", lambda x: torch.flip(x, (0,)), T(_dtype, (3, 4)))
case("flip", "all-dims", lambda x: torch.flip(x, [0, 1, 2]), X3)
case("flip", "negative", lambda x: x.flip(-1), X3)
case("flip", "method-varargs", lambda x: x.flip(2, 0), X3)
case("flip", "method-kw", lambda x: x.flip(dims=(1,)), T("f32", (2, 3)))
case("flip", "no-dims", lambda x: torch.flip(x, ()), T("f32", (2, 3)))
case("flip", "0d", lambda x: torch.flip(x, (0,)), T("f32", ()))
case("flip", "fliplr", torch.fliplr, T("f32", (3, 4)))
case("flip", "flipud", lambda x: x.flipud(), T("i64", (3,)))
case("roll", "flat", lambda x: torch.roll(x, 1), T("f32", (3, 4)))
case("roll", "dim", lambda x: x.roll(2, 1), T("f32", (3, 4)))
case("roll", "negative", lambda x: x.roll(-1, 0), T("i64", (5,)))
case("roll", "more-than-a-turn", lambda x: torch.roll(x, 7, -1), T("f32", (2, 3)))
case("roll", "dims", lambda x: torch.roll(x, (1, -2), (0, 2)), X3)
case("roll", "whole-turn", lambda x: x.roll(3, 0), T("bool", (3, 2)))
case("roll", "0d", lambda x: torch.roll(x, 2), T("f32", ()))
case("roll", "no-dims", lambda x: x.roll(2, ()), T("f32", (2, 3)))
case("roll", "empty", lambda x: torch.roll(x, 1, 0), T("f32", (0, 2)))
for _k in (1, 2, 3, 4, -1):
    case("rot90", f"k{_k}", lambda x, k=_k: torch.rot90(x, k), T("f32", (3, 4)))
case("rot90", "method-dims", lambda x: x.rot90(1, [2, 0]), X3)
case("rot90", "negative-dims", lambda x: torch.rot90(x, -2, (-1, -2)), T("i64", (2, 3, 4)))

# --- tril_indices, triu_indices ----------------------------------------------------------------------

case("tril_indices", "square", lambda: torch.tril_indices(4, 4))
case("tril_indices", "offset", lambda: torch.tril_indices(3, 5, 1, dtype=torch.int32))
case("tril_indices", "negative-offset", lambda: torch.tril_indices(5, 3, -2))
case("tril_indices", "empty", lambda: torch.tril_indices(3, 3, -4))
case("triu_indices", "square", lambda: torch.triu_indices(4, 4))
case("triu_indices", "offset", lambda: torch.triu_indices(5, 3, 1))
case("triu_indices", "negative-offset", lambda: torch.triu_indices(3, 4, -1, device="cpu"))
case("triu_indices", "no-rows", lambda: torch.triu_indices(0, 3))

# --- triu, tril -------------------------------------------------------------------------------------

for _name, _fn in (("triu", torch.triu), ("tril", torch.tril)):
    case(_name, "fn", _fn, T("f32", (4, 4)))
    case(_name, "method", lambda x, n=_name: getattr(x, n)(1), T("f32", (3, 5)))
    case(_name, "negative-diagonal", lambda x, f=_fn: f(x, -1), T("i64", (5, 3)))
    case(_name, "diagonal-kw", lambda x, f=_fn: f(x, diagonal=2), T("f32", (4, 4)))
    case(_name, "past-the-end", lambda x, f=_fn: f(x, 7), T("f32", (3, 4)))
    case(_name, "batched", lambda x, f=_fn: f(x, -2), T("bf16", (2, 3, 4, 4)))
    case(_name, "bool", _fn, T("bool", (4, 4)))
    case(_name, "empty", _fn, T("f32", (0, 3)))
case(("triu", "full"), "causal-mask", lambda: torch.full((4, 4), -math.inf).triu(1))
case(("tril", "ones"), "causal-ones", lambda: torch.tril(torch.ones(5, 5, dtype=torch.bool)))

# --- diff -------------------------------------------------------------------------------------------

for dtype in ("f32", "i64", "bool", "f16"):
    case("diff", "default", torch.diff, T(dtype, (3, 5)))
case("diff", "dim0-n2", lambda x: torch.diff(x, n=2, dim=0), T("f32", (5, 3)))
case("diff", "prepend-append", lambda x, p: x.diff(prepend=p, append=p), T("f32", (2, 4)), T("f32", (2, 1)))
case("diff", "promote", lambda x, p: torch.diff(x, prepend=p), T("i64", (2, 4)), T("f32", (2, 1)))
case("diff", "too-many", lambda x: torch.diff(x, n=5), T("f32", (2, 3)))
case("diff", "order-0-is-a-copy", lambda x, p: (torch.diff(x, n=0, prepend=p).add_(1), x)[1], T("f32", (2, 3)),
     T("f32", (2, 1)))
case("diff", "empty-is-a-copy", lambda x: (torch.diff(x, dim=0).add_(1), x)[1], T("f32", (0, 3)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


# Forms that record other families' ops only: checked like the cases, filed here.
OTHER_FAMILIES: list[Case] = []
case_adder(OTHER_FAMILIES)(
    "getitem", "tensor_split-out-of-order", lambda x: torch.tensor_split(x, [3, 1]), T("f32", (5,)))


@pytest.mark.parametrize("case", OTHER_FAMILIES, ids=lambda c: c.id)
def test_forms_made_of_other_families_ops(case: Case):
    # Cuts out of order overlap or skip elements: no split, each piece a slice.
    check_case(case)


REFUSED = (
    ("repeat_interleave-float-repeats", lambda x: x.repeat_interleave(x), T("f32", (3,))),
    ("repeat_interleave-2d-repeats", lambda x: x.repeat_interleave(x, dim=1), T("i64", (2, 2), "small")),
    ("repeat_interleave-repeats-shape", lambda x: x.repeat_interleave(x[:2]), T("i64", (3,), "small")),
    ("repeat_interleave-0d-repeats-alone", lambda x: torch.repeat_interleave(x), T("i64", (), "small")),
    ("triu-1d", torch.triu, T("f32", (3,))),
    ("tril-0d", lambda x: x.tril(), T("f32", ())),
    ("split-bad-sizes", lambda x: x.split([1, 1]), T("f32", (3, 4))),
    ("split-negative", lambda x: x.split(-1), T("f32", (3, 4))),
    ("chunk-zero", lambda x: x.chunk(0), T("f32", (3, 4))),
    ("chunk-0d", lambda x: x.chunk(1), T("f32", ())),
    ("unbind-0d", torch.unbind, T("f32", ())),
    ("stack-shapes", lambda x: torch.stack([x, x[0]]), T("f32", (3, 4))),
    ("stack-empty", lambda x: x + torch.stack([]), T("f32", (3, 4))),
    ("unflatten-sizes", lambda x: x.unflatten(1, (3, 3)), T("f32", (3, 4))),
    ("repeat-fewer", lambda x: x.repeat(2), T("f32", (3, 4))),
    ("repeat-negative", lambda x: x.repeat(-1, 1), T("f32", (3, 4))),
    ("tile-negative", lambda x: x.tile(-1), T("f32", (3,))),
    ("diff-0d", torch.diff, T("f32", ())),
    ("diff-negative-order", lambda x: x.diff(n=-1), T("f32", (3,))),
    ("tensor_split-no-sections", lambda x: x.tensor_split(0), T("f32", (3,))),
    ("tensor_split-0d", lambda x: x.tensor_split(2), T("f32", ())),
    ("hsplit-uneven", lambda x: x.hsplit(2), T("f32", (2, 3))),
    ("vsplit-vector", lambda x: torch.vsplit(x, 2), T("f32", (4,))),
    ("dsplit-matrix", lambda x: x.dsplit([1]), T("f32", (2, 4))),
    ("flip-repeated", lambda x: x.flip(0, -2), T("f32", (3, 4))),
    ("fliplr-vector", torch.fliplr, T("f32", (3,))),
    ("flipud-0d", torch.flipud, T("f32", ())),
    ("roll-misaligned", lambda x: x.roll((1, 2), 0), T("f32", (3, 4))),
    ("roll-flat-pairs", lambda x: torch.roll(x, (1, 2)), T("f32", (3, 4))),
    ("roll-0d-dim", lambda x: x.roll(1, 0), T("f32", ())),
    ("rot90-one-dim", lambda x: x.rot90(1, [0]), T("f32", (3, 4))),
    ("rot90-same-dims", lambda x: x.rot90(1, [1, -1]), T("f32", (3, 4))),
    ("rot90-vector", lambda x: x.rot90(), T("f32", (3,))),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(REFUSED))
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)


REFUSED_CLEARLY = (
    ("take-int32", lambda x, i: x.take(i), (torch.rand(3), torch.tensor([0], dtype=torch.int32)), "int64 index"),
    ("tril_indices-float", lambda: torch.tril_indices(3, 3, dtype=torch.float32), (), "int32 or int64"),
)
# Eager reads the tensor's values; a trace has none.
OURS_ONLY = (
    ("tensor_split-tensor", lambda x, i: x.tensor_split(i), (torch.rand(5), torch.tensor([1, 3])), "tensor's values"),
)

test_refused_with_a_clear_error, test_eager_refuses_them_too = refusal_tests(REFUSED_CLEARLY, ours_only=OURS_ONLY)
