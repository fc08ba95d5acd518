"""Pooling: max_pool1d/2d, avg_pool1d/2d and adaptive_avg_pool1d/2d as functions and
modules, with padding, dilation, ceil mode and divisors. They decompose into shape,
reduction and elementwise prims and have none of their own."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from tests.ops.harness import (
    FLOATS,
    Case,
    L,
    T,
    case_adder,
    check_case,
    module,
    refusal_tests,
)

CASES: list[Case] = []
case = case_adder(CASES)

for _dtype in FLOATS:
    case("max_pool2d", "F", lambda x: F.max_pool2d(x, 2), T(_dtype, (2, 3, 6, 6)))
    case("avg_pool2d", "F", lambda x: F.avg_pool2d(x, 2), T(_dtype, (2, 3, 6, 6)))
    case("adaptive_avg_pool2d", "F", lambda x: F.adaptive_avg_pool2d(x, (3, 4)), T(_dtype, (2, 3, 5, 7)))
    case("max_pool1d", "F", lambda x: F.max_pool1d(x, 3, 2), T(_dtype, (2, 3, 9)))
    case("avg_pool1d", "F", lambda x: F.avg_pool1d(x, 3, 2, 1), T(_dtype, (2, 3, 9)))
case("max_pool2d", "padding-stride", lambda x: F.max_pool2d(x, 3, stride=2, padding=1), T("f32", (2, 3, 7, 7)))
case("max_pool2d", "dilation", lambda x: F.max_pool2d(x, 2, 1, 0, 2), T("f32", (1, 2, 6, 6)))
case("max_pool2d", "ceil", lambda x: F.max_pool2d(x, 2, ceil_mode=True), T("f32", (1, 2, 5, 7)))
case("max_pool2d", "ceil-padding", lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), T("f32", (1, 2, 6, 6)))
case("max_pool2d", "tuple", lambda x: F.max_pool2d(x, (2, 3), (1, 2), (1, 0)), T("f32", (2, 5, 6)))
case("max_pool2d", "int64", lambda x: F.max_pool2d(x, 2, padding=1), T("i64", (1, 4, 4)))
case("max_pool2d", "nan", lambda x: F.max_pool2d(x, 2), L((((1.0, math.nan), (0.0, -1.0)),), "f32"))
case("max_pool2d", "torch-fn", lambda x: torch.max_pool2d(x, 2), T("f32", (1, 4, 4)))
case("max_pool2d", "module", module(lambda: nn.MaxPool2d(3, 2, 1)), T("f32", (2, 3, 8, 8)))
case("max_pool1d", "ceil-padding", lambda x: F.max_pool1d(x, 4, 3, 2, ceil_mode=True), T("f32", (2, 10)))
case("max_pool1d", "module", module(lambda: nn.MaxPool1d(2)), T("f32", (2, 3, 7)))
case("max_pool1d", "torch-fn", lambda x: torch.max_pool1d(x, 3, 1, 1), T("f32", (1, 2, 5)))
case("avg_pool2d", "padding", lambda x: F.avg_pool2d(x, 3, 2, 1), T("f32", (2, 3, 7, 7)))
case("avg_pool2d", "exclude-pad", lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), T("f32", (2, 3, 7, 7)))
case("avg_pool2d", "ceil", lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), T("f32", (1, 2, 6, 6)))
case("avg_pool2d", "ceil-exclude-pad", lambda x: F.avg_pool2d(x, (3, 2), 2, (1, 0), True, False),
     T("f32", (1, 2, 6, 5)))
case("avg_pool2d", "divisor", lambda x: F.avg_pool2d(x, 2, divisor_override=3), T("f32", (1, 2, 4, 4)))
case("avg_pool2d", "int64", lambda x: F.avg_pool2d(x, 2, padding=1), T("i64", (1, 5, 5)))
case("avg_pool2d", "module", module(lambda: nn.AvgPool2d(2, stride=1)), T("f32", (2, 3, 4, 4)))
case("avg_pool1d", "exclude-pad", lambda x: F.avg_pool1d(x, 4, 2, 2, count_include_pad=False), T("f32", (2, 9)))
case("avg_pool1d", "ceil", lambda x: F.avg_pool1d(x, 2, ceil_mode=True), T("f32", (2, 3, 7)))
case("avg_pool1d", "module", module(lambda: nn.AvgPool1d(3, 2, 1)), T("f32", (2, 3, 8)))
case("adaptive_avg_pool2d", "global", lambda x: F.adaptive_avg_pool2d(x, 1), T("f32", (2, 3, 5, 7)))
case("adaptive_avg_pool2d", "uniform", lambda x: F.adaptive_avg_pool2d(x, (2, 3)), T("f32", (2, 3, 6, 6)))
case("adaptive_avg_pool2d", "upsample", lambda x: F.adaptive_avg_pool2d(x, 5), T("f32", (1, 2, 3, 4)))
case("adaptive_avg_pool2d", "none", lambda x: F.adaptive_avg_pool2d(x, (2, None)), T("f32", (1, 2, 5, 3)))
case("adaptive_avg_pool2d", "unbatched", lambda x: F.adaptive_avg_pool2d(x, 3), T("f32", (2, 7, 7)))
case("adaptive_avg_pool2d", "module", module(lambda: nn.AdaptiveAvgPool2d((1, 1))), T("f32", (2, 4, 3, 3)))
case("adaptive_avg_pool1d", "F", lambda x: F.adaptive_avg_pool1d(x, 3), T("f32", (2, 3, 7)))
case("adaptive_avg_pool1d", "module", module(lambda: nn.AdaptiveAvgPool1d(4)), T("f64", (2, 8)))
case("max_pool3d", "F", lambda x: F.max_pool3d(x, 2), T("f32", (2, 3, 4, 5, 6)))
case("max_pool3d", "padding-dilation-ceil", lambda x: F.max_pool3d(x, 3, 2, 1, 2, ceil_mode=True),
     T("f64", (1, 2, 7, 6, 8)))
case("max_pool3d", "int64", lambda x: F.max_pool3d(x, (1, 2, 2)), T("i64", (2, 3, 4, 4)))
case("max_pool3d", "module", module(lambda: nn.MaxPool3d(2, stride=1)), T("f32", (1, 2, 3, 3, 3)))
case("avg_pool3d", "F", lambda x: F.avg_pool3d(x, 2), T("f32", (2, 3, 4, 5, 6)))
case("avg_pool3d", "exclude-pad-ceil", lambda x: F.avg_pool3d(x, 3, 2, 1, True, False), T("f64", (1, 2, 5, 6, 7)))
case("avg_pool3d", "divisor", lambda x: F.avg_pool3d(x, 2, divisor_override=5), T("f32", (1, 2, 4, 4, 4)))
case("avg_pool3d", "module", module(lambda: nn.AvgPool3d((1, 2, 2))), T("f32", (2, 3, 4, 4)))
for _dtype in FLOATS:
    case("max_pool2d_with_indices", "return_indices", lambda x: F.max_pool2d(x, 2, return_indices=True),
         T(_dtype, (2, 3, 6, 6)))
case("max_pool1d_with_indices", "padding-ceil", lambda x: F.max_pool1d(x, 3, 2, 1, ceil_mode=True, return_indices=True),
     T("f32", (2, 3, 10)))
case("max_pool1d_with_indices", "nan-last-wins", lambda x: F.max_pool1d(x, 4, return_indices=True),
     L((((1.0, math.nan, 3.0, math.nan),),), "f32"))
case("max_pool2d_with_indices", "all-lowest", lambda x: F.max_pool2d(x, 2, 1, 1, return_indices=True),
     L((((-math.inf, -math.inf, -math.inf), (-math.inf, -math.inf, -math.inf), (-math.inf, -math.inf, 1.0)),), "f32"))
case("max_pool2d_with_indices", "int64-ties", lambda x: F.max_pool2d(x, 2, 1, return_indices=True),
     L(((((-3, -3, 1), (-3, -3, 1), (0, 0, 0)),),), "i64"))
case("max_pool2d_with_indices", "fn-dilation", lambda x: F.max_pool2d_with_indices(x, (2, 3), (1, 2), (1, 1), 2),
     T("f32", (2, 5, 7)))
case("max_pool2d_with_indices", "module", module(lambda: nn.MaxPool2d(3, 2, 1, return_indices=True)),
     T("f32", (1, 2, 7, 7)))
case("max_pool3d_with_indices", "F", lambda x: F.max_pool3d(x, 3, 2, 1, 2, ceil_mode=True, return_indices=True),
     T("f64", (1, 2, 7, 6, 8)))
for _dtype in FLOATS:
    case("adaptive_max_pool2d_with_indices", "return_indices",
         lambda x: F.adaptive_max_pool2d(x, 3, return_indices=True), T(_dtype, (2, 3, 5, 7)))
case("adaptive_max_pool2d", "F", lambda x: F.adaptive_max_pool2d(x, (2, 4)), T("f32", (2, 3, 5, 7)))
case("adaptive_max_pool2d", "upsample-none", lambda x: F.adaptive_max_pool2d(x, (5, None)), T("f64", (2, 3, 4)))
case("adaptive_max_pool2d", "module", module(lambda: nn.AdaptiveMaxPool2d(1)), T("f32", (2, 3, 4, 4)))
case("adaptive_max_pool1d", "F", lambda x: F.adaptive_max_pool1d(x, 4), T("f32", (2, 3, 9)))
case("adaptive_max_pool1d_with_indices", "nan-and-ties", lambda x: F.adaptive_max_pool1d(x, 3, return_indices=True),
     L((((1.0, math.nan, 3.0, math.nan, 2.0, 5.0, 5.0),),), "f32"))
case("adaptive_max_pool2d_with_indices", "ties", lambda x: F.adaptive_max_pool2d_with_indices(x, 2),
     L(((((1.0, 2.0, 2.0), (2.0, 1.0, 2.0), (2.0, 2.0, 2.0)),),), "f32"))
case("adaptive_max_pool3d", "module", module(lambda: nn.AdaptiveMaxPool3d((2, 1, 3))), T("f32", (1, 2, 4, 5, 3)))
case("adaptive_max_pool3d_with_indices", "F", lambda x: F.adaptive_max_pool3d(x, 2, return_indices=True),
     T("f64", (1, 2, 3, 5, 4)))
case("adaptive_avg_pool3d", "F", lambda x: F.adaptive_avg_pool3d(x, (2, 3, 1)), T("f32", (2, 3, 4, 5, 6)))
case("adaptive_avg_pool3d", "module", module(lambda: nn.AdaptiveAvgPool3d(2)), T("f64", (2, 3, 5, 4)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


REFUSED_CLEARLY = (
    ("max_pool2d-padding", lambda x: F.max_pool2d(x, 2, padding=2), (torch.rand(1, 5, 5),), "half"),
    ("max_pool1d-int64", lambda x: F.max_pool1d(x, 2), (torch.ones(1, 4, dtype=torch.int64),), "floating point"),
    ("avg_pool2d-output-too-small", lambda x: F.avg_pool2d(x, 3), (torch.rand(1, 2, 2),), "too small"),
)


test_refused_with_a_clear_error, test_eager_refuses_them_too = refusal_tests(REFUSED_CLEARLY)
