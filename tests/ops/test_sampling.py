"""Resampling: F.interpolate in every mode (nearest, nearest-exact, linear, bilinear,
bicubic, trilinear, area) with sizes, scale factors, align_corners and recomputed
scales, its upsample spellings and modules, and pixel_shuffle / pixel_unshuffle. They
decompose into index arithmetic, takes and weighted sums, with no prims of their own."""

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
    check_stays_torch_call,
    module,
    refusal_tests,
    rows_by_id,
)

CASES: list[Case] = []
case = case_adder(CASES)

# Shapes and scales where ATen's special cases (same size, twice the size) and the
# general index arithmetic both show.
for _dtype in FLOATS + ("u8",):
    case("interpolate", "nearest", lambda x: F.interpolate(x, size=(3, 7)), T(_dtype, (2, 3, 4, 5)))
for _dtype in FLOATS:
    case("interpolate", "nearest-exact", lambda x: F.interpolate(x, scale_factor=1.7, mode="nearest-exact"),
         T(_dtype, (2, 3, 4)))
# Blending modes compute in float32 and round once; ATen's CPU kernel for float16 rounds
# each partial sum, so float16 and bfloat16 are left to the CUDA kernels' agreement.
for _dtype in ("f32", "f64"):
    case("interpolate", "bilinear", lambda x: F.interpolate(x, size=(5, 3), mode="bilinear"), T(_dtype, (2, 3, 4, 6)))
    case("interpolate", "bicubic", lambda x: F.interpolate(x, scale_factor=1.7, mode="bicubic"), T(_dtype, (1, 2, 4, 5)))
case("interpolate", "nearest-1d-scale", lambda x: F.interpolate(x, scale_factor=0.6), T("f32", (2, 3, 9)))
case("interpolate", "nearest-double", lambda x: F.interpolate(x, scale_factor=2), T("f32", (1, 2, 3, 4)))
case("interpolate", "nearest-recompute", lambda x: F.interpolate(x, scale_factor=1.7, recompute_scale_factor=True),
     T("f32", (1, 2, 5)))
case("interpolate", "nearest-same-size-scale", lambda x: F.interpolate(x, scale_factor=1.1), T("f32", (1, 2, 4)))
case("interpolate", "nearest-3d", lambda x: F.interpolate(x, size=(3, 5, 2)), T("f32", (1, 2, 4, 3, 5)))
case("interpolate", "nearest-exact-down", lambda x: F.interpolate(x, size=(2, 3), mode="nearest-exact"),
     T("f32", (1, 2, 5, 7)))
case("interpolate", "linear", lambda x: F.interpolate(x, size=7, mode="linear"), T("f32", (2, 3, 4)))
case("interpolate", "linear-corners", lambda x: F.interpolate(x, scale_factor=2.5, mode="linear", align_corners=True),
     T("f32", (2, 3, 4)))
case("interpolate", "linear-same-size", lambda x: F.interpolate(x, size=4, mode="linear"),
     L((((1.0, math.inf, 2.0, 3.0),),), "f32"))
case("interpolate", "bilinear-down", lambda x: F.interpolate(x, scale_factor=0.6, mode="bilinear"),
     T("f32", (2, 3, 7, 5)))
case("interpolate", "bilinear-corners", lambda x: F.interpolate(x, size=(1, 6), mode="bilinear", align_corners=True),
     T("f32", (1, 2, 3, 4)))
case("interpolate", "bicubic-corners", lambda x: F.interpolate(x, size=(6, 3), mode="bicubic", align_corners=True),
     T("f32", (1, 2, 4, 5)))
case("interpolate", "trilinear", lambda x: F.interpolate(x, size=(3, 5, 4), mode="trilinear"), T("f32", (1, 2, 4, 3, 5)))
case("interpolate", "trilinear-corners", lambda x: F.interpolate(x, scale_factor=1.5, mode="trilinear",
                                                                  align_corners=True), T("f64", (1, 1, 2, 3, 4)))
