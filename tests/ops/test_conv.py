"""Convolution: conv1d, conv2d and conv3d as functions and as nn.Conv modules (also
with padding modes, which pad first), and the convolution prim: exercised through the
cases' lowered traces and its meta rule checked directly on several geometries."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from tests.ops.harness import (
    FLOATS,
    Case,
    T,
    case_adder,
    check_case,
    check_stays_torch_call,
    module,
    refusal_tests,
    rows_by_id,
    tensor_value,
)
from tracecli.core import dtypes
from tracecli.core.values import TensorType
from tracecli.ops import prims

CASES: list[Case] = []
case = case_adder(CASES)

# --- functions and modules -----------------------------------------------------------------------

for _dtype in FLOATS:
    case("conv1d", "F", F.conv1d, T(_dtype, (2, 4, 9)), T(_dtype, (3, 4, 3)))
    case("conv2d", "F-bias", F.conv2d, T(_dtype, (2, 4, 6, 6)), T(_dtype, (3, 4, 3, 3)), T(_dtype, (3,)))
case("conv1d", "stride-padding", lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1), T("f32", (2, 4, 9)),
     T("f32", (3, 4, 3)), T("f32", (3,)))
case("conv1d", "dilation-groups", lambda x, w: F.conv1d(x, w, dilation=2, groups=2), T("f32", (2, 4, 9)),
     T("f32", (6, 2, 3)))
case("conv1d", "same-odd", lambda x, w: F.conv1d(x, w, padding="same"), T("f32", (2, 4, 9)), T("f32", (3, 4, 3)))
case("conv1d", "same-even", lambda x, w: F.conv1d(x, w, padding="same"), T("f32", (2, 4, 9)), T("f32", (3, 4, 4)))
case("conv1d", "same-dilated", lambda x, w: F.conv1d(x, w, padding="same", dilation=3), T("f32", (1, 2, 11)),
     T("f32", (2, 2, 2)))
case("conv1d", "valid", lambda x, w: F.conv1d(x, w, padding="valid"), T("f64", (2, 4, 9)), T("f64", (3, 4, 3)))
case("conv1d", "unbatched", F.conv1d, T("f32", (4, 9)), T("f32", (3, 4, 3)))
case("conv1d", "tuple-args", lambda x, w: F.conv1d(x, w, None, (2,), (1,), (1,), 1), T("f32", (2, 4, 9)),
     T("f32", (3, 4, 3)))
case("conv1d", "module", module(lambda: nn.Conv1d(4, 6, 3, stride=2)), T("f32", (2, 4, 11)))
case(("conv1d", "pad"), "module-reflect", module(lambda: nn.Conv1d(4, 2, 3, padding=1, padding_mode="reflect")),
     T("f32", (2, 4, 7)))
case(("conv1d", "pad"), "module-circular", module(lambda: nn.Conv1d(4, 2, 3, padding=2, padding_mode="circular")),
     T("f32", (2, 4, 7)))
case("conv2d", "tuple-args", lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=(1, 0), dilation=(1, 2)),
     T("f32", (2, 4, 7, 7)), T("f32", (3, 4, 3, 3)))
case("conv2d", "same-even", lambda x, w: F.conv2d(x, w, padding="same"), T("f32", (1, 2, 5, 6)),
     T("f32", (3, 2, 2, 4)))
case("conv2d", "depthwise", lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=4), T("f32", (2, 4, 5, 5)),
     T("f32", (4, 1, 3, 3)), T("f32", (4,)))
case("conv2d", "unbatched", lambda x, w: F.conv2d(x, w, padding=1), T("f32", (4, 5, 5)), T("f32", (2, 4, 3, 3)))
case("conv2d", "1x1", F.conv2d, T("f32", (2, 8, 3, 3)), T("f32", (4, 8, 1, 1)))
case("conv2d", "module", module(lambda: nn.Conv2d(3, 4, 3, stride=2, padding=1)), T("f32", (2, 3, 8, 8)))
case("conv2d", "module-same", module(lambda: nn.Conv2d(3, 4, (2, 3), padding="same", bias=False)),
     T("f32", (1, 3, 5, 5)))
case(("conv2d", "pad"), "module-replicate", module(lambda: nn.Conv2d(2, 2, 3, padding=1, padding_mode="replicate")),
     T("f32", (1, 2, 4, 5)))
case("conv3d", "F", F.conv3d, T("f32", (1, 2, 4, 5, 5)), T("f32", (3, 2, 2, 3, 3)), T("f32", (3,)))
case("conv3d", "module", module(lambda: nn.Conv3d(2, 2, 3, padding=1, stride=(1, 2, 2))), T("f32", (1, 2, 3, 5, 5)))
for _dtype in FLOATS + ("bool",):
    case("im2col", "F", lambda x: F.unfold(x, 2), T(_dtype, (2, 3, 4, 5)))
case("im2col", "padding-dilation-stride", lambda x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
     T("f32", (2, 3, 5, 6)))
case("im2col", "unbatched", lambda x: F.unfold(x, 3, padding=1), T("f64", (2, 4, 4)))
case("im2col", "module", module(lambda: nn.Unfold(kernel_size=(2, 2), stride=2)), T("f32", (1, 2, 4, 6)))
for _dtype in FLOATS:
    case("conv_transpose2d", "F", F.conv_transpose2d, T(_dtype, (2, 4, 3, 3)), T(_dtype, (4, 2, 3, 3)), T(_dtype, (2,)))
case("conv_transpose1d", "stride-output-padding",
     lambda x, w: F.conv_transpose1d(x, w, stride=3, padding=1, output_padding=2), T("f32", (2, 4, 5)),
     T("f32", (4, 3, 3)))
case("conv_transpose1d", "groups-dilation", lambda x, w, b: F.conv_transpose1d(x, w, b, groups=2, dilation=2),
     T("f64", (2, 4, 6)), T("f64", (4, 3, 2)), T("f64", (6,)))
case("conv_transpose1d", "unbatched", F.conv_transpose1d, T("f32", (4, 5)), T("f32", (4, 2, 3)))
case("conv_transpose2d", "tuple-args", lambda x, w: F.conv_transpose2d(x, w, None, (2, 1), (1, 0), (1, 0), 1, (1, 2)),
     T("f32", (1, 2, 4, 5)), T("f32", (2, 3, 3, 2)))
case("conv_transpose2d", "module", module(lambda: nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1)),
     T("f32", (2, 3, 4, 4)))
case("conv_transpose3d", "F", lambda x, w: F.conv_transpose3d(x, w, stride=2), T("f32", (1, 2, 2, 3, 3)),
     T("f32", (2, 2, 2, 2, 2)))
case("conv_transpose3d", "module", module(lambda: nn.ConvTranspose3d(2, 2, 2, groups=2)), T("f32", (1, 2, 2, 3, 3)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


CONV_GEOMETRIES = [
    # input, weight, stride, padding, dilation, groups
    ((2, 4, 9), (3, 4, 3), (1,), (0,), (1,), 1),
    ((2, 4, 9), (6, 2, 3), (2,), (2,), (3,), 2),
    ((1, 3, 7, 8), (4, 3, 3, 2), (2, 3), (1, 0), (1, 2), 1),
    ((1, 4, 5, 5), (4, 1, 5, 5), (1, 1), (2, 2), (1, 1), 4),
    ((1, 2, 3, 6, 5), (2, 2, 1, 3, 3), (1, 2, 2), (0, 1, 1), (1, 1, 2), 1),
]


@pytest.mark.parametrize(("xs", "ws", "stride", "padding", "dilation", "groups"), CONV_GEOMETRIES)
def test_convolution_meta_matches_impl(xs, ws, stride, padding, dilation, groups):
    x, w = torch.rand(xs), torch.rand(ws)
    vx, vw = tensor_value(xs, name="x"), tensor_value(ws, name="w")
    for bias in (None, torch.rand(ws[0])):
        vb = None if bias is None else tensor_value((ws[0],), name="b")
        want = prims.convolution.meta(vx, vw, vb, stride, padding, dilation, groups)
        got = prims.convolution.impl(x, w, bias, stride, padding, dilation, groups)
        assert want == TensorType(tuple(got.shape), dtypes.float32, "cpu")


REFUSED_CLEARLY = (
    ("conv2d-dtypes", lambda x, w: F.conv2d(x, w), (torch.rand(1, 2, 4, 4), torch.rand(1, 2, 3, 3).double()), "dtype"),
    ("conv2d-channels", lambda x, w: F.conv2d(x, w), (torch.rand(1, 2, 4, 4), torch.rand(1, 3, 3, 3)), "channels"),
    ("conv2d-kernel-too-large", lambda x, w: F.conv2d(x, w), (torch.rand(1, 2, 2, 2), torch.rand(1, 2, 3, 3)),
     "larger"),
    ("conv1d-same-strided", lambda x, w: F.conv1d(x, w, stride=2, padding="same"),
     (torch.rand(1, 2, 5), torch.rand(1, 2, 3)), "strided"),
)


test_refused_with_a_clear_error, test_eager_refuses_them_too = refusal_tests(REFUSED_CLEARLY)


# Eager's CPU kernels take integer operands, accumulating in their dtype: left to torch,
# not refused (prims.convolution is a floating point convolution).
INTEGER = (
    ("conv1d-i64", F.conv1d, (T("i64", (2, 4, 9)), T("i64", (3, 4, 3))), "torch.conv1d"),
    ("conv2d-i32-bias", F.conv2d, (T("i32", (1, 2, 5, 5)), T("i32", (3, 2, 2, 2)), T("i32", (3,))), "torch.conv2d"),
    ("conv3d-u8", F.conv3d, (T("u8", (1, 1, 3, 3, 3), "small"), T("u8", (2, 1, 2, 2, 2), "small")), "torch.conv3d"),
    ("conv_transpose1d-i64", F.conv_transpose1d, (T("i64", (2, 4, 5)), T("i64", (4, 3, 3))),
     "torch.conv_transpose1d"),
    ("conv_transpose2d-i64-stride", lambda x, w: F.conv_transpose2d(x, w, stride=2),
     (T("i64", (1, 2, 3, 3)), T("i64", (2, 1, 2, 2))), "torch.conv_transpose2d"),
)


@pytest.mark.parametrize(("fn", "args", "opaque"), rows_by_id(INTEGER))
def test_integer_convolutions_stay_torch_calls(fn, args, opaque):
    check_stays_torch_call(fn, args, opaque)
