"""torch.fft (the transforms, fftshift/ifftshift, fftfreq/rfftfreq), with their prims
fft_c2c, fft_r2c, fft_c2r and conj, exercised through the cases' lowered traces and
checked directly against the kernels. The transforms run ATen's own kernels, and the
frequencies ATen's arithmetic: the cases are bitwise equal to eager.
"""

from __future__ import annotations

import pytest
import torch

from tests.ops.harness import (
    Case,
    T,
    case_adder,
    check_case,
    refusal_tests,
    rows_by_id,
    tensor_value,
)
from tracecli.core import dtypes
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops import prims
from tracecli.ops.promotion import ShapeError
from tracecli.ops.torch_bridge import FROM_TORCH, TO_TORCH

CASES: list[Case] = []
case = case_adder(CASES)

X = T("f32", (5, 6, 7))
C = T("c64", (5, 6, 7))

# --- one-dimensional transforms -----------------------------------------------------------------------

for _name in ("fft", "ifft"):
    _fn = getattr(torch.fft, _name)
    for _dtype in ("f32", "f64", "i64", "bool", "c64"):
        case(f"fft_{_name}", _dtype, _fn, T(_dtype, (3, 8)), exact=True)
    case(f"fft_{_name}", "n-dim-norm", lambda x, f=_fn: f(x, n=10, dim=1, norm="ortho"), X, exact=True)
    case(f"fft_{_name}", "trim", lambda x, f=_fn: f(x, 4, 0, "forward"), C, exact=True)
    case(f"fft_{_name}", "pad-complex", lambda x, f=_fn: f(x, n=9, dim=-2), C, exact=True)
    case(f"fft_{_name}", "c128", lambda x, f=_fn: f(x.to(torch.complex128), norm="backward"), C, exact=True)
    case(f"fft_{_name}", "one-point", _fn, T("f32", (1,)), exact=True)
for _name in ("rfft", "ihfft"):
    _fn = getattr(torch.fft, _name)
    for _dtype in ("f32", "f64", "i32", "u8"):
        case(f"fft_{_name}", _dtype, _fn, T(_dtype, (3, 8)), exact=True)
    case(f"fft_{_name}", "n-dim-norm", lambda x, f=_fn: f(x, n=10, dim=1, norm="ortho"), X, exact=True)
    case(f"fft_{_name}", "odd-trim", lambda x, f=_fn: f(x, n=5, dim=-3, norm="forward"), X, exact=True)
    case(f"fft_{_name}", "1d", _fn, T("f32", (31,)), exact=True)
for _name in ("irfft", "hfft"):
    _fn = getattr(torch.fft, _name)
    for _dtype in ("c64", "f32", "i64"):
        case(f"fft_{_name}", _dtype, _fn, T(_dtype, (3, 5)), exact=True)
    case(f"fft_{_name}", "n-dim-norm", lambda x, f=_fn: f(x, n=10, dim=1, norm="ortho"), C, exact=True)
    case(f"fft_{_name}", "odd-n", lambda x, f=_fn: f(x, 7, norm="forward"), C, exact=True)
    case(f"fft_{_name}", "trim", lambda x, f=_fn: f(x, n=4, dim=0), C, exact=True)
    case(f"fft_{_name}", "c128", lambda x, f=_fn: f(x.to(torch.complex128)), C, exact=True)
    case(f"fft_{_name}", "n1", lambda x, f=_fn: f(x, n=1), T("c64", (2, 1)), exact=True)

# --- n-dimensional transforms ---------------------------------------------------------------------------

for _name in ("fftn", "ifftn", "rfftn", "ihfftn", "irfftn", "hfftn"):
    _fn = getattr(torch.fft, _name)
    _input = C if _name in ("irfftn", "hfftn") else X
    case(f"fft_{_name}", "all", _fn, _input, exact=True)
    case(f"fft_{_name}", "s-dim-norm", lambda x, f=_fn: f(x, s=(3, 10), dim=(1, 2), norm="ortho"), _input, exact=True)
    case(f"fft_{_name}", "s-last", lambda x, f=_fn: f(x, s=(4, -1), norm="forward"), _input, exact=True)
    case(f"fft_{_name}", "dim-int", lambda x, f=_fn: f(x, dim=-2), _input, exact=True)
    case(f"fft_{_name}", "dims-unordered", lambda x, f=_fn: f(x, dim=(2, 0)), _input, exact=True)
    case(f"fft_{_name}", "i64", _fn, T("i64", (4, 6)), exact=True)
    case(f"fft_{_name}", "f64", lambda x, f=_fn: f(x, s=5), T("f64", (2, 3, 8)), exact=True)
