"""Spectral analysis: the window factories (torch.hann_window, hamming_window,
bartlett_window, blackman_window, kaiser_window) and the short-time Fourier transform (torch.stft) that
applies them, frame by frame."""

# Parameters keep torch's names (`input`, `window`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch

from tracecli.core import dtypes
from tracecli.core.dims import statically_equal
from tracecli.ops import prims
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import compute_dtype, convert, expect_tensor, symbol
from tracecli.ops.ltorch.elementwise import mul
from tracecli.ops.ltorch.fft import factory_options, points, rounded, scalar_for
from tracecli.ops.ltorch.indexing import slice_along
from tracecli.ops.ltorch.shapes import pad
from tracecli.ops.promotion import ShapeError
from tracecli.ops.torch_bridge import TO_TORCH

# --- windows: torch's factories for spectral analysis -------------------------------------------------
#
# As ATen computes them: k = 0, 1, ..., N - 1 in the window's dtype (N the length, plus one
# for a periodic window, which then drops its last point), scaled and shifted by scalars as
# ATen applies them (see fft.scalar_for). Lengths 0 and 1 are an empty window and a single one.


def _window(op: str, window_length, periodic, dtype, device, shape_of):
    dtype, device = factory_options(op, dtype, device, None)
    points(window_length, "window_length")
    if window_length < 0:
        raise ShapeError(f"{op} requires non-negative window_length, got window_length={window_length}")
    if statically_equal(window_length, 0) or statically_equal(window_length, 1):
        # Nothing to compute: no point, or the single point 1.
        return prims.full((window_length,), 1, device=device, dtype=dtype)
    n = window_length + 1 if periodic else window_length
    w = shape_of(prims.iota(n, 0, 1, device=device, dtype=dtype), n)
    return slice_along(w, 0, 0, n - 1) if periodic else w


def _window_call(sym, window_length, args: tuple, kwargs: dict):
    """A window factory's torch forms: its own arguments (torch's parser has checked
    them), and the factory options, of which a trace keeps dtype and device."""
    layout = kwargs.pop("layout", None)
    if layout not in (None, torch.strided):
        raise ShapeError(f"{sym.name} is implemented for strided tensors only, got {layout}")
    kwargs.pop("pin_memory", None)
    kwargs.pop("requires_grad", None)
    return sym(window_length, *args, **kwargs)


def _hann_window(window_length, *args, **kwargs):
    return _window_call(hann_window, window_length, args, kwargs)


def _hamming_window(window_length, *args, **kwargs):
    return _window_call(hamming_window, window_length, args, kwargs)


def _bartlett_window(window_length, *args, **kwargs):
    return _window_call(bartlett_window, window_length, args, kwargs)


def _blackman_window(window_length, *args, **kwargs):
    return _window_call(blackman_window, window_length, args, kwargs)


def _kaiser_window(window_length, *args, **kwargs):
    return _window_call(kaiser_window, window_length, args, kwargs)


def _run_hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, **options):
    # torch takes alpha and beta positionally only, after periodic; a recorded call names them.
    return torch.hamming_window(window_length, periodic, alpha, beta, **options)


@symbol(_run_hamming_window, aliases=(torch.hamming_window,), adapter=_hamming_window)
def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, device=None):
    """alpha - beta * cos(2 pi k / (N - 1))"""

    def shape_of(k, n):
        w = prims.cos(prims.mul(k, scalar_for(math.pi * 2.0 / (n - 1), k)))
        return prims.add(prims.mul(w, scalar_for(-beta, k)), scalar_for(alpha, k))

    return _window("hamming_window", window_length, periodic, dtype, device, shape_of)


@symbol(torch.hann_window, adapter=_hann_window)
def hann_window(window_length, periodic=True, *, dtype=None, device=None):
    """the Hamming window with alpha = beta = 0.5"""
    return hamming_window(window_length, periodic, 0.5, 0.5, dtype=dtype, device=device)


@symbol(torch.bartlett_window, adapter=_bartlett_window)
def bartlett_window(window_length, periodic=True, *, dtype=None, device=None):
    """the triangle 2k / (N - 1), falling as 2 - 2k / (N - 1) past its middle"""

    def shape_of(k, n):
        w = prims.mul(k, scalar_for(2.0 / (n - 1), k))
        half = (n - 1) // 2 + 1
        falling = prims.add(prims.neg(slice_along(w, 0, half, n, always=True)), 2)
        return prims.cat([slice_along(w, 0, 0, half, always=True), falling], 0)

    return _window("bartlett_window", window_length, periodic, dtype, device, shape_of)


@symbol(torch.blackman_window, adapter=_blackman_window)
def blackman_window(window_length, periodic=True, *, dtype=None, device=None):
    """0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))"""

    def shape_of(k, n):
        w = prims.mul(k, scalar_for(math.pi / (n - 1), k))
        high = prims.mul(prims.cos(prims.mul(w, 4)), scalar_for(0.08, k))
        low = prims.mul(prims.cos(prims.mul(w, 2)), scalar_for(0.5, k))
        return prims.add(prims.sub(high, low), scalar_for(0.42, k))

    return _window("blackman_window", window_length, periodic, dtype, device, shape_of)


