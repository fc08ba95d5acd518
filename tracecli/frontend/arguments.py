"""The entry's arguments: binding them to its signature, the IR values they become
(tensors nested in containers get `<param>_0`, `<param>_1`, `<param>_<key>`, ...), and
module parameters and buffers."""

from __future__ import annotations

import inspect
from collections.abc import Callable

import torch

from tracecli.core.errors import UserError
from tracecli.core.names import NameRegistry
from tracecli.core.pytree import tree_leaves, tree_leaves_with_path, tree_map
from tracecli.core.values import NumberValue
from tracecli.frontend.placement import Placement
from tracecli.frontend.proxy import TensorProxy


def _one_input(container) -> bool:
    """Whether a container is one constant input: one holding a tensor (at any depth: a
    batch dict, a dataclass of tensors) is walked into, and each of its items is an
    input of its own, a tensor read afresh on every call; any other stays one constant."""
    return not any(isinstance(leaf, torch.Tensor) for leaf in tree_leaves(container))


def input_objects(arg) -> list:
    """The objects an argument of the entry makes inputs of, in input order."""
    return tree_leaves(arg, is_leaf=_one_input)


def _input_value(registry: NameRegistry, name: str, obj, placement: Placement):
    if isinstance(obj, torch.Tensor):
        return placement.value(registry.take(name), obj)
    return NumberValue(registry.take(name), obj)


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


def argument_inputs(registry: NameRegistry, fn: Callable, args: tuple, kwargs: dict, placement: Placement):
    """(values, objects) for the entry's arguments, flattened in signature order; an
    item of a container argument is named after its place: `<param>_0`, `<param>_1_0`,
    `batch_input_ids` for a dict's (or a dataclass's) item."""
    values: list = []
    objs: list = []
    for param, arg in bind_entry(fn, args, kwargs).arguments.items():
        for path, obj in tree_leaves_with_path(arg, is_leaf=_one_input, labels=True):
            values.append(_input_value(registry, "_".join([param, *map(str, path)]), obj, placement))
            objs.append(obj)
    return values, objs


def unique_module_tensors(module: torch.nn.Module) -> list:
    seen: dict[int, torch.Tensor] = {}
    for _, tensor, _, _ in module_tensors(module):
        seen.setdefault(id(tensor), tensor)
    return list(seen.values())


def swap_tensors(arg, proxy_for: dict[int, TensorProxy]):
    """The argument with each of its input tensors replaced by its proxy."""
    return tree_map(lambda obj: proxy_for.get(id(obj), obj), arg, is_leaf=_one_input)


def module_tensors(module: torch.nn.Module):
    """(qualified name, tensor, owning dict, key) for every parameter and buffer."""
    for prefix, sub in module.named_modules(remove_duplicate=False):
        for kind in ("_parameters", "_buffers"):
            store = getattr(sub, kind)
            for key, tensor in list(store.items()):
                if tensor is None:
                    continue
                yield (f"{prefix}.{key}" if prefix else key), tensor, store, key

