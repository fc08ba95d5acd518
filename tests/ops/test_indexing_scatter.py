"""The ops that write at indices: scatter (tensor and number sources, reduce='add' and
'multiply'), scatter_add, scatter_reduce, index_add, index_copy, index_fill,
index_reduce, index_put, put and masked_scatter, with their in-place twins, and
embedding_bag; the prims they lower to (scatter, scatter_add, scatter_reduce), exercised through the
cases' lowered traces. Index values out of range raise when the trace runs, at both
levels, as they do in eager; what eager refuses from shapes and dtypes is refused
while tracing.
"""

from __future__ import annotations

import math
import warnings

import pytest
import torch
import torch.nn.functional as F

from tests.ops.harness import Case, L, T, case_adder, check_case, entry, refusal_tests, rows_by_id
from tracecli.core.errors import TracingError
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable
from tracecli.passes.lower import lower

# index_reduce warns that it is in beta, scatter's reduce= with a tensor that it is
# deprecated, complex32 tensors that they are experimental: all still compute what the
# tests check.
warnings.filterwarnings("ignore", message="index_reduce", category=UserWarning)
warnings.filterwarnings("ignore", message="The reduce argument of torch.scatter", category=UserWarning)
warnings.filterwarnings("ignore", message="ComplexHalf support is experimental", category=UserWarning)

CASES: list[Case] = []
case = case_adder(CASES)

SMALL = "small"  # index values 0..3, duplicates among them
NAN = math.nan


def _inplace(method: str, args, **kwargs):
    """x.clone().<method>(*args(*tensors), **kwargs): the in-place twin of an op, on a copy."""

    def apply(x, *tensors):
        y = x.clone()
        getattr(y, method)(*args(*tensors), **kwargs)
        return y

    return apply


# --- scatter ---------------------------------------------------------------------------------

for _dtype in ("f32", "i64", "bool", "f16", "bf16"):
    case("scatter", "fn", lambda x, i, s: torch.scatter(x, 0, i, s), T(_dtype, (4, 3)), T("i64", (2, 3), SMALL),
         T(_dtype, (2, 3)))
case("scatter", "method-dim1", lambda x, i, s: x.scatter(1, i, s), T("f32", (3, 5)), T("i64", (3, 2), SMALL),
     T("f32", (3, 2)))
case("scatter", "negative-dim", lambda x, i, s: x.scatter(-1, i, s), T("f32", (2, 3, 4)), T("i64", (2, 3, 2), SMALL),
     T("f32", (2, 3, 2)))
case("scatter", "src-larger", lambda x, i, s: x.scatter(0, i, s), T("f32", (4, 3)), T("i64", (2, 2), SMALL),
     T("f32", (3, 3)))
case("scatter", "index-larger-along-dim", lambda x, i, s: x.scatter(0, i, s), T("f32", (4, 3)),
     T("i64", (6, 3), SMALL), T("f32", (6, 3)))
case("scatter", "i32-index", lambda x, i, s: x.scatter(0, i, s), T("f32", (4, 3)), L(((3, 0, 1),), "i32"),
     T("f32", (1, 3)))
case("scatter", "src-kw", lambda x, i, s: torch.scatter(x, dim=0, index=i, src=s), T("f32", (4, 3)),
     T("i64", (2, 3), SMALL), T("f32", (2, 3)))
case("scatter", "value", lambda x, i: x.scatter(0, i, 2.5), T("f32", (4, 3)), T("i64", (2, 3), SMALL))
case("scatter", "value-kw", lambda x, i: torch.scatter(x, 1, i, value=-1), T("i64", (3, 4)), T("i64", (3, 2), SMALL))
case("scatter", "value-truncated", lambda x, i: x.scatter(0, i, 2.7), T("i64", (4, 3)), T("i64", (2, 3), SMALL))
case("scatter", "value-bool", lambda x, i: x.scatter(0, i, True), T("bool", (4, 3)), T("i64", (2, 3), SMALL))
case("scatter", "value-into-bool", lambda x, i: x.scatter(0, i, 2.5), T("bool", (4,)), T("i64", (2,), SMALL))
case("scatter", "0d", lambda x, i, s: x.scatter(0, i, s), T("f32", ()), L(0, "i64"), T("f32", ()))
case("scatter", "0d-vector-index", lambda x, i, s: x.scatter(0, i, s), T("f32", ()), L((0,), "i64"),
     T("f32", (1,)))
case("scatter", "empty-index", lambda x, i: x.scatter(0, i, 1.0), T("f32", (4, 3)), T("u8", (0,)))
for _reduce in ("add", "multiply"):
    case("scatter", f"reduce-{_reduce}", lambda x, i, s, r=_reduce: x.scatter(0, i, s, reduce=r), T("f32", (4, 3)),
         T("i64", (3, 3), SMALL), T("f32", (3, 3)))
    case("scatter", f"reduce-{_reduce}-value", lambda x, i, r=_reduce: x.scatter(1, i, 3, reduce=r),
         T("i64", (3, 4)), T("i64", (3, 5), SMALL))
