"""torch.fft: the discrete Fourier transforms, fftshift/ifftshift and the sample
frequencies fftfreq/rfftfreq.

Every transform is one of three prims (prims/fft.py: complex to complex, real to complex,
Hermitian complex to real) applied as ATen's SpectralOps apply them: the input promoted
(integers and bool to float32, a real input to complex where the transform is complex to
complex), each transformed dim trimmed or zero-padded to the requested length, the
normalization given to the kernel, and the conjugates the Hermitian transforms take. So
the lowered trace runs the very kernels eager runs. Transforms of half precision exist on
CUDA only (for sizes that are powers of two), as in torch.
"""

# Parameters keep torch's names (`input`, `dim`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch

from tracecli.core import dtypes
from tracecli.core.dims import Dim, statically_equal
from tracecli.ops import prims
from tracecli.ops.autocast import Autocast, Policy
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import convert, expect_tensor, symbol
from tracecli.ops.ltorch.indexing import slice_along
from tracecli.ops.prims.fft import COMPLEX_OF
from tracecli.ops.promotion import ShapeError, canonical_dim
from tracecli.ops.torch_bridge import TO_TORCH, to_device, to_dtype

# --- arguments, as ATen reads them ------------------------------------------------------


def norm_mode(norm, forward: bool) -> str:
    """The kernel's scaling for torch's `norm`: "backward" (the default) scales the inverse
    transform by 1/n, "forward" the forward one, "ortho" both by 1/sqrt(n)."""
    if norm is None or norm == "backward":
        return "none" if forward else "by_n"
    if norm == "forward":
        return "by_n" if forward else "none"
    if norm == "ortho":
        return "by_root_n"
    raise ShapeError(f'Invalid normalization mode: "{norm}"')


def points(n, what: str = "n"):
    if isinstance(n, bool) or not isinstance(n, (int, Dim)):
        raise TypeError(f"the number of points {what} must be an int, got {type(n).__name__} {n!r}")
    return n


def _check_points(n) -> None:
    if n < 1:
        raise ShapeError(f"Invalid number of data points ({n}) specified")


def _signal_dim(input, dim, op: str) -> int:
    # Unlike most ops, a transform does not take a zero-dim tensor as having one dim.
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}")
    if input.ndim == 0:
        raise ShapeError(f"{op}: dimension {dim} specified, but the tensor has no dimensions")
    return canonical_dim(dim, input.ndim)


def _promoted(input, op: str, *, to_complex: bool):
    """input in the dtype the kernels take: complex stays; integers and bool become
    float32; a float must be float32 or float64 (float16 on CUDA, where cuFFT has it)."""
    dtype = input.dtype
    if dtype.is_complex:
        return input
    if not dtype.is_float:
        dtype = dtypes.float32
    allowed = (dtypes.float32, dtypes.float64) + ((dtypes.float16,) if input.device.startswith("cuda") else ())
    if dtype not in allowed:
        raise ShapeError(f"{op}: unsupported dtype {input.dtype.name} on {input.device}")
    return convert(input, COMPLEX_OF[dtype] if to_complex else dtype)


def _real_input(input, op: str):
    input = expect_tensor(input, op)
    if input.dtype.is_complex:
        raise ShapeError(f"{op} expects a real input tensor, but got {input.dtype.name}")
    return input


def _resized(x, dims: tuple[int, ...], sizes: tuple) -> object:
    """x with each of `dims` trimmed (from its start) or zero-padded (at its end) to its
    size in `sizes`, as torch shapes the input of a transform given n or s."""
    padding = [(0, 0)] * x.ndim
    for d, size in zip(dims, sizes, strict=True):
        have = x.shape[d]
        if statically_equal(have, size):
            continue
        if have > size:
            x = slice_along(x, d, 0, size)
        else:
            # A symbolic size equal to the length is padded by nothing: a trace for every
            # size up to the length, rather than for that one size.
            padding[d] = (0, size - have)
    return x if all(statically_equal(hi, 0) for _, hi in padding) else prims.pad(x, 0, tuple(padding))


def _shape_and_dims(input, s, dim, op: str) -> tuple[tuple, tuple[int, ...]]:
    """(signal sizes, dims) of an n-dimensional transform, from torch's `s` and `dim`:
    dims default to the last len(s) dims (all of them without s), and -1 in s keeps a size."""
    ndim = input.ndim
    dims: tuple[int, ...] = ()
    if dim is not None:
        dims = tuple(_signal_dim(input, d, op) for d in ((dim,) if isinstance(dim, int) else dim))
        if len(set(dims)) != len(dims):
            raise ShapeError("FFT dims must be unique")
    if s is not None:
        s = tuple(points(n, "in s") for n in ((s,) if isinstance(s, (int, Dim)) else s))
        if dim is not None and len(dims) != len(s):
            raise ShapeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise ShapeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
        if dim is None:
            dims = tuple(range(ndim - len(s), ndim))
        shape = tuple(input.shape[d] if _is_minus_one(n) else n for n, d in zip(s, dims, strict=True))
    elif dim is None:
        dims, shape = tuple(range(ndim)), tuple(input.shape)
    else:
        shape = tuple(input.shape[d] for d in dims)
    for n in shape:
        _check_points(n)
    return shape, dims


