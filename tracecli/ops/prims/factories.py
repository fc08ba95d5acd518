"""Factory prims: full, iota, the random draws uniform, normal and bernoulli, and
manual_seed.

Random prims draw from torch's global generator the way eager's factories do, so eager
and traced runs under one seed agree bit for bit; manual_seed seeds that generator where
the program did, so the draws after it are eager's too.
"""

from __future__ import annotations

import torch

from tracecli.core.dims import Dim
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

# --- the generator's state ---------------------------------------------------------------------


def _seed_meta(seed) -> None:
    if not isinstance(seed, (int, Dim)):
        raise TypeError(f"manual_seed takes an integer seed, got {seed!r}")


def _manual_seed(seed) -> None:
    torch.manual_seed(seed)


manual_seed = prim(
    "manual_seed", _seed_meta, _manual_seed, tags=(Tag.SIDE_EFFECT,),
    doc="seeds torch's global generator (every device's): the draws after it repeat eager's",
)
