"""The selection ops: max and min along a dim, argmax, argmin, sort, argsort, topk,
searchsorted, bucketize, histc and nonzero_static; nonzero, argwhere, unique,
unique_consecutive and bincount, whose sizes the data decide; and their prims (argmax,
argmin, sort, topk, searchsorted, histc, nonzero, nonzero_flat, unique, unique_consecutive,
bincount), exercised through the cases' lowered traces. Results with `.values` / `.indices` keep
torch's named-tuple types."""

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
    entry,
    rows_by_id,
)
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable
from tracecli.passes.lower import lower

CASES: list[Case] = []
case = case_adder(CASES)

NAN = math.nan

# --- max/min along a dim, argmax/argmin, sort, argsort, topk ---------------------------------------------

for _name in ("max", "min"):
    _fn = getattr(torch, _name)
    case(_name, "fn", lambda x, f=_fn: f(x, 1), T("f32", (3, 4)))
    case(_name, "method-keepdim", lambda x, n=_name: getattr(x, n)(dim=-1, keepdim=True), X3)
    case(_name, "values", lambda x, n=_name: getattr(x, n)(0).values, T("f32", (3, 4)))
    case(_name, "indices", lambda x, n=_name: getattr(x, n)(0).indices, T("f32", (3, 4)))
    case(_name, "unpacked", lambda x, n=_name: getattr(x, n)(1)[1] * 2, T("i64", (3, 4)))
    for _dtype in ("i64", "bool", "f16", "bf16"):
        case(_name, "fn", lambda x, f=_fn: f(x, 0), T(_dtype, (4, 3)))
    case(_name, "0d", lambda x, f=_fn: f(x, 0), T("f32", ()))
    case(_name, "ties", lambda x, f=_fn: f(x, 0), L((3.0, 1.0, 3.0, 1.0), "f32"))
    case(_name, "nan", lambda x, f=_fn: f(x, -1), L(((1.0, NAN, 3.0, NAN), (2.0, 1.0, 0.0, 1.0)), "f32"))
    case(_name, "empty-kept", lambda x, f=_fn: f(x, 1), T("f32", (0, 3)))
for _name in ("argmax", "argmin"):
    _fn = getattr(torch, _name)
    case(_name, "fn-all", _fn, T("f32", (3, 4)))
    case(_name, "method-dim", lambda x, n=_name: getattr(x, n)(dim=1), X3)
    case(_name, "keepdim", lambda x, f=_fn: f(x, -1, keepdim=True), T("f32", (3, 4)))
    case(_name, "all-keepdim", lambda x, f=_fn: f(x, keepdim=True), T("f32", (3, 4)))
    for _dtype in ("i64", "f16", "bf16", "u8"):
        case(_name, "fn", lambda x, f=_fn: f(x, 0), T(_dtype, (4, 3)))
    case(_name, "0d", _fn, T("f32", ()))
    case(_name, "ties", _fn, L((1, 3, 3, 0, 0), "i64"))
    case(_name, "nan", _fn, L((1.0, NAN, 3.0), "f32"))