for _name in ("fftn", "ifftn"):
    _fn = getattr(torch.fft, _name)
    case(f"fft_{_name}", "no-dims", lambda x, f=_fn: f(x, dim=()), X, exact=True)
    case(f"fft_{_name}", "0d", _fn, T("f32", ()), exact=True)
    case(f"fft_{_name}", "complex-4d", lambda x, f=_fn: f(x.unsqueeze(0), dim=(0, 1, 3)), C, exact=True)
for _name in ("fft2", "ifft2", "rfft2", "ihfft2", "irfft2", "hfft2"):
    _fn = getattr(torch.fft, _name)
    _input = C if _name in ("irfft2", "hfft2") else X
    case(f"fft_{_name}", "default", _fn, _input, exact=True)
    case(f"fft_{_name}", "s-dim", lambda x, f=_fn: f(x, s=(6, 8), dim=(0, -1), norm="ortho"), _input, exact=True)
    case(f"fft_{_name}", "i32", _fn, T("i32", (4, 6)), exact=True)

# --- shifts ------------------------------------------------------------------------------------------------

for _name in ("fftshift", "ifftshift"):
    _fn = getattr(torch.fft, _name)
    case(f"fft_{_name}", "all", _fn, T("f32", (9, 10)), exact=True)
    case(f"fft_{_name}", "dim", lambda x, f=_fn: f(x, dim=0), T("i64", (7,)), exact=True)
    case(f"fft_{_name}", "dims", lambda x, f=_fn: f(x, dim=(0, -1)), T("f64", (5, 6, 2)), exact=True)
    case(f"fft_{_name}", "dim-twice", lambda x, f=_fn: f(x, dim=(1, 1)), T("bool", (3, 5)), exact=True)
    case(f"fft_{_name}", "size-1", _fn, T("bf16", (1, 1)), exact=True)
    case(f"fft_{_name}", "complex", lambda x, f=_fn: f(x, dim=[-2]), C, exact=True)
case(("fft_fftshift", "fft_fft"), "spectrum", lambda x: torch.fft.fftshift(torch.fft.fft(x), dim=-1), X, exact=True)
case(("fft_ifftshift", "fft_fftshift"), "round-trip", lambda x: torch.fft.ifftshift(torch.fft.fftshift(x)), X,
     exact=True)

# --- sample frequencies --------------------------------------------------------------------------------------

for _n, _d in ((5, 1.0), (6, 0.3), (1, 1.0), (0, 1.0), (8, 0), (9, -2)):
    # Bitwise where no NaN comes out (a zero spacing gives 0 * inf at frequency 0).
    _exact = _n * _d != 0
    case("fft_fftfreq", f"n{_n}-d{_d}", lambda n=_n, d=_d: torch.fft.fftfreq(n, d), exact=_exact)
    case("fft_rfftfreq", f"n{_n}-d{_d}", lambda n=_n, d=_d: torch.fft.rfftfreq(n, d), exact=_exact)
for _dtype in (torch.float64, torch.float16, torch.bfloat16):
    # float16's scale is rounded to float16 first, as ATen applies it: 3000 points show it.
    case("fft_fftfreq", f"{_dtype}", lambda d=_dtype: torch.fft.fftfreq(3000, 0.7, dtype=d), exact=True)
    case("fft_rfftfreq", f"{_dtype}", lambda d=_dtype: torch.fft.rfftfreq(3000, d=0.7, dtype=d), exact=True)
case("fft_fftfreq", "options", lambda: torch.fft.fftfreq(4, device="cpu", requires_grad=False,
                                                         layout=torch.strided), exact=True)
# torch's parser takes the number of points as a plain int (not a size): it pins the size.
case(("fft_rfftfreq", "mul"), "with-input", lambda x: x * torch.fft.rfftfreq(int(2 * x.shape[-1] - 2)),
     T("f32", (3, 4)))

@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


# --- the prims: each meta rule against its kernel -------------------------------------------------------------

PRIM_CALLS = (
    ("fft_c2c", (5, 6), dtypes.complex64, ((1,), "none", True)),
    ("fft_c2c", (5, 6), dtypes.complex128, ((0, 1), "by_n", False)),
    ("fft_c2c", (5, 6), dtypes.complex64, ((), "by_root_n", True)),
    ("fft_r2c", (5, 6), dtypes.float32, ((1,), "by_root_n", True)),
    ("fft_r2c", (5, 7), dtypes.float64, ((1, 0), "none", True)),
    ("fft_r2c", (5, 7), dtypes.float32, ((0,), "by_n", False)),
    ("fft_c2r", (5, 4), dtypes.complex64, ((1,), "by_n", 6)),
    ("fft_c2r", (5, 4), dtypes.complex128, ((1,), "none", 7)),
    ("fft_c2r", (5, 4), dtypes.complex64, ((1, 0), "by_root_n", 3)),
    ("conj", (5, 4), dtypes.complex64, ()),
)