case(("scatter", "copy_"), "inplace", _inplace("scatter_", lambda i, s: (0, i, s)), T("f32", (4, 3)),
     T("i64", (2, 3), SMALL), T("f32", (2, 3)))
case(("scatter", "copy_"), "inplace-value-reduce", _inplace("scatter_", lambda i: (1, i, 2.0), reduce="multiply"),
     T("f32", (3, 4)), T("i64", (3, 2), SMALL))

# --- scatter_add, scatter_reduce -------------------------------------------------------------------

for _dtype in ("f32", "i64", "bf16", "bool"):
    case("scatter_add", "fn", lambda x, i, s: torch.scatter_add(x, 0, i, s), T(_dtype, (4, 3)),
         T("i64", (5, 3), SMALL), T(_dtype, (5, 3)))
case("scatter_add", "method-dim1", lambda x, i, s: x.scatter_add(-1, i, s), T("f64", (3, 4)), T("i64", (3, 6), SMALL),
     T("f64", (3, 6)))
case("scatter_add", "duplicates", lambda x, i, s: x.scatter_add(0, i, s), T("f32", (3,)), L((1, 1, 1, 0, 1), "i64"),
     L((0.1, 0.2, 0.3, 0.4, 0.5), "f32"))
case("scatter_add", "0d", lambda x, i, s: x.scatter_add(0, i, s), T("f32", ()), L(0, "i64"), T("f32", ()))
case(("scatter_add", "copy_"), "inplace", _inplace("scatter_add_", lambda i, s: (1, i, s)), T("i64", (3, 4)),
     T("i64", (3, 4), SMALL), T("i64", (3, 4)))
for _reduce in ("sum", "prod", "mean", "amax", "amin"):
    for _self in (True, False):
        case("scatter_reduce", f"{_reduce}-include_self-{_self}",
             lambda x, i, s, r=_reduce, k=_self: torch.scatter_reduce(x, 0, i, s, r, include_self=k),
             T("f32", (4, 3)), T("i64", (5, 3), SMALL), T("f32", (5, 3)))
    case("scatter_reduce", f"{_reduce}-int", lambda x, i, s, r=_reduce: x.scatter_reduce(1, i, s, r),
         T("i64", (3, 4)), T("i64", (3, 5), SMALL), T("i64", (3, 5)))
case("scatter_reduce", "max-alias", lambda x, i, s: x.scatter_reduce(0, i, s, "max", include_self=False),
     T("f32", (4,)), T("i64", (6,), SMALL), T("f32", (6,)))
case("scatter_reduce", "mean-int-floors", lambda x, i, s: x.scatter_reduce(0, i, s, "mean", include_self=False),
     L((0, 0, 0), "i64"), L((0, 0, 1, 1), "i64"), L((-3, -4, 3, 4), "i64"))
case("scatter_reduce", "amax-f16", lambda x, i, s: x.scatter_reduce(0, i, s, "amax"), T("f16", (4,)),
     T("i64", (6,), SMALL), T("f16", (6,)))
case("scatter_reduce", "prod-bool", lambda x, i, s: x.scatter_reduce(0, i, s, "prod"), T("bool", (4,)),
     T("i64", (6,), SMALL), T("bool", (6,)))
case(("scatter_reduce", "copy_"), "inplace", _inplace("scatter_reduce_", lambda i, s: (0, i, s, "amin")),
     T("f32", (4, 2)), T("i64", (3, 2), SMALL), T("f32", (3, 2)))

# --- index_add, index_copy, index_fill, index_reduce ------------------------------------------------

for _dtype in ("f32", "i64", "bool", "f16"):
    case("index_add", "fn", lambda x, i, s: torch.index_add(x, 0, i, s), T(_dtype, (4, 3)), T("i64", (5,), SMALL),
         T(_dtype, (5, 3)))
case("index_add", "alpha", lambda x, i, s: x.index_add(1, i, s, alpha=-2.5), T("f32", (3, 4)), T("i64", (2,), SMALL),
     T("f32", (3, 2)))
case("index_add", "float-alpha-int", lambda x, i, s: x.index_add(0, i, s, alpha=2.5), T("i64", (4, 2)),
     T("i64", (3,), SMALL), T("i64", (3, 2)))
case("index_add", "alpha-bool", lambda x, i, s: x.index_add(0, i, s, alpha=0), T("bool", (4,)), T("i64", (3,), SMALL),
     T("bool", (3,)))
case("index_add", "i32-0d-index", lambda x, i, s: x.index_add(-1, i, s), T("f32", (2, 4)), L(3, "i32"),
     T("f32", (2, 1)))
case("index_add", "0d", lambda x, i, s: x.index_add(0, i, s), T("f32", ()), L((0,), "i64"), T("f32", ()))
case("index_add", "duplicates", lambda x, i, s: x.index_add(0, i, s), T("f32", (3, 2)), L((2, 2, 0, 2), "i64"),
     T("f32", (4, 2)))
case(("index_add", "copy_"), "inplace", _inplace("index_add_", lambda i, s: (0, i, s), alpha=2), T("f32", (4, 3)),
     T("i64", (2,), SMALL), T("f32", (2, 3)))
