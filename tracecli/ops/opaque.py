"""The fallback for torch callables that ltorch does not model.

The call becomes an opaque `torch.<path>` bound symbol: its output types come from
running the callable on meta tensors, and executors call the original callable.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from tracecli.core.dtypes import DType
from tracecli.core.pytree import rebuild_tuple
from tracecli.core.symbol import Symbol, Tag
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.torch_bridge import FROM_TORCH, TO_TORCH, to_device

_NAMESPACES = (
    ("torch", torch), ("torch.nn.functional", F), ("torch.special", torch.special),
    ("torch.linalg", torch.linalg), ("torch.fft", torch.fft), ("torch.Tensor", torch.Tensor),
)
# Draws from the RNG, so never merged or dropped.
_RANDOM_NAMES = frozenset({
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout", "bernoulli",
    "multinomial", "normal", "poisson", "randint", "randint_like", "randperm", "rrelu", "uniform_",
    "normal_", "bernoulli_", "random_", "exponential_", "cauchy_", "geometric_", "log_normal_",
})

_cache: dict[Callable, Symbol] = {}


class OpaqueCallError(Exception):
    """An unmodelled torch callable whose output types cannot be computed."""


def torch_path(func: Callable) -> str | None:
    """A dotted path under `torch` that resolves to `func`, for the generated code."""
    name = getattr(func, "__name__", None)
    if not name:
        return None
    qualname = getattr(func, "__qualname__", "")
    if qualname.startswith(("Tensor.", "TensorBase.")):
        return f"torch.Tensor.{name}" if hasattr(torch.Tensor, name) else None
    for path, namespace in _NAMESPACES:
        if getattr(namespace, name, None) is func:
            return f"{path}.{name}"
    return None


def opaque_symbol(func: Callable) -> Symbol:
    sym = _cache.get(func)
    if sym is None:
        path = torch_path(func)
        if path is None:
            raise OpaqueCallError(f"{getattr(func, '__qualname__', func)!s} is not a public torch callable")
        name = path.removeprefix("torch.")
        short = name.rsplit(".", 1)[-1]
        tags = frozenset({Tag.RANDOM}) if short in _RANDOM_NAMES else frozenset()
        sym = Symbol(name, "torch", impl=func, meta=_meta_rule(func, path), tags=tags, doc=f"opaque call of {path}")
        _cache[func] = sym
    return sym


def _to_meta(obj, devices: list[str]):
    if isinstance(obj, TensorValue):
        devices.append(obj.device)
        return torch.empty(obj.shape, dtype=TO_TORCH[obj.dtype], device="meta")
    if isinstance(obj, (tuple, list)):
        return type(obj)(_to_meta(o, devices) for o in obj)
    if isinstance(obj, dict):
        return {k: _to_meta(v, devices) for k, v in obj.items()}
    if isinstance(obj, DType):
        return TO_TORCH[obj]
    return obj


def _from_meta(obj, device: str):
    if isinstance(obj, torch.Tensor):
        return TensorType(tuple(obj.shape), FROM_TORCH[obj.dtype], device)
    if isinstance(obj, tuple):
        return rebuild_tuple(obj, [_from_meta(o, device) for o in obj])
    if isinstance(obj, list):
        return [_from_meta(o, device) for o in obj]
    return obj


def _meta_rule(func: Callable, path: str) -> Callable:
    def meta(*args, **kwargs):
        devices: list[str] = []
        margs, mkwargs = _to_meta(args, devices), _to_meta(kwargs, devices)
        if "device" in kwargs and kwargs["device"] is not None:
            devices.insert(0, to_device(kwargs["device"]))
        device = devices[0] if devices else "cpu"
        if "device" in mkwargs:
            mkwargs["device"] = "meta"
        try:
            out = func(*margs, **mkwargs)
        except Exception as exc:  # the meta kernel's own words say why
            raise OpaqueCallError(f"{path} cannot be traced: {exc}") from exc
        return _from_meta(out, device)

    return meta
