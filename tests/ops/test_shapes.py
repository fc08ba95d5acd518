"""The shape ops (reshape and its spellings, permute, transpose, unsqueeze, squeeze,
expand, cat, pad) and the prims they lower to (broadcast_in_dim, reshape, transpose,
slice, cat, pad): exercised through the cases' lowered traces, pad's meta rule also
directly."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from tests.ops.harness import (
    X3,
    Case,
    T,
    case_adder,
    check_case,
    check_refused,
    check_stays_torch_call,
    refusal_tests,
    rows_by_id,
    tensor_value,
)
from tracecli.core import dtypes
from tracecli.core.dims import Dim, evaluate
from tracecli.core.errors import TracingError
from tracecli.core.values import TensorValue
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable
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

# --- the other spellings of transposes, reshapes and expansions ----------------------------------

case("transpose", "H", lambda x: x.H, T("f32", (3, 4)))
case("transpose", "mH", lambda x: x.mH, T("i64", (2, 3, 4)))
case("transpose", "adjoint", torch.adjoint, T("bf16", (3, 2)))
case("transpose", "adjoint-method", lambda x: x.adjoint(), T("bool", (2, 2, 3)))
case(("transpose", "mul"), "0d-conjugate-transposes", lambda x, y: (x.mH * 1, x.adjoint() * 1, x.H * 1, y.mH),
     T("f32", ()), T("f32", (2, 3)))
case("permute", "movedim", lambda x: torch.movedim(x, 0, -1), X3)
case("permute", "movedim-many", lambda x: x.movedim((0, 2), (2, 1)), T("i64", (2, 3, 4)))
case("permute", "moveaxis", lambda x: torch.moveaxis(x, [-1], [0]), T("f32", (2, 3, 4)))
case("ravel", "fn", torch.ravel, T("f32", (2, 3, 4)))
case("ravel", "method-0d", lambda x: x.ravel(), T("i64", ()))
case("ravel", "vector", torch.ravel, T("bool", (5,)))
case("ravel", "write-through", lambda x: (x.ravel().add_(1), x)[1], T("f32", (2, 3)))
case("reshape", "atleast_1d", torch.atleast_1d, T("f32", ()))
case("reshape", "atleast_2d", lambda a, b: torch.atleast_2d(a, b), T("f32", (3,)), T("i64", ()))
case("reshape", "atleast_3d", lambda a, b, c: torch.atleast_3d([a, b, c]), T("f32", (3,)), T("f32", (2, 3)),
     T("bool", ()))
case("reshape", "atleast_3d-matrix", torch.atleast_3d, T("f32", (2, 3)))
case("expand", "broadcast_tensors", torch.broadcast_tensors, T("f32", (3, 1)), T("i64", (2, 1, 4)))
case("expand", "broadcast_tensors-symbolic", lambda a, b: torch.broadcast_tensors(a, b), T("f32", (3, 4)),
     T("f32", (4,)))
case("expand", "broadcast_tensors-aten", lambda a, b: torch.ops.aten.broadcast_tensors.default([a, b]),
     T("f32", (3, 1)), T("f32", (4,)))
case("expand", "meshgrid", lambda a, b: torch.meshgrid(a, b, indexing="ij"), T("f32", (3,)), T("f32", (4,)))
case("expand", "meshgrid-xy", lambda a, b, c: torch.meshgrid([a, b, c], indexing="xy"), T("i64", (3,)),
     T("i64", (4,)), T("i64", (2,)))
case("expand", "meshgrid-0d", lambda a, b: torch.meshgrid(a, b, indexing="xy"), T("f32", ()), T("f32", (5,)))

# --- the *_copy spellings: the view, then a clone (a write to the result leaves the input) --------

case(("permute", "clone"), "permute_copy", lambda x: (torch.permute_copy(x, (1, 0)).add_(1), x), T("f32", (2, 3)))
case(("transpose", "clone"), "transpose_copy", lambda x: torch.transpose_copy(x, 0, -1), X3)
case(("transpose", "clone"), "t_copy", torch.t_copy, T("i64", (2, 3)))
case(("reshape", "clone"), "view_copy", lambda x: torch.view_copy(x, (3, 2)), T("f32", (2, 3)))
case(("unsqueeze", "clone"), "unsqueeze_copy", lambda x: torch.unsqueeze_copy(x, 1), T("bool", (2, 3)))
case(("squeeze", "clone"), "squeeze_copy", lambda x: torch.squeeze_copy(x, (0, 2)), T("f32", (1, 3, 1)))
case(("expand", "clone"), "expand_copy", lambda x: torch.expand_copy(x, (2, 3, 4)).add_(1), T("f32", (3, 1)))
case(("select", "clone"), "select_copy", lambda x: (torch.select_copy(x, 1, -1).mul_(2), x), T("f32", (3, 4)))
case(("diagonal", "clone"), "diagonal_copy", lambda x: (torch.diagonal_copy(x, 1).add_(1), x), T("f32", (3, 4)))
case(("unfold", "clone"), "unfold_copy", lambda x: torch.unfold_copy(x, 0, 2, 1).add_(1), T("f32", (4,)))

# --- select, diagonal, unfold, narrow_copy --------------------------------------------------------

for _dtype in ("f32", "i64", "bool", "bf16"):
    case("select", "method", lambda x: x.select(1, 2), T(_dtype, (3, 4)))
case("select", "aten", lambda x: torch.ops.aten.select.int(x, 0, 1), T("f32", (3, 4)))
case("select", "fn-negative", lambda x: torch.select(x, -1, -1), X3)
case("select", "vector", lambda x: x.select(0, 3), T("f32", (5,)))
case("select", "size-1", lambda x: x.select(0, 0), T("f32", (1, 3)))
case("select", "write-through", lambda x: (x.select(1, 0).mul_(2), x)[1], T("f32", (3, 4)))
case("diagonal", "fn", torch.diagonal, T("f32", (3, 4)))
case("diagonal", "offset", lambda x: x.diagonal(1), T("f32", (4, 4)))
case("diagonal", "negative-offset", lambda x: torch.diagonal(x, -2), T("i64", (5, 3)))
case("diagonal", "offset-past-the-end", lambda x: x.diagonal(offset=5), T("f32", (3, 4)))
case("diagonal", "dims", lambda x: torch.diagonal(x, 0, 2, 0), X3)
case("diagonal", "dims-kw", lambda x: x.diagonal(offset=-1, dim1=-1, dim2=1), T("bool", (2, 3, 4)))
case("diagonal", "empty", torch.diagonal, T("f32", (0, 3)))
case("diagonal", "read-after-write", lambda x: (lambda d: (x.mul_(2), d * 1)[1])(x.diagonal(1)), T("f32", (3, 4)))
case("unfold", "method", lambda x: x.unfold(0, 2, 1), T("f32", (5,)))
case("unfold", "step", lambda x: x.unfold(1, 2, 3), T("i64", (2, 7, 3)))
case("unfold", "last-dim", lambda x: x.unfold(-1, 3, 1), X3)
case("unfold", "whole", lambda x: x.unfold(0, 3, 1), T("bool", (3, 2)))
case("unfold", "0d", lambda x: x.unfold(0, 1, 1), T("f32", ()))
case("unfold", "empty-window", lambda x: x.unfold(0, 0, 2), T("f32", (4,)))
case("narrow_copy", "fn", lambda x: torch.narrow_copy(x, 0, 1, 2), T("f32", (3, 4)))
case("narrow_copy", "method-negative", lambda x: x.narrow_copy(-1, -3, 2), T("i64", (2, 5)))
case("narrow_copy", "whole", lambda x: torch.narrow_copy(x, 1, 0, 4).add_(1), T("f32", (3, 4)))

# --- diag, diag_embed, diagflat -------------------------------------------------------------------

for _dtype in ("f32", "i64", "bool", "f16"):
    case("diag", "vector", torch.diag, T(_dtype, (4,)))
    case("diag", "matrix", torch.diag, T(_dtype, (3, 4)))
case("diag", "vector-offset", lambda x: torch.diag(x, 2), T("f32", (3,)))
case("diag", "vector-negative-offset", lambda x: x.diag(-1), T("f32", (3,)))
case("diag", "matrix-offset", lambda x: x.diag(diagonal=1), T("f32", (4, 4)))
case("diag", "matrix-negative-offset", lambda x: torch.diag(x, -3), T("f32", (4, 2)))
case("diag", "empty", lambda x: torch.diag(x, 1), T("f32", (0,)))
case("diag_embed", "fn", torch.diag_embed, T("f32", (2, 3)))
case("diag_embed", "offset", lambda x: x.diag_embed(1), T("i64", (3,)))
case("diag_embed", "dims", lambda x: torch.diag_embed(x, -1, 0, 2), T("f32", (2, 3)))
case("diag_embed", "dims-swapped", lambda x: torch.diag_embed(x, offset=2, dim1=-1, dim2=0), T("bf16", (2, 2, 3)))
case("diagflat", "vector", torch.diagflat, T("f32", (3,)))
case("diagflat", "matrix-offset", lambda x: torch.diagflat(x, -1), T("i64", (2, 2)))
case("diagflat", "0d-method", lambda x: x.diagflat(1), T("bool", ()))

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
# Negative amounts crop: reflect and replicate extend the whole input first, circular wraps what is left.
case("pad", "reflect-crop", lambda x: F.pad(x, (-1, 3), mode="reflect"), T("f32", (2, 3, 4)))
case("pad", "reflect-crop-2d", lambda x: F.pad(x, (2, -3, -1, 1), mode="reflect"), T("f32", (1, 2, 4, 4)))
case("pad", "replicate-crop-all", lambda x: F.pad(x, (-4, 5), mode="replicate"), T("f32", (1, 2, 4)))
case("pad", "replicate-crop-both", lambda x: F.pad(x, (-2, -1, 1, -2), mode="replicate"), T("i64", (2, 3, 5)))
case("pad", "circular-crop", lambda x: F.pad(x, (-1, 3), mode="circular"), T("f32", (1, 2, 4)))
case("pad", "circular-crop-to-nothing", lambda x: F.pad(x, (-3, -1), mode="circular"), T("f32", (1, 2, 4)))


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
    ("H-3d", lambda x: x.H, T("f32", (2, 3, 4))),
    ("H-vector", lambda x: x.H, T("f32", (3,))),
    ("mH-vector", lambda x: x.mH, T("f32", (3,))),
    ("movedim-lengths", lambda x: x.movedim((0, 1), (0,)), T("f32", (2, 3))),
    ("movedim-repeated", lambda x: x.movedim((0, 0), (0, 1)), T("f32", (2, 3))),
    ("broadcast_tensors", lambda x: torch.broadcast_tensors(x, x[:2]), T("f32", (3, 4))),
    ("meshgrid-2d", lambda x: torch.meshgrid(x, x, indexing="ij"), T("f32", (2, 3))),
    ("meshgrid-dtypes", lambda x: torch.meshgrid(x, x.int(), indexing="ij"), T("f32", (3,))),
    ("meshgrid-indexing", lambda x: torch.meshgrid(x, x, indexing="ji"), T("f32", (3,))),
    ("select-0d", lambda x: x.select(0, 0), T("f32", ())),
    ("select-out-of-range", lambda x: x.select(1, 4), T("f32", (3, 4))),
    ("select-negative-out-of-range", lambda x: x.select(0, -4), T("f32", (3, 4))),
    ("diagonal-vector", torch.diagonal, T("f32", (3,))),
    ("diagonal-same-dims", lambda x: x.diagonal(0, 1, -1), T("f32", (3, 4))),
    ("unfold-too-large", lambda x: x.unfold(0, 4, 1), T("f32", (3,))),
    ("unfold-step", lambda x: x.unfold(0, 2, 0), T("f32", (3,))),
    ("narrow_copy-past-the-end", lambda x: x.narrow_copy(0, 2, 2), T("f32", (3,))),
    ("diag-3d", torch.diag, T("f32", (2, 2, 2))),
    ("diag_embed-same-dims", lambda x: torch.diag_embed(x, 0, 0, -3), T("f32", (2, 3))),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(REFUSED))
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)


REFUSED_CLEARLY = (
    ("pad-reflect-too-wide", lambda x: F.pad(x, (3, 0), mode="reflect"), (torch.rand(1, 3),), "smaller"),
    ("pad-reflect-crop-too-wide", lambda x: F.pad(x, (-1, 4), mode="reflect"), (torch.rand(1, 4),), "smaller"),
    ("pad-replicate-crop-all", lambda x: F.pad(x, (-3, -1), mode="replicate"), (torch.rand(1, 4),), "nothing"),
    ("pad-circular-wraps-twice", lambda x: F.pad(x, (-1, 4), mode="circular"), (torch.rand(1, 4),), "exceed"),
)


test_refused_with_a_clear_error, test_eager_refuses_them_too = refusal_tests(REFUSED_CLEARLY)


def test_flip_meta_matches_impl():
    # flip, fliplr, flipud and rot90 (tests/ops/test_movement.py) lower to it.
    x = torch.rand(2, 3, 4)
    got = prims.flip.impl(x, (0, 2))
    assert torch.equal(got, x[[1, 0]][..., [3, 2, 1, 0]])
    assert prims.flip.meta(tensor_value((2, 3, 4)), (0, 2)).shape == tuple(got.shape)
    for dims in ((0, 0), (3,), (-1,)):
        with pytest.raises(ShapeError, match="distinct dimensions"):
            prims.flip.meta(tensor_value((2, 3, 4)), dims)


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


def test_a_write_through_a_diagonal_reaches_its_base_through_diagonal_scatter():
    def f(x):
        d = x.diagonal(1)
        d.add_(1)
        return x, d * 2

    x = torch.randn(3, 4)
    program = trace_callable(f, (x.clone(),), name="f")
    ops = [b.symbol.qualname for b in program.trace.bsyms]
    assert ops[:2] == ["ltorch.diagonal", "ltorch.add_"] and "torch.diagonal_scatter" in ops
    got_x, want_x = x.clone(), x.clone()
    for got, want in zip(compile_trace(program.trace)(got_x), f(want_x), strict=True):
        torch.testing.assert_close(got, want)
    torch.testing.assert_close(got_x, want_x)


def _alias_copy(x):
    a = torch.alias_copy(x)
    a.add_(1)
    return a, torch.detach_copy(x), x


# Copies of views that other families' ops make: checked like the cases, filed here.
OTHER_FAMILIES: list[Case] = []
case_adder(OTHER_FAMILIES)(("getitem", "clone"), "slice_copy", lambda x: torch.slice_copy(x, -1, 1, None, 2),
                           T("f32", (3, 5)))
case_adder(OTHER_FAMILIES)("clone", "alias_copy-detach_copy", _alias_copy, T("f32", (3,)))


@pytest.mark.parametrize("case", OTHER_FAMILIES, ids=lambda c: c.id)
def test_copies_of_other_families_views(case: Case):
    check_case(case)


def test_the_out_variants_of_copies_write_a_copy_into_out():
    def fn(x, z):
        return torch.permute_copy(x, (1, 0), out=z)

    x = torch.rand(2, 3)
    program = trace_callable(fn, (x, torch.rand(3, 2)))
    assert program.trace.bsyms[-1].symbol.qualname == "ltorch.copy_"
    z = torch.zeros(3, 2)
    compile_trace(program.trace)(x, z)
    assert torch.equal(z, x.t())


def _write_through_unfold(x):
    x.unfold(0, 2, 1).add_(1)
    return x


def _write_through_meshgrid(x):
    a, _ = torch.meshgrid(x, x, indexing="ij")
    a.mul_(2)
    return x


@pytest.mark.parametrize("fn", [_write_through_unfold, _write_through_meshgrid], ids=["unfold", "meshgrid"])
def test_writes_through_views_that_repeat_elements_are_refused(fn):
    # Eager refuses the write to the expanded grid; overlapping windows it writes through
    # its kernel's loop over the windows, an element once for each window holding it.
    with pytest.raises(TracingError, match="repeats or mixes"):
        trace_callable(fn, (torch.randn(4),), name="f")


OPAQUE_FORMS = (
    ("H-complex", lambda x: x.H, T("c64", (2, 3)), "torch.Tensor.H.__get__"),
    ("mH-complex", lambda x: x.mH, T("c64", (2, 2, 3)), "torch.Tensor.mH.__get__"),
    ("adjoint-complex", lambda x: x.adjoint(), T("c64", (2, 3)), "torch.Tensor.adjoint"),
)


@pytest.mark.parametrize(("fn", "arg", "opaque"), rows_by_id(OPAQUE_FORMS))
def test_conjugate_transposes_of_complex_tensors_stay_torch_calls(fn, arg, opaque):
    check_stays_torch_call(fn, (arg,), opaque)