case("interpolate", "area", lambda x: F.interpolate(x, size=(2, 3), mode="area"), T("f32", (2, 3, 5, 7)))
case("interpolate", "area-1d-scale", lambda x: F.interpolate(x, scale_factor=0.5, mode="area"), T("f32", (2, 3, 8)))
case("interpolate", "area-3d", lambda x: F.interpolate(x, size=(2, 2, 3), mode="area"), T("f32", (1, 2, 4, 3, 5)))
case("interpolate", "upsample", lambda x: F.upsample(x, scale_factor=2, mode="bilinear"), T("f32", (1, 2, 3, 3)))
case("interpolate", "upsample_nearest", lambda x: F.upsample_nearest(x, size=5), T("f32", (1, 2, 3)))
case("interpolate", "upsample_bilinear", lambda x: F.upsample_bilinear(x, scale_factor=1.5), T("f32", (1, 2, 3, 4)))
case("interpolate", "module", module(lambda: nn.Upsample(scale_factor=2, mode="nearest")), T("f32", (1, 2, 3, 4)))
case("interpolate", "module-bilinear", module(lambda: nn.UpsamplingBilinear2d(size=(5, 7))), T("f32", (1, 2, 3, 4)))
case("interpolate", "module-nearest", module(lambda: nn.UpsamplingNearest2d(scale_factor=3)), T("f32", (1, 2, 2, 3)))
for _dtype in FLOATS + ("i64", "bool"):
    case("pixel_shuffle", "F", lambda x: F.pixel_shuffle(x, 2), T(_dtype, (2, 8, 3, 4)))
    case("pixel_unshuffle", "F", lambda x: F.pixel_unshuffle(x, 2), T(_dtype, (2, 3, 4, 6)))
case("pixel_shuffle", "unbatched", lambda x: torch.pixel_shuffle(x, 3), T("f32", (9, 2, 2)))
case("pixel_shuffle", "batch-dims", lambda x: F.pixel_shuffle(x, 2), T("f32", (2, 3, 4, 2, 2)))
case("pixel_shuffle", "module", module(lambda: nn.PixelShuffle(2)), T("f32", (1, 4, 3, 3)))
case("pixel_unshuffle", "module", module(lambda: nn.PixelUnshuffle(3)), T("f32", (1, 2, 6, 3)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


OPAQUE_FORMS = (
    ("interpolate-antialias", lambda x: F.interpolate(x, scale_factor=0.5, mode="bilinear", antialias=True),
     T("f32", (1, 2, 6, 6)), "torch.nn.functional.interpolate"),
    ("interpolate-uint8-bilinear", lambda x: F.interpolate(x, size=(3, 3), mode="bilinear"),
     T("u8", (1, 2, 5, 5)), "torch.nn.functional.interpolate"),
)


@pytest.mark.parametrize(("fn", "arg", "opaque"), rows_by_id(OPAQUE_FORMS))
def test_unmodelled_forms_stay_torch_calls(fn, arg, opaque):
    check_stays_torch_call(fn, (arg,), opaque)


REFUSED_CLEARLY = (
    ("interpolate-both", lambda x: F.interpolate(x, size=3, scale_factor=2.0), (torch.rand(1, 2, 4),), "only one"),
    ("interpolate-neither", lambda x: F.interpolate(x), (torch.rand(1, 2, 4),), "either size or scale_factor"),
    ("interpolate-bilinear-3d", lambda x: F.interpolate(x, size=3, mode="bilinear"), (torch.rand(1, 2, 4),), "4D"),
    ("interpolate-nearest-corners", lambda x: F.interpolate(x, size=3, align_corners=True), (torch.rand(1, 2, 4),),
     "align_corners"),
    ("interpolate-nearest-int64", lambda x: F.interpolate(x, size=(3, 3)), (torch.ones(1, 2, 4, 4, dtype=torch.int64),),
     "not implemented"),
    ("pixel_shuffle-channels", lambda x: F.pixel_shuffle(x, 2), (torch.rand(1, 6, 2, 2),), "divisible"),
    ("pixel_unshuffle-width", lambda x: F.pixel_unshuffle(x, 2), (torch.rand(1, 1, 4, 5),), "divisible"),
)


test_refused_with_a_clear_error, test_eager_refuses_them_too = refusal_tests(REFUSED_CLEARLY)
