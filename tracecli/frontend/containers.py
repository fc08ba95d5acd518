"""What the entry may return: containers the trace rebuilds, and what it refuses.

Besides the containers core.pytree knows (tuples, lists, dicts, named tuples, torch's
return types, dataclasses such as Hugging Face's model outputs), the types registered
with `torch.utils._pytree` are containers too, taken apart and built by their own
functions. Any other object returned while holding a traced tensor is refused: the trace
could not give it back.
"""

from __future__ import annotations

import torch
import torch.utils._pytree as torch_pytree

from tracecli.core.pytree import Node, add_node_resolver, register_node, tree_leaves
from tracecli.core.values import NumberValue, TensorValue
from tracecli.frontend.proxy import TensorProxy
from tracecli.frontend.symbolic import SymSize


def _registered_with_torch(kind: type) -> Node | None:
    entry = torch_pytree.SUPPORTED_NODES.get(kind)
    if entry is None:
        return None
    return Node(entry.flatten_fn, entry.unflatten_fn)


add_node_resolver(_registered_with_torch)


def _size(children: list, _) -> tuple:
    # torch's own registration builds a torch.Size again as a plain tuple; the entry returning
    # `x.shape` must give back what eager gives. Holding anything but ints (size symbols, or a
    # structure's placeholders), it is the stand-in the printer spells as a torch.Size.
    if all(type(c) is int for c in children):
        return torch.Size(children)
    return SymSize(children)


register_node(torch.Size, lambda size: (size, None), _size)


def hidden_tensor(output: object) -> object | None:
    """An object in `output` that is no container the trace rebuilds but holds a traced
    tensor (in its attributes, or containers of them), or None."""
    for leaf in tree_leaves(output):
        if not isinstance(leaf, (TensorValue, NumberValue)) and _holds_proxy(leaf, set(), 4):
            return leaf
    return None


def _holds_proxy(obj: object, seen: set[int], depth: int) -> bool:
    if isinstance(obj, TensorProxy):
        return True
    if depth == 0 or id(obj) in seen or isinstance(obj, (torch.Tensor, type, str, bytes, int, float)):
        return False
    seen.add(id(obj))
    if isinstance(obj, dict):
        children = list(obj.values())
    elif isinstance(obj, (list, tuple, set, frozenset)):
        children = list(obj)
    else:
        children = list(getattr(obj, "__dict__", {}).values())
        children += [getattr(obj, name, None) for name in getattr(type(obj), "__slots__", ())]
    return any(_holds_proxy(child, seen, depth - 1) for child in children)
