"""The shape ops (reshape and its spellings, permute, transpose, unsqueeze, squeeze,
expand, cat, pad) and the prims they lower to (broadcast_in_dim, reshape, transpose,
slice, cat, pad): exercised through the cases' lowered traces, pad's meta rule also
directly."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from tests.ops.harness import Case, T, case_adder, check_case, check_refused, refusal_tests, rows_by_id, tensor_value
from tracecli.core import dtypes
from tracecli.core.dims import Dim, evaluate
from tracecli.core.values import TensorValue
from tracecli.ops import prims
from tracecli.ops.promotion import ShapeError

CASES: list[Case] = []
case = case_adder(CASES)

# --- reshape, permute, transpose, unsqueeze, squeeze, expand ------------------------------------

for _dtype in ("f32", "i64", "bool", "bf16"):
    case("reshape", "fn", lambda x: torch.reshape(x, (4, 3)), T(_dtype, (3, 4)))
case("reshape", "method", lambda x: x.reshape(2, -1), T("f32", (2, 3, 4)))
case("reshape", "method-tuple", lambda x: x.reshape((6, 4)), T("f32", (2, 3, 4)))
case("reshape", "view", lambda x: x.view(-1), T("f32", (2, 3, 4)))
case("reshape", "view", lambda x: x.view(1, 1), T("f32", ()))
case("reshape", "to-0d", lambda x: x.reshape(()), T("f32", (1, 1)))
case("reshape", "view_as", lambda x, y: x.view_as(y), T("f32", (3, 4)), T("i64", (2, 6)))
case("reshape", "reshape_as", lambda x, y: x.reshape_as(y), T("f32", (3, 4)), T("i64", (12,)))
case("reshape", "flatten", torch.flatten, T("f32", (2, 3, 4)))
case("reshape", "flatten-start", lambda x: torch.flatten(x, 1), T("f32", (2, 3, 4)))
case("reshape", "flatten-method", lambda x: x.flatten(0, -2), T("i64", (2, 3, 4)))
case("reshape", "flatten-0d", torch.flatten, T("f32", ()))
case("permute", "method", lambda x: x.permute(2, 0, 1), T("f32", (2, 3, 4)))
case("permute", "fn", lambda x: torch.permute(x, (1, 0)), T("i64", (3, 4)))
case("permute", "negative", lambda x: x.permute((-1, 0, 1)), T("f32", (2, 3, 4)))
case("permute", "T", lambda x: x.T, T("f32", (3, 4)))
case("permute", "T", lambda x: x.T, T("bf16", (2, 3, 4)))
case("transpose", "fn", lambda x: torch.transpose(x, 0, 1), T("f32", (3, 4)))
case("transpose", "method", lambda x: x.transpose(-1, -3), T("f32", (2, 3, 4)))
case("transpose", "swapaxes", lambda x: torch.swapaxes(x, 1, 2), T("i64", (2, 3, 4)))
case("transpose", "swapdims", lambda x: x.swapdims(0, 1), T("f32", (2, 3)))
case("transpose", "mT", lambda x: x.mT, T("f32", (2, 3, 4)))
case(("transpose", "mul"), "mT-0d", lambda x, y: (x.mT * 1, y.mT), T("f32", ()), T("f32", (2, 3)))
case("transpose", "swapdims-fn", lambda x: torch.swapdims(x, 0, 2), T("f32", (2, 3, 4)))
case("transpose", "t-fn", torch.t, T("f32", (3, 4)))
case("transpose", "t-method", lambda x: x.t(), T("i64", (2, 5)))
for _dim in (0, 1, -1, 2):
    case("unsqueeze", f"method-dim{_dim}", lambda x, d=_dim: x.unsqueeze(d), T("f32", (3, 4)))
case("unsqueeze", "fn", lambda x: torch.unsqueeze(x, 0), T("f32", ()))
case("unsqueeze", "0d-negative", lambda x: x.unsqueeze(-1), T("bool", ()))
case("squeeze", "all", lambda x: x.squeeze(), T("f32", (1, 3, 1, 4)))
case("squeeze", "dim", lambda x: x.squeeze(2), T("f32", (1, 3, 1, 4)))
case("squeeze", "fn-neg", lambda x: torch.squeeze(x, -4), T("i64", (1, 3, 1, 4)))
case("squeeze", "dims", lambda x: x.squeeze((0, 2)), T("f32", (1, 3, 1, 4)))
case("squeeze", "to-0d", lambda x: x.squeeze(), T("f32", (1, 1)))
case("expand", "method", lambda x: x.expand(3, 4), T("f32", (3, 1)))
case("expand", "new-dims", lambda x: x.expand(2, 3, 4), T("i64", (4,)))
case("expand", "minus-one", lambda x: x.expand(2, -1, 4), T("f32", (3, 1)))
case("expand", "tuple", lambda x: x.expand((2, 3)), T("bool", ()))
case("expand", "expand_as", lambda x, y: x.expand_as(y), T("f32", (1, 4)), T("f64", (3, 4)))
case("expand", "broadcast_to", lambda x: torch.broadcast_to(x, (2, 3, 4)), T("f32", (3, 1)))
case("expand", "broadcast_to-method", lambda x: x.broadcast_to((3, 4)), T("f32", (4,)))

# --- cat ------------------------------------------------------------------------------------------

for _dim in (0, 1, -1):
    case("cat", f"fn-dim{_dim}", lambda a, b, d=_dim: torch.cat([a, b], d), T("f32", (2, 3)), T("f32", (2, 3)))
case("cat", "sizes", lambda a, b, c: torch.cat((a, b, c), dim=1), T("f32", (2, 1)), T("f32", (2, 3)), T("f32", (2, 2)))
case("cat", "promote", lambda a, b: torch.cat([a, b]), T("i64", (2, 3)), T("f32", (1, 3)))
case("cat", "promote", lambda a, b: torch.cat([a, b]), T("f16", (2,)), T("bf16", (3,)))
case("cat", "promote", lambda a, b: torch.cat([a, b], -1), T("bool", (2, 2)), T("u8", (2, 1)))
case("cat", "concat", lambda a, b: torch.concat([a, b], 0), T("bf16", (2, 3)), T("bf16", (2, 3)))
case("cat", "concatenate", lambda a, b: torch.concatenate([a, b], 1), T("i64", (2, 3)), T("i64", (2, 3)))
case("cat", "legacy-empty", lambda a, b: torch.cat([b, a, b]), T("f32", (0,)), T("f32", (2, 3)))
case("cat", "legacy-empty-promote", lambda a, b: torch.cat([a, b]), T("f64", (0,)), T("f32", (2, 3)))
case("cat", "empty-2d", lambda a, b: torch.cat([a, b]), T("f32", (0, 3)), T("f32", (2, 3)))
case("cat", "single-is-a-copy", lambda a: (torch.cat([a]).add_(1), a)[1], T("f32", (2, 3)))
case("cat", "single-beside-legacy-empty", lambda a, b: (torch.cat([b, a]).mul_(2), a)[1], T("i64", (3,)),
     T("i64", (0,)))

# --- pad --------------------------------------------------------------------------------------

case("pad", "constant", lambda x: F.pad(x, (1, 2)), T("f32", (2, 3)))
case("pad", "value", lambda x: F.pad(x, (1, 1, 2, 0), value=1.5), T("f64", (2, 3)))
case("pad", "crop", lambda x: F.pad(x, (-1, 2, 0, -1)), T("f32", (3, 4)))
case("pad", "all-dims", lambda x: F.pad(x, [1, 0, 0, 1, 2, 2]), T("f32", (2, 2, 2)))
case("pad", "int", lambda x: F.pad(x, (2, 2), value=7), T("i64", (3,)))
case("pad", "bool", lambda x: F.pad(x, (1, 1), value=True), T("bool", (2, 2)))
case("pad", "half", lambda x: F.pad(x, (0, 3)), T("bf16", (2, 2)))
case("pad", "reflect", lambda x: F.pad(x, (2, 1), mode="reflect"), T("f32", (2, 3, 5)))
case("pad", "reflect-2d", lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect"), T("f32", (1, 2, 4, 4)))
case("pad", "replicate", lambda x: F.pad(x, (1, 2, 0, 3), mode="replicate"), T("f32", (2, 3, 4)))
case("pad", "circular", lambda x: F.pad(x, (2, 3), mode="circular"), T("f32", (1, 2, 5)))
case("pad", "circular-2d", lambda x: F.pad(x, (1, 1, 1, 0), mode="circular"), T("f32", (1, 1, 3, 3)))
case("pad", "constant_pad_nd", lambda x: torch.constant_pad_nd(x, (1, 1), 2.0), T("f32", (2, 2)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


def test_pad_meta_matches_impl():
    padding = ((1, 0), (2, 3))
    got = prims.pad.impl(torch.rand(2, 3), 0.0, padding)
    assert prims.pad.meta(tensor_value((2, 3)), 0.0, padding).shape == tuple(got.shape) == (3, 8)
    with pytest.raises(ShapeError):
        prims.pad.meta(tensor_value((2, 3)), 0.0, ((-1, 0), (0, 0)))  # cropping is prims.slice's


REFUSED = (
    ("t-3d", lambda x: x.t(), T("f32", (2, 3, 4))),
    ("flatten-dims-reversed", lambda x: x.flatten(1, 0), T("f32", (2, 3))),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(REFUSED))
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)


REFUSED_CLEARLY = (
    ("pad-reflect-too-wide", lambda x: F.pad(x, (3, 0), mode="reflect"), (torch.rand(1, 3),), "smaller"),
)


test_refused_with_a_clear_error, test_eager_refuses_them_too = refusal_tests(REFUSED_CLEARLY)


def test_slice_scatter_meta_matches_impl():
    x, src = torch.rand(4, 6), torch.rand(2, 3)
    got = prims.slice_scatter.impl(x, src, (1, 0), (3, 6), (1, 2))
    assert torch.equal(got[1:3, ::2], src) and torch.equal(got[0], x[0]) and torch.equal(x, x.clone())
    want = prims.slice_scatter.meta(tensor_value((4, 6)), tensor_value((2, 3), name="s"), (1, 0), (3, 6), (1, 2))
    assert want.shape == tuple(got.shape)
    with pytest.raises(ShapeError, match="region"):
        prims.slice_scatter.meta(tensor_value((4, 6)), tensor_value((2, 2), name="s"), (1, 0), (3, 6), (1, 2))


def test_shape_meta_matches_impl():
    # prims.shape reads only the symbolic sizes (a static one is a constant where used).
    n, m = Dim.symbol("n"), Dim.symbol("m")
    x = TensorValue("x", (n, 4, m), dtypes.float32, "cpu")
    read = prims.shape.meta(x)
    assert read[1] is None and read[0].same(n) and read[2].same(m)
    sizes = prims.shape.impl(torch.zeros(5, 4, 7))
    assert [evaluate(d, {"n": 5, "m": 7}) for d in (read[0], read[2])] == [sizes[0], sizes[2]]
