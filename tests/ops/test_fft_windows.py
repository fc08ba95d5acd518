"""Spectral analysis: the window factories (hann_window, hamming_window, bartlett_window,
blackman_window, kaiser_window), computed with ATen's arithmetic and so bitwise equal to
eager (kaiser within a rounding), and the short-time Fourier transform (stft), whose
frames run ATen's own transform kernels."""

from __future__ import annotations

import math

import pytest
import torch

from tests.ops.harness import Case, T, case_adder, check_case, check_stays_torch_call, refusal_tests, rows_by_id
from tracecli.frontend.tracer import trace_callable
from tracecli.passes.lower import lower

CASES: list[Case] = []
case = case_adder(CASES)

# --- windows -------------------------------------------------------------------------------------------------

_WINDOWS = {"hann_window": torch.hann_window, "bartlett_window": torch.bartlett_window,
            "blackman_window": torch.blackman_window, "hamming_window": torch.hamming_window,
            "kaiser_window": torch.kaiser_window}
for _name, _fn in _WINDOWS.items():
    # kaiser's float32 Bessel function is vectorised in prims.i0, not in ATen's window kernel.
    _exact = _name != "kaiser_window"
    for _length in (0, 1, 2, 7, 10):
        case(_name, f"periodic-{_length}", lambda f=_fn, n=_length: f(n), exact=_exact)
        case(_name, f"symmetric-{_length}", lambda f=_fn, n=_length: f(n, periodic=False), exact=_exact)
    for _dtype in (torch.float64, torch.float16, torch.bfloat16):
        case(_name, f"{_dtype}", lambda f=_fn, d=_dtype: f(101, False, dtype=d), exact=_exact)
    case((_name, "mul"), "frames", lambda x, f=_fn: x * f(int(x.shape[-1])), T("f32", (3, 8)), exact=_exact)
case("hamming_window", "alpha", lambda: torch.hamming_window(9, False, 0.3), exact=True)
case("hamming_window", "alpha-beta", lambda: torch.hamming_window(9, periodic=True, alpha=0.6, beta=0.3), exact=True)
case("kaiser_window", "beta", lambda: torch.kaiser_window(9, False, 3.5))
case("kaiser_window", "beta-kw", lambda: torch.kaiser_window(8, periodic=True, beta=0.0, dtype=torch.float64))
case("hann_window", "options", lambda: torch.hann_window(6, dtype=torch.float64, layout=torch.strided, device="cpu",
                                                           requires_grad=False, pin_memory=False), exact=True)


# --- the short-time Fourier transform --------------------------------------------------------------------

case("stft", "1d", lambda x: torch.stft(x, 10, return_complex=True), T("f32", (100,)), exact=True)
case("stft", "not-centred", lambda x: torch.stft(x, 16, hop_length=4, center=False, return_complex=True),
     T("f32", (3, 100)), exact=True)
case("stft", "window", lambda x, w: torch.stft(x, 16, window=w, return_complex=True), T("f32", (2, 100)),
     T("f32", (16,)), exact=True)
case("stft", "two-sided-normalized", lambda x, w: torch.stft(x, 16, window=w, onesided=False, normalized=True,
                                                             return_complex=True), T("f32", (2, 100)),
     T("f32", (16,)), exact=True)
case("stft", "short-window", lambda x, w: torch.stft(x, 8, 3, 6, w, center=False, return_complex=True),
     T("f64", (2, 50)), T("f64", (6,)), exact=True)
case("stft", "short-no-window", lambda x: torch.stft(x, 8, 3, 6, pad_mode="constant", return_complex=True),
     T("f32", (2, 50)), exact=True)
case("stft", "complex", lambda x: torch.stft(x, 8, hop_length=2), T("c64", (40,)), exact=True)
case("stft", "promoting-window", lambda x, w: torch.stft(x, 16, window=w, return_complex=True), T("f32", (60,)),
     T("f64", (16,)), exact=True)
case("stft", "complex-window", lambda x, w: torch.stft(x, 16, window=w.to(torch.complex64)), T("f32", (60,)),
     T("f32", (16,)), exact=True)
case("stft", "method", lambda x: x.stft(7, return_complex=True), T("f32", (10,)), exact=True)
case(("stft", "hann_window"), "hann", lambda x: torch.stft(x, 16, window=torch.hann_window(16), return_complex=True),
     T("f32", (2, 64)), exact=True)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


def _window_scalars(device: str) -> list:
    trace = trace_callable(lambda: torch.hamming_window(7, False, dtype=torch.float16, device=device), (), name="fn")
    return [b.args[1] for b in lower(trace.trace).trace.bsyms if b.symbol.name in ("mul", "add")]


def test_window_scalars_are_applied_as_each_device_applies_them():
    """ATen's CPU kernels round a window's scalars to its dtype; CUDA's take them in
    float32 (traced here without a GPU)."""
    exact = [math.pi * 2.0 / 6, -0.46, 0.54]
    assert _window_scalars("cuda:0") == exact
    assert _window_scalars("cpu") == [torch.tensor(v, dtype=torch.float16).item() for v in exact]


REFUSED_CLEARLY = (
    ("hann-negative", lambda: torch.hann_window(-1), (), "non-negative"),
    ("hann-int", lambda: torch.hann_window(4, dtype=torch.int64), (), "floating point"),
    ("hann-sparse", lambda: torch.hann_window(4, layout=torch.sparse_coo), (), "strided"),
    ("stft-no-return-complex", lambda x: torch.stft(x, 8), (torch.ones(20),), "return_complex"),
    ("stft-int", lambda x: torch.stft(x, 8, return_complex=True), (torch.ones(20, dtype=torch.int64),),
     "floating point"),
    ("stft-3d", lambda x: torch.stft(x, 8, return_complex=True), (torch.ones(2, 2, 20),), "1D or 2D"),
    ("stft-long-frame", lambda x: torch.stft(x, 16, center=False, return_complex=True), (torch.ones(10),), "n_fft"),
    ("stft-window-size", lambda x, w: torch.stft(x, 8, window=w, return_complex=True), (torch.ones(20), torch.ones(6)),
     "win_length"),
    ("stft-onesided-complex", lambda x: torch.stft(x, 8, onesided=True, return_complex=True),
     (torch.ones(20, dtype=torch.complex64),), "onesided"),
)

test_refused_with_a_clear_error, test_eager_refuses_them_too = refusal_tests(REFUSED_CLEARLY)


LEFT_TO_TORCH = (
    # Real and imaginary parts side by side (view_as_real): no prim takes complex numbers apart.
    ("stft-real-pairs", lambda x: torch.stft(x, 8, return_complex=False), (T("f32", (20,)),), "torch.stft"),
    ("stft-aligned", lambda x: torch.stft(x, 8, 3, 6, center=False, align_to_window=True, return_complex=True),
     (T("f32", (20,)),), "torch.stft"),
)


@pytest.mark.parametrize(("fn", "args", "opaque"), rows_by_id(LEFT_TO_TORCH))
def test_unmodelled_forms_stay_torch_calls(fn, args, opaque):
    check_stays_torch_call(fn, args, opaque)
