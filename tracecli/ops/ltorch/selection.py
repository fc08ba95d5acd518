"""Selection by value: max/min along a dim (values and indices), argmax/argmin,
sort/argsort (and msort), topk; searchsorted, bucketize and histc (where values fall among others);
nonzero_static (the indices of a fixed number of nonzero elements).

Where torch returns a named tuple (`torch.return_types.max`, ...), so do these
decompositions: the tracer hands user code the same type, so `.values` and
`.indices` work on the proxies as on eager results.
"""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch

from tracecli.core import dtypes
from tracecli.core.dims import Dim, statically_equal
from tracecli.core.values import TensorValue
from tracecli.ops import prims
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import ALL, convert, expect_tensor, is_tensor, keepdim_reshape, symbol, torch_form
from tracecli.ops.ltorch.elementwise import maximum, minimum
from tracecli.ops.promotion import ShapeError, canonical_dim, result_type


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
    and max(a), the value over all elements, is max_all(a)."""

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


@symbol(torch.max, methods=("max",), adapter=_extremum_form(maximum, "max", "max_all"), name="max")
def max_(input, dim, keepdim=False):
    """(values, indices) of the maximum along dim; the first index among ties"""
    return _extremum(input, dim, keepdim, prims.amax, prims.argmax, torch.return_types.max, "max")


@symbol(torch.min, methods=("min",), adapter=_extremum_form(minimum, "min", "min_all"), name="min")
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


# --- searching sorted values ----------------------------------------------------------------


def _searchable(sorted_sequence: TensorValue, values, op: str) -> tuple[TensorValue, TensorValue]:
    """The sequence and the values in the dtype torch compares them in (a number counts
    as a zero-dim tensor of its kind), the values a tensor."""
    dtype = result_type(sorted_sequence, values)
    if dtype.kind in ("bool", "complex"):
        raise ShapeError(f"{op} does not compare {dtype.name} values")
    if not is_tensor(values):
        if sorted_sequence.ndim != 1:
            raise ShapeError(f"{op}: a number is searched for only in a one-dimensional sequence")
        values = prims.full((), values, device=sorted_sequence.device, dtype=dtype)
    return convert(sorted_sequence, dtype), convert(values, dtype)


@symbol(torch.searchsorted)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """where each value would go in the sorted last dimension of sorted_sequence (after
    equal elements if right or side='right'; sorted by sorter's indices if given)"""
    sorted_sequence = expect_tensor(sorted_sequence, "searchsorted")
    if side not in (None, "left", "right"):
        raise ShapeError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if side == "left" and right:
        raise ShapeError("searchsorted: side='left' contradicts right=True")
    if sorter is not None:
        sorter = expect_tensor(sorter, "searchsorted")
        if sorter.dtype != dtypes.int64 or sorter.shape != sorted_sequence.shape:
            raise ShapeError(f"searchsorted: sorter must be int64 and shaped as the sequence "
                             f"{list(sorted_sequence.shape)}, got {sorter.dtype.name}{list(sorter.shape)}")
        # The sequence in sorter's order: the same elements the search would read through it.
        sorted_sequence = prims.gather(sorted_sequence, sorter, sorted_sequence.ndim - 1)
    sequence, values = _searchable(sorted_sequence, input, "searchsorted")
    out = prims.searchsorted(sequence, values, bool(right) or side == "right")
    return convert(out, dtypes.int32) if out_int32 else out


@symbol(torch.bucketize)
def bucketize(input, boundaries, *, out_int32=False, right=False):
    """the index of the bucket of boundaries each value falls in: searchsorted(boundaries,
    input, right=right)"""
    boundaries = expect_tensor(boundaries, "bucketize")
    if boundaries.ndim != 1:
        raise ShapeError(f"bucketize needs one-dimensional boundaries, got {boundaries.ndim} dimensions")
    sequence, values = _searchable(boundaries, input, "bucketize")
    out = prims.searchsorted(sequence, values, bool(right))
    return convert(out, dtypes.int32) if out_int32 else out


@symbol(torch.histc, methods=("histc",))
def histc(input, bins=100, min=0, max=0):
    """how many elements fall in each of `bins` equal bins over [min, max] (over the
    elements' own range when min == max); values outside are not counted"""
    input = expect_tensor(input, "histc")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (min, max)):
        raise ShapeError(f"histc takes numbers as min and max, got {min!r} and {max!r}")
    return prims.histc(input, bins, float(min), float(max))


# --- the indices of nonzero elements, a fixed number of them --------------------------------------


