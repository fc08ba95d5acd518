"""Conversion prims: dtype conversion, moving between devices, copying, and writing a
value back into a tensor."""

from __future__ import annotations

import torch

from tracecli.core.dtypes import DType
from tracecli.core.symbol import Tag
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import prim, torch_dtype
from tracecli.ops.promotion import ShapeError
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


def _copy_to_meta(dst: TensorValue, src: TensorValue) -> None:
    if not isinstance(dst, TensorValue) or not isinstance(src, TensorValue) or dst.type != src.type:
        raise ShapeError("prims.copy_to copies a value into a tensor of its own shape, dtype and device")
    return None


def _copy_to(dst, src) -> None:
    dst.copy_(src)


# The write of an in-place op's result back into the tensor it changed, once the op is
# lowered to prims that compute it out of place: what the caller sees of its input.
copy_to = prim("copy_to", _copy_to_meta, _copy_to, tags=(Tag.SIDE_EFFECT,))
