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


def meta_tensor(shape, dtype: DType) -> torch.Tensor:
    return torch.empty(shape, dtype=TO_TORCH[dtype], device="meta")