@pytest.mark.parametrize("name", sorted({row[0] for row in PRIM_CALLS}))
def test_fft_meta_matches_impl(name):
    for prim_name, shape, dtype, args in PRIM_CALLS:
        if prim_name != name:
            continue
        sym = prims.ALL[name]
        x = torch.randn(shape, dtype=torch.complex128 if dtype.is_complex else torch.float64)
        got = sym.impl(x.to(TO_TORCH[dtype]), *args)
        assert sym.meta(tensor_value(shape, dtype), *args) == TensorType(tuple(got.shape), FROM_TORCH[got.dtype], "cpu")


def _on(shape, dtype, device):
    return TensorValue("x", shape, dtype, device)


PRIM_REFUSALS = (
    ("half-on-cpu", lambda: prims.fft_r2c.meta(tensor_value((8,), dtypes.float16), (0,), "none", True), "float16"),
    ("cuda-half-not-power-of-two", lambda: prims.fft_c2c.meta(
        _on((6,), dtypes.complex32, "cuda:0"), (0,), "none", True), "powers of two"),
    ("bfloat16", lambda: prims.fft_r2c.meta(tensor_value((8,), dtypes.bfloat16), (0,), "none", True), "bfloat16"),
    ("real-c2c", lambda: prims.fft_c2c.meta(tensor_value((8,)), (0,), "none", True), "float32"),
    ("repeated-dims", lambda: prims.fft_c2c.meta(tensor_value((8, 4), dtypes.complex64), (0, 0), "none", True),
     "distinct"),
    ("norm", lambda: prims.fft_c2c.meta(tensor_value((8,), dtypes.complex64), (0,), "ortho", True), "norm"),
    ("empty-batch", lambda: prims.fft_c2c.meta(tensor_value((0, 4), dtypes.complex64), (1,), "none", True),
     "no elements"),
    ("c2r-length", lambda: prims.fft_c2r.meta(tensor_value((4,), dtypes.complex64), (0,), "none", 0), "positive"),
    ("conj-real", lambda: prims.conj.meta(tensor_value((4,))), "complex"),
)


@pytest.mark.parametrize(("make", "message"), rows_by_id(PRIM_REFUSALS))
def test_prims_refuse_what_the_kernels_refuse(make, message):
    with pytest.raises(ShapeError, match=message):
        make()


def test_cuda_half_transforms_of_powers_of_two_are_typed():
    x = _on((3, 8), dtypes.float16, "cuda:0")
    assert prims.fft_r2c.meta(x, (1,), "by_n", True) == TensorType((3, 5), dtypes.complex32, "cuda:0")


# --- refusals and forms left to torch --------------------------------------------------------------------------

REFUSED_CLEARLY = (
    ("fft-0d", lambda x: torch.fft.fft(x), (torch.tensor(1.0),), "no dimensions"),
    ("fft-no-points", lambda x: torch.fft.fft(x, n=0), (torch.ones(3),), "data points"),
    ("fft-norm", lambda x: torch.fft.fft(x, norm="bad"), (torch.ones(3),), "normalization"),
    ("fft-half-on-cpu", lambda x: torch.fft.fft(x), (torch.ones(4, dtype=torch.float16),), "unsupported dtype"),
    ("fft-empty-batch", lambda x: torch.fft.fft(x), (torch.ones(0, 4),), "no elements"),
    ("rfft-complex", lambda x: torch.fft.rfft(x), (torch.ones(4, dtype=torch.complex64),), "real input"),
    ("irfft-one-point", lambda x: torch.fft.irfft(x), (torch.ones(1, dtype=torch.complex64),), "data points"),
    ("fftn-repeated-dims", lambda x: torch.fft.fftn(x, dim=(0, -2)), (torch.ones(3, 4),), "unique"),
    ("fftn-s-dim-lengths", lambda x: torch.fft.fftn(x, s=(5,), dim=(0, 1)), (torch.ones(3, 4),), "same length"),
    ("fftn-long-s", lambda x: torch.fft.fftn(x, s=(2, 3, 4)), (torch.ones(3, 4),), "only has 2 dimensions"),
    ("rfftn-no-dims", lambda x: torch.fft.rfftn(x, dim=()), (torch.ones(3, 4),), "at least one axis"),
    ("fftshift-0d", lambda x: torch.fft.fftshift(x), (torch.tensor(1.0),), "shifts"),
    ("fftfreq-int", lambda: torch.fft.fftfreq(4, dtype=torch.int64), (), "floating point"),
    ("fftfreq-negative", lambda: torch.fft.fftfreq(-1), (), "non-negative"),
)

test_refused_with_a_clear_error, test_eager_refuses_them_too = refusal_tests(REFUSED_CLEARLY)
