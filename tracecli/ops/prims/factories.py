"""Factory prims: full, iota, tensor (a literal), and the random draws uniform, normal
and bernoulli.

Random prims draw from torch's global generator the way eager's factories do, so eager
and traced runs under one seed agree bit for bit.
"""

from __future__ import annotations

import math

import torch

from tracecli.core import dtypes
from tracecli.core.dtypes import DType
from tracecli.core.symbol import Tag
from tracecli.core.values import TensorType
from tracecli.ops.prims.base import INEXACT, check_kinds, prim, torch_dtype
from tracecli.ops.promotion import ShapeError


def _factory_meta(shape, *_, device, dtype) -> TensorType:
    return TensorType(tuple(shape), dtype, device)


def _sampling_meta(name: str):
    def meta(shape, *_, device, dtype) -> TensorType:
        # torch samples floating point (and complex) values only.
        check_kinds(name, dtype, INEXACT)
        return _factory_meta(shape, device=device, dtype=dtype)

    return meta


def _iota_meta(length, start, step, *, device, dtype) -> TensorType:
    return TensorType((length,), dtype, device)


def _full(shape, fill_value, *, device, dtype):
    return torch.full(shape, fill_value, device=device, dtype=torch_dtype(dtype))


def _iota(length, start, step, *, device, dtype):
    return torch.arange(start, start + length * step, step, device=device, dtype=torch_dtype(dtype))[:length]


def _uniform(shape, low, high, *, device, dtype):
    # Same RNG stream as torch.rand / Tensor.uniform_, so eager and traced agree.
    return torch.empty(shape, device=device, dtype=torch_dtype(dtype)).uniform_(low, high)


def _normal(shape, mean, std, *, device, dtype):
    return torch.empty(shape, device=device, dtype=torch_dtype(dtype)).normal_(mean, std)


full = prim("full", _factory_meta, _full)
iota = prim("iota", _iota_meta, _iota)

# --- literals -------------------------------------------------------------------------------------


def literal_layout(data) -> tuple[tuple[int, ...], str]:
    """(shape, widest number kind) of Python numbers in nested lists or tuples, as
    torch.tensor reads them; ShapeError for ragged nesting or anything but numbers."""
    if isinstance(data, (list, tuple)):
        parts = [literal_layout(item) for item in data]
        if not parts:
            return (0,), "float"  # torch.tensor([]) is an empty float tensor
        shapes = {shape for shape, _ in parts}
        if len(shapes) > 1:
            raise ShapeError(f"torch.tensor needs nested sequences of one length at each depth, got {data!r}")
        kind = max((k for _, k in parts), key=dtypes.KIND_ORDER.__getitem__)
        return (len(parts),) + parts[0][0], kind
    if isinstance(data, (bool, int, float, complex)):
        return (), dtypes.kind_of_number(data)
    raise ShapeError(f"a tensor literal holds Python numbers, got {type(data).__name__}")


def _numbers(data):
    if isinstance(data, (list, tuple)):
        for item in data:
            yield from _numbers(item)
    else:
        yield data


def _tensor_meta(data, *, device, dtype: DType) -> TensorType:
    shape, kind = literal_layout(data)
    if kind == "complex" and not dtype.is_complex:
        raise ShapeError(f"a complex number cannot be written into a {dtype.name} tensor")
    for value in _numbers(data):
        if isinstance(value, int) and not -(2**63) <= value < 2**63:
            raise ShapeError(f"{value} does not fit the integers torch.tensor reads")
        if dtype.kind == "int" and isinstance(value, float) and not math.isfinite(value):
            raise ShapeError(f"{value} cannot be converted to {dtype.name}")
    return TensorType(shape, dtype, device)


def _tensor(data, *, device, dtype):
    return torch.tensor(data, device=device, dtype=torch_dtype(dtype))


tensor = prim("tensor", _tensor_meta, _tensor, doc="a constant tensor: the numbers written in the program")
uniform = prim("uniform", _sampling_meta("uniform"), _uniform, tags=(Tag.RANDOM,))
normal = prim("normal", _sampling_meta("normal"), _normal, tags=(Tag.RANDOM,))

# --- Bernoulli sampling -----------------------------------------------------------------------


def _bernoulli_meta(shape, p, *, device, dtype: DType) -> TensorType:
    if not dtype.is_float:
        raise ShapeError(f"prims.bernoulli samples floating point values, got {dtype.name}")
    if not 0.0 <= p <= 1.0:
        raise ShapeError(f"bernoulli probability must be in [0, 1], got {p}")
    return TensorType(tuple(shape), dtype, device)


def _bernoulli(shape, p, *, device, dtype):
    # The draw eager dropout makes on CPU (`empty_like(input).bernoulli_(1 - p)`): the same
    # RNG stream, so the same mask for a contiguous input of this shape.
    return torch.empty(shape, device=device, dtype=torch_dtype(dtype)).bernoulli_(p)


bernoulli = prim(
    "bernoulli", _bernoulli_meta, _bernoulli, tags=(Tag.RANDOM,),
    doc="ones with probability p, else zeros",
)