def _is_minus_one(n) -> bool:
    return not isinstance(n, Dim) and n == -1


def _c2r_shape_and_dims(input, s, dim, op: str) -> tuple[tuple, tuple[int, ...], object]:
    """(input sizes, dims, output length of the last dim) of a complex-to-real transform:
    by default the last dim's m points are the one-sided half of 2 * (m - 1)."""
    shape, dims = _shape_and_dims(input, s, dim, op)
    if not shape:
        raise ShapeError(f"{op} must transform at least one axis")
    given = (s,) if isinstance(s, (int, Dim)) else s
    last = 2 * (input.shape[dims[-1]] - 1) if s is None or _is_minus_one(given[-1]) else shape[-1]
    _check_points(last)
    return shape[:-1] + (last // 2 + 1,), dims, last


# --- one-dimensional transforms -----------------------------------------------------------


def _c2c(input, n, dim, norm, forward: bool, op: str):
    d = _signal_dim(input, dim, op)
    size = input.shape[d] if n is None else points(n)
    _check_points(size)
    x = input if n is None else _resized(input, (d,), (size,))
    return prims.fft_c2c(x, (d,), norm_mode(norm, forward), forward)


def _r2c(input, n, dim, norm, forward: bool, onesided: bool, op: str):
    x = _promoted(_real_input(input, op), op, to_complex=False)
    d = _signal_dim(x, dim, op)
    size = x.shape[d] if n is None else points(n)
    _check_points(size)
    if n is not None:
        x = _resized(x, (d,), (size,))
    out = prims.fft_r2c(x, (d,), norm_mode(norm, forward), onesided)
    # The kernel only transforms forward: the inverse of a real signal is the conjugate.
    return out if forward else prims.conj(out)


def _c2r(input, n, dim, norm, forward: bool, op: str):
    x = _promoted(expect_tensor(input, op), op, to_complex=True)
    d = _signal_dim(x, dim, op)
    last = 2 * (x.shape[d] - 1) if n is None else points(n)
    _check_points(last)
    if n is not None:
        x = _resized(x, (d,), (last // 2 + 1,))
    if forward:
        x = prims.conj(x)  # the kernel only transforms backward: hfft is that of the conjugate
    return prims.fft_c2r(x, (d,), norm_mode(norm, forward), last)


def _c2c_or_r2c(input, n, dim, norm, forward: bool, op: str):
    input = expect_tensor(input, op)
    if input.dtype.is_complex:
        return _c2c(input, n, dim, norm, forward, op)
    # A real signal's full spectrum, as torch computes it: no conversion to complex first.
    return _r2c(input, n, dim, norm, forward, onesided=False, op=op)


@symbol(torch.fft.fft)
def fft_fft(input, n=None, dim=-1, norm=None):
    """the discrete Fourier transform along dim (of n points: the input trimmed or zero-padded)"""
    return _c2c_or_r2c(input, n, dim, norm, True, "fft")


@symbol(torch.fft.ifft)
def fft_ifft(input, n=None, dim=-1, norm=None):
    """the inverse discrete Fourier transform along dim"""
    return _c2c_or_r2c(input, n, dim, norm, False, "ifft")


@symbol(torch.fft.rfft)
def fft_rfft(input, n=None, dim=-1, norm=None):
    """the transform of a real signal: its n // 2 + 1 non-negative frequencies"""
    return _r2c(input, n, dim, norm, True, True, "rfft")


@symbol(torch.fft.irfft)
def fft_irfft(input, n=None, dim=-1, norm=None):
    """the real signal of n points (2 * (m - 1) by default) whose rfft is input"""
    return _c2r(input, n, dim, norm, False, "irfft")


@symbol(torch.fft.hfft)
def fft_hfft(input, n=None, dim=-1, norm=None):
    """the transform of a Hermitian-symmetric signal given by its first half: real"""
    return _c2r(input, n, dim, norm, True, "hfft")


@symbol(torch.fft.ihfft)
def fft_ihfft(input, n=None, dim=-1, norm=None):
    """the inverse transform of a real signal: the first half of its Hermitian spectrum"""
    return _r2c(input, n, dim, norm, False, True, "ihfft")


# --- n-dimensional transforms ----------------------------------------------------------------


def _c2c_n(input, s, dim, norm, forward: bool, op: str):
    input = expect_tensor(input, op)
    shape, dims = _shape_and_dims(input, s, dim, op)
    x = _resized(_promoted(input, op, to_complex=True), dims, shape)
    return prims.fft_c2c(x, dims, norm_mode(norm, forward), forward)


@symbol(torch.fft.fftn)
def fft_fftn(input, s=None, dim=None, norm=None):
    """the n-dimensional transform over dim (all dims by default; the last len(s) given s)"""
    return _c2c_n(input, s, dim, norm, True, "fftn")


@symbol(torch.fft.ifftn)
def fft_ifftn(input, s=None, dim=None, norm=None):
    """the n-dimensional inverse transform"""
    return _c2c_n(input, s, dim, norm, False, "ifftn")


def _real_n(input, s, dim, op: str):
    input = _real_input(input, op)
    shape, dims = _shape_and_dims(input, s, dim, op)
    if not shape:
        raise ShapeError(f"{op} must transform at least one axis")
    return _resized(_promoted(input, op, to_complex=False), dims, shape), dims


@symbol(torch.fft.rfftn)
def fft_rfftn(input, s=None, dim=None, norm=None):
    """the n-dimensional transform of a real signal, one-sided in the last dim"""
    x, dims = _real_n(input, s, dim, "rfftn")
    return prims.fft_r2c(x, dims, norm_mode(norm, True), True)


@symbol(torch.fft.ihfftn)
def fft_ihfftn(input, s=None, dim=None, norm=None):
    """the n-dimensional inverse transform of a real signal, one-sided in the last dim"""
    x, dims = _real_n(input, s, dim, "ihfftn")
    mode = norm_mode(norm, False)
    out = prims.conj(prims.fft_r2c(x, dims[-1:], mode, True))
    # The other dims as a complex inverse transform of the conjugated half spectrum.
    return out if len(dims) == 1 else prims.fft_c2c(out, dims[:-1], mode, False)


@symbol(torch.fft.irfftn)
def fft_irfftn(input, s=None, dim=None, norm=None):
    """the real n-dimensional signal whose rfftn is input"""
    input = expect_tensor(input, "irfftn")
    shape, dims, last = _c2r_shape_and_dims(input, s, dim, "irfftn")
    x = _resized(_promoted(input, "irfftn", to_complex=True), dims, shape)
    return prims.fft_c2r(x, dims, norm_mode(norm, False), last)


@symbol(torch.fft.hfftn)
def fft_hfftn(input, s=None, dim=None, norm=None):
    """the n-dimensional transform of a Hermitian-symmetric signal given by its last dim's first half"""
    input = expect_tensor(input, "hfftn")
    shape, dims, last = _c2r_shape_and_dims(input, s, dim, "hfftn")
    x = _resized(_promoted(input, "hfftn", to_complex=True), dims, shape)
    mode = norm_mode(norm, True)
    if len(dims) > 1:
        x = prims.fft_c2c(x, dims[:-1], mode, True)
    return prims.fft_c2r(prims.conj(x), dims[-1:], mode, last)


@symbol(torch.fft.fft2)
def fft_fft2(input, s=None, dim=(-2, -1), norm=None):
    """fftn over the last two dims"""
    return fft_fftn(input, s, dim, norm)


@symbol(torch.fft.ifft2)
def fft_ifft2(input, s=None, dim=(-2, -1), norm=None):
    """ifftn over the last two dims"""
    return fft_ifftn(input, s, dim, norm)


@symbol(torch.fft.rfft2)
def fft_rfft2(input, s=None, dim=(-2, -1), norm=None):
    """rfftn over the last two dims"""
    return fft_rfftn(input, s, dim, norm)


@symbol(torch.fft.irfft2)
def fft_irfft2(input, s=None, dim=(-2, -1), norm=None):
    """irfftn over the last two dims"""
    return fft_irfftn(input, s, dim, norm)


@symbol(torch.fft.hfft2)
def fft_hfft2(input, s=None, dim=(-2, -1), norm=None):
    """hfftn over the last two dims"""
    return fft_hfftn(input, s, dim, norm)


@symbol(torch.fft.ihfft2)
def fft_ihfft2(input, s=None, dim=(-2, -1), norm=None):
    """ihfftn over the last two dims"""
    return fft_ihfftn(input, s, dim, norm)


# --- shifts: rolls by half the size --------------------------------------------------------


def _rolled(x, d: int, shift):
    """x rolled along d by `shift` (0 <= shift <= size): its last `shift` elements first."""
    size = x.shape[d]
    if statically_equal(shift, 0) or statically_equal(shift, size):
        return x
    cut = size - shift
    return prims.cat([slice_along(x, d, cut, size, always=True), slice_along(x, d, 0, cut, always=True)], d)


def _shifted(input, dim, shift_of, op: str):
    input = expect_tensor(input, op)
    if dim is None:
        dims = tuple(range(input.ndim))
    else:
        dims = tuple(_signal_dim(input, d, op) for d in ((dim,) if isinstance(dim, int) else dim))
    if not dims:
        raise ShapeError(f"{op} needs a dim to shift (torch.roll: `shifts` required)")
    x = input
    for d in dims:  # a dim given twice is rolled twice, as torch.roll does
        x = _rolled(x, d, shift_of(input.shape[d]))
    return prims.clone(x) if x is input else x  # a new tensor, as torch's, even when nothing moves


# Both are torch.roll, which meets CPU autocast as cat does.
@symbol(torch.fft.fftshift, autocast=Autocast(cpu=Policy.PROMOTE))
def fft_fftshift(input, dim=None):
    """input rolled by half its size along each dim (all by default): the zero frequency to the centre"""
    return _shifted(input, dim, lambda n: n // 2, "fftshift")


@symbol(torch.fft.ifftshift, autocast=Autocast(cpu=Policy.PROMOTE))
def fft_ifftshift(input, dim=None):
    """the inverse of fftshift: rolled by half the size, rounded up"""
    return _shifted(input, dim, lambda n: (n + 1) // 2, "ifftshift")


# --- sample frequencies ----------------------------------------------------------------------


def rounded(value: float, dtype) -> float:
    """`value` rounded to `dtype`, as a Python float."""
    return torch.tensor(value, dtype=TO_TORCH[dtype]).item()


def scalar_for(value: float, x) -> float:
    """`value` as ATen's factories apply a scalar to the tensor x: on CPU rounded to x's
    dtype first (a Python float beside a float16 tensor is applied in float32, as CUDA's
    kernels apply ATen's own scalars too)."""
    return rounded(value, x.dtype) if x.device == "cpu" else value


def _reciprocal(x: float) -> float:
    """1 / x as C++ computes it: a zero gives an infinity of its sign, not an error."""
    return math.copysign(math.inf, x) if x == 0 else 1.0 / x


def factory_options(op: str, dtype, device, layout):
    """(dtype, device) of a factory of floats, refusing the dtypes and layouts torch refuses."""
    dtype = to_dtype(dtype) if dtype is not None else dtypes.float32
    if layout not in (None, torch.strided):
        raise ShapeError(f"{op} is implemented for strided tensors only, got {layout}")
    if dtype not in (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64):
        raise ShapeError(f"{op} expects a floating point dtype, got {dtype.name}")
    return dtype, to_device(device)


def _frequencies(sym, n, d, options: dict):
    if not isinstance(d, (int, float)) or isinstance(d, bool) or set(options) - {"dtype", "device", "layout",
                                                                                "pin_memory", "requires_grad"}:
        return OPAQUE
    dtype, device = factory_options(sym.name, options.get("dtype"), options.get("device"), options.get("layout"))
    return sym(points(n), d, dtype=dtype, device=device)


def _fftfreq(n, d=1.0, **options):
    return _frequencies(fft_fftfreq, n, d, options)


def _rfftfreq(n, d=1.0, **options):
    return _frequencies(fft_rfftfreq, n, d, options)


def _scaled_frequencies(x, n, d):
    # ATen multiplies by 1 / (n * d), computed in double and applied in the dtype.
    return prims.mul(x, scalar_for(_reciprocal(float(n * d)), x))


@symbol(torch.fft.fftfreq, adapter=_fftfreq)
def fft_fftfreq(n, d=1.0, *, dtype=None, device=None):
    """the frequencies of an n-point transform, sample spacing d: 0, 1, ..., -(n // 2), ..., -1 over n * d"""
    dtype, device = factory_options("fftfreq", dtype, device, None)
    if n < 0:
        raise ShapeError(f"fftfreq: n must be non-negative, got {n}")
    rising = prims.iota((n + 1) // 2, 0, 1, device=device, dtype=dtype)
    if statically_equal(n // 2, 0):
        return _scaled_frequencies(rising, n, d)
    falling = prims.iota(n // 2, -(n // 2), 1, device=device, dtype=dtype)
    return _scaled_frequencies(prims.cat([rising, falling], 0), n, d)


@symbol(torch.fft.rfftfreq, adapter=_rfftfreq)
def fft_rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """the non-negative frequencies of an n-point transform, sample spacing d: 0, 1, ..., n // 2 over n * d"""
    dtype, device = factory_options("rfftfreq", dtype, device, None)
    if n < 0:
        raise ShapeError(f"rfftfreq: n must be non-negative, got {n}")
    return _scaled_frequencies(prims.iota(n // 2 + 1, 0, 1, device=device, dtype=dtype), n, d)