case("sort", "fn", torch.sort, T("f32", (3, 4)))
case("sort", "method-descending", lambda x: x.sort(dim=0, descending=True), X3)
case("sort", "positional", lambda x: torch.sort(x, 0, True), T("f32", (4, 3)))
case("sort", "stable", lambda x: torch.sort(x, stable=True), L((2, 1, 2, 1, 0, 2), "i64"))
case("sort", "stable-descending", lambda x: x.sort(stable=True, descending=True, dim=-1), L((2, 1, 2, 1, 0), "i64"))
case("sort", "values", lambda x: x.sort().values, T("bf16", (2, 5)))
case("sort", "bool", lambda x: torch.sort(x, stable=True), T("bool", (6,)))
case("sort", "0d", torch.sort, T("f32", ()))
case("argsort", "fn", torch.argsort, T("f32", (3, 4)))
case("argsort", "method", lambda x: x.argsort(dim=0, descending=True), T("f64", (4, 3)))
case("argsort", "stable", lambda x: torch.argsort(x, stable=True), L((3, 1, 3, 1), "i64"))
case("topk", "fn", lambda x: torch.topk(x, 2), T("f32", (3, 5)))
case("topk", "method-dim", lambda x: x.topk(1, dim=0), X3)
case("topk", "smallest", lambda x: x.topk(3, largest=False), T("f32", (2, 6)))
case("topk", "unsorted-values", lambda x: torch.topk(x, 2, sorted=False).values.sort().values, T("f32", (3, 5)))
case("topk", "indices", lambda x: x.topk(2, -1).indices, T("i64", (3, 5)))
case("topk", "all", lambda x: x.topk(4), T("f16", (2, 4)))
case("topk", "none", lambda x: x.topk(0), T("bf16", (2, 4)))
case("topk", "0d", lambda x: torch.topk(x, 1), T("f32", ()))
case("sort", "msort", torch.msort, T("f32", (4, 3)))
case("sort", "method-msort", lambda x: x.msort(), L((3, 1, 3, 1, 0), "i64"))
case("sort", "msort-0d", torch.msort, T("f32", ()))

# --- searchsorted, bucketize -----------------------------------------------------------------------------


def _sorted(fn):
    """fn with its first argument sorted along the last dimension first (random inputs
    are not sorted; the trace would still give torch's answer, but the case means the op)."""
    return lambda s, *args, **kwargs: fn(s.sort().values, *args, **kwargs)


for _dtype in ("f32", "i64", "f16", "bf16", "u8"):
    case(("searchsorted", "sort"), "fn", _sorted(torch.searchsorted), T(_dtype, (6,)), T(_dtype, (3, 4)))
case(("searchsorted", "sort"), "right", _sorted(lambda s, v: torch.searchsorted(s, v, right=True)), T("i64", (8,)),
     T("i64", (5,)))
case(("searchsorted", "sort"), "side-right", _sorted(lambda s, v: torch.searchsorted(s, v, side="right", right=False)),
     T("i64", (8,)), T("i64", (5,)))
case(("searchsorted", "sort"), "int32", _sorted(lambda s, v: torch.searchsorted(s, v, out_int32=True)),
     T("f32", (6,)), T("f32", (4,)))
case(("searchsorted", "sort"), "batched", _sorted(torch.searchsorted), T("f32", (2, 3, 5)), T("f32", (2, 3, 4)))
case(("searchsorted", "sort"), "number", _sorted(lambda s: torch.searchsorted(s, 0.5)), T("f32", (6,)))
case(("searchsorted", "sort"), "int-sequence-float-values", _sorted(torch.searchsorted), T("i64", (6,)),
     T("f32", (4,)))
case(("searchsorted", "sort"), "0d-values-keep-sequence-dtype", _sorted(torch.searchsorted), T("f32", (6,)),
     L(0.1, "f64"))
case(("searchsorted", "sort"), "mixed-ints", _sorted(torch.searchsorted), T("u8", (6,)), L((-1, 0, 3, 9), "i8"))
case(("searchsorted", "argsort"), "sorter", lambda s, v: torch.searchsorted(s, v, sorter=s.argsort()),
     T("f32", (6,)), T("f32", (3,)))
case("searchsorted", "unsorted-sequence", torch.searchsorted, L((3.0, 1.0, 2.0, 0.0, 5.0), "f32"),
     L((2.5, 0.5), "f32"))
case("searchsorted", "nan", torch.searchsorted, L((1.0, 2.0, NAN), "f32"), L((1.5, 5.0, NAN), "f32"))
case("searchsorted", "empty-sequence", torch.searchsorted, T("f32", (0,)), T("f32", (3,)))
case(("bucketize", "sort"), "fn", lambda v, b: torch.bucketize(v, b.sort().values), T("f32", (3, 4)), T("f32", (5,)))
case(("bucketize", "sort"), "right-int32", lambda v, b: torch.bucketize(v, b.sort().values, right=True,
                                                                          out_int32=True), T("i64", (6,)), T("i64", (4,)))
