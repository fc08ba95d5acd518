"""The `*_copy` spellings of the view ops (torch.permute_copy, torch.diagonal_copy, ...):
the view, then `ltorch.clone` of it, so no write to the result reaches the input. These
are forms only; the ops are shapes.py's and movement.py's."""

# ruff: noqa: A002 - parameters keep torch's names

from __future__ import annotations

from collections.abc import Callable

import torch

from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import shape_arg, torch_form
from tracecli.ops.ltorch.conversions import clone
from tracecli.ops.ltorch.indexing import getitem
from tracecli.ops.ltorch.movement import _split, _split_with_sizes, unbind
from tracecli.ops.ltorch.shapes import (
    _diagonal,
    _select,
    _t,
    _view,
    expand,
    permute,
    squeeze,
    transpose,
    unfold,
    unsqueeze,
)
from tracecli.ops.promotion import canonical_dim


def _copy_form(view: Callable) -> Callable:
    def adapter(*args, out=None, **kwargs):
        if out is not None:
            return OPAQUE  # the out= variant writes a tensor given: left to torch, which refuses it
        result = view(*args, **kwargs)
        if result is OPAQUE:
            return OPAQUE
        return tuple(clone(r) for r in result) if isinstance(result, (tuple, list)) else clone(result)

    return adapter


def _expand(input, size, *, implicit=False):
    return expand(input, *shape_arg((size,)))


def _slice(input, dim=0, start=None, end=None, step=1):
    return getitem(input, (slice(None),) * canonical_dim(dim, input.ndim) + (slice(start, end, step),))


for _function, _view_op in (
    (torch.alias_copy, lambda x: x), (torch.detach_copy, lambda x: x),
    (torch.view_copy, _view), (torch.expand_copy, _expand), (torch.permute_copy, permute),
    (torch.transpose_copy, transpose), (torch.t_copy, _t), (torch.squeeze_copy, squeeze),
    (torch.unsqueeze_copy, unsqueeze), (torch.diagonal_copy, _diagonal), (torch.select_copy, _select),
    (torch.slice_copy, _slice), (torch.unfold_copy, unfold), (torch.unbind_copy, unbind),
    (torch.split_copy, _split), (torch.split_with_sizes_copy, _split_with_sizes),
):
    torch_form(_function)(_copy_form(_view_op))
