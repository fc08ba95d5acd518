"""torch callables mapped to the indexing, data-movement, selection and contraction
ltorch symbols (see torch_map, which merges these tables over its own).

Adapters take every spelling users write (functions, methods, keywords, `out=`) and
answer OPAQUE for the forms ltorch does not model, which then run as opaque torch calls.
"""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

from collections.abc import Callable

import torch

from tracecli.core.values import TensorValue
from tracecli.ops import ltorch
from tracecli.ops.ltorch._base import shape_arg
from tracecli.ops.ltorch.contractions import einsum_is_modelled
from tracecli.ops.opaque import OPAQUE
from tracecli.ops.promotion import ShapeError


def _no_out(sym) -> Callable:
    """The torch function's own signature, less `out=` (a write into a given tensor)."""

    def adapter(*args, out=None, **kwargs):
        return OPAQUE if out is not None else sym(*args, **kwargs)

    return adapter


def _plain_index_list(items) -> bool:
    return all(isinstance(i, int) or (isinstance(i, list) and _plain_index_list(i)) for i in items)


def _getitem(self, key):
    if isinstance(key, list) and not all(isinstance(i, int) for i in key):
        return OPAQUE  # a list holding sequences is read as a tuple (torch's deprecated numpy rule)
    items = key if isinstance(key, tuple) else (key,)
    if sum(1 for item in items if item is Ellipsis) > 1:
        return OPAQUE  # torch's own rule for several ellipses is not numpy's (which refuses them)
    for item in items:
        if isinstance(item, bool):
            return OPAQUE  # x[True] is x[None] in numpy's rules: rare enough to leave to torch
        if isinstance(item, slice):
            bounds = (item.start, item.stop, item.step)
            if any(isinstance(b, torch.Tensor) for b in bounds):
                raise ShapeError(
                    "a slice bound is a tensor, so the result's shape depends on its value, which a trace "
                    "does not have; slice with Python ints (e.g. computed from .shape)"
                )
            if not all(b is None or isinstance(b, int) for b in bounds):
                return OPAQUE
        elif isinstance(item, list):
            if not _plain_index_list(item):
                return OPAQUE  # lists holding tensors or slices
        elif not (item is None or item is Ellipsis or isinstance(item, (int, TensorValue))):
            return OPAQUE
    return ltorch.getitem(self, key)


def _split(tensor, split_size_or_sections=None, dim=0, *, split_size=None):
    # Tensor.split names its size `split_size`; torch.split `split_size_or_sections`.
    sections = split_size if split_size is not None else split_size_or_sections
    if isinstance(sections, TensorValue):
        return OPAQUE
    return ltorch.split(tensor, sections, dim)


def _narrow(input, dim, start, length):
    if isinstance(start, TensorValue):
        return OPAQUE  # a tensor start: which elements are kept depends on its value
    return ltorch.narrow(input, dim, start, length)


def _extremum(sym, binary) -> Callable:
    """torch.max / Tensor.max: max(a, b) is maximum, max(a, dim) gives (values, indices);
    the full reduction max(a) is left to torch."""

    def adapter(input, dim=None, keepdim=False, *, other=None, out=None):
        if out is not None:
            return OPAQUE
        if isinstance(dim, TensorValue):
            dim, other = None, dim
        if other is not None:
            return binary(input, other) if isinstance(other, TensorValue) else OPAQUE
        if dim is None:
            return OPAQUE
        return sym(input, dim, keepdim)

    return adapter


def _sorting(sym) -> Callable:
    # torch.sort(x, stable=None) means not stable.
    def adapter(input, dim=-1, descending=False, stable=None, *, out=None):
        if out is not None:
            return OPAQUE
        return sym(input, dim, descending, stable=bool(stable))

    return adapter


def _clamp(input, min=None, max=None, *, out=None):
    return OPAQUE if out is not None else ltorch.clamp(input, min, max)