case("bucketize", "number", lambda b: torch.bucketize(1.5, b), L((0, 1, 2, 3), "i64"))
case("bucketize", "bool-values", lambda v, b: torch.bucketize(v, b), T("bool", (5,)), L((0, 1), "i64"))
for _dtype in ("f32", "f64", "f16", "bf16"):
    case("histc", "fn", lambda x: torch.histc(x, 5, min=-2, max=2), T(_dtype, (3, 4)))
case("histc", "own-range", lambda x: x.histc(bins=7), T("f32", (4, 5)))
case("histc", "edges-and-nan", lambda x: torch.histc(x, 4, 0, 2), L((0.0, 0.5, 1.0, 2.0, 2.5, -0.1, NAN), "f32"))
case("histc", "0d", lambda x: torch.histc(x, 3), T("f32", ()))
case("histc", "empty", lambda x: torch.histc(x, 3, 0, 1), T("f32", (0,)))
for _dtype in ("f32", "i64", "bool", "c64"):
    case("nonzero_static", "fn", lambda x: torch.nonzero_static(x, size=5), T(_dtype, (3, 4)))
case("nonzero_static", "padded", lambda x: x.nonzero_static(size=9, fill_value=7), L(((0, 2, 0), (1, 0, 0)), "i64"))
case("nonzero_static", "vector", lambda x: torch.nonzero_static(x, size=3), L((0.0, -0.0, NAN, 1.0), "f32"))
case("nonzero_static", "3d", lambda x: torch.nonzero_static(x, size=8), T("i64", (2, 3, 4), "small"))
case("nonzero_static", "none", lambda x: torch.nonzero_static(x, size=0), T("f32", (3, 4)))
case("nonzero_static", "0d", lambda x: torch.nonzero_static(x, size=2), T("f32", ()))
case("nonzero_static", "empty", lambda x: torch.nonzero_static(x, size=2, fill_value=0), T("f32", (2, 0)))

# --- the indices of the nonzero elements, as many as the data has (an unbacked size) -------------

for _dtype in ("f32", "i64", "bool"):
    case("nonzero", _dtype, lambda x: torch.nonzero(x), T(_dtype, (3, 4)))
case("nonzero", "method-3d", lambda x: x.nonzero(), T("i64", (2, 3, 4), "small"))
case("nonzero", "as_tuple", lambda x: torch.nonzero(x > 0, as_tuple=True), T("f32", (3, 4)))
case("nonzero", "as_tuple-0d", lambda x: x.nonzero(as_tuple=True), T("f32", ()))
case("nonzero", "where-one-argument", lambda x: torch.where(x > 0.5), T("f32", (2, 3, 4)))
case("nonzero", "vector-signed-zero-nan", lambda x: torch.nonzero(x), L((0.0, -0.0, NAN, 1.0), "f32"))
case("nonzero", "empty", lambda x: torch.nonzero(x), T("f32", (2, 0)))
case(("nonzero", "mul"), "later-ops", lambda x: x.nonzero(as_tuple=True)[0] * 2, T("f32", (3, 4)))
case("argwhere", "fn", lambda x: torch.argwhere(x), T("f32", (3, 4)))
case("argwhere", "method", lambda x: x.argwhere(), T("i64", (5,), "small"))
case(("argsort", "take_along_dim"), "sorted", lambda x: x.take_along_dim(x.argsort(dim=1), dim=1), T("f32", (3, 5)))

# --- more sizes the data decide: unique, unique_consecutive, bincount ----------------------------
# Their traces hold a size `u0`, as nonzero's do; check_case also runs them on new draws of the
# inputs, which select other counts, through the same trace.

case("nonzero", "0d", torch.nonzero, L(2.0, "f32"))
case("nonzero", "0d-as_tuple-zero", lambda x: x.nonzero(as_tuple=True), L(0, "i64"))
case(("nonzero", "mul"), "rows-used", lambda x: x.nonzero() * 2 + 1, T("bool", (5,)))
for _dtype in ("i64", "f32", "bool"):
    case("unique", "fn", torch.unique, T(_dtype, (12,), "small"))
