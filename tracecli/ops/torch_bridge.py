"""Conversions between the IR's records and torch objects."""

from __future__ import annotations

import torch

from tracecli.core import dtypes
from tracecli.core.dtypes import DType
from tracecli.core.values import TensorType

TO_TORCH: dict[DType, torch.dtype] = {d: getattr(torch, d.name) for d in dtypes.ALL}
FROM_TORCH: dict[torch.dtype, DType] = {v: k for k, v in TO_TORCH.items()}


def to_dtype(dtype: object) -> DType:
    """Accept a DType, a torch dtype or a Python type (`float`, `int`, `bool`)."""
    if isinstance(dtype, DType):
        return dtype
    if isinstance(dtype, torch.dtype):
        try:
            return FROM_TORCH[dtype]
        except KeyError:
            raise TypeError(f"dtype {dtype} is not supported") from None
    if dtype in (bool, int, float, complex):
        return dtypes.DEFAULT_FOR_KIND[dtypes.kind_of_number(dtype())]
    raise TypeError(f"not a dtype: {dtype!r}")


def torch_dtype(dtype: DType | torch.dtype | None) -> torch.dtype | None:
    if dtype is None or isinstance(dtype, torch.dtype):
        return dtype
    return TO_TORCH[dtype]


def to_device(device: object) -> str:
    """A canonical device string: 'cpu', 'cuda:0', 'meta'."""
    if device is None:
        return "cpu"
    dev = torch.device(device) if not isinstance(device, torch.device) else device
    if dev.type == "cuda" and dev.index is None:
        return "cuda:0"
    return str(dev)


def type_of(tensor: torch.Tensor) -> TensorType:
    return TensorType(tuple(tensor.shape), FROM_TORCH[tensor.dtype], to_device(tensor.device))


# How to make a random tensor of each dtype (for --input and saved traces' sample
# inputs): torch draws the common dtypes directly; the rest are converted from floats,
# quantized, or reinterpreted from random bytes.
_DRAWN_INTS = frozenset({dtypes.uint8, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint16,
                         dtypes.uint32, dtypes.uint64})
_DRAWN_INEXACT = frozenset({dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64, dtypes.complex32,
                            dtypes.complex64, dtypes.complex128})


def sample_code(dtype: DType, shape: str, device: str, generator: str = "") -> str:
    """A Python expression making a random tensor of `dtype`; `shape`, `device` and
    `generator` are expressions (no generator: the global RNG)."""
    gen = f", generator={generator}" if generator else ""
    target = f"torch.{dtype.name}"
    if dtype.kind == "bool":
        return f"(torch.rand({shape}{gen}) > 0.5).to({device})"
    if dtype in _DRAWN_INTS:
        return f"torch.randint(0, 10, {shape}{gen}, dtype={target}).to({device})"
    if dtype in _DRAWN_INEXACT:
        return f"torch.randn({shape}{gen}, dtype={target}).to({device})"
    if dtype.is_float and dtype.bits == 8 and "x2" not in dtype.name:  # float8: no random kernels
        return f"torch.randn({shape}{gen}).to({target}).to({device})"
    if dtype.kind == "quantized":
        return f"torch.quantize_per_tensor(torch.randn({shape}{gen}), 0.1, 0, {target}).to({device})"
    # Bit containers, packed and sub-byte dtypes: random bytes of the same width, reinterpreted.
    carrier = "torch.int16" if dtype.bits == 16 else "torch.uint8"
    return f"torch.randint(0, 10, {shape}{gen}, dtype={carrier}).view({target}).to({device})"


def meta_tensor(shape, dtype: DType) -> torch.Tensor:
    return torch.empty(shape, dtype=TO_TORCH[dtype], device="meta")
