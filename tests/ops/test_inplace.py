"""The in-place ops (add_, sub_, mul_, div_, copy_, fill_, zero_, masked_fill_ and item
assignment): traced as new values, the user's tensor rebound, writes through views
refused. They decompose into other families' prims and have none of their own."""

import pytest
import torch
import torch.nn.functional as F

from tests.ops.harness import Case, T, case_adder, check_case
from tracecli.core.errors import TracingError
from tracecli.core.printing import format_trace
from tracecli.core.symbol import Tag
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable
from tracecli.passes.pipeline import parse_passes, run_pipeline

CASES: list[Case] = []
case = case_adder(CASES)


def _add_(x, y):
    x = x.clone()
    x.add_(y, alpha=2)
    return x


def _iops(x, y):
    x = x.clone()
    x += y
    x -= 1
    x *= y
    x /= 2
    return x


def _sub_(x, y):
    z = x.clone()
    return z.sub_(y), x


def _fills(x):
    a, b, c = x.clone(), x.clone(), x.clone()
    a.fill_(3.5)
    b.zero_()
    c.masked_fill_(c > 0, -1.0)
    return a, b, c


def _copy(x, y):
    out = torch.zeros_like(x)
    out.copy_(y)
    return out


def _mutate_input(x, y):
    x.mul_(y)
    return x + 1


for dtype in ("f32", "f64", "f16"):
    case(("add_", "clone"), "method", _add_, T(dtype, (3, 4)), T(dtype, (4,)))
    case(("add_", "sub_", "mul_", "div_"), "operators", _iops, T(dtype, (2, 3)), T(dtype, (2, 3), "pos"))
    case(("fill_", "zero_", "masked_fill_"), "fills", _fills, T(dtype, (2, 3)))
case("sub_", "returns-self", _sub_, T("f32", (3,)), T("f32", (3,)))
case("copy_", "broadcast-convert", _copy, T("f32", (2, 3)), T("i64", (3,)))
case("add_", "int", lambda x: x.clone().add_(3), T("i64", (4,)))
case("mul_", "input", _mutate_input, T("f32", (3,)), T("f32", (3,)))


def _set_rows(x, v):
    x = x.clone()
    x[0] = 5
    x[-1, 1:3] = v
    x[..., None, 0] = x[..., 1:2] * 2
    return x


def _set_int(x):
    x = x.clone()
    x[1:] = 2.7  # truncated to the tensor's dtype, as in eager
    return x


def _set_broadcast(x, v):
    x = x.clone()
    x[:, :2] = v
    return x


for dtype in ("f32", "f16", "i64"):
    case(("setitem_", "getitem"), "rows", _set_rows, T(dtype, (3, 4)), T(dtype, (2,)))
case("setitem_", "int-float-value", _set_int, T("i64", (4, 2)))
case("setitem_", "broadcast", _set_broadcast, T("f32", (2, 3, 4)), T("f64", (2, 1)))
case("setitem_", "bool", lambda x: (lambda y: (y.__setitem__(0, True), y)[1])(x.clone()), T("bool", (3,)))


def _assign(key, value=None):
    """x.clone() with x[key] = value (or = the given tensor's values), as users write it."""

    def assign(x, v):
        x = x.clone()
        x[key(x) if callable(key) else key] = v if value is None else value
        return x

    return assign


# Every key torch takes: steps, negative indices, None and Ellipsis, masks (values
# broadcast, data-dependent counts left to torch), index tensors and lists with
# duplicates and negatives, and mixes of them.
ASSIGNMENTS = {
    "step": (_assign((slice(None, None, 2),), 0.0), (4, 3), ()),
    "negative-step-rows": (_assign((-1, slice(1, None, 2))), (4, 3), (1,)),
    "ellipsis-int": (_assign((Ellipsis, 1)), (2, 4, 3), (2, 4)),
    "none": (_assign((None, 1)), (4, 3), (3,)),
    "mask": (_assign(lambda x: x < 0, 0.0), (4, 3), ()),
    "mask-rows": (_assign(lambda x: x[:, 0] > 0), (4, 3), (3,)),
    "mask-0d": (_assign(lambda x: x > 0, 1.0), (), ()),
    "index-tensor": (_assign(torch.tensor([0, -1])), (4, 3), (3,)),
    "index-duplicates": (_assign(torch.tensor([0, 0, 1])), (4, 3), (3, 3)),
    "index-list": (_assign([1, 3], 9.0), (4, 3), ()),
    "slice-and-index": (_assign((slice(1, 3), torch.tensor([0, 2]))), (4, 3), (2,)),
    "index-and-slice": (_assign((torch.tensor([0, 1]), slice(None, None, 2))), (4, 3), (2, 2)),
    "two-indices": (_assign((torch.tensor([0, 3]), torch.tensor([2, 1]))), (4, 3), (2,)),
}
for form, (fn, shape, value_shape) in ASSIGNMENTS.items():
    case("setitem_", form, fn, T("f32", shape), T("f32", value_shape))


