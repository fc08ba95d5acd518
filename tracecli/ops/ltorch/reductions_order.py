"""Order statistics: median and nanmedian (of all elements, or (values, indices) along a
dim), mode and kthvalue along a dim.

Along a dim each returns torch's named tuple, so `.values` and `.indices` work on the
proxies as on eager results; the indices are those torch's kernel picks (prims run it).
"""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch

from tracecli.core.dims import Dim, statically_equal
from tracecli.ops import prims
from tracecli.ops.ltorch._base import expect_tensor, keepdim_reshape, symbol
from tracecli.ops.promotion import ShapeError, canonical_dim


def _ordered(input, op: str, *, bools: bool = False):
    input = expect_tensor(input, op)
    if input.dtype.is_complex or (input.dtype.kind == "bool" and not bools):
        raise ShapeError(f"{op} is not defined for {input.dtype.name} tensors")
    return input


def _along(prim, kind, input, dim, keepdim, *args):
    d = canonical_dim(dim, input.ndim)
    values, indices = prim(input, *args, d)
    if keepdim:
        values, indices = keepdim_reshape(values, input, (d,)), keepdim_reshape(indices, input, (d,))
    return kind((values, indices))


def _median(prim, kind, input, dim, keepdim, op: str):
    input = _ordered(input, op)
    if dim is not None:
        return _along(prim, kind, input, dim, keepdim)
    if keepdim:
        raise ShapeError(f"{op}: keepdim needs a dim")
    if statically_equal(input.numel, 0):
        # torch's median of no elements is NaN (an integer one has no such value).
        if not input.dtype.is_float:
            raise ShapeError(f"{op} of an empty {input.dtype.name} tensor has no value")
        return prims.full((), math.nan, device=input.device, dtype=input.dtype)
    flat = input if input.ndim == 1 else prims.reshape(input, (input.numel,))
    return prim(flat, 0)[0]


@symbol(torch.median, methods=("median",))
def median(input, dim=None, keepdim=False):
    """the lower median of all elements (NaN if one is); along dim, (values, indices)"""
    return _median(prims.median, torch.return_types.median, input, dim, keepdim, "median")


@symbol(torch.nanmedian, methods=("nanmedian",))
def nanmedian(input, dim=None, keepdim=False):
    """the lower median of the elements that are not NaN; along dim, (values, indices)"""
    return _median(prims.nanmedian, torch.return_types.nanmedian, input, dim, keepdim, "nanmedian")


@symbol(torch.mode, methods=("mode",))
def mode(input, dim=-1, keepdim=False):
    """(values, indices) of the most frequent value along dim"""
    return _along(prims.mode, torch.return_types.mode, _ordered(input, "mode", bools=True), dim, keepdim)


@symbol(torch.kthvalue, methods=("kthvalue",))
def kthvalue(input, k, dim=-1, keepdim=False):
    """(values, indices) of the k-th smallest value along dim"""
    if isinstance(k, bool) or not isinstance(k, (int, Dim)):
        raise ShapeError(f"kthvalue: k must be an int, got {k!r}")
    return _along(prims.kthvalue, torch.return_types.kthvalue, _ordered(input, "kthvalue"), dim, keepdim, k)