case("unique", "method-2d", lambda x: x.unique(), T("i64", (3, 4), "small"))
case("unique", "inverse", lambda x: torch.unique(x, return_inverse=True), T("i64", (3, 4), "small"))
case("unique", "counts", lambda x: x.unique(return_counts=True), T("i64", (10,), "small"))
case("unique", "all", lambda x: torch.unique(x, sorted=True, return_inverse=True, return_counts=True),
     T("i64", (2, 5), "small"))
case("unique", "unsorted", lambda x: torch.unique(x, sorted=False, return_counts=True), T("i64", (9,), "small"))
case("unique", "dim0", lambda x: torch.unique(x, dim=0, return_inverse=True, return_counts=True),
     T("i64", (8, 2), "small"))
case("unique", "dim-negative", lambda x: x.unique(dim=-1), T("bool", (2, 6)))
case("unique", "nan", lambda x: x.unique(return_counts=True), L((NAN, 1.0, NAN, 1.0, -0.0, 0.0), "f32"))
case("unique", "0d", lambda x: x.unique(return_inverse=True, return_counts=True), L(3, "i64"))
case("unique", "empty", lambda x: torch.unique(x, return_inverse=True), T("f32", (0, 2)))
case(("unique", "sum"), "count-used", lambda x: x.unique().sum() + x.unique().float().mean(), T("i64", (8,), "small"))
case("unique_consecutive", "fn", torch.unique_consecutive, T("i64", (12,), "small"))
case("unique_consecutive", "all", lambda x: x.unique_consecutive(return_inverse=True, return_counts=True),
     T("bool", (3, 4)))
case("unique_consecutive", "runs", lambda x: torch.unique_consecutive(x, return_counts=True),
     L((1, 1, 2, 2, 2, 1, 3, 3), "i64"))
case("unique_consecutive", "dim1", lambda x: torch.unique_consecutive(x, return_inverse=True, dim=1),
     L(((1, 1, 2, 2), (0, 0, 1, 0)), "i64"))
