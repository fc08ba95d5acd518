"""The neural-network layers that are neither convolution, pooling, loss nor
attention: embedding, dropout and the normalisations (layer_norm, rms_norm,
batch_norm, group_norm, instance_norm, local_response_norm, normalize). They decompose into other families' prims and have none of
their own (dropout's draw is factories' bernoulli prim).

Module forms call nn.Module instances, whose parameters and buffers become trace inputs.
Dropout draws the same mask as eager (same RNG stream, contiguous input); outside
training it is the identity and records nothing.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from tests.ops.harness import (
    FLOATS,
    SEED,
    Case,
    L,
    T,
    case_adder,
    check_case,
    check_refused,
    check_stays_torch_call,
    entry,
    module,
    refusal_tests,
    rows_by_id,
)
from tracecli.core.symbol import Tag
from tracecli.core.trace import walk
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable
from tracecli.ops import ltorch, prims
from tracecli.passes.lower import lower

CASES: list[Case] = []
case = case_adder(CASES)

HALF = ("f16", "bf16")

# --- embedding ----------------------------------------------------------------------------------

for _dtype in FLOATS:
    case("embedding", "F", F.embedding, T("i64", (2, 3), "small"), T(_dtype, (4, 5)))
case("embedding", "F-i32", F.embedding, T("i32", (7,), "small"), T("f32", (4, 3)))
case("embedding", "F-0d", F.embedding, L(2, "i64"), T("f32", (4, 3)))
case("embedding", "F-3d", F.embedding, T("i64", (2, 2, 3), "small"), T("f32", (4, 6)))
case("embedding", "F-padding_idx", lambda i, w: F.embedding(i, w, padding_idx=0), T("i64", (5,), "small"),
     T("f32", (4, 3)))
case("embedding", "F-padding_idx-negative", lambda i, w: F.embedding(i, w, padding_idx=-1), T("i64", (5,), "small"),
     T("f32", (4, 3)))
case("embedding", "torch-fn", lambda i, w: torch.embedding(w, i), T("i64", (3,), "small"), T("f64", (4, 2)))
case("embedding", "int-table", F.embedding, T("i64", (3,), "small"), T("i64", (4, 2)))
case("embedding", "module", module(lambda: nn.Embedding(10, 4)), L((0, 9, 3, 3), "i64"))
case("embedding", "module-padding_idx", module(lambda: nn.Embedding(10, 4, padding_idx=1)), L(((1, 2), (9, 1)), "i64"))

# --- dropout: the same mask as eager (same RNG stream, contiguous input) -------------------------

for _dtype in FLOATS:
    case("dropout", "F", lambda x: F.dropout(x, 0.3), T(_dtype, (3, 4)), random=True)
for _p in (0.1, 0.5, 0.9):
    case("dropout", f"F-p{_p}", lambda x, p=_p: F.dropout(x, p, training=True), T("f32", (2, 3, 40)), random=True)
case("dropout", "p1", lambda x: F.dropout(x, p=1.0), T("f32", (3, 4)), random=True)
# p=1 draws nothing (eager multiplies by zero): NaN and inf become NaN, compared as such.
case("dropout", "p1-nan", lambda x: F.dropout(x, p=1.0), L((math.nan, -1.0, math.inf), "f32"))
case("dropout", "torch-fn", lambda x: torch.dropout(x, 0.2, True), T("f32", (5,)), random=True)
case("dropout", "module", module(lambda: nn.Dropout(0.25)), T("f32", (4, 6)), random=True)
case("dropout", "0d", lambda x: F.dropout(x, 0.5), T("f32", ()), random=True)
case(("dropout", "add"), "two-draws", lambda x: F.dropout(x, 0.5) + F.dropout(x, 0.5), T("f32", (3, 4)), random=True)
case(("dropout", "rand_like"), "with-rand", lambda x: F.dropout(x + torch.rand_like(x), 0.4), T("f32", (8,)),
     random=True)

# --- layer_norm ---------------------------------------------------------------------------------

for _dtype in FLOATS:
    case("layer_norm", "F", lambda x: F.layer_norm(x, (4,)), T(_dtype, (2, 3, 4)))
case("layer_norm", "affine",
     lambda x, w, b: F.layer_norm(x, (4,), w, b), T("f32", (2, 3, 4)), T("f32", (4,)), T("f32", (4,)))
case("layer_norm", "2d-shape",
     lambda x, w, b: F.layer_norm(x, (3, 4), w, b, eps=1e-3), T("f32", (2, 3, 4)), T("f32", (3, 4)),
     T("f32", (3, 4)))
case("layer_norm", "weight-only", lambda x, w: F.layer_norm(x, [4], weight=w), T("f64", (3, 4)), T("f64", (4,)))
case("layer_norm", "1d", lambda x: F.layer_norm(x, (5,)), T("f32", (5,)))
case("layer_norm", "bf16-affine",
     lambda x, w, b: F.layer_norm(x, (4,), w, b), T("bf16", (3, 4)), T("bf16", (4,)), T("bf16", (4,)))
case("layer_norm", "module", lambda x: torch.nn.functional.layer_norm(x, x.shape[-1:]), T("f32", (3, 4)))
case("layer_norm", "torch-fn", lambda x, w: torch.layer_norm(x, (4,), w), T("f32", (3, 4)), T("f32", (4,)))
case("layer_norm", "constant", lambda x: F.layer_norm(x, (3,)), L(((2.0, 2.0, 2.0), (1.0, 2.0, 3.0)), "f32"))
# The normalized shape read from a tensor, as models do: with symbolic sizes nothing pins.
case("layer_norm", "weight-shape",
     lambda x, w, b: F.layer_norm(x, w.shape, w, b), T("f32", (2, 3, 4)), T("f32", (4,)), T("f32", (4,)))

# --- rms_norm ---------------------------------------------------------------------------------

for _dtype in FLOATS:
    case("rms_norm", "F", lambda x: F.rms_norm(x, (4,)), T(_dtype, (2, 3, 4)))
    case("rms_norm", "F-weight", lambda x, w: F.rms_norm(x, (4,), w), T(_dtype, (3, 4)), T(_dtype, (4,)))
for _dtype in HALF:
    case("rms_norm", "f32-weight", lambda x, w: F.rms_norm(x, [4], weight=w), T(_dtype, (3, 4)), T("f32", (4,)))
case("rms_norm", "eps", lambda x: F.rms_norm(x, (4,), eps=1e-2), T("f32", (3, 4)))
case("rms_norm", "2d-shape", lambda x, w: F.rms_norm(x, (3, 4), w), T("f32", (2, 3, 4)), T("f32", (3, 4)))
case("rms_norm", "1d", lambda x: F.rms_norm(x, [4]), T("f64", (4,)))
case("rms_norm", "torch-fn", lambda x, w: torch.rms_norm(x, [4], w, 1e-6), T("f32", (3, 4)), T("f32", (4,)))
case("rms_norm", "module", module(lambda: nn.RMSNorm(6)), T("f32", (2, 6)))
case("rms_norm", "module-eps", module(lambda: nn.RMSNorm([2, 3], eps=1e-5)), T("f32", (4, 2, 3)))
case("rms_norm", "zeros", lambda x: F.rms_norm(x, (3,)), L((0.0, 0.0, 0.0), "f32"))
case("rms_norm", "input-shape", lambda x: F.rms_norm(x, x.shape[-2:]), T("f32", (2, 3, 4)))
case("rms_norm", "weight-shape", lambda x, w: F.rms_norm(x, w.shape, w), T("bf16", (3, 4)), T("bf16", (4,)))

# --- batch_norm ---------------------------------------------------------------------------------

for _dtype in FLOATS:
    case("batch_norm", "eval", lambda x, m, v: F.batch_norm(x, m, v), T(_dtype, (2, 3, 4, 5)), T(_dtype, (3,)),
         T(_dtype, (3,), "pos"))
    case("batch_norm", "train-batch-stats", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
         T(_dtype, (4, 3, 5)), T(_dtype, (3,)), T(_dtype, (3,)))
for _dtype in HALF:
    case("batch_norm", "eval-f32-params", lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, eps=1e-3),
         T(_dtype, (2, 3, 4)), T("f32", (3,)), T("f32", (3,), "pos"), T("f32", (3,)), T("f32", (3,)))
case("batch_norm", "eval-affine", lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, False, 0.1, 1e-3),
     T("f32", (2, 3)), T("f32", (3,)), T("f32", (3,), "pos"), T("f32", (3,)), T("f32", (3,)))
case("batch_norm", "eval-weight-only", lambda x, m, v, w: F.batch_norm(x, m, v, weight=w),
     T("f64", (2, 3, 2, 2, 2)), T("f64", (3,)), T("f64", (3,), "pos"), T("f64", (3,)))
case("batch_norm", "torch-fn", lambda x, w, b, m, v: torch.batch_norm(x, w, b, m, v, False, 0.1, 1e-5, False),
     T("f32", (2, 3, 4)), T("f32", (3,)), T("f32", (3,)), T("f32", (3,)), T("f32", (3,), "pos"))
_STATS = {"running_mean": lambda: torch.rand(3) - 0.5, "running_var": lambda: torch.rand(3) + 0.5}
case("batch_norm", "module-2d", module(lambda: nn.BatchNorm2d(3).eval(), buffers=_STATS), T("f32", (2, 3, 4, 4)))
case("batch_norm", "module-1d", module(lambda: nn.BatchNorm1d(3).eval(), buffers=_STATS), T("f32", (5, 3)))
# Training with running statistics: they are updated in place (compared as written inputs).
case("batch_norm", "module-2d-training", module(lambda: nn.BatchNorm2d(3), buffers=_STATS), T("f32", (2, 3, 4, 4)))
case("batch_norm", "module-1d-training", module(lambda: nn.BatchNorm1d(3), buffers=_STATS), T("f32", (5, 3)))
case("batch_norm", "module-no-running-stats", module(lambda: nn.BatchNorm2d(3, track_running_stats=False)),
     T("f32", (2, 3, 4, 4)))
case("batch_norm", "module-no-affine", module(lambda: nn.BatchNorm1d(3, affine=False).eval(), buffers=_STATS),
     T("f32", (4, 3, 6)))

# --- group_norm ---------------------------------------------------------------------------------

for _dtype in FLOATS:
    case("group_norm", "F", lambda x: F.group_norm(x, 2), T(_dtype, (2, 4, 3, 3)))
    case("group_norm", "F-affine", lambda x, w, b: F.group_norm(x, 3, w, b), T(_dtype, (2, 6, 5)), T(_dtype, (6,)),
         T(_dtype, (6,)))
for _dtype in HALF:
    case("group_norm", "f32-params", lambda x, w, b: F.group_norm(x, 2, w, b), T(_dtype, (2, 4, 5)), T("f32", (4,)),
         T("f32", (4,)))
case("group_norm", "eps", lambda x: F.group_norm(x, 1, eps=1e-2), T("f32", (3, 4)))
case("group_norm", "per-channel", lambda x, w: F.group_norm(x, 4, weight=w), T("f32", (2, 4, 2, 3)), T("f32", (4,)))
case("group_norm", "torch-fn", lambda x, w, b: torch.group_norm(x, 2, w, b, 1e-5, False), T("f32", (2, 4, 3)),
     T("f32", (4,)), T("f32", (4,)))
case("group_norm", "module", module(lambda: nn.GroupNorm(2, 6)), T("f32", (2, 6, 4, 4)))


# --- instance_norm ------------------------------------------------------------------------------

for _dtype in FLOATS:
    case("instance_norm", "F", F.instance_norm, T(_dtype, (2, 3, 5)))
    case("instance_norm", "F-affine", lambda x, w, b: F.instance_norm(x, weight=w, bias=b), T(_dtype, (2, 3, 4, 4)),
         T(_dtype, (3,)), T(_dtype, (3,)))
for _dtype in HALF:
    case("instance_norm", "f32-params", lambda x, w, b: F.instance_norm(x, weight=w, bias=b, eps=1e-3),
         T(_dtype, (2, 3, 6)), T("f32", (3,)), T("f32", (3,)))
case("instance_norm", "3d", lambda x, w: F.instance_norm(x, weight=w), T("f64", (1, 2, 2, 3, 2)), T("f64", (2,)))
case("instance_norm", "torch-fn", lambda x, w, b: torch.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, False),
     T("f32", (2, 3, 4)), T("f32", (3,)), T("f32", (3,)))
case("instance_norm", "module", module(lambda: nn.InstanceNorm2d(3)), T("f32", (2, 3, 4, 5)))
case("instance_norm", "module-affine-unbatched", module(lambda: nn.InstanceNorm1d(4, affine=True)), T("f32", (4, 6)))
case("instance_norm", "constant", F.instance_norm, L((((1.0, 1.0, 1.0), (1.0, 2.0, 3.0)),), "f32"))

# --- local_response_norm ---------------------------------------------------------------------------

for _dtype in FLOATS:
    case("local_response_norm", "F", lambda x: F.local_response_norm(x, 2), T(_dtype, (2, 5, 4)))
for _size in (1, 3, 4, 7):
    case("local_response_norm", f"size{_size}", lambda x, n=_size: F.local_response_norm(x, n, 0.1, 0.5, 2.0),
         T("f32", (2, 5, 3, 2)))
case("local_response_norm", "int", lambda x: F.local_response_norm(x, 3), T("i64", (2, 4, 3)))
case("local_response_norm", "5d", lambda x: F.local_response_norm(x, 3, alpha=1e-2), T("f64", (1, 4, 2, 3, 2)))
case("local_response_norm", "module", module(lambda: nn.LocalResponseNorm(2)), T("f32", (2, 6, 3, 3)))

# --- normalize -------------------------------------------------------------------------------------

for _dtype in FLOATS:
    case("normalize", "F", F.normalize, T(_dtype, (3, 4)))
for _p in (1, 2, 3.0, math.inf, 0.5):
    case("normalize", f"p{_p}", lambda x, p=_p: F.normalize(x, p, dim=-1), T("f32", (2, 3, 4)))
case("normalize", "dims", lambda x: F.normalize(x, dim=(0, 2)), T("f32", (2, 3, 4)))
case("normalize", "zeros", lambda x: F.normalize(x, dim=0), L(((0.0, 1.0), (0.0, -2.0)), "f32"))
case("normalize", "zeros-half", lambda x: F.normalize(x, dim=0), L(((0.0, 1.0), (0.0, -2.0)), "f16"))
case("normalize", "eps", lambda x: F.normalize(x, eps=10.0), T("f32", (3, 4)))
case("normalize", "0d", lambda x: F.normalize(x, dim=0), T("f32", ()))
case("normalize", "p-none", lambda x: F.normalize(x, p=None), T("f32", (3, 4)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


def _trace(fn, *args):
    return trace_callable(entry(fn), args, name="fn").trace


@pytest.mark.parametrize("fn", [F.instance_norm, lambda x: F.local_response_norm(x, 2)], ids=["instance", "lrn"])
def test_empty_inputs_are_returned_as_they_are(fn):
    # torch returns an empty input as it is (an empty result, for instance_norm).
    for shape in ((0, 3, 4), (2, 0, 3)):
        trace = _trace(fn, torch.ones(shape))
        assert trace.bsyms == () and trace.output is trace.inputs[0]


# --- dropout outside training is the identity; random draws are tagged ---------------------------------

IDENTITY_DROPOUT = (
    ("F-eval", lambda x: F.dropout(x, 0.5, training=False)),
    ("F-p0", lambda x: F.dropout(x, 0.0)),
    ("module-eval", module(lambda: nn.Dropout(0.3).eval())),
    ("module-inplace-eval", module(lambda: nn.Dropout(0.3, inplace=True).eval())),
    ("torch-fn-eval", lambda x: torch.dropout(x, 0.5, False)),
    ("dropout2d-eval", lambda x: F.dropout2d(x, 0.5, training=False)),
    ("alpha_dropout-default", lambda x: F.alpha_dropout(x, 0.5)),
    ("after-relu-eval", lambda x: F.dropout(F.relu(x), 0.1, False)),
)


@pytest.mark.parametrize("fn", rows_by_id(IDENTITY_DROPOUT))
def test_dropout_outside_training_records_nothing(fn):
    trace = _trace(fn, torch.ones(2, 3, 4))
    assert [b.symbol.qualname for b in trace.bsyms] in ([], ["ltorch.relu"])


def test_dropout_eval_returns_the_input_itself():
    trace = _trace(lambda x: F.dropout(x, 0.5, training=False), torch.ones(3))
    assert trace.bsyms == () and trace.output is trace.inputs[0]


def test_random_draws_are_tagged_and_pinned():
    """dropout (and attention with dropout) hold a RANDOM prim, which dce and cse keep."""
    q = torch.ones(1, 2, 3, 4)
    trace = _trace(lambda x: (F.dropout(x, 0.5), F.scaled_dot_product_attention(x, x, x, dropout_p=0.5)), q)
    random = [b.symbol.qualname for _, b in walk(trace.bsyms) if Tag.RANDOM in b.tags]
    assert random == ["ltorch.dropout", "prims.bernoulli", "ltorch.dropout", "prims.bernoulli"]
    assert Tag.RANDOM in ltorch.ALL["dropout"].tags and Tag.RANDOM in prims.ALL["bernoulli"].tags
    # Attention without dropout is pure.
    assert Tag.RANDOM not in ltorch.ALL["scaled_dot_product_attention"].tags


def test_dropout_of_a_non_contiguous_input_is_a_dropout_of_it():
    """Eager draws the mask in the input's memory order; the prims level draws it in
    logical order, so for a transposed input the masks differ. Both must still be a
    dropout of the same input: every element zero or scaled by 1 / (1 - p), zeros at
    about the rate p (the torch level calls F.dropout and matches exactly)."""
    p = 0.3
    x = torch.rand(300, 200) + 1.0  # no zeros of its own

    def fn(a):
        return F.dropout(a.t(), p)

    program = trace_callable(fn, (x,), name="fn")
    lowered = compile_trace(lower(program.trace).trace)
    torch.manual_seed(SEED)
    expected = fn(x)
    torch.manual_seed(SEED)
    actual = lowered(*program.inputs)
    for out in (expected, actual):
        assert out.shape == (200, 300) and out.dtype == torch.float32
        kept = out != 0
        torch.testing.assert_close(out[kept], (x.t() / (1 - p))[kept])
        assert abs(1 - kept.float().mean().item() - p) < 0.01
    torch.manual_seed(SEED)
    assert torch.equal(compile_trace(program.trace)(*program.inputs), expected)


# --- forms left to torch, and forms refused ----------------------------------------------------------

OPAQUE_FORMS = (
    # The renormalisation in place is torch's; the lookup after it is modelled.
    ("embedding-max_norm", lambda i, w: F.embedding(i, w, max_norm=1.0), (L((0, 3, 1), "i64"), T("f32", (4, 6), "pos")),
     "torch.embedding_renorm_"),
    ("dropout2d-training", lambda w: F.dropout2d(w.unsqueeze(0), 0.5), (T("f32", (4, 6), "pos"),),
     "torch.nn.functional.dropout2d"),
    ("instance_norm-running-stats", lambda x, m, v: F.instance_norm(x, m, v, use_input_stats=False),
     (T("f32", (2, 3, 4)), T("f32", (3,)), T("f32", (3,), "pos")), "torch.nn.functional.instance_norm"),
    ("normalize-complex", lambda x: F.normalize(x), (T("c64", (3, 4)),), "torch.nn.functional.normalize"),
)


@pytest.mark.parametrize(("fn", "args", "opaque"), rows_by_id(OPAQUE_FORMS))
def test_unmodelled_forms_stay_torch_calls(fn, args, opaque):
    check_stays_torch_call(fn, args, opaque)


REFUSED = (
    ("layer_norm-int", lambda x: F.layer_norm(x, (3,)), T("i64", (3,))),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(REFUSED))
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)


# The first two are refused by the tracer only (they need what the trace cannot see or do).
OURS_ONLY = (
    ("batch_norm-training-cumulative",
     lambda x, m, v: F.batch_norm(x, m, v, training=True, momentum=None),
     (torch.rand(2, 3, 4, 4), torch.zeros(3), torch.ones(3)), "momentum=None"),
    ("dropout-inplace-training", lambda x: F.dropout(x, 0.5, True, True), (torch.rand(3),), "inplace"),
)
EAGER_REFUSED = (
    ("embedding-float-indices", F.embedding, (torch.rand(3), torch.rand(4, 2)), "indices"),
    ("group_norm-groups", lambda x: F.group_norm(x, 3), (torch.rand(2, 4, 3),), "groups"),
    ("batch_norm-f64-params", lambda x, m, v: F.batch_norm(x, m, v),
     (torch.rand(2, 3), torch.rand(3).double(), torch.rand(3).double()), "parameters"),
    ("rms_norm-shape", lambda x: F.rms_norm(x, (3,)), (torch.rand(2, 4),), "normalized_shape"),
    ("rms_norm-int-shape", lambda x: F.rms_norm(x, 4), (torch.rand(2, 4),), "tuple of ints"),
    ("dropout-p", lambda x: F.dropout(x, 1.5), (torch.rand(3),), "probability"),
    ("instance_norm-spatial", F.instance_norm, (torch.rand(2, 3),), "spatial"),
    ("instance_norm-no-stats", lambda x: F.instance_norm(x, use_input_stats=False), (torch.rand(2, 3, 4),),
     "running_mean"),
    ("local_response_norm-2d", lambda x: F.local_response_norm(x, 2), (torch.rand(2, 3),), "3D"),
    ("normalize-int", F.normalize, (torch.arange(6).reshape(2, 3),), "floating point"),
)


test_refused_with_a_clear_error, test_eager_refuses_them_too = refusal_tests(EAGER_REFUSED, ours_only=OURS_ONLY)