def _augmented_index(x):
    x = x.clone()
    x[[1, 1, 3]] += 1  # duplicates: each place gets one +1, as in eager
    return x


case(("setitem_", "add_"), "augmented-index", _augmented_index, T("f32", (4, 3)))
case("setitem_", "int-mask", _assign(lambda x: x > 2, 0), T("i64", (3, 2)), T("i64", ()))


def _twin(method: str, *args):
    def apply(x):
        y = x.clone()
        getattr(y, method)(*args)
        return y

    return apply


# One rule for every in-place method whose out-of-place twin is modelled: the twin, then
# its result written into the tensor (`ltorch.copy_`).
for method, args, twin, domain in [
    ("relu_", (), "relu", "any"), ("exp_", (), "exp", "any"), ("sigmoid_", (), "sigmoid", "any"),
    ("clamp_", (-0.5, 0.5), "clamp", "any"), ("pow_", (2,), "pow", "any"), ("abs_", (), "abs", "any"),
    ("tanh_", (), "tanh", "any"), ("sqrt_", (), "sqrt", "pos"), ("neg_", (), "neg", "any"),
]:
    case(("copy_", twin), f"method-{method}", _twin(method, *args), T("f32", (3, 4), domain))
case(("copy_", "relu"), "function-relu_", lambda x: (lambda y: (torch.relu_(y), y)[1])(x.clone()), T("f32", (5,)))
case(("copy_", "relu"), "functional-inplace", lambda x: F.relu(x.clone(), inplace=True), T("f32", (5,)))
case(("copy_", "exp"), "method-f16", _twin("exp_"), T("f16", (4,)))
# Written through a detached alias: the tensor changes, and autograd does not see it.
case(("set_data_", "detach", "mul_"), "through-detach", lambda x: (x.detach().mul_(2), x)[1] + 0, T("f32", (3, 4)))
case(("set_data_", "detach", "add_"), "through-data", lambda x: (x.data.add_(1), x)[1] * 3, T("f32", (3, 4)))


def test_inplace_results_follow_eagers_dtype_rules():
    # An in-place op may not need a cast torch refuses: exp of an int tensor is float.
    for fn in (_twin("exp_"), _twin("div_", 2)):
        x = torch.arange(4)
        with pytest.raises(RuntimeError, match="can't be cast"):
            fn(x)
        with pytest.raises(TracingError, match="can't be cast"):
            trace_callable(fn, (x,))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


def test_assignment_keys_torch_refuses_are_refused_at_the_line():
    def key_of(key):
        def f(x):
            x = x.clone()
            x[key] = 0.0
            return x

        return f

    for key, message in [((0, 0, 0), "too many indices"), ((slice(None, None, -1),), "greater than zero"),
                         ((torch.ones(3, dtype=torch.bool),), "does not match"), ((9,), "out of bounds")]:
        with pytest.raises(TracingError, match=message):
            trace_callable(key_of(key), (torch.randn(4, 2),))


def test_inplace_ops_are_tagged_and_survive_every_pass():
    trace = trace_callable(_iops, (torch.randn(2, 3), torch.rand(2, 3) + 0.5)).trace
    inplace = [b for b in trace.bsyms if Tag.INPLACE in b.symbol.tags]
    assert [b.symbol.name for b in inplace] == ["add_", "sub_", "mul_", "div_"]
    final = run_pipeline(trace, parse_passes(["dce,cse,rename,renumber"]))[-1].trace
    assert [b.symbol.name for b in final.bsyms if Tag.INPLACE in b.symbol.tags] == ["add_", "sub_", "mul_", "div_"]


def test_the_variable_keeps_its_name_through_inplace_updates():
    trace = trace_callable(_iops, (torch.randn(2, 3), torch.rand(2, 3) + 0.5)).trace
    renamed = run_pipeline(trace, parse_passes(["rename"]))[-1].trace
    assert [o.name for b in renamed.bsyms for o in b.iter_outputs()] == ["x_1", "x_2", "x_3", "x_4", "x_5"]