for _dtype in ("f32", "i64", "bool", "bf16"):
    case("index_copy", "fn", lambda x, i, s: torch.index_copy(x, 0, i, s), T(_dtype, (5, 3)), L((4, 0, 2), "i64"),
         T(_dtype, (3, 3)))
case("index_copy", "method-dim1", lambda x, i, s: x.index_copy(1, i, s), T("f32", (2, 4, 3)), L((3, 1), "i64"),
     T("f32", (2, 2, 3)))
case("index_copy", "duplicates", lambda x, i, s: x.index_copy(0, i, s), T("f32", (3, 2)), L((1, 1), "i64"),
     T("f32", (2, 2)))
case("index_copy", "0d-index", lambda x, i, s: x.index_copy(0, i, s), T("f32", (3,)), L(2, "i64"), T("f32", (1,)))
case("index_copy", "0d-source", lambda x, i, s: x.index_copy(0, i, s), T("f32", (3,)), L((2,), "i64"), T("f32", ()))
case("index_copy", "0d-input", lambda x, i, s: x.index_copy(0, i, s), T("f32", ()), L((0, 0), "i64"),
     T("f32", (2,)))
case(("index_copy", "copy_"), "inplace", _inplace("index_copy_", lambda i, s: (-1, i, s)), T("i64", (2, 4)),
     L((0, 3), "i64"), T("i64", (2, 2)))
case("index_fill", "fn", lambda x, i: torch.index_fill(x, 0, i, -1.5), T("f32", (4, 3)), T("i64", (2,), SMALL))
case("index_fill", "negative-index", lambda x, i: x.index_fill(1, i, 7), T("i64", (2, 4)), L((-1, 0, -4), "i64"))
case("index_fill", "0d-value", lambda x, i, v: x.index_fill(-1, i, v), T("f32", (2, 4)), L(1, "i64"), T("f64", ()))
case("index_fill", "0d-value-int", lambda x, i, v: x.index_fill(0, i, v), T("f16", (4, 2)), L((3,), "i64"),
     T("i64", ()))
case("index_fill", "float-into-int", lambda x, i: x.index_fill(0, i, 2.7), T("i64", (4,)), T("i64", (2,), SMALL))
case("index_fill", "bool", lambda x, i: x.index_fill(0, i, True), T("bool", (4, 2)), T("i64", (3,), SMALL))
case("index_fill", "0d", lambda x, i: x.index_fill(0, i, 5), T("f32", ()), L((-1, 0), "i64"))
case("index_fill", "empty-index", lambda x, i: x.index_fill(0, i, 5), T("f32", (3,)), T("i64", (0,)))
case("index_fill_", "inplace", _inplace("index_fill_", lambda i: (1, i, 0.0)), T("f32", (3, 4)),
     T("i64", (2,), SMALL))
case("index_fill_", "inplace-int-0d-value", _inplace("index_fill_", lambda i, v: (0, i, v)), T("i64", (4, 2)),
     T("i64", (3,), SMALL), T("f64", ()))
case("index_fill_", "input", lambda x, i: (x.index_fill_(-1, i, True), x)[1], T("bool", (3, 4)), L((-1,), "i64"))
for _reduce in ("prod", "mean", "amax", "amin"):
    case("index_reduce", _reduce, lambda x, i, s, r=_reduce: torch.index_reduce(x, 0, i, s, r), T("f32", (4, 3)),
         T("i64", (5,), SMALL), T("f32", (5, 3)))
    case("index_reduce", f"{_reduce}-no-self", lambda x, i, s, r=_reduce: x.index_reduce(1, i, s, r, include_self=False),
         T("i64", (3, 4)), T("i64", (6,), SMALL), T("i64", (3, 6)))
case("index_reduce", "0d", lambda x, i, s: x.index_reduce(0, i, s, "prod"), T("f32", ()), L(0, "i64"), T("f32", ()))
case("index_reduce", "bool-slices", lambda x, i, s: x.index_reduce(0, i, s, "amin"),
     T("bool", (4, 2)), T("i64", (3,), SMALL), T("bool", (3, 2)))
case(("index_reduce", "copy_"), "inplace", _inplace("index_reduce_", lambda i, s: (0, i, s, "amax")),
     T("bf16", (4, 2)), T("i64", (3,), SMALL), T("bf16", (3, 2)))

# --- index_put, put -------------------------------------------------------------------------------------

for _accumulate in (False, True):
    _form = "accumulate" if _accumulate else "fn"
    case("index_put", _form, lambda x, i, v, a=_accumulate: torch.index_put(x, (i,), v, a), T("f32", (4, 3)),
         T("i64", (5,), SMALL), T("f32", (3,)))
    case("index_put", f"{_form}-two", lambda x, i, j, v, a=_accumulate: x.index_put((i, j), v, accumulate=a),
         T("i64", (4, 4)), T("i64", (3, 1), SMALL), T("i64", (2,), SMALL), T("i64", ()))
    case("index_put", f"{_form}-mask", lambda x, m, v, a=_accumulate: x.index_put((m,), v, a), T("f32", (3, 4)),
         T("bool", (3, 4)), T("f32", (1,)))
