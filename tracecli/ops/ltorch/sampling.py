"""Resampling: interpolate / upsample in every mode, pixel_shuffle and pixel_unshuffle.

Interpolation is separable: along each spatial dimension the output takes the input at
index vectors computed in the trace from the output positions (`prims.iota`), weighted
where the mode blends neighbours. The index arithmetic is ATen's, in its precision
(nearest modes in float32, linear and cubic modes in the input's compute type, indices
floored in float32), and dimensions are taken last to first, the order ATen's CPU
kernel sums in, so results match eager's, not just approximately.
"""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from tracecli.core import dtypes
from tracecli.core.dims import Dim, exact_div, statically_equal
from tracecli.core.dtypes import DType
from tracecli.ops import prims
from tracecli.ops.autocast import Autocast, Policy
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import compute_dtype, convert, expect_tensor, symbol, torch_form
from tracecli.ops.ltorch.pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d
from tracecli.ops.promotion import ShapeError

# The mode each input rank supports, as F.interpolate dispatches them.
_MODES = {
    "nearest": (3, 4, 5), "nearest-exact": (3, 4, 5), "area": (3, 4, 5),
    "linear": (3,), "bilinear": (4,), "trilinear": (5,), "bicubic": (4,),
}
_CUBIC_A = -0.75  # ATen's cubic convolution constant


def _f32(x: float) -> float:
    """`x` rounded to float32, as ATen's `float` arithmetic holds it."""
    return torch.tensor(x, dtype=torch.float32).item()


def _ratio(numerator: int | Dim, denominator: int | Dim, dtype: DType) -> float | None:
    """numerator / denominator computed in `dtype` (float32 or float64); None when the
    sizes are symbols (the trace computes it then)."""
    if isinstance(numerator, Dim) or isinstance(denominator, Dim):
        return None
    if dtype == dtypes.float64:
        return numerator / denominator
    quotient = torch.tensor(float(numerator), dtype=torch.float32) / torch.tensor(float(denominator), dtype=torch.float32)
    return quotient.item()


def _scale_tensor(numerator, denominator, length, dtype: DType, device: str):
    """The ratio of two sizes as a vector of `length` (for symbolic sizes)."""
    num = prims.full((length,), numerator, device=device, dtype=dtype)
    return prims.div(num, prims.full((length,), denominator, device=device, dtype=dtype))


def _positions(out: int | Dim, dtype: DType, device: str, offset: float = 0.0):
    """0, 1, ..., out-1 (plus `offset`) as `dtype`."""
    index = prims.iota(out, 0, 1, device=device, dtype=dtypes.int64)
    positions = prims.convert_element_type(index, dtype)
    return prims.add(positions, offset) if offset else positions


def _times_scale(positions, size: int | Dim, out: int | Dim, scale: float | None, dtype: DType, device: str):
    """positions * (1/scale if the user gave one, else size/out), in `dtype`."""
    if scale is not None and scale > 0:
        factor = 1.0 / scale if dtype == dtypes.float64 else _f32(1.0 / scale)
    else:
        factor = _ratio(size, out, dtype)
    if factor is None:
        return prims.mul(positions, _scale_tensor(size, out, out, dtype, device))
    return prims.mul(positions, factor)


def _to_index(real, size: int | Dim):
    """min(int(floorf(real)), size - 1): floored in float32, as ATen does for every type."""
    floored = prims.floor(prims.convert_element_type(real, dtypes.float32))
    return prims.minimum(prims.convert_element_type(floored, dtypes.int64), size - 1)


def _nearest_indices(size, out, scale, exact: bool, device: str):
    # ATen shortcuts the same and the double size only where the formula gives them too.
    if exact:
        # floorf((i + 0.5) * scale): the product in double, rounded to float, then floored.
        factor = _f32(1.0 / scale) if scale is not None and scale > 0 else _ratio(size, out, dtypes.float32)
        positions = _positions(out, dtypes.float64, device, 0.5)
        if factor is None:
            real = prims.mul(positions, prims.convert_element_type(
                _scale_tensor(size, out, out, dtypes.float32, device), dtypes.float64))
        else:
            real = prims.mul(positions, factor)
        return _to_index(real, size)
    return _to_index(_times_scale(_positions(out, dtypes.float32, device), size, out, scale, dtypes.float32, device),
                     size)


