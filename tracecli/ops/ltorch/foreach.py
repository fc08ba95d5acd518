"""`torch._foreach_*`: one op over lists of tensors, traced as the op on each tensor.

torch's optimizers and `clip_grad_norm_` call these on a GPU (Adam's default there is
its foreach implementation): `torch._foreach_lerp_(exp_avgs, grads, 0.1)` is
`exp_avgs[i].lerp_(grads[i], 0.1)` for each i, which the trace shows one call a tensor,
at the line that made the foreach call. A list argument is taken item by item (tensors
or numbers, as torch's scalar lists); anything else is the same for every item, except
addcmul's and addcdiv's scalars, which may also be a 1-d tensor of one scalar per item.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from tracecli.ops.forms import FORMS, OPAQUE, UnsupportedCall
from tracecli.ops.ltorch._base import is_tensor, torch_form
from tracecli.ops.ltorch.indexing import getitem
from tracecli.ops.ltorch.inplace import written_in_place
from tracecli.ops.promotion import ShapeError

# Item ops that are not `torch.<name>` of the foreach op's name.
_ITEM_OPS: dict[str, Callable] = {"norm": torch.linalg.vector_norm}
# Ops whose last positional argument is the scalar torch calls `value` on the item op.
_VALUE_LAST = frozenset({"addcmul", "addcdiv"})


def _item_args(name: str, args: tuple, index: int, count: int) -> tuple[tuple, dict]:
    """Item `index`'s arguments of a foreach call over `count` tensors."""
    items = []
    for position, arg in enumerate(args):
        if isinstance(arg, (list, tuple)):
            if len(arg) != count:
                raise ShapeError(f"torch._foreach_{name}: lists of {count} and {len(arg)} items; they must be "
                                 "of one length")
            arg = arg[index]
        elif name in _VALUE_LAST and position == 3 and is_tensor(arg) and arg.ndim == 1:
            arg = getitem(arg, index)  # one scalar an item
        items.append(arg)
    if name in _VALUE_LAST and len(items) == 4:
        return tuple(items[:3]), {"value": items[3]}
    return tuple(items), {}


def _count(name: str, args: tuple) -> int:
    lists = [arg for arg in args if isinstance(arg, (list, tuple))]
    if not lists:
        raise ShapeError(f"torch._foreach_{name} needs a list of tensors")
    return len(lists[0])


def _foreach(name: str, in_place: bool) -> Callable:
    spelled = f"torch._foreach_{name}{'_' * in_place}"

    def adapter(*args, **kwargs):
        # In place, the tensor method where one is modelled (`x.mul_(y)`), else the op's
        # result written into the tensor, as every in-place twin is.
        method = FORMS.methods.get(f"{name}_") if in_place else None
        form = method or FORMS.functions.get(_ITEM_OPS.get(name) or getattr(torch, name, None))
        if form is None:
            return OPAQUE  # an item op tracing does not model: the call stays one opaque call
        count = _count(name, args)
        results = []
        for index in range(count):
            item_args, item_kwargs = _item_args(name, args, index, count)
            result = form.adapter(*item_args, **item_kwargs, **kwargs)
            if result is OPAQUE:
                if index == 0:
                    return OPAQUE
                raise UnsupportedCall(f"{spelled}: item {index} needs an op tracing does not model, and the items "
                                      "before it did not")
            if in_place and method is None:
                result = written_in_place(item_args[0], result, spelled)
            results.append(result)
        return None if in_place else results

    adapter.__name__ = spelled.removeprefix("torch.")
    return adapter


def _declare() -> None:
    for attr in dir(torch):
        if not attr.startswith("_foreach_"):
            continue
        name = attr.removeprefix("_foreach_")
        in_place = name.endswith("_")
        torch_form(getattr(torch, attr))(_foreach(name.rstrip("_"), in_place))


_declare()