case("index_put", "negative", lambda x, i, v: x.index_put([i], v, accumulate=True), T("f32", (4,)),
     L((-1, -1, 0, -4), "i64"), T("f32", (4,)))
case("index_put", "i32-after-slice", lambda x, i, v: x.index_put((i,), v), T("bf16", (4, 3)), L((3, 0), "i32"),
     T("bf16", (2, 3)))
case("index_put", "mask-and-index", lambda x, m, i, v: x.index_put((m, i), v), T("f32", (2, 3)),
     L((True, False), "bool"), L((2,), "i64"), T("f32", ()))
case(("index_put", "copy_"), "inplace", _inplace("index_put_", lambda i, v: ((i,), v, True)), T("f32", (4, 3)),
     T("i64", (6,), SMALL), T("f32", (6, 3)))
for _dtype in ("f32", "i64", "bool"):
    case("put", "fn", lambda x, i, s: torch.put(x, i, s), T(_dtype, (3, 4)), T("i64", (5,), SMALL), T(_dtype, (5,)))
case("put", "accumulate", lambda x, i, s: x.put(i, s, accumulate=True), T("f32", (2, 3)), L((-1, 5, 0, -6), "i64"),
     T("f32", (4,)))
case("put", "shapes-differ", lambda x, i, s: x.put(i, s), T("f32", (2, 3)), T("i64", (2, 2), SMALL), T("f32", (4,)))
case("put", "0d", lambda x, i, s: x.put(i, s, True), T("f32", ()), L((0, -1), "i64"), T("f32", (2,)))
case(("put", "copy_"), "inplace", _inplace("put_", lambda i, s: (i, s)), T("i64", (3, 2)), T("i64", (3,), SMALL),
     T("i64", (3,)))

# --- masked_scatter --------------------------------------------------------------------------------------

for _dtype in ("f32", "i64", "bool", "f16"):
    case("masked_scatter", "fn", lambda x, m, s: torch.masked_scatter(x, m, s), T(_dtype, (3, 4)), T("bool", (3, 4)),
         T(_dtype, (3, 4)))
case("masked_scatter", "broadcast-mask", lambda x, m, s: x.masked_scatter(m, s.flatten()), T("f32", (3, 4)),
     T("bool", (4,)), T("f32", (3, 4)))
case("masked_scatter", "broadcast-input", lambda x, m, s: x.masked_scatter(m, s), T("f32", (4,)),
     T("bool", (2, 4)), T("f32", (2, 5)))
case("masked_scatter", "0d", lambda x, m, s: x.masked_scatter(m, s), T("f32", ()), L(True, "bool"), T("f32", (1,)))
case("masked_scatter", "empty-source", lambda x, m, s: x.masked_scatter(m, s), T("f32", (2, 3)),
     L(((False,) * 3,) * 2, "bool"), T("f32", (0,)))
case("masked_scatter_", "inplace", _inplace("masked_scatter_", lambda m, s: (m, s)), T("f32", (3, 4)),
     T("bool", (4,)), T("f32", (3, 4)))
case("masked_scatter_", "input", lambda x, m, s: (x.masked_scatter_(m, s.flatten()), x + 1)[1], T("i64", (2, 3)),
     T("bool", (2, 3)), T("i64", (2, 3)))

# --- embedding_bag ------------------------------------------------------------------------------------------
# Offsets come from the input's length (arange), so that at every size they stay cut points:
# eager's kernels read out of bounds for offsets that are not.


def _bags(mode, step=3, **kwargs):
    def bag(i, w):
        return F.embedding_bag(i, w, torch.arange(0, i.shape[0], step), mode=mode, **kwargs)

    return bag


