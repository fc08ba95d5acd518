"""Selection by value: max/min along a dim (values and indices), argmax/argmin,
sort/argsort (and msort), topk.

Where torch returns a named tuple (`torch.return_types.max`, ...), so do these
decompositions: the tracer hands user code the same type, so `.values` and
`.indices` work on the proxies as on eager results.
"""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import torch

from tracecli.core import dtypes
from tracecli.core.values import TensorValue
from tracecli.ops import prims
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import ALL, convert, expect_tensor, keepdim_reshape, symbol, torch_form
from tracecli.ops.ltorch.elementwise import maximum, minimum
from tracecli.ops.promotion import ShapeError, canonical_dim


def _orderable(input, op: str):
    input = expect_tensor(input, op)
    if input.dtype.is_complex:
        raise ShapeError(f"{op} is not defined for complex tensors")
    return input


def _extremum(input, dim, keepdim, values_prim, index_prim, kind, op: str):
    input = _orderable(input, op)
    d = canonical_dim(dim, input.ndim)
    values = values_prim(input, (d,))
    # torch has no argmax for bools, but max(bool, dim) has indices: count them as 0 and 1.
    indices = index_prim(convert(input, dtypes.uint8) if input.dtype == dtypes.bool8 else input, d)
    if keepdim:
        values, indices = keepdim_reshape(values, input, (d,)), keepdim_reshape(indices, input, (d,))
    return kind((values, indices))


def _extremum_form(binary, name: str, everything: str):
    """torch.max / Tensor.max: max(a, b) is maximum, max(a, dim) gives (values, indices),
    and max(a), the value over all elements, is amax(a)."""

    def adapter(input, dim=None, keepdim=False, *, other=None):
        if isinstance(dim, TensorValue):
            dim, other = None, dim
        if other is not None:
            return binary(input, other) if isinstance(other, TensorValue) else OPAQUE
        if dim is None:
            return OPAQUE if keepdim else ALL[everything](_orderable(input, name))
        return ALL[name](input, dim, keepdim)

    adapter.__name__ = f"_{name}"
    return adapter


@symbol(torch.max, methods=("max",), adapter=_extremum_form(maximum, "max", "amax"), name="max")
def max_(input, dim, keepdim=False):
    """(values, indices) of the maximum along dim; the first index among ties"""
    return _extremum(input, dim, keepdim, prims.amax, prims.argmax, torch.return_types.max, "max")


@symbol(torch.min, methods=("min",), adapter=_extremum_form(minimum, "min", "amin"), name="min")
def min_(input, dim, keepdim=False):
    """(values, indices) of the minimum along dim; the first index among ties"""
    return _extremum(input, dim, keepdim, prims.amin, prims.argmin, torch.return_types.min, "min")


def _arg_extremum(input, dim, keepdim, prim, op: str):
    input = _orderable(input, op)
    if input.dtype == dtypes.bool8:
        raise ShapeError(f"{op} does not support bool input")
    if dim is None:
        flat = prims.reshape(input, (input.numel,)) if input.ndim != 1 else input
        out = prim(flat, 0)
        return prims.reshape(out, (1,) * input.ndim) if keepdim and input.ndim else out
    d = canonical_dim(dim, input.ndim)
    out = prim(input, d)
    return keepdim_reshape(out, input, (d,)) if keepdim else out


@symbol(torch.argmax, methods=("argmax",))
def argmax(input, dim=None, keepdim=False):
    """the index of the maximum (flattened without dim)"""
    return _arg_extremum(input, dim, keepdim, prims.argmax, "argmax")


@symbol(torch.argmin, methods=("argmin",))
def argmin(input, dim=None, keepdim=False):
    """the index of the minimum (flattened without dim)"""
    return _arg_extremum(input, dim, keepdim, prims.argmin, "argmin")


def _sorting_form(name: str):
    # torch.sort(x, stable=None) means not stable.
    def adapter(input, dim=-1, descending=False, stable=None):
        return ALL[name](input, dim, descending, stable=bool(stable))

    adapter.__name__ = f"_{name}"
    return adapter


@symbol(torch.sort, methods=("sort",), adapter=_sorting_form("sort"))
def sort(input, dim=-1, descending=False, *, stable=False):
    """(values, indices) sorted along dim"""
    input = _orderable(input, "sort")
    values, indices = prims.sort(input, canonical_dim(dim, input.ndim), bool(descending), bool(stable))
    return torch.return_types.sort((values, indices))


@symbol(torch.argsort, methods=("argsort",), adapter=_sorting_form("argsort"))
def argsort(input, dim=-1, descending=False, *, stable=False):
    """the indices that sort input along dim"""
    input = _orderable(input, "argsort")
    return prims.sort(input, canonical_dim(dim, input.ndim), bool(descending), bool(stable))[1]


@torch_form(torch.msort, methods=("msort",))
def _msort(input):
    # The values of a sort along the first dim: which equal element lands where is unseen.
    return sort(input, 0).values


@symbol(torch.topk, methods=("topk",))
def topk(input, k, dim=-1, largest=True, sorted=True):
    """(values, indices) of the k largest (or smallest) along dim"""
    input = _orderable(input, "topk")
    if input.dtype == dtypes.bool8:
        raise ShapeError("topk does not support bool input")
    values, indices = prims.topk(input, k, canonical_dim(dim, input.ndim), bool(largest), bool(sorted))
    return torch.return_types.topk((values, indices))