def _source(size, out, scale, align_corners: bool, cubic: bool, dtype: DType, device: str):
    """ATen's area_pixel_compute_source_index for every output position."""
    if align_corners:
        positions = _positions(out, dtype, device)
        if statically_equal(out, 1):
            return prims.mul(positions, 0.0)
        factor = _ratio(size - 1, out - 1, dtype)
        if factor is None:
            return prims.mul(positions, _scale_tensor(size - 1, out - 1, out, dtype, device))
        return prims.mul(positions, factor)
    real = prims.sub(_times_scale(_positions(out, dtype, device, 0.5), size, out, scale, dtype, device), 0.5)
    return real if cubic else prims.maximum(real, 0.0)


def _taps(size, out, scale, align_corners: bool, cubic: bool, dtype: DType, device: str):
    """(index vector, weight vector) per tap of one dimension."""
    if not cubic and out == size:
        # ATen blends each element with itself, weights 1 and 0 (so inf becomes nan, as there).
        index = prims.iota(out, 0, 1, device=device, dtype=dtypes.int64)
        one = prims.full((out,), 1.0, device=device, dtype=dtype)
        return [(index, one), (index, prims.full((out,), 0.0, device=device, dtype=dtype))]
    real = _source(size, out, scale, align_corners, cubic, dtype, device)
    index = _to_index(real, size)
    t = prims.sub(real, prims.convert_element_type(index, dtype))
    t = prims.minimum(prims.maximum(t, 0.0), 1.0)
    if not cubic:
        following = prims.minimum(prims.add(index, 1), size - 1)
        return [(index, prims.sub(prims.full((out,), 1.0, device=device, dtype=dtype), t)), (following, t)]
    a = _CUBIC_A

    def near(x):  # ((A + 2) * x - (A + 3)) * x * x + 1, for |x| <= 1
        return prims.add(prims.mul(prims.mul(prims.sub(prims.mul(x, a + 2), a + 3), x), x), 1.0)

    def far(x):  # ((A * x - 5A) * x + 8A) * x - 4A, for 1 < |x| < 2
        return prims.sub(prims.mul(prims.add(prims.mul(prims.sub(prims.mul(x, a), 5 * a), x), 8 * a), x), 4 * a)

    one = prims.full((out,), 1.0, device=device, dtype=dtype)
    weights = [far(prims.add(t, 1.0)), near(t), near(prims.sub(one, t)), far(prims.sub(prims.add(one, 1.0), t))]
    taps = []
    for j, weight in enumerate(weights):
        shifted = prims.add(index, j - 1)
        taps.append((prims.minimum(prims.maximum(shifted, 0), size - 1), weight))
    return taps


def _along(x, dim: int, taps):
    """sum over taps of x[..., index, ...] * weight along `dim`."""
    total = None
    for index, weight in taps:
        picked = prims.take(x, index, dim)
        term = prims.mul(picked, prims.broadcast_in_dim(weight, picked.shape, (dim,)))
        total = term if total is None else prims.add(total, term)
    return total


def _output_sizes(input, size, scale_factor, recompute_scale_factor, mode: str):
    """(output sizes, the scale per dimension ATen is given) as F.interpolate computes them."""
    n = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ShapeError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ShapeError("either size or scale_factor should be defined")
    if size is not None:
        if recompute_scale_factor:
            raise ShapeError("recompute_scale_factor is not meaningful with an explicit size")
        sizes = list(size) if isinstance(size, (tuple, list, torch.Size)) else [size] * n
        if len(sizes) != n:
            raise ShapeError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {list(input.shape[2:])} and output size of {sizes}. Please "
                             f"provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, "
                             f"...,oK) format.")
        return [s if isinstance(s, Dim) else int(s) for s in sizes], [None] * n
    scales = list(scale_factor) if isinstance(scale_factor, (tuple, list)) else [scale_factor] * n
    if len(scales) != n:
        raise ShapeError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                         f"with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape {scales}.")
    sizes = [math.floor(float(d) * float(s)) for d, s in zip(input.shape[2:], scales, strict=True)]
    if recompute_scale_factor or mode == "area":
        return sizes, [None] * n
    return sizes, [float(s) for s in scales]


def _interpolate_form(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                      recompute_scale_factor=None, antialias=False):
    # Antialiasing filters over a window ATen sizes from the scale, and modes newer than
    # these (lanczos): left to torch.
    if antialias or mode not in _MODES:
        return OPAQUE
    input = expect_tensor(input, "interpolate")
    if mode in ("linear", "bilinear", "trilinear", "bicubic") and not input.dtype.is_float:
        return OPAQUE  # uint8 bilinear has a rounding kernel of its own
    return interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor)