for _mode in ("sum", "mean", "max"):
    case(("embedding_bag", "arange"), _mode, _bags(_mode), T("i64", (8,), SMALL), T("f32", (4, 3)))
    case("embedding_bag", f"{_mode}-2d", lambda i, w, m=_mode: F.embedding_bag(i, w, mode=m), T("i64", (3, 4), SMALL),
         T("f32", (5, 2)))
    case(("embedding_bag", "arange"), f"{_mode}-padding", _bags(_mode, padding_idx=2), T("i64", (7,), SMALL),
         T("f32", (4, 3)))
    case(("embedding_bag", "arange", "floor_divide", "mul"), f"{_mode}-empty-bags",
         lambda i, w, m=_mode: F.embedding_bag(i, w, torch.arange(0, i.shape[0], 2) // 4 * 4, mode=m),
         T("i64", (9,), SMALL), T("f32", (4, 2)))
    case(("embedding_bag", "arange"), f"{_mode}-include_last_offset",
         lambda i, w, m=_mode: F.embedding_bag(i, w, torch.arange(0, i.shape[0] + 1, i.shape[0]), mode=m,
                                               include_last_offset=True), T("i64", (5,), SMALL), T("f32", (4, 3)))
for _dtype in ("f16", "bf16", "f64"):
    case(("embedding_bag", "arange"), "mean", _bags("mean"), T("i64", (8,), SMALL), T(_dtype, (4, 3)))
case("embedding_bag", "max-nan", lambda i, w: F.embedding_bag(i, w, mode="max"), L(((0, 1, 2), (1, 0, 2), (2, 1, 0)), "i64"),
     L(((NAN, 1.0), (2.0, NAN), (3.0, 0.5)), "f32"))
case("embedding_bag", "per-sample-weights", lambda i, w, p: F.embedding_bag(i, w, mode="sum", per_sample_weights=p,
                                                                           padding_idx=0),
     T("i64", (2, 5), SMALL), T("f32", (4, 3)), T("f32", (2, 5)))
case(("embedding_bag", "arange"), "i32-negative-padding", _bags("sum", step=2, padding_idx=-1), T("i32", (6,), SMALL),
     T("f32", (4, 2)))
case("embedding_bag", "one-offset", lambda i, w, o: F.embedding_bag(i, w, o), T("i64", (6,), SMALL), T("f32", (4, 2)),
     L((0,), "i64"))
case(("embedding_bag", "arange"), "scale_grad_by_freq-sparse", _bags("sum", scale_grad_by_freq=True, sparse=True),
     T("i64", (6,), SMALL), T("f32", (4, 2)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


# --- index values out of range: eager raises when it runs, and so do both levels of the trace ------------

X = torch.zeros(3, 2)
OUT_OF_RANGE = (
    ("scatter", lambda x, i: x.scatter(0, i, 1.0), X, torch.tensor([[3, 0]])),
    ("scatter-negative", lambda x, i: x.scatter(0, i, 1.0), X, torch.tensor([[-1, 0]])),
    ("scatter_add", lambda x, i: x.scatter_add(0, i, x), X, torch.tensor([[0, 0], [1, 1], [0, 3]])),
    ("scatter_reduce", lambda x, i: x.scatter_reduce(0, i, x[:1], "amax"), X, torch.tensor([[9, 0]])),
    ("index_add", lambda x, i: x.index_add(0, i, x[:2]), X, torch.tensor([0, 3])),
    ("index_add-negative", lambda x, i: x.index_add(0, i, x[:2]), X, torch.tensor([0, -1])),
    ("index_copy-negative", lambda x, i: x.index_copy(0, i, x[:2]), X, torch.tensor([-1, 0])),
    ("index_copy", lambda x, i: x.index_copy(0, i, x[:2]), X, torch.tensor([1, 3])),
    ("index_fill", lambda x, i: x.index_fill(0, i, 1.0), X, torch.tensor([3])),
    ("index_fill-negative", lambda x, i: x.index_fill(0, i, 1.0), X, torch.tensor([-4])),
    ("index_reduce", lambda x, i: x.index_reduce(0, i, x[:1], "mean"), X, torch.tensor([5])),
    ("index_put", lambda x, i: x.index_put((i,), x[0]), X, torch.tensor([3])),
    ("index_put-accumulate", lambda x, i: x.index_put((i,), x[0], accumulate=True), X, torch.tensor([-4])),
    ("put", lambda x, i: x.put(i, x[0]), X, torch.tensor([0, 6])),
    ("masked_scatter-short-source", lambda x, m: x.masked_scatter(m, x[0]), X, torch.ones(3, 2, dtype=torch.bool)),
    ("masked_scatter-empty-source", lambda x, m: x.masked_scatter(m, x[:0]), X, torch.ones(3, 2, dtype=torch.bool)),
    ("embedding_bag-index", lambda x, i: F.embedding_bag(i, x, torch.tensor([0])), X, torch.tensor([0, 3])),
    ("embedding_bag-first-offset", lambda x, o: F.embedding_bag(torch.tensor([0, 1, 2]), x, o), X, torch.tensor([1, 2])),
    ("embedding_bag-offset-past-end", lambda x, o: F.embedding_bag(torch.tensor([0, 1]), x, o), X, torch.tensor([0, 3])),
    ("embedding_bag-offsets-down", lambda x, o: F.embedding_bag(torch.tensor([0, 1, 2, 0, 1]), x, o, mode="sum"), X,
     torch.tensor([0, 3, 1])),
)


@pytest.mark.parametrize(("fn", "x", "index"), [pytest.param(*row[1:], id=row[0]) for row in OUT_OF_RANGE])
def test_indices_out_of_range_raise_when_the_trace_runs(fn, x, index):
    with pytest.raises((RuntimeError, IndexError)):
        fn(x.clone(), index)
    program = trace_callable(fn, (x, index), name="fn")
    for trace in (program.trace, lower(program.trace).trace):
        with pytest.raises((RuntimeError, IndexError)):
            compile_trace(trace)(x.clone(), index)


# --- what eager refuses from shapes, dtypes and arguments is refused while tracing --------------------------

I64 = torch.tensor([[0, 1]])
REFUSED = (
    ("scatter-src-dtype", lambda x: x.scatter(0, I64, torch.ones(1, 2, dtype=torch.float64)), (X,), "dtype"),
    ("scatter-index-dtype", lambda x: x.scatter(0, I64.short(), 1.0), (X,), "int32 or int64 index"),
    ("scatter-index-rank", lambda x: x.scatter(0, torch.tensor([0]), 1.0), (X,), "rank"),
    ("scatter-index-wider", lambda x: x.scatter(0, torch.zeros(1, 3, dtype=torch.long), 1.0), (X,), "no larger"),
    ("scatter-src-smaller", lambda x: x.scatter(0, torch.zeros(2, 2, dtype=torch.long), x[:1]), (X,), "no larger"),
    ("scatter-0d-tensor-value", lambda x: x.scatter(0, I64, torch.tensor(1.0)), (X,), "rank"),
    ("scatter-reduce-name", lambda x: x.scatter(0, I64, 1.0, reduce="sum"), (X,), "'add' or 'multiply'"),
    ("scatter-complex-value", lambda x: x.scatter(0, I64, 1j), (X,), "complex"),
    ("scatter-value-overflow", lambda x: x.half().scatter(0, I64, 1e10), (X,), "overflow"),
    ("scatter-inf-into-int", lambda x: x.long().scatter(0, I64, float("inf")), (X,), "overflow"),
    ("scatter-dim", lambda x: x.scatter(2, I64, 1.0), (X,), "out of range"),
    ("scatter_reduce-name", lambda x: x.scatter_reduce(0, I64, x[:1], "add"), (X,), "reduce must be"),
    ("scatter_reduce-bool-mean", lambda x: x.bool().scatter_reduce(0, I64, x[:1].bool(), "mean"), (X,), "mean"),
    ("scatter_reduce-complex-amax", lambda x: x.cfloat().scatter_reduce(0, I64, x[:1].cfloat(), "amax"), (X,),
     "complex"),
    ("index_add-shape", lambda x: x.index_add(0, torch.tensor([0, 1]), torch.ones(2, 3)), (X,), "must match"),
    ("index_add-count", lambda x: x.index_add(0, torch.tensor([0, 1, 2]), torch.ones(2, 2)), (X,), "indices for"),
    ("index_add-rank", lambda x: x.index_add(0, torch.tensor([0]), torch.ones(2)), (X,), "rank"),
    ("index_add-2d-index", lambda x: x.index_add(0, torch.tensor([[0, 1]]), torch.ones(2, 2)), (X,), "vector"),
    ("index_add-i16-index", lambda x: x.index_add(0, torch.tensor([0], dtype=torch.int16), x[:1]), (X,), "index"),
    ("index_add-dtype", lambda x: x.index_add(0, torch.tensor([0]), x[:1].double()), (X,), "dtype"),
    ("index_add-complex-alpha", lambda x: x.index_add(0, torch.tensor([0]), x[:1], alpha=1j), (X,), "complex"),
    ("index_copy-i32-index", lambda x: x.index_copy(0, torch.tensor([0], dtype=torch.int32), x[:1]), (X,),
     "int64 index"),
    ("index_copy-0d-source-2d", lambda x: x.index_copy(0, torch.tensor([0]), torch.tensor(1.0)), (X,), "rank"),
    ("index_fill-i32-index", lambda x: x.index_fill(0, torch.tensor([0], dtype=torch.int32), 1), (X,), "int64"),
    ("index_fill-vector-value", lambda x: x.index_fill(0, torch.tensor([0]), torch.ones(1)), (X,), "zero-dim"),
    ("index_fill-complex-value", lambda x: x.index_fill(0, torch.tensor([0]), 1j), (X,), "complex"),
    ("index_fill-nan-into-int", lambda x: x.long().index_fill(0, torch.tensor([0]), float("nan")), (X,),
     "overflow"),
    ("index_fill-complex-tensor", lambda x: x.index_fill(0, torch.tensor([0]), torch.tensor(1j)), (X,), "complex"),
    ("index_reduce-sum", lambda x: x.index_reduce(0, torch.tensor([0]), x[:1], "sum"), (X,), "reduce must be"),
    ("index_reduce-bool-vector", lambda x: x[:, 0].bool().index_reduce(0, torch.tensor([0]), x[:1, 0].bool(), "amax"),
     (X,), "bool"),
    ("index_reduce-bool-no-self", lambda x: x.bool().index_reduce(0, torch.tensor([0]), x[:1].bool(), "prod",
                                                                   include_self=False), (X,), "include_self"),
    ("index_reduce-bool-mean", lambda x: x.bool().index_reduce(0, torch.tensor([0]), x[:1].bool(), "mean"), (X,),
     "mean"),
    ("index_put-dtype", lambda x: x.index_put((torch.tensor([0]),), torch.tensor(1)), (X,), "dtype"),
    ("index_put-i16", lambda x: x.index_put((torch.tensor([0], dtype=torch.int16),), x[0]), (X,), "indices"),
    ("index_put-values", lambda x: x.index_put((torch.tensor([0, 1]),), torch.ones(3)), (X,), "broadcast"),
    ("index_put-values-rank", lambda x: x.index_put((torch.tensor([1]),), torch.ones(1, 1, 2)), (X,), "broadcast"),
    ("index_put-too-many", lambda x: x.index_put((torch.tensor([0]),) * 3, x[0, 0]), (X,), "too many"),
    ("index_put-mask-shape", lambda x: x.index_put((torch.ones(2, dtype=torch.bool),), x[0, 0]), (X,),
     "does not match"),
    ("put-count", lambda x: x.put(torch.tensor([0, 1]), torch.ones(1)), (X,), "source elements"),
    ("put-i32", lambda x: x.put(torch.tensor([0], dtype=torch.int32), torch.ones(1)), (X,), "int64"),
    ("put-dtype", lambda x: x.put(torch.tensor([0]), torch.ones(1, dtype=torch.float64)), (X,), "dtype"),
    ("masked_scatter-u8-mask", lambda x: x.masked_scatter(torch.ones(3, 2, dtype=torch.uint8), x), (X,), "bool mask"),
    ("masked_scatter-dtype", lambda x: x.masked_scatter(x > 0, x.long()), (X,), "dtype"),
    ("masked_scatter_-broadcast-self", lambda x: x[0].clone().masked_scatter_(x > 0, x), (X,), "does not broadcast"),
    ("scatter-complex32", lambda x: x.to(torch.complex32).scatter(0, I64, x[:1].to(torch.complex32)), (X,),
     "complex32"),
    ("put-complex32", lambda x: x.to(torch.complex32).put(torch.tensor([0]), x[0, :1].to(torch.complex32)), (X,),
     "complex32"),
    ("masked_scatter-complex32", lambda x: x.to(torch.complex32).masked_scatter(x > 0, x.to(torch.complex32)), (X,),
     "complex32"),
    ("embedding_bag-mode", lambda x: F.embedding_bag(torch.tensor([[0]]), x, mode="min"), (X,), "mode"),
    ("embedding_bag-weights-mean", lambda x: F.embedding_bag(torch.tensor([[0]]), x, per_sample_weights=x[:1, :1]),
     (X,), "mode='sum' only"),
    ("embedding_bag-weights-shape", lambda x: F.embedding_bag(torch.tensor([[0, 1]]), x, mode="sum",
                                                              per_sample_weights=x[:1, :1]), (X,), "shape"),
    ("embedding_bag-2d-offsets", lambda x: F.embedding_bag(torch.tensor([[0]]), x, torch.tensor([0])), (X,), "offsets"),
    ("embedding_bag-1d-no-offsets", lambda x: F.embedding_bag(torch.tensor([0]), x), (X,), "offsets"),
    ("embedding_bag-int-weight", lambda x: F.embedding_bag(torch.tensor([[0]]), x.long()), (X,), "floating point"),
    ("embedding_bag-float-input", lambda x: F.embedding_bag(torch.tensor([[0.0]]), x), (X,), "int32 or int64 input"),
    ("embedding_bag-padding_idx", lambda x: F.embedding_bag(torch.tensor([[0]]), x, padding_idx=3), (X,), "padding_idx"),
)
test_refused_with_a_clear_error, test_eager_refuses_them_too = refusal_tests(REFUSED)


def test_zero_dim_fill_values_are_checked_when_the_trace_runs():
    """Eager reads a tensor value to fill with and refuses one its tensor's dtype cannot
    hold: a float64 1e10 into float16. The value is not known while tracing, so the
    trace checks it when it runs (at the prims level; torch's own op at the other)."""
    fn = entry(lambda x, v: x.index_fill(0, torch.tensor([0]), v))
    x = torch.zeros(3, dtype=torch.float16)
    program = trace_callable(fn, (x, torch.tensor(1.0, dtype=torch.float64)), name="fn")
    for trace in (program.trace, lower(program.trace).trace):
        run = compile_trace(trace)
        assert torch.equal(run(x, torch.tensor(-2.0, dtype=torch.float64)), fn(x, torch.tensor(-2.0, dtype=torch.float64)))
        assert torch.equal(run(x, torch.tensor(float("inf"), dtype=torch.float64)),
                           fn(x, torch.tensor(float("inf"), dtype=torch.float64)))
        with pytest.raises(RuntimeError):
            run(x, torch.tensor(1e10, dtype=torch.float64))
    with pytest.raises(RuntimeError):
        fn(x, torch.tensor(1e10, dtype=torch.float64))


def test_scatter_of_a_value_tensor_given_as_value_stays_a_torch_call():
    # value= takes a number; a tensor there is torch's business (it reads it as a number).
    program = trace_callable(lambda x, v: torch.scatter(x, 0, torch.tensor([[0, 1]]), value=v),
                             (torch.zeros(3, 2), torch.tensor(2.0)), name="fn")
    assert [b.symbol.qualname for b in program.trace.bsyms][-1] == "torch.scatter"


def test_duplicate_indices_add_up_as_in_eager():
    """Duplicate indices add up in eager's order (its kernels, on inputs large enough for
    them to split the work between threads), so the sums are eager's to the bit; so is
    the value scatter keeps. (index_copy and index_put keep one of the duplicates' values,
    or add them up in an order, that varies from call to call in eager itself.)"""
    gen = torch.Generator().manual_seed(0)
    x, src = torch.randn(300, 8, generator=gen), torch.randn(5000, 8, generator=gen)
    index = torch.randint(0, 300, (5000,), generator=gen)
    for fn in (lambda x, i, s: x.index_add(0, i, s), lambda x, i, s: x.put(i, s[:, 0], accumulate=True), lambda x, i, s: x.index_reduce(0, i, s, "mean"),
               lambda x, i, s: x.scatter(0, i[:, None].expand(-1, 8), s)):
        program = trace_callable(fn, (x, index, src), name="fn")
        for trace in (program.trace, lower(program.trace).trace):
            assert torch.equal(compile_trace(trace)(x, index, src), fn(x, index, src))


def test_embedding_bag_offsets_that_do_not_end_at_the_input_end_are_refused_when_the_trace_runs():
    """With include_last_offset the last offset is where the input ends; eager's kernels
    disagree among themselves about indices past it (some modes count them, some not):
    the trace refuses such offsets when it runs rather than pick one answer."""
    fn = entry(lambda i, w, o: F.embedding_bag(i, w, o, mode="mean", include_last_offset=True))
    i, w = torch.tensor([0, 1, 2]), torch.rand(3, 2)
    program = trace_callable(fn, (i, w, torch.tensor([0, 3])), name="fn")
    for trace in (program.trace, lower(program.trace).trace):
        run = compile_trace(trace)
        torch.testing.assert_close(run(i, w, torch.tensor([0, 3])), fn(i, w, torch.tensor([0, 3])))
    with pytest.raises(RuntimeError):
        compile_trace(lower(program.trace).trace)(i, w, torch.tensor([0, 1]))


@pytest.mark.parametrize(("fn", "x"), [
    pytest.param(lambda x: x.index_reduce(0, torch.tensor([0, 0]), x[:2] * 2, "prod"), torch.rand(3, 2).half(),
                 id="index_reduce-prod-f16"),
    pytest.param(lambda x: x.index_reduce(1, torch.tensor([1, 1, 0]), x[:, [0, 1, 1]], "mean"),
                 torch.rand(2, 2).bfloat16(), id="index_reduce-mean-bf16"),
    pytest.param(lambda x: x.index_add(0, torch.tensor([1]), x[:1]), torch.rand(3, 2).to(torch.complex32),
                 id="index_add-complex32"),
])
def test_forms_scatter_kernels_compute_otherwise_stay_torch_calls(fn, x):
    """torch's index_reduce rounds a low-precision product or mean after each slice, and
    its index_add takes complex32, where the scatter kernels round once or have no
    complex32: these forms run as torch calls."""
    program = trace_callable(fn, (x,), name="fn")
    assert program.trace.bsyms[-1].symbol.namespace == "torch"
    assert torch.equal(torch.view_as_real(compile_trace(program.trace)(*program.inputs).to(torch.complex64)),
                       torch.view_as_real(fn(x).to(torch.complex64)))


def test_aten_index_put_with_a_whole_dimension_stays_a_torch_call():
    # aten's index_put takes None for a whole dimension; torch.index_put, which the trace
    # would call, does not.
    program = trace_callable(lambda x, i: torch.ops.aten.index_put(x, [None, i], x[:, :1], True),
                             (torch.rand(3, 4), torch.tensor([1, 1])), name="fn")
    assert [b.symbol.qualname for b in program.trace.bsyms][-1] == "torch.ops.aten.index_put"


def test_embedding_bag_with_max_norm_stays_a_torch_call():
    # max_norm renormalises rows of the weight in place before the lookup.
    program = trace_callable(lambda i, w: F.embedding_bag(i, w, max_norm=1.0), (torch.tensor([[0, 1]]), torch.rand(3, 2)),
                             name="fn")
    assert [b.symbol.qualname for b in program.trace.bsyms] == ["torch.nn.functional.embedding_bag"]


READ_WHILE_WRITING = (
    ("masked_scatter_-itself", lambda x: (lambda y: y.masked_scatter_(y > 0, y))(x.clone()), "pass a clone"),
    ("masked_scatter_-view", lambda x: (lambda y: y.masked_scatter_(y > 0, y.t()))(x.clone()), "overlapping"),
    ("index_fill_-itself", lambda x: (lambda y: y.index_fill_(0, y, 0))(x[:, 0].long().abs().clone() % 3), "clone"),
    ("index_fill_-view", lambda x: (lambda y: y.index_fill_(0, y[:, 0], 0))(x.long().abs().clone() % 3),
     "overlapping"),
)


@pytest.mark.parametrize(("fn", "message"), rows_by_id(READ_WHILE_WRITING))
def test_inplace_ops_reading_the_tensor_they_write_are_refused(fn, message):
    """Eager's masked_scatter_ and index_fill_ read their source or index as they write
    it, so what they give depends on the kernel's order: the trace refuses them."""
    with pytest.raises(TracingError, match=message):
        trace_callable(fn, (torch.randn(3, 3),), name="fn")
