"""Conversion prims: dtype conversion, moving between devices, and copying."""

from __future__ import annotations

import torch

from tracecli.core.dtypes import DType
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import prim, torch_dtype
from tracecli.ops.torch_bridge import to_device


def _convert_meta(x: TensorValue, dtype: DType) -> TensorType:
    return TensorType(x.shape, dtype, x.device)


convert_element_type = prim("convert_element_type", _convert_meta, lambda x, dtype: x.to(torch_dtype(dtype)))


def _device_put_meta(x: TensorValue, device: str) -> TensorType:
    return TensorType(x.shape, x.dtype, to_device(device))


device_put = prim("device_put", _device_put_meta, lambda x, device: x.to(device))


def _clone_meta(x: TensorValue) -> TensorType:
    return x.type


# A copy in new memory: what keeps an in-place write on the copy away from the original.
clone = prim("clone", _clone_meta, torch.clone)
