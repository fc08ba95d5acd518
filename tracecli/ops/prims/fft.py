"""Discrete Fourier transform prims: ATen's three transform kernels, and the complex
conjugate the Hermitian transforms take.

- `fft_c2c(x, dims, norm, forward)`: complex to complex, over `dims`, forward or inverse.
- `fft_r2c(x, dims, norm, onesided)`: real to complex, the forward transform; one-sided
  keeps the non-negative frequencies of the last of `dims` (n // 2 + 1 of them), the rest
  being their conjugates.
- `fft_c2r(x, dims, norm, last_dim_size)`: the inverse of a one-sided spectrum, real, with
  `last_dim_size` points along the last of `dims`.

`norm` is the scaling the kernel applies, as ATen's fft_norm_mode: "none", "by_root_n"
(1/sqrt(n)) or "by_n" (1/n), n the number of points of one signal (the real side's, for
r2c and c2r). Each runs the kernel torch.fft's functions reach, so results agree with
eager bit for bit.
"""

from __future__ import annotations

import torch

from tracecli.core import dtypes
from tracecli.core.dims import Dim
from tracecli.core.dtypes import DType
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import prim
from tracecli.ops.promotion import ShapeError

NORMS = {"none": 0, "by_root_n": 1, "by_n": 2}  # ATen's fft_norm_mode values

REAL_OF = {dtypes.complex32: dtypes.float16, dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}
COMPLEX_OF = {real: complex_ for complex_, real in REAL_OF.items()}
_HALF = frozenset({dtypes.float16, dtypes.complex32})


def _on_cuda(x: TensorValue) -> bool:
    return x.device.startswith("cuda")


def _power_of_two(n: int | Dim) -> bool:
    # A symbolic size is left to the kernel: asking would pin it.
    return isinstance(n, Dim) or (n > 0 and n & (n - 1) == 0)


def _check(name: str, x: TensorValue, dims, norm: str, kinds: tuple[DType, ...], signal) -> None:
    """What every transform kernel requires: one of `kinds` (half precision on CUDA only,
    there for sizes that are powers of two, as cuFFT), canonical distinct dims and a
    known normalization. `signal` gives the sizes of one signal along `dims`."""
    if not isinstance(x, TensorValue):
        raise ShapeError(f"prims.{name} transforms a tensor, got {type(x).__name__}")
    allowed = kinds if _on_cuda(x) else tuple(d for d in kinds if d not in _HALF)
    if x.dtype not in allowed:
        raise ShapeError(f"prims.{name} does not transform {x.dtype.name} tensors on {x.device} "
                         f"({', '.join(d.name for d in allowed)} only)")
    if len(set(dims)) != len(dims) or not all(0 <= d < x.ndim for d in dims):
        raise ShapeError(f"prims.{name}: dims {list(dims)} must be distinct dimensions of {list(x.shape)}")
    if norm not in NORMS:
        raise ShapeError(f"prims.{name}: norm must be one of {', '.join(NORMS)}, got {norm!r}")
    if x.dtype in _HALF and not all(_power_of_two(n) for n in signal):
        raise ShapeError(f"cuFFT transforms half precision signals only when their sizes are powers of two, "
                         f"got {list(signal)}")
    if dims and any(not isinstance(n, Dim) and n == 0 for n in x.shape):
        # torch's kernels (oneMKL on CPU, cuFFT on CUDA) refuse a batch of no signals as
        # well as an empty signal.
        raise ShapeError(f"torch's FFT kernels do not transform a tensor with no elements, got {list(x.shape)}")


def _c2c_meta(x: TensorValue, dims: tuple[int, ...], norm: str, forward: bool) -> TensorType:
    _check("fft_c2c", x, dims, norm, tuple(REAL_OF), tuple(x.shape[d] for d in dims))
    return x.type


def _r2c_meta(x: TensorValue, dims: tuple[int, ...], norm: str, onesided: bool) -> TensorType:
    _check("fft_r2c", x, dims, norm, tuple(COMPLEX_OF), tuple(x.shape[d] for d in dims))
    shape = list(x.shape)
    if onesided and dims:
        shape[dims[-1]] = shape[dims[-1]] // 2 + 1
    return TensorType(tuple(shape), COMPLEX_OF[x.dtype], x.device)


def _c2r_meta(x: TensorValue, dims: tuple[int, ...], norm: str, last_dim_size: int) -> TensorType:
    if not dims or last_dim_size < 1:
        raise ShapeError(f"prims.fft_c2r needs a dim to transform and a positive output length, got {last_dim_size}")
    shape = list(x.shape)
    shape[dims[-1]] = last_dim_size
    _check("fft_c2r", x, dims, norm, tuple(REAL_OF), tuple(shape[d] for d in dims))
    return TensorType(tuple(shape), REAL_OF[x.dtype], x.device)


def _fft_c2c(x, dims, norm, forward):
    return torch._fft_c2c(x, list(dims), NORMS[norm], forward)


def _fft_r2c(x, dims, norm, onesided):
    return torch._fft_r2c(x, list(dims), NORMS[norm], onesided)


def _fft_c2r(x, dims, norm, last_dim_size):
    return torch._fft_c2r(x, list(dims), NORMS[norm], last_dim_size)


fft_c2c = prim("fft_c2c", _c2c_meta, _fft_c2c, doc="the discrete Fourier transform of complex x over dims")
fft_r2c = prim("fft_r2c", _r2c_meta, _fft_r2c, doc="the discrete Fourier transform of real x over dims")
fft_c2r = prim("fft_c2r", _c2r_meta, _fft_c2r, doc="the inverse transform of a one-sided spectrum: real")


def _conj_meta(x: TensorValue) -> TensorType:
    if not isinstance(x, TensorValue) or not x.dtype.is_complex:
        raise ShapeError("prims.conj takes a complex tensor (the conjugate of a real one is itself)")
    return x.type


# The Hermitian transforms' conjugate (torch takes a lazy conjugate view there: the same
# values). The one complex-only elementwise prim, declared beside its users.
conj = prim("conj", _conj_meta, torch.conj_physical, doc="the complex conjugate")