@symbol(torch.nonzero_static, methods=("nonzero_static",))
def nonzero_static(input, *, size, fill_value=-1):
    """the indices of the first `size` nonzero elements (row-major), one row each, then
    rows of fill_value: shape (size, input.ndim)"""
    input = expect_tensor(input, "nonzero_static")
    if isinstance(size, bool) or not isinstance(size, (int, Dim)) or size < 0:
        raise ShapeError(f"nonzero_static needs a non-negative int size, got {size!r}")
    if isinstance(fill_value, bool) or not isinstance(fill_value, int):
        raise ShapeError(f"nonzero_static takes an int fill_value, got {fill_value!r}")
    device = input.device
    if input.ndim == 0 or statically_equal(input.numel, 0):
        return prims.full((size, input.ndim), fill_value, device=device, dtype=dtypes.int64)
    n = input.numel
    flat = prims.reshape(input, (n,)) if input.ndim != 1 else input
    nonzero = flat if flat.dtype == dtypes.bool8 else prims.ne(flat, 0)
    count = prims.cumsum(convert(nonzero, dtypes.int64), 0)
    # The k-th nonzero element goes to row k - 1, while k <= size; the others to a spare
    # row past the end, dropped.
    row = prims.where(prims.bitwise_and(nonzero, prims.le(count, size)), prims.sub(count, 1), size)
    unfilled = prims.full((size + 1,), -1, device=device, dtype=dtypes.int64)
    positions = prims.iota(n, 0, 1, device=device, dtype=dtypes.int64)
    found = prims.slice(prims.scatter(unfilled, row, positions, 0), (0,), (size,))
    # Each flat position as one index per dimension, innermost last.
    columns, stride = [], 1
    for d in reversed(range(input.ndim)):
        index = found if stride == 1 else prims.div(found, stride)
        if d:
            index = prims.remainder(index, input.shape[d])
        columns.insert(0, prims.reshape(index, (size, 1)))
        stride = stride * input.shape[d]
    indices = columns[0] if len(columns) == 1 else prims.cat(columns, 1)
    missing = prims.broadcast_in_dim(prims.lt(found, 0), (size, input.ndim), (0,))
    return prims.where(missing, fill_value, indices)


# --- the indices of the nonzero elements, as many as there are ---------------------------------


def _nonzero(input, *, as_tuple=False):
    return nonzero(input, as_tuple=as_tuple)


@symbol(torch.nonzero, methods=("nonzero",), adapter=_nonzero)
def nonzero(input, as_tuple=False):
    """the index of each nonzero element, one row each (row-major), or with as_tuple one
    index vector per dimension: as many rows as the data has (an unbacked size)"""
    input = expect_tensor(input, "nonzero")
    if not as_tuple:
        return prims.nonzero(input)
    # One index vector per dimension, from the flat positions (no op here reads the count,
    # which is known only once the positions are).
    flat = prims.reshape(input, (input.numel,)) if input.ndim != 1 else input
    positions = prims.nonzero_flat(flat)
    if input.ndim == 0:
        return (prims.mul(positions, 0),)  # a zero-dim tensor is one element at index 0
    columns = []
    for d in range(input.ndim):
        stride = math.prod(input.shape[d + 1 :])
        index = positions if statically_equal(stride, 1) else prims.div(positions, stride)
        columns.append(prims.remainder(index, input.shape[d]) if d else index)
    return tuple(columns)


@symbol(torch.argwhere, methods=("argwhere",))
def argwhere(input):
    """the index of each nonzero element, one row each (torch.nonzero)"""
    return nonzero(input)


# --- the distinct values and how often each occurs, as many as there are --------------------------


def _distinct_dim(input: TensorValue, dim, op: str) -> int | None:
    if dim is None:
        return None
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise ShapeError(f"{op} takes an int dim (or None), got {dim!r}")
    return canonical_dim(dim, max(input.ndim, 1))


@symbol(torch.unique, methods=("unique",))
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """the distinct elements (or slices along dim), then, as asked, the index of each
    element among them and how often each occurs: as many as the data has (an unbacked size)"""
    input = expect_tensor(input, "unique")
    return prims.unique(input, bool(sorted), bool(return_inverse), bool(return_counts),
                        _distinct_dim(input, dim, "unique"))


@symbol(torch.unique_consecutive, methods=("unique_consecutive",))
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """the first element (or slice along dim) of each run of equal ones, then, as asked,
    the run of each element and each run's length: as many runs as the data has"""
    input = expect_tensor(input, "unique_consecutive")
    return prims.unique_consecutive(input, bool(return_inverse), bool(return_counts),
                                    _distinct_dim(input, dim, "unique_consecutive"))


@symbol(torch.bincount, methods=("bincount",))
def bincount(input, weights=None, minlength=0):
    """how often each value 0, 1, ... occurs in a vector of non-negative ints (with
    weights, the sum of theirs: float32 weights give float32, any others float64), in
    max(minlength, largest + 1) bins: a count the data decide, bounded by the dtype"""
    input = expect_tensor(input, "bincount")
    if input.ndim != 1 or input.dtype.kind != "int":
        raise ShapeError(f"bincount counts a one-dimensional int tensor, got {input.dtype.name}{list(input.shape)}")
    if weights is not None:
        weights = expect_tensor(weights, "bincount")
        if weights.dtype != dtypes.float32:
            weights = convert(weights, dtypes.float64)
    return prims.bincount(input, weights, minlength)
