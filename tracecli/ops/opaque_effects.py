"""What an opaque call does besides computing its outputs, as torch itself declares it.

An aten operator's schema annotates aliasing: `diagonal(Tensor(a) self) -> Tensor(a)`
returns a view of `self`, `add_(Tensor(a!) self, ...) -> Tensor(a!)` writes to `self`
and returns it, and its tags say whether it draws from the RNG. A torch builtin
(`torch.diagonal`, `Tensor.select`, `torch._C._linalg.linalg_diagonal`) is the aten
operator of its own name. Python functions have no schema (`torch.split`,
`torch.nn.init.uniform_`): for them the meta runs are watched instead (a result sharing
storage with an input, an input whose version counter moved).
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Iterable

import torch

# Python functions (no schema) that draw from the RNG.
_RANDOM_NAMES = frozenset({
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout", "bernoulli",
    "multinomial", "normal", "poisson", "randint", "randint_like", "randperm", "rrelu", "uniform_",
    "normal_", "bernoulli_", "random_", "exponential_", "cauchy_", "geometric_", "log_normal_",
    "gumbel_softmax", "trunc_normal_", "kaiming_uniform_", "kaiming_normal_", "xavier_uniform_", "xavier_normal_",
    "orthogonal_", "sparse_",
})
_BUILTIN_TYPES = (types.BuiltinFunctionType, types.MethodDescriptorType, types.WrapperDescriptorType)

# Seen in meta runs of callables without a schema: func -> whether it ever did it.
_seen_aliasing: dict[object, bool] = {}
_seen_mutating: dict[object, bool] = {}


def _schemas(func: Callable) -> tuple:
    """The aten schemas that describe `func` (empty for Python functions). A function's
    `out=` overloads are left out: only a call passing `out=` picks one, and that call
    writes `out`, whatever the function (see `opaque_mutates`)."""
    if isinstance(func, torch._ops.OpOverload):
        return (func._schema,)
    if isinstance(func, torch._ops.OpOverloadPacket):
        return _packet_schemas(func)
    packet = _aten_packet(func)
    return _packet_schemas(packet) if packet is not None else ()


def _tags(func: Callable) -> set:
    if isinstance(func, torch._ops.OpOverload):
        return set(func.tags)
    packet = func if isinstance(func, torch._ops.OpOverloadPacket) else _aten_packet(func)
    return {tag for name in packet.overloads() for tag in getattr(packet, name).tags} if packet is not None else set()


def _aten_packet(func: Callable):
    """The aten operator a torch builtin (a C function or Tensor method) is named after."""
    if not isinstance(func, _BUILTIN_TYPES):
        return None
    try:
        packet = getattr(torch.ops.aten, func.__name__)
    except (AttributeError, RuntimeError):
        return None
    return packet if isinstance(packet, torch._ops.OpOverloadPacket) else None


@functools.cache
def _packet_schemas(packet: torch._ops.OpOverloadPacket) -> tuple:
    schemas = (getattr(packet, name)._schema for name in packet.overloads())
    return tuple(s for s in schemas if not any(arg.is_out for arg in s.arguments))


def opaque_aliases(func: Callable) -> bool:
    """Whether a result of `func` may share memory with one of its arguments: a view
    (`torch.diagonal`, `Tensor.select`, `movedim`, `as_strided`, `Tensor.unfold`) or an
    argument written in place and returned. From the aten schema's alias annotations; a
    Python function without one answers from what its meta runs so far have shown."""
    schemas = _schemas(func)
    if schemas:
        return any(ret.alias_info is not None for schema in schemas for ret in schema.returns)
    return _seen(_seen_aliasing, func)


def opaque_mutates(func: Callable) -> bool:
    """Whether `func` may write to one of its tensor arguments (`torch.relu_`,
    `torch.ops.aten.add_.Tensor`, `torch.nn.init.uniform_`): the schema's `(a!)`
    annotations, or the meta runs. Any call given `out=` writes `out` besides."""
    schemas = _schemas(func)
    if schemas:
        return any(
            arg.alias_info is not None and arg.alias_info.is_write for schema in schemas for arg in schema.arguments
        )
    return _seen(_seen_mutating, func)


def writes_first_argument(func: Callable) -> bool:
    """An in-place op on its first argument (`torch.relu_`, `torch.ops.aten.add_.Tensor`,
    `torch.nn.init.uniform_`): the schema writes its first argument, or, for a Python
    function, torch's naming convention says so (a trailing underscore)."""
    schemas = _schemas(func)
    if schemas:
        return any(s.arguments and s.arguments[0].alias_info is not None and s.arguments[0].alias_info.is_write
                   for s in schemas)
    name = getattr(func, "__name__", "")
    return isinstance(name, str) and name.endswith("_") and not name.startswith("__")


def draws_random(func: Callable) -> bool:
    """Whether `func` draws from the RNG: torch's `nondeterministic_seeded` tag, or the name
    of a Python function known to."""
    return torch.Tag.nondeterministic_seeded in _tags(func) or getattr(func, "__name__", "") in _RANDOM_NAMES


def observe(func: Callable, inputs: Iterable[torch.Tensor], versions: list[int], outputs: Iterable) -> None:
    """Note what one meta run of `func` did: `versions` are the inputs' version counters
    taken before the run."""
    if _schemas(func):
        return  # the schema already says
    inputs = list(inputs)
    storages = {_storage_id(t) for t in inputs}
    if any(isinstance(out, torch.Tensor) and _storage_id(out) in storages for out in outputs):
        _seen_aliasing[_key(func)] = True
    if any(t._version != before for t, before in zip(inputs, versions, strict=True)):
        _seen_mutating[_key(func)] = True


def _key(func: Callable) -> object:
    # Unhashable callable objects are told apart by identity.
    try:
        hash(func)
    except TypeError:
        return id(func)
    return func


def _seen(seen: dict, func: Callable) -> bool:
    return seen.get(_key(func), False)


def _storage_id(tensor: torch.Tensor) -> int:
    try:
        return tensor.untyped_storage()._cdata
    except (RuntimeError, NotImplementedError):  # tensors without storage (sparse, nested)
        return id(tensor)