def test_the_compiled_function_mutates_what_eager_mutates():
    x, y = torch.ones(3), torch.full((3,), 2.0)
    program = trace_callable(_mutate_input, (x.clone(), y))
    mine = x.clone()
    compile_trace(program.trace)(mine, y)
    assert torch.equal(mine, torch.full((3,), 2.0)), "the input was written in place, as in eager"
    copy = x.clone()
    compile_trace(program.trace)(*program.inputs_for((copy, y), {}))
    kept = x.clone()
    program = trace_callable(_add_, (kept, y))
    compile_trace(program.trace)(kept, y)
    assert torch.equal(kept, torch.ones(3)), "a clone keeps the original untouched"


def _write_through_view(x):
    x = x.clone()
    row = x.reshape(6)
    row.add_(1)
    return x * 2


def _read_view_after_write(x):
    x = x.clone()
    flat = x.reshape(6)
    x.mul_(2)
    return flat + 1


def _augmented_row(x):
    t = x.clone()
    t[0] += 1
    h = t[:2]
    h *= 2
    return t


def _loop_of_row_writes(x):
    y = x.clone()
    for i in range(2):
        y[i].mul_(i + 1)
    return y


# Writes through views reach their base, and views read later are taken again from it.
case(("add_", "reshape"), "through-reshape", _write_through_view, T("f32", (2, 3)))
case(("mul_", "reshape"), "view-read-after-write", _read_view_after_write, T("f32", (2, 3)))
case(("add_", "setitem_"), "augmented-row", _augmented_row, T("f32", (3, 4)))
case(("mul_", "setitem_"), "row-writes-in-a-loop", _loop_of_row_writes, T("f32", (2, 3)))
case(("add_", "copy_"), "input-through-transpose", lambda x: (x.t().add_(1), x * 1)[1], T("f32", (3, 3)))


def _through_reshape_of_transpose(x):
    y = x.clone().t()
    y.reshape(-1).add_(1)  # torch copies here (y is not contiguous): the write may not reach y
    return y


def _read_reshape_of_transpose(x):
    y = x.clone().t()
    flat = y.reshape(-1)
    y.mul_(2)
    return flat


def _through_expand(x):
    y = x.clone()
    y.expand(3, 3).add_(1)
    return y


def _overlapping(x):
    y = x.clone()
    y.mul_(y.t())
    return y


@pytest.mark.parametrize(("fn", "message"), [
    (_through_reshape_of_transpose, "may not be contiguous"), (_read_reshape_of_transpose, "may have copied"),
    (_through_expand, "repeats or mixes"), (_overlapping, "partly overlapping"),
], ids=["write-reshape-maybe-copy", "read-reshape-maybe-copy", "write-expanded", "overlap"])
def test_writes_tracing_cannot_follow_are_refused_at_the_line(fn, message):
    with pytest.raises(TracingError, match=message) as info:
        trace_callable(fn, (torch.randn(3, 3),) if fn is not _through_expand else (torch.randn(3),))
    assert info.value.line is not None and "test_inplace.py" in info.value.file


def test_unmodelled_inplace_methods_are_opaque_writes_of_their_tensor():
    # torch's schema says exponential_ writes self: an opaque INPLACE (and RANDOM) op, the
    # user's tensor rebound to its result, run by torch with eager's random stream.
    def f(x):
        y = x.clone()
        y.exponential_()
        return y

    x = torch.randn(3)
    program = trace_callable(f, (x,))
    written = program.trace.bsyms[1]
    assert written.symbol.qualname == "torch.Tensor.exponential_"
    assert {Tag.INPLACE, Tag.RANDOM} <= written.symbol.tags
    assert program.trace.output is written.output
    torch.manual_seed(0)
    expected = f(x)
    torch.manual_seed(0)
    assert torch.equal(compile_trace(program.trace)(x), expected)


def test_inplace_then_reads_see_the_new_value():
    def f(x):
        x = x.clone()
        before = x * 1
        x.add_(10)
        return before, x

    trace = trace_callable(f, (torch.zeros(2),)).trace
    text = format_trace(trace, depth=0)
    out = compile_trace(trace)(torch.zeros(2))
    assert torch.equal(out[0], torch.zeros(2)) and torch.equal(out[1], torch.full((2,), 10.0)), text


def test_indexing_with_tensors_copies_so_a_later_write_is_fine():
    def f(x, idx):
        x = x.clone()
        picked = x[idx]
        x.add_(1)
        return picked + x.sum()

    x, idx = torch.arange(6.0).reshape(2, 3), torch.tensor([1, 0])
    program = trace_callable(f, (x, idx))
    torch.testing.assert_close(compile_trace(program.trace)(*program.inputs), f(x, idx))