def _clamp_min(input, min, *, out=None):
    return OPAQUE if out is not None else ltorch.clamp(input, min=min)


def _clamp_max(input, max, *, out=None):
    return OPAQUE if out is not None else ltorch.clamp(input, max=max)


def _repeat_interleave(input, repeats=None, dim=None, *, output_size=None, out=None):
    if isinstance(repeats, TensorValue) and output_size is None:
        raise ShapeError(
            "repeat_interleave with tensor repeats gives a size that depends on their values, which a trace "
            "does not have; pass output_size= (or repeat by an int)"
        )
    if out is not None or not isinstance(repeats, int):
        return OPAQUE  # tensor repeats with output_size: torch computes the values
    return ltorch.repeat_interleave(input, repeats, dim, output_size=output_size)


def _einsum(*args):
    if not args or not isinstance(args[0], str):
        return OPAQUE  # the sublist form einsum(a, [0, 1], b, [1, 2])
    equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not all(isinstance(op, TensorValue) for op in operands) or not einsum_is_modelled(equation, operands):
        return OPAQUE
    return ltorch.einsum(equation, *operands)


_max = _extremum(ltorch.max, ltorch.maximum)
_min = _extremum(ltorch.min, ltorch.minimum)
_sort = _sorting(ltorch.sort)
_argsort = _sorting(ltorch.argsort)

# Tensor methods, by name.
METHODS: dict[str, Callable] = {
    "__getitem__": _getitem,
    "masked_fill": ltorch.masked_fill, "triu": ltorch.triu, "tril": ltorch.tril,
    "split": _split, "chunk": ltorch.chunk, "unbind": ltorch.unbind, "unflatten": ltorch.unflatten,
    "narrow": _narrow, "index_select": ltorch.index_select, "gather": ltorch.gather,
    "take_along_dim": ltorch.take_along_dim, "cumsum": ltorch.cumsum,
    "topk": ltorch.topk, "sort": _sort, "argsort": _argsort,
    "argmax": ltorch.argmax, "argmin": ltorch.argmin, "max": _max, "min": _min,
    "clamp": _clamp, "clip": _clamp, "clamp_min": _clamp_min, "clamp_max": _clamp_max,
    "repeat": lambda self, *sizes: ltorch.repeat(self, *shape_arg(sizes)),
    "repeat_interleave": _repeat_interleave,
    "addmm": ltorch.addmm, "baddbmm": ltorch.baddbmm, "outer": ltorch.outer, "ger": ltorch.outer,
}

# Functions, by object.
FUNCTIONS: dict[Callable, Callable] = {
    torch.masked_fill: ltorch.masked_fill, torch.triu: _no_out(ltorch.triu), torch.tril: _no_out(ltorch.tril),
    torch.split: _split, torch.chunk: ltorch.chunk, torch.unbind: ltorch.unbind,
    torch.stack: _no_out(ltorch.stack), torch.unflatten: ltorch.unflatten, torch.narrow: _narrow,
    torch.index_select: _no_out(ltorch.index_select), torch.gather: _no_out(ltorch.gather),
    torch.take_along_dim: _no_out(ltorch.take_along_dim), torch.cumsum: _no_out(ltorch.cumsum),
    torch.topk: _no_out(ltorch.topk), torch.sort: _sort, torch.argsort: _argsort,
    torch.argmax: _no_out(ltorch.argmax), torch.argmin: _no_out(ltorch.argmin), torch.max: _max, torch.min: _min,
    torch.clamp: _clamp, torch.clip: _clamp, torch.clamp_min: _clamp_min, torch.clamp_max: _clamp_max,
    torch.repeat_interleave: _repeat_interleave,
    torch.addmm: _no_out(ltorch.addmm), torch.baddbmm: _no_out(ltorch.baddbmm),
    torch.outer: _no_out(ltorch.outer), torch.ger: _no_out(ltorch.outer), torch.einsum: _einsum,
}