@symbol(F.interpolate, aliases=(F.upsample,), adapter=_interpolate_form, autocast=Autocast(cuda=Policy.FP32))
def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None):
    """the input resampled to `size` (or scaled by `scale_factor`) along its spatial dims"""
    input = expect_tensor(input, "interpolate")
    if mode not in _MODES:
        raise ShapeError(f"interpolate: mode {mode!r} is not one of {', '.join(_MODES)}")
    if input.ndim not in _MODES[mode]:
        need = " or ".join(f"{r}D" for r in _MODES[mode])
        raise ShapeError(f"Got {input.ndim}D input, but {mode} mode needs {need} input")
    blending = mode in ("linear", "bilinear", "trilinear", "bicubic")
    if not blending and align_corners is not None:
        raise ShapeError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    sizes, scales = _output_sizes(input, size, scale_factor, recompute_scale_factor, mode)
    if any(not isinstance(s, Dim) and s < 1 for s in sizes):
        raise ShapeError(f"Input and output sizes should be greater than 0, but got input {list(input.shape[2:])} "
                         f"and output {sizes}")
    if mode == "area":
        pool = {3: adaptive_avg_pool1d, 4: adaptive_avg_pool2d, 5: adaptive_avg_pool3d}[input.ndim]
        return pool(input, tuple(sizes))
    device = input.device
    if not blending:
        if not (input.dtype.is_float or input.dtype == dtypes.uint8):
            raise ShapeError(f"interpolate: mode {mode!r} is not implemented for {input.dtype.name} (floating point "
                             f"and uint8 only)")
        x = input
        for dim in reversed(range(2, input.ndim)):
            index = _nearest_indices(input.shape[dim], sizes[dim - 2], scales[dim - 2], mode == "nearest-exact", device)
            x = prims.take(x, index, dim)
        return x
    # In the compute type, rounded once at the end (as the CUDA kernels do; ATen's CPU
    # kernel for float16 rounds each partial sum, so results there can differ by an ulp).
    dtype = compute_dtype(input.dtype)
    x = convert(input, dtype)
    for dim in reversed(range(2, input.ndim)):
        taps = _taps(input.shape[dim], sizes[dim - 2], scales[dim - 2], bool(align_corners), mode == "bicubic",
                     dtype, device)
        x = _along(x, dim, taps)
    return convert(x, input.dtype)


@torch_form(F.upsample_nearest)
def _upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, "nearest")


@torch_form(F.upsample_bilinear)
def _upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, "bilinear", True)


# --- pixel shuffle --------------------------------------------------------------------------


def _shuffle_check(op: str, input, factor) -> int:
    input = expect_tensor(input, op)
    if input.ndim < 3:
        raise ShapeError(f"{op} expects input to have at least 3 dimensions, but got input with {input.ndim} "
                         f"dimension(s)")
    factor = int(factor)
    if factor <= 0:
        raise ShapeError(f"{op} expects a positive factor, but got {factor}")
    return factor


@symbol(F.pixel_shuffle)
def pixel_shuffle(input, upscale_factor):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r): each group of r*r channels tiles an r x r block"""
    r = _shuffle_check("pixel_shuffle", input, upscale_factor)
    *lead, c, h, w = input.shape
    if not statically_equal(c % (r * r), 0) and c % (r * r) != 0:
        raise ShapeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                         f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    out_c = exact_div(c, r * r)
    n = len(lead)
    split = prims.reshape(input, (*lead, out_c, r, r, h, w))
    order = (*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return prims.reshape(prims.transpose(split, order), (*lead, out_c, h * r, w * r))


@symbol(F.pixel_unshuffle)
def pixel_unshuffle(input, downscale_factor):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W): the inverse of pixel_shuffle"""
    r = _shuffle_check("pixel_unshuffle", input, downscale_factor)
    *lead, c, h, w = input.shape
    for name, size in (("height", h), ("width", w)):
        if not statically_equal(size % r, 0) and size % r != 0:
            raise ShapeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but input.size"
                             f"({-2 if name == 'height' else -1})={size} is not divisible by {r}")
    out_h, out_w = exact_div(h, r), exact_div(w, r)
    n = len(lead)
    split = prims.reshape(input, (*lead, c, out_h, r, out_w, r))
    order = (*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return prims.reshape(prims.transpose(split, order), (*lead, c * r * r, out_h, out_w))