case("bincount", "fn", torch.bincount, T("i64", (10,), "small"))
case("bincount", "method-minlength", lambda x: x.bincount(minlength=6), T("i64", (10,), "small"))
case("bincount", "weights", lambda x, w: torch.bincount(x, w), T("i64", (10,), "small"), T("f32", (10,)))
case("bincount", "weights-f64", lambda x, w: x.bincount(weights=w), T("u8", (7,), "small"), T("f64", (7,)))
case("bincount", "weights-int", lambda x, w: x.bincount(w, 2), T("i32", (6,), "small"), T("i64", (6,)))
case("bincount", "empty", lambda x: torch.bincount(x, minlength=3), T("i64", (0,)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


def test_named_tuples_reach_user_code():
    """`.values` / `.indices` work on traced results because they have torch's types."""
    expected = {"max": torch.return_types.max, "min": torch.return_types.min, "sort": torch.return_types.sort,
                "topk": torch.return_types.topk}

    def fn(x):
        for name, result in (("max", x.max(1)), ("min", torch.min(x, 0)), ("sort", x.sort()), ("topk", x.topk(2))):
            assert type(result) is expected[name], (name, type(result))
        return x.max(1).values, x.sort().indices

    trace_callable(fn, (torch.zeros(3, 4),))


def test_max_and_min_of_all_elements_are_their_own_ops_not_amax_and_amin():
    """torch.max(x) and x.min() reduce every element with a kernel of their own: where zeros
    of both signs tie it returns another one than amax, and Python formatting it reads
    the sign. Lowered, they stay prims of their own."""
    program = trace_callable(lambda x: (torch.max(x), x.min(), x.amax()), (torch.zeros(3, 4),))
    assert [b.symbol.qualname for b in program.trace.bsyms] == ["ltorch.max_all", "ltorch.min_all", "ltorch.amax"]
    lowered = lower(program.trace).trace
    assert [b.symbol.qualname for b in lowered.bsyms] == ["prims.max_all", "prims.min_all", "prims.amax"]


REFUSED = (
    ("max-dim", lambda x: x.max(2), T("f32", (3, 4))),
    ("max-empty", lambda x: x.max(0), T("f32", (0, 4))),
    ("argmax-bool", lambda x: x.argmax(), T("bool", (3,))),
    ("argmin-empty", lambda x: x.argmin(), T("f32", (0,))),
    ("topk-k", lambda x: x.topk(5), T("f32", (3, 4))),
    ("topk-bool", lambda x: x.topk(1), T("bool", (3, 4))),
    ("sort-complex", lambda x: x.sort(), T("c64", (3,))),
    ("searchsorted-bool", lambda x: torch.searchsorted(x, x), T("bool", (3,))),
    ("searchsorted-0d-sequence", lambda x: torch.searchsorted(x, x), T("f32", ())),
    ("searchsorted-batch-mismatch", lambda x: torch.searchsorted(x, x[:1]), T("f32", (2, 3))),
    ("searchsorted-number-into-batched", lambda x: torch.searchsorted(x, 1.0), T("f32", (2, 3))),
    ("searchsorted-side", lambda x: torch.searchsorted(x, x, side="middle"), T("f32", (3,))),
    ("searchsorted-side-contradicts", lambda x: torch.searchsorted(x, x, side="left", right=True), T("f32", (3,))),
    ("searchsorted-sorter-i32", lambda x: torch.searchsorted(x, x, sorter=x.argsort().int()), T("f32", (3,))),
    ("searchsorted-sorter-shape", lambda x: torch.searchsorted(x, x, sorter=x.argsort()[:2]), T("f32", (3,))),
    ("bucketize-2d-boundaries", lambda x: torch.bucketize(x, x), T("f32", (2, 3))),
    ("histc-int", lambda x: torch.histc(x, 4), T("i64", (3,))),
    ("histc-no-bins", lambda x: torch.histc(x, 0), T("f32", (3,))),
    ("histc-min-above-max", lambda x: torch.histc(x, 4, min=3, max=1), T("f32", (3,))),
    ("histc-infinite-range", lambda x: torch.histc(x, 4, min=0, max=math.inf), T("f32", (3,))),
    ("nonzero_static-negative-size", lambda x: torch.nonzero_static(x, size=-1), T("f32", (3,))),
    ("unique-complex", lambda x: x.unique(), T("c64", (3,))),
    ("unique-dim-out-of-range", lambda x: x.unique(dim=2), T("i64", (3, 4))),
    ("unique_consecutive-dim-of-0d", lambda x: x.unique_consecutive(dim=0), T("i64", ())),
    ("bincount-2d", lambda x: torch.bincount(x), T("i64", (2, 3), "small")),
    ("bincount-float", lambda x: torch.bincount(x), T("f32", (3,))),
    ("bincount-bool", lambda x: torch.bincount(x), T("bool", (3,))),
    ("bincount-weights-shape", lambda x: torch.bincount(x, torch.ones(2)), T("i64", (3,), "small")),
    ("bincount-negative-minlength", lambda x: torch.bincount(x, minlength=-1), T("i64", (3,), "small")),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(REFUSED))
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)


def test_a_sorter_out_of_range_raises_when_the_trace_runs():
    fn = entry(lambda s, k: torch.searchsorted(s, torch.tensor([1.5]), sorter=k))
    s, sorter = torch.tensor([3.0, 1.0, 2.0]), torch.tensor([1, 3, 0])
    with pytest.raises(RuntimeError):
        fn(s, sorter)
    program = trace_callable(fn, (s, sorter), name="fn")
    for trace in (program.trace, lower(program.trace).trace):
        with pytest.raises(RuntimeError):
            compile_trace(trace)(s, sorter)


def test_histc_of_values_with_no_finite_range_raises_when_the_trace_runs():
    fn = entry(lambda x: torch.histc(x, 4))
    x = torch.tensor([1.0, math.inf])
    with pytest.raises(RuntimeError):
        fn(x)
    program = trace_callable(fn, (x,), name="fn")
    for trace in (program.trace, lower(program.trace).trace):
        with pytest.raises(RuntimeError):
            compile_trace(trace)(x)
