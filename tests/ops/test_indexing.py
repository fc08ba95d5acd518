"""The indexing ops: getitem (ints, slices, None, Ellipsis, index tensors and lists,
boolean masks), index_select, gather, take_along_dim, take, one_hot, masked_fill,
masked_select and narrow, and the prims they lower to (take, gather, one_hot): exercised
through the cases' lowered traces, take's meta rule also directly. Mask indexing,
masked_select and one_hot without num_classes give sizes the data decide (`u0`): their
cases also run on new draws of the inputs through the same trace. Index values out of
range and fill values out of a dtype's range raise when the trace runs, as in eager.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from tests.ops.harness import (
    DT,
    X3,
    Case,
    L,
    T,
    case_adder,
    check_case,
    check_refused,
    check_stays_torch_call,
    rows_by_id,
    tensor_value,
)
from tracecli.core import dtypes
from tracecli.core.errors import TracingError
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable
from tracecli.ops import prims
from tracecli.ops.promotion import ShapeError
from tracecli.passes.lower import lower

CASES: list[Case] = []
case = case_adder(CASES)

NAN, INF = math.nan, math.inf

# --- getitem: ints, slices, None, Ellipsis ------------------------------------------------

BASIC = {
    "int": lambda x: x[1],
    "negative-int": lambda x: x[-1],
    "ints": lambda x: x[1, -2],
    "all-ints": lambda x: x[1, 2, 3],
    "slice": lambda x: x[:, 1:],
    "slice-step": lambda x: x[:, ::2],
    "slice-negative-bounds": lambda x: x[..., -3:-1],
    "slice-step-offset": lambda x: x[1:, :, 1::2],
    "slice-past-end": lambda x: x[:, 2:10],
    "slice-before-start": lambda x: x[-10:1],
    "slice-empty": lambda x: x[:, 3:1],
    "none": lambda x: x[None],
    "nones": lambda x: x[:, None, :, None],
    "ellipsis-int": lambda x: x[..., 0],
    "ellipsis-none": lambda x: x[..., None],
    "int-ellipsis-int": lambda x: x[0, ..., 1],
    "int-none-slice": lambda x: x[1, None, 1:3],
    "half": lambda x: x[..., : x.shape[-1] // 2],
    "second-half": lambda x: x[..., x.shape[-1] // 2 :],
    "last-token": lambda x: x[:, -1, :],
    "mask-window": lambda x: x[None, None, :, :3],
}
for _form, _fn in BASIC.items():
    case("getitem", _form, _fn, X3)
for _dtype in ("i64", "bool", "bf16", "f16", "f64"):
    case("getitem", "slice-int", lambda x: x[1:, 0], T(_dtype, (3, 4)))
case("getitem", "0d-none", lambda x: x[None], T("f32", ()))
case("getitem", "0d-nones-ellipsis", lambda x: x[None, ..., None], T("i64", ()))
case("getitem", "1d-step", lambda x: x[1::3], T("f32", (10,)))
case("getitem", "empty-dim", lambda x: x[:, 1], T("f32", (0, 3)))

# --- getitem: integer index tensors and lists (advanced indexing) ----------------------------

ADVANCED = (
    ("tensor", lambda x, i: x[i], T("f32", (4, 3)), T("i64", (3,), "small")),
    ("tensor-2d", lambda x, i: x[i], T("f32", (5, 3)), T("i64", (2, 2), "small")),
    ("tensor-negative", lambda x, i: x[i], T("f32", (5,)), L((-1, 0, -5, 4, -2), "i64")),
    ("tensor-i32", lambda x, i: x[i], T("f32", (4, 3)), L((3, 0, -1), "i32")),
    ("tensor-0d", lambda x, i: x[i], T("f32", (4, 3)), L(2, "i64")),
    ("after-slice", lambda x, i: x[:, i], T("f32", (2, 4, 5)), T("i64", (3,), "small")),
    ("last-dim", lambda x, i: x[..., i], T("bf16", (2, 3, 4)), T("i64", (2, 2), "small")),
    ("tensor-int", lambda x, i: x[i, 1], T("i64", (4, 3)), T("i64", (2,), "small")),
    ("int-slice-tensor", lambda x, i: x[0, :, i], T("f32", (3, 4, 4)), T("i64", (2,), "small")),
    ("tensor-none", lambda x, i: x[i, None], T("f32", (4, 3)), T("i64", (2,), "small")),
    ("tensor-step", lambda x, i: x[i, ::2], T("f32", (4, 5)), T("i64", (3,), "small")),
    ("bool-data", lambda x, i: x[i], T("bool", (4, 3)), T("i64", (5,), "small")),
)
for _form, _fn, _x, _i in ADVANCED:
    case("getitem", _form, _fn, _x, _i)
TWO_INDICES = (
    ("adjacent", lambda x, i, j: x[i, j], T("f32", (4, 4, 3)), T("i64", (2,), "small"), T("i64", (2,), "small")),
    ("broadcast", lambda x, i, j: x[:, i, j], T("f32", (2, 4, 4)), T("i64", (3, 1), "small"), T("i64", (2,), "small")),
    ("apart", lambda x, i, j: x[i, :, j], T("f32", (4, 3, 4)), T("i64", (2,), "small"), T("i64", (2,), "small")),
    ("apart-by-none", lambda x, i, j: x[i, None, j], T("f32", (4, 4, 3)), T("i64", (2,), "small"),
     L((-1, 0), "i64")),
    ("mixed-dtypes", lambda x, i, j: x[i, j], T("f64", (4, 5)), L((0, -1, 3), "i32"), L((4, -5, 0), "i64")),
)
for _form, _fn, _x, _i, _j in TWO_INDICES:
    case("getitem", _form, _fn, _x, _i, _j)
case("getitem", "three", lambda x, i: x[i, i, i], T("f32", (4, 4, 4)), T("i64", (3,), "small"))
case("getitem", "list", lambda x: x[[0, 2]], T("f32", (3, 4)))
case("getitem", "list-negative", lambda x: x[:, [-1, 0, -1]], T("i64", (3, 4)))
case("getitem", "list-2d", lambda x: x[[[0], [1]], [0, 2]], T("f32", (2, 3)))
case("getitem", "list-empty", lambda x: x[[]], T("f32", (3, 4)))

# --- getitem: boolean masks, as many elements as the mask has true ones ----------------------------

case("getitem", "mask-rows", lambda x, m: x[m], T("f32", (5, 3)), T("bool", (5,)))
case(("getitem", "sum"), "mask-of-itself-summed", lambda x: x[x > 0].sum(), T("f32", (4, 5)))
case(("getitem", "mean"), "mask-of-itself-mean", lambda x: x[x > -2.5].mean(), T("f32", (4, 5)))

# --- index_select, gather, take_along_dim ---------------------------------------------------------

for _dtype in ("f32", "i64", "bool", "bf16"):
    case("index_select", "fn", lambda x, i: torch.index_select(x, 0, i), T(_dtype, (4, 3)), T("i64", (5,), "small"))
case("index_select", "method-negative-dim", lambda x, i: x.index_select(-1, i), X3, T("i64", (2,), "small"))
case("index_select", "0d-index", lambda x, i: x.index_select(1, i), X3, L(2, "i64"))
case("index_select", "i32", lambda x, i: torch.index_select(x, dim=1, index=i), X3, L((1, 0), "i32"))
case("index_select", "0d-input", lambda x, i: x.index_select(0, i), T("f32", ()), L((0,), "i64"))
for _dtype in ("f32", "i64", "f16"):
    case("gather", "fn", lambda x, i: torch.gather(x, 1, i), T(_dtype, (3, 4)), T("i64", (3, 5), "small"))
case("gather", "method-dim0", lambda x, i: x.gather(0, i), T("f32", (4, 3)), T("i64", (2, 3), "small"))
case("gather", "smaller-index", lambda x, i: torch.gather(x, -1, i), X3, T("i64", (1, 2, 2), "small"))
case("gather", "kw", lambda x, i: torch.gather(x, dim=1, index=i), T("f32", (2, 4)), L(((3, 0), (1, 1)), "i32"))
case("gather", "0d", lambda x, i: torch.gather(x, 0, i), T("f32", ()), L(0, "i64"))
case("take_along_dim", "fn", lambda x, i: torch.take_along_dim(x, i, dim=1), T("f32", (3, 4)),
     T("i64", (3, 2), "small"))
case("take_along_dim", "broadcast", lambda x, i: torch.take_along_dim(x, i, 1), T("f32", (1, 4)),
     T("i64", (3, 2), "small"))
case("take_along_dim", "flat", lambda x, i: torch.take_along_dim(x, i), T("f32", (2, 3)), T("i64", (5,), "small"))
case("take_along_dim", "method", lambda x, i: x.take_along_dim(i, dim=-1), T("i64", (2, 4)),
     T("i64", (2, 4), "small"))
case("take_along_dim", "modulo", lambda x, i: x.take_along_dim(i, 1), T("f32", (2, 5)),
     L(((-1, 0, 12, -12), (5, -5, 100, -101)), "i64"))
case("take_along_dim", "0d-flat", lambda x, i: torch.take_along_dim(x, i), T("f32", ()), L(0, "i64"))
case("gather", "0d-input-vector-index", lambda x, i: torch.gather(x, 0, i), T("f32", ()), L((0, 0, 0), "i64"))
case("gather", "vector-input-0d-index", lambda x, i: x.gather(-1, i), T("i64", (5,)), L(3, "i64"))
case("gather", "empty-index", lambda x, i: x.gather(0, i), T("f32", (5,)), T("u8", (2, 0)))

# --- take, one_hot ------------------------------------------------------------------------------------

for _dtype in ("f32", "i64", "bool", "bf16"):
    case("take", "fn", lambda x, i: torch.take(x, i), T(_dtype, (3, 4)), T("i64", (2, 3), "small"))
case("take", "method-negative", lambda x, i: x.take(i), T("f32", (2, 3)), L((-1, -6, 5, 0), "i64"))
case("take", "0d-index", lambda x, i: x.take(i), T("f32", (2, 3)), L(4, "i64"))
case("take", "0d-input", lambda x, i: torch.take(x, i), T("bool", ()), L((0, 0, -1), "i64"))
case("take", "0d-input", lambda x, i: x.take(i), T("f32", ()), L((0, -1), "i64"))
case("take", "empty", lambda x, i: x.take(i), T("f32", (0,)), T("i64", (0,)))
case("one_hot", "fn", lambda x: F.one_hot(x, 4), T("i64", (5,), "small"))
case("one_hot", "kw-2d", lambda x: F.one_hot(x, num_classes=6), T("i64", (2, 3), "small"))
case("one_hot", "0d", lambda x: F.one_hot(x, 5), L(2, "i64"))
case("one_hot", "empty", lambda x: F.one_hot(x, 3), T("i64", (0,)))
case("one_hot", "classes-from-the-data", F.one_hot, T("i64", (5,), "small"))
case("one_hot", "classes-from-the-data-2d", lambda x: F.one_hot(x, num_classes=-1), T("i64", (2, 3), "small"))
case("one_hot", "classes-from-the-data-0d", lambda x: F.one_hot(x), L(2, "i64"))

# --- masked_select ------------------------------------------------------------------------------------

case("masked_select", "fn", lambda x: torch.masked_select(x, x > 0), T("f32", (3, 4)))
case("masked_select", "method-broadcast-mask", lambda x, m: x.masked_select(m), T("f32", (3, 4)), T("bool", (4,)))
case("masked_select", "mask-wider", lambda x, m: torch.masked_select(x, m), T("i64", (4,)), T("bool", (2, 4)))
case("masked_select", "0d", lambda x, m: x.masked_select(m), T("f32", ()), T("bool", ()))
case("masked_select", "empty", lambda x, m: x.masked_select(m), T("f32", (0, 3)), T("bool", (0, 3)))

# --- masked_fill ------------------------------------------------------------------------------------

case("masked_fill", "method-neg-inf", lambda x, m: x.masked_fill(m, -INF), T("f32", (3, 4)), T("bool", (3, 4)))
case("masked_fill", "fn", lambda x, m: torch.masked_fill(x, m, 0.0), T("f32", (3, 4)), T("bool", (3, 4)))
case("masked_fill", "broadcast-mask", lambda x, m: x.masked_fill(m, 1.5), X3, T("bool", (3, 1)))
case("masked_fill", "mask-wider", lambda x, m: x.masked_fill(m, 2.0), T("f32", (3, 4)), T("bool", (2, 3, 4)))
case("masked_fill", "0d-value", lambda x, m, v: x.masked_fill(m, v), T("f32", (3, 4)), T("bool", (4,)), T("f32", ()))
case("masked_fill", "0d-value-f64", lambda x, m, v: x.masked_fill(m, v), T("f16", (3, 4)), T("bool", (3, 4)),
     T("f64", ()))
case("masked_fill", "0d-value-int", lambda x, m, v: x.masked_fill(m, v), T("f32", (3, 4)), T("bool", (3, 4)),
     T("i64", ()))
case("masked_fill", "int-float-value", lambda x, m: x.masked_fill(m, 2.7), T("i64", (3, 4)), T("bool", (3, 4)))
case("masked_fill", "bool", lambda x, m: x.masked_fill(m, True), T("bool", (3, 4)), T("bool", (3, 4)))
case("masked_fill", "int-into-float", lambda x, m: x.masked_fill(m, 3), T("f32", (3, 4)), T("bool", (3, 4)))
for _dtype in ("f16", "bf16", "f64"):
    _min = torch.finfo(DT[_dtype]).min
    case("masked_fill", "finfo-min", lambda x, m, v=_min: x.masked_fill(m, v), T(_dtype, (3, 4)), T("bool", (3, 4)))
case("masked_fill", "0d-value-checked", lambda x, m, v: x.masked_fill(m, v), T("f16", (3, 4)), T("bool", (3, 4)),
     L(-60000.0, "f32"))
case("masked_fill", "0d-value-inf", lambda x, m, v: x.masked_fill(m, v), T("bf16", (3, 4)), T("bool", (3, 4)),
     L(-INF, "f64"))
case("masked_fill", "0d-value-int-range", lambda x, m, v: x.masked_fill(m, v), T("u8", (3, 4)), T("bool", (3, 4)),
     L(-3, "i64"))
case("masked_fill", "0d-value-float-into-int", lambda x, m, v: x.masked_fill(m, v), T("i8", (3, 4)),
     T("bool", (3, 4)), L(-2.5, "f32"))
case("masked_fill", "negative-into-unsigned", lambda x, m: x.masked_fill(m, -1), T("u8", (3, 4)), T("bool", (3, 4)))
case("masked_fill", "nan-input", lambda x, m: x.masked_fill(m, 0.0), L((NAN, 1.0, NAN, INF), "f32"),
     L((True, False, False, True), "bool"))

# --- narrow ------------------------------------------------------------------------------------------

case("narrow", "method", lambda x: x.narrow(0, 1, 2), T("f32", (4, 3)))
case("narrow", "fn-negative", lambda x: torch.narrow(x, -1, -3, 2), X3)
case("narrow", "empty", lambda x: x.narrow(1, 2, 0), T("i64", (2, 3)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


def test_whole_slices_record_nothing():
    program = trace_callable(lambda x: (x[:], x[...], x[:, ...], x.split(9), x.narrow(0, 0, 3)), (torch.zeros(3, 4),))
    assert program.trace.bsyms == ()
    assert [v.name for v in program.trace.iter_outputs()] == ["x"] * 5


def test_take_meta_matches_impl():
    """take: the embedding lookup, rows of a table picked by an index tensor."""
    table = torch.rand(2, 3)
    got = prims.take.impl(table, torch.tensor([[0, 1], [1, 1], [0, 0]]), 0)
    want = prims.take.meta(tensor_value((2, 3)), tensor_value((3, 2), dtypes.int64), 0)
    assert want.shape == tuple(got.shape) == (3, 2, 3)
    assert torch.equal(got[1, 0], table[1])
    with pytest.raises(ShapeError):
        prims.take.meta(tensor_value((2, 3)), tensor_value((3,)), 0)  # float indices


# --- calls eager torch refuses are refused while tracing ------------------------------------------------------------

REFUSED = (
    ("int-out-of-range", lambda x: x[3], T("f32", (3, 4))),
    ("negative-out-of-range", lambda x: x[:, -5], T("f32", (3, 4))),
    ("negative-step", lambda x: x[::-1], T("f32", (3, 4))),
    ("too-many-indices", lambda x: x[0, 0, 0], T("f32", (3, 4))),
    ("float-index", lambda x: x[torch.zeros(2)], T("f32", (3, 4))),
    ("0d-int-index", lambda x: x[0], T("f32", ())),
    ("ragged-list", lambda x: x[[[0, 1], [0]], 0], T("f32", (3, 4))),
    ("index_select-float-index", lambda x: x.index_select(0, torch.zeros(1)), T("f32", (3, 4))),
    ("index_select-2d-index", lambda x: x.index_select(0, torch.zeros(1, 1, dtype=torch.int64)), T("f32", (3, 4))),
    ("gather-rank", lambda x: x.gather(0, torch.zeros(2, dtype=torch.int64)), T("f32", (3, 4))),
    ("gather-index-larger", lambda x: x.gather(0, torch.zeros(2, 5, dtype=torch.int64)), T("f32", (3, 4))),
    ("take_along_dim-i32", lambda x: x.take_along_dim(torch.zeros(1, 1, dtype=torch.int32), 1), T("f32", (3, 4))),
    ("take_along_dim-rank", lambda x: x.take_along_dim(torch.zeros(1, dtype=torch.int64), 1), T("f32", (3, 4))),
    ("masked_fill-int-mask", lambda x: x.masked_fill(torch.ones(4, dtype=torch.int64), 0.0), T("f32", (3, 4))),
    ("masked_fill-value-dims", lambda x: x.masked_fill(x > 0, torch.zeros(1)), T("f32", (3, 4))),
    ("masked_fill-inf-into-int", lambda x: x.masked_fill(x > 0, -INF), T("i64", (3, 4))),
    ("masked_fill-complex-into-float", lambda x: x.masked_fill(x > 0, 1j), T("f32", (3, 4))),
    ("masked_fill-overflow-f16", lambda x: x.masked_fill(x > 0, -1e10), T("f16", (3, 4))),
    ("masked_fill-overflow-f32", lambda x: x.masked_fill(x > 0, 1e39), T("f32", (3, 4))),
    ("masked_fill-past-max-f16", lambda x: x.masked_fill(x > 0, 65519.0), T("f16", (3, 4))),
    ("masked_fill-overflow-i8", lambda x: x.masked_fill(x > 0, 300), T("i8", (3, 4))),
    ("masked_fill-float-past-i8", lambda x: x.masked_fill(x > 0, 127.5), T("i8", (3, 4))),
    ("masked_fill-negative-past-u8", lambda x: x.masked_fill(x > 0, -256), T("u8", (3, 4))),
    ("masked_fill-negative-float-u8", lambda x: x.masked_fill(x > 0, -1.0), T("u8", (3, 4))),
    ("masked_fill-nan-into-int", lambda x: x.masked_fill(x > 0, math.nan), T("i64", (3, 4))),
    ("take_along_dim-0d-dim", lambda x: x.take_along_dim(torch.tensor(0), 0), T("f32", ())),
    ("take-i32", lambda x: x.take(torch.zeros(1, dtype=torch.int32)), T("f32", (3, 4))),
    ("take-complex32", lambda x: x.to(torch.complex32).take(torch.zeros(1, dtype=torch.int64)), T("f32", (3, 4))),
    ("one_hot-i32", lambda x: F.one_hot(x.int(), 3), T("i64", (3,), "small")),
    ("one_hot-zero-classes", lambda x: F.one_hot(x, 0), T("i64", (3,), "small")),
    ("one_hot-negative-classes", lambda x: F.one_hot(x, -2), T("i64", (3,), "small")),
    ("masked_select-uint8-mask", lambda x: x.masked_select(x.to(torch.uint8)), T("i64", (3,), "small")),
    ("masked_select-shapes", lambda x: x.masked_select(torch.ones(2, dtype=torch.bool)), T("f32", (3,))),
    ("narrow-past-end", lambda x: x.narrow(0, 2, 2), T("f32", (3, 4))),
    ("narrow-0d", lambda x: x.narrow(0, 0, 1), T("f32", ())),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(REFUSED))
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)


# Boolean masks: as many elements as the mask has true ones, an unbacked size (u0).
case("getitem", "bool-mask", lambda x, m: x[m], T("f32", (3, 3)), T("bool", (3, 3)))
case("getitem", "bool-mask-after-slice", lambda x, m: x[:, m[0]], T("f32", (3, 3)), T("bool", (3, 3)))
case("getitem", "uint8-mask", lambda x, m: x[m.to(torch.uint8)], T("f32", (3, 3)), T("bool", (3, 3)))
case("getitem", "bool-mask-rows-then-int", lambda x, m: x[m[:, 0], 1], T("f32", (3, 4)), T("bool", (3, 4)))
case("getitem", "bool-mask-after-ellipsis", lambda x, m: x[..., m[0, 0]], T("f32", (2, 3, 4)), T("bool", (2, 3, 4)))


def test_a_mask_that_does_not_fit_is_refused_as_eager_refuses_it():
    with pytest.raises(TracingError, match="the shape of the mask"):
        trace_callable(lambda x, m: x[m], (torch.randn(3, 3), torch.rand(2, 3) > 0.5), name="fn")


def test_a_boolean_list_index_is_refused_with_one_clear_error():
    x = torch.randn(3, 3)
    with pytest.raises(TracingError) as info:
        trace_callable(lambda x: x[[True, False, True]], (x,), name="fn")
    error = info.value
    assert "mask" in error.message and "depends on" in error.message and "torch.where" in error.message
    assert error.file and error.file.endswith("test_indexing.py") and error.line


def test_tensor_slice_bound_is_refused_clearly():
    with pytest.raises(TracingError, match="slice bound is a tensor"):
        trace_callable(lambda x, n: x[:n], (torch.zeros(4), torch.tensor(2)), name="fn")


# --- forms the adapters leave to torch ------------------------------------------------------------------------------

OPAQUE_FORMS = (
    ("getitem-python-bool", lambda a: a[True], T("f32", (3, 4)), "torch.Tensor.__getitem__"),
    ("getitem-two-ellipses", lambda a: a[..., 0, ...], T("f32", (2, 3, 4)), "torch.Tensor.__getitem__"),
    ("getitem-list-of-lists", lambda a: a[[[0], [1]]], T("f32", (2, 3, 4)), "torch.Tensor.__getitem__"),
)


@pytest.mark.parametrize(("fn", "arg", "opaque"), rows_by_id(OPAQUE_FORMS))
def test_unmodelled_forms_stay_torch_calls(fn, arg, opaque):
    check_stays_torch_call(fn, (arg,), opaque)


def test_index_put_meta_matches_impl():
    x, index = torch.rand(4, 3), torch.tensor([0, 2])
    got = prims.index_put.impl(x, (None, index), torch.tensor(1.0))
    assert torch.equal(got[:, [0, 2]], torch.ones(4, 2)) and torch.equal(got[:, 1], x[:, 1])
    want = prims.index_put.meta(tensor_value((4, 3)), (None, tensor_value((2,), dtypes.int64, "i")),
                                tensor_value((), name="v"))
    assert want.shape == tuple(got.shape) and want.dtype == dtypes.float32
    mask = prims.index_put.meta(tensor_value((4, 3)), (tensor_value((4, 3), dtypes.bool8, "m"),),
                                tensor_value((), name="v"))
    assert mask.shape == (4, 3)
    with pytest.raises(ShapeError, match="too many indices"):
        prims.index_put.meta(tensor_value((4,)), (None, None), tensor_value((), name="v"))
    with pytest.raises(ShapeError, match="own dtype"):
        prims.index_put.meta(tensor_value((4,)), (None,), tensor_value((), dtypes.float64, "v"))


RUN_TIME_ERRORS = (
    ("one_hot-too-large", lambda x: F.one_hot(x, 3), torch.tensor([0, 3])),
    ("one_hot-negative", lambda x: F.one_hot(x, 3), torch.tensor([-1, 0])),
    ("one_hot-classes-of-nothing", lambda x: F.one_hot(x), torch.zeros(0, dtype=torch.int64)),
    ("one_hot-classes-of-negative", lambda x: F.one_hot(x), torch.tensor([-1, 2])),
    ("take-out-of-range", lambda x: torch.arange(6.0).take(x), torch.tensor([6])),
    ("take-negative-out-of-range", lambda x: torch.arange(6.0).take(x), torch.tensor([-7])),
    ("take-from-empty", lambda x: torch.zeros(0).take(x), torch.tensor([0])),
    ("take_along_dim-flat-negative", lambda x: torch.arange(6.0).take_along_dim(x), torch.tensor([-1])),
    ("take_along_dim-empty-dim", lambda x: torch.zeros(0, 2).take_along_dim(x, 0), torch.zeros(1, 2, dtype=torch.int64)),
    ("gather-out-of-range", lambda x: torch.zeros(3).gather(0, x), torch.tensor([3])),
    ("gather-0d-out-of-range", lambda x: torch.tensor(1.0).gather(0, x), torch.tensor([0, 1])),
    ("masked_fill-0d-overflow", lambda x: torch.zeros(2, dtype=torch.float16).masked_fill(x > -10, x), torch.tensor(1e5)),
    ("masked_fill-0d-nan-into-int", lambda x: torch.zeros(2, dtype=torch.int64).masked_fill(x == x, x),
     torch.tensor(math.nan)),
    ("masked_fill-0d-past-int8", lambda x: torch.zeros(2, dtype=torch.int8).masked_fill(x > 0, x), torch.tensor(128)),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(RUN_TIME_ERRORS))
def test_errors_of_values_raise_when_the_trace_runs(fn, arg):
    """What eager refuses from the values (an index out of range, a fill value its tensor
    cannot hold) cannot be known while tracing: the trace raises when it runs, at both
    levels, instead of giving a result."""
    with pytest.raises((RuntimeError, IndexError)):
        fn(arg.clone())
    program = trace_callable(fn, (arg,), name="fn")
    for trace in (program.trace, lower(program.trace).trace):
        with pytest.raises((RuntimeError, IndexError)):
            compile_trace(trace)(arg.clone())
