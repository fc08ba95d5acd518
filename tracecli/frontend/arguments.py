"""The entry's arguments: binding them to its signature, the IR values they become
(tensors nested in tuples and lists get `<param>_0`, `<param>_1`, ...), and module
parameters and buffers."""

from __future__ import annotations

import inspect
from collections.abc import Callable

import torch

from tracecli.core.errors import UserError
from tracecli.core.names import NameRegistry
from tracecli.core.values import NumberValue, TensorValue
from tracecli.frontend.proxy import TensorProxy
from tracecli.ops.torch_bridge import type_of


def input_values(registry: NameRegistry, name: str, obj, device: str | None):
    """IR values for one argument of the entry; tensors nested in tuples/lists get
    names `<param>_0`, `<param>_1`, ..."""
    if isinstance(obj, torch.Tensor):
        t = type_of(obj)
        return TensorValue(registry.take(name), t.shape, t.dtype, device or t.device)
    if isinstance(obj, (tuple, list)) and any(isinstance(o, torch.Tensor) for o in obj):
        items = [input_values(registry, f"{name}_{i}", o, device) for i, o in enumerate(obj)]
        return tuple(items) if isinstance(obj, tuple) else items
    return NumberValue(registry.take(name), obj)


def flat_objects(obj, out: list) -> None:
    """The objects `input_values` makes inputs of, in the same order."""
    if isinstance(obj, (tuple, list)) and any(isinstance(o, torch.Tensor) for o in obj):
        for item in obj:
            flat_objects(item, out)
    else:
        out.append(obj)


def flat_inputs(values, objs, out_values: list, out_objs: list) -> None:
    if isinstance(values, (tuple, list)):
        for v, o in zip(values, objs, strict=True):
            flat_inputs(v, o, out_values, out_objs)
    else:
        out_values.append(values)
        out_objs.append(objs)


def bind_entry(fn: Callable, args: tuple, kwargs: dict) -> inspect.BoundArguments:
    target = fn.forward if isinstance(fn, torch.nn.Module) else fn
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        raise UserError(f"cannot trace {target!r}: it has no Python signature to bind inputs to") from None
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as exc:
        name = getattr(fn, "__name__", type(fn).__name__)
        given = len(args) + len(kwargs)
        raise UserError(f"wrong inputs for {name}{signature}: {given} given ({exc})") from None
    # Defaults are inputs too: the trace specialises on them and the signature shows them.
    bound.apply_defaults()
    return bound


def argument_inputs(registry: NameRegistry, fn: Callable, args: tuple, kwargs: dict, device: str | None):
    """(values, objects) for the entry's arguments, flattened in signature order."""
    values: list = []
    objs: list = []
    for param, obj in bind_entry(fn, args, kwargs).arguments.items():
        flat_inputs(input_values(registry, param, obj, device), obj, values, objs)
    return values, objs


def unique_module_tensors(module: torch.nn.Module) -> list:
    seen: dict[int, torch.Tensor] = {}
    for _, tensor, _, _ in module_tensors(module):
        seen.setdefault(id(tensor), tensor)
    return list(seen.values())


def swap_tensors(obj, proxy_for: dict[int, TensorProxy]):
    if isinstance(obj, torch.Tensor):
        return proxy_for.get(id(obj), obj)
    if isinstance(obj, (tuple, list)):
        items = [swap_tensors(o, proxy_for) for o in obj]
        return tuple(items) if isinstance(obj, tuple) else items
    return obj


def module_tensors(module: torch.nn.Module):
    """(qualified name, tensor, owning dict, key) for every parameter and buffer."""
    for prefix, sub in module.named_modules(remove_duplicate=False):
        for kind in ("_parameters", "_buffers"):
            store = getattr(sub, kind)
            for key, tensor in list(store.items()):
                if tensor is None:
                    continue
                yield (f"{prefix}.{key}" if prefix else key), tensor, store, key