def _run_kaiser_window(window_length, periodic=True, beta=12.0, **options):
    # torch takes beta positionally only, after periodic; a recorded call names it.
    return torch.kaiser_window(window_length, periodic, beta, **options)


@symbol(_run_kaiser_window, aliases=(torch.kaiser_window,), adapter=_kaiser_window)
def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, device=None):
    """i0(beta * sqrt(1 - ((k - a) / a)^2)) / i0(beta), a = (N - 1) / 2"""

    def shape_of(k, n):
        # ATen's kernel computes each point in float32 for half precision types, its
        # constants (and i0(beta)) too.
        wide = compute_dtype(k.dtype)
        alpha, wide_beta = rounded((n - 1) / 2.0, wide), rounded(beta, wide)
        ratio = prims.div(prims.sub(convert(k, wide), alpha), alpha)
        root = prims.sqrt(prims.abs(prims.sub(1, prims.pow(ratio, 2.0))))
        scale = torch.i0(torch.tensor(wide_beta, dtype=TO_TORCH[wide])).item()
        return convert(prims.div(prims.i0(prims.mul(root, wide_beta)), scale), k.dtype)

    return _window("kaiser_window", window_length, periodic, dtype, device, shape_of)


# --- the short-time Fourier transform ---------------------------------------------------------------


def _stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
          normalized=False, onesided=None, return_complex=None, align_to_window=None):
    if return_complex is False or align_to_window:
        # The real and imaginary parts as a last dim of two (no prim takes complex numbers
        # apart), and frames aligned to the window: left to torch.
        return OPAQUE
    return stft(input, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided,
                return_complex, align_to_window)


@symbol(torch.stft, methods=("stft",), adapter=_stft)
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """the transforms of n_fft-point windowed frames hop_length apart: [batch,] frequencies x frames"""
    input = expect_tensor(input, "stft")
    if center and align_to_window is not None:
        raise ShapeError("stft align_to_window should only be set when center = false")
    if input.ndim not in (1, 2):
        raise ShapeError(f"stft expected a 1D or 2D tensor, got {list(input.shape)}")
    if not input.dtype.is_inexact:
        raise ShapeError(f"stft expected a tensor of floating point or complex values, got {input.dtype.name}")
    window = None if window is None else expect_tensor(window, "stft")
    if return_complex is None and not (input.dtype.is_complex or (window is not None and window.dtype.is_complex)):
        raise ShapeError("stft requires the return_complex parameter be given for real inputs")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    x = input if input.ndim == 2 else prims.reshape(input, (1,) + input.shape)
    if center:
        # torch.stft pads the signal by half a frame on each side (as a batch of one
        # channel for F.pad), so that frame t is centred on sample t * hop.
        padded = pad(prims.reshape(x, (1,) + x.shape), (n_fft // 2, n_fft // 2), pad_mode)
        x = prims.reshape(padded, padded.shape[1:])
    length = x.shape[1]
    if not 0 < n_fft <= length:
        raise ShapeError(f"stft expected 0 < n_fft <= {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise ShapeError(f"stft expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise ShapeError(f"stft expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise ShapeError(f"stft expected a 1D window tensor of size equal to win_length={win}, "
                         f"but got window with size {list(window.shape)}")
    if win < n_fft:
        # A shorter window sits in the middle of the frame, zeros around it (ones without a window).
        left = (n_fft - win) // 2
        if window is None:
            window = prims.full((win,), 1, device=x.device, dtype=x.dtype)
        window = prims.pad(window, 0, ((left, n_fft - win - left),))
    frames = _frames(x, n_fft, hop)
    if window is not None:
        frames = mul(frames, window)
    complex_fft = frames.dtype.is_complex
    sided = not complex_fft if onesided is None else onesided
    norm = "by_root_n" if normalized else "none"
    if complex_fft:
        if sided:
            raise ShapeError("Cannot have onesided output if window or input is complex")
        out = prims.fft_c2c(frames, (2,), norm, True)
    else:
        out = prims.fft_r2c(frames, (2,), norm, sided)
    out = prims.transpose(out, (0, 2, 1))
    return out if input.ndim == 2 else prims.reshape(out, out.shape[1:])


def _frames(x, n_fft: int, hop):
    """The frames of the signals x[batch, length]: [batch, frames, n_fft], frame t the
    samples t * hop, ..., t * hop + n_fft - 1 (torch takes them as a strided view)."""
    count = 1 + (x.shape[1] - n_fft) // hop
    shape = (count, n_fft)
    starts = prims.broadcast_in_dim(prims.iota(count, 0, hop, device=x.device, dtype=dtypes.int64), shape, (0,))
    offsets = prims.broadcast_in_dim(prims.iota(n_fft, 0, 1, device=x.device, dtype=dtypes.int64), shape, (1,))
    return prims.take(x, prims.add(starts, offsets), 1)
