"""Selection prims: argmax, argmin, sort and topk along one (canonical) dimension;
searchsorted and histc, where values fall among others; nonzero, whose row count the data decide."""

from __future__ import annotations

import math

import torch

from tracecli.core import dtypes
from tracecli.core.dims import unbacked
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import check_dim, prim
from tracecli.ops.promotion import ShapeError


def _size(x: TensorValue, dim: int) -> int:
    return x.shape[dim] if x.ndim else 1


# --- selection by value -----------------------------------------------------------


def _reduced_shape(x: TensorValue, dim: int) -> tuple[int, ...]:
    return x.shape[:dim] + x.shape[dim + 1 :]


def _arg_meta(name: str):
    def meta(x: TensorValue, dim: int) -> TensorType:
        if x.dtype.kind in ("bool", "complex"):
            raise ShapeError(f"prims.{name} does not accept {x.dtype.name} operands")
        check_dim(name, x, dim)
        if _size(x, dim) == 0:
            raise ShapeError(f"prims.{name}: dimension {dim} of {list(x.shape)} is empty")
        return TensorType(_reduced_shape(x, dim), dtypes.int64, x.device)

    return meta


argmax = prim("argmax", _arg_meta("argmax"), lambda x, dim: torch.argmax(x, dim))
argmin = prim("argmin", _arg_meta("argmin"), lambda x, dim: torch.argmin(x, dim))


def _sort_meta(x: TensorValue, dim: int, descending: bool, stable: bool) -> tuple[TensorType, TensorType]:
    if x.dtype.is_complex:
        raise ShapeError("prims.sort does not accept complex operands")
    check_dim("sort", x, dim)
    return x.type, TensorType(x.shape, dtypes.int64, x.device)


def _sort(x, dim, descending, stable):
    return tuple(torch.sort(x, dim=dim, descending=descending, stable=stable))


sort = prim("sort", _sort_meta, _sort, doc="(values, indices) of x sorted along dim")


def _topk_meta(x: TensorValue, k: int, dim: int, largest: bool, sorted: bool) -> tuple[TensorType, TensorType]:  # noqa: A002
    if x.dtype.kind in ("bool", "complex"):
        raise ShapeError(f"prims.topk does not accept {x.dtype.name} operands")
    check_dim("topk", x, dim)
    if not 0 <= k <= _size(x, dim):
        raise ShapeError(f"prims.topk: k={k} is out of range for dimension {dim} of {list(x.shape)}")
    shape = x.shape[:dim] + (k,) + x.shape[dim + 1 :] if x.ndim else ()
    return TensorType(shape, x.dtype, x.device), TensorType(shape, dtypes.int64, x.device)


def _topk(x, k, dim, largest, sorted):  # noqa: A002
    return tuple(torch.topk(x, k, dim, largest, sorted))


topk = prim("topk", _topk_meta, _topk, doc="(values, indices) of the k largest (or smallest) along dim")


# --- searching sorted values ----------------------------------------------------------------


def _searchsorted_meta(sorted_sequence: TensorValue, values: TensorValue, right: bool) -> TensorType:
    if values.dtype != sorted_sequence.dtype or values.device != sorted_sequence.device:
        raise ShapeError("prims.searchsorted takes values of the sequence's own dtype and device")
    if sorted_sequence.dtype.kind in ("bool", "complex"):
        raise ShapeError(f"prims.searchsorted does not accept {sorted_sequence.dtype.name} operands")
    if sorted_sequence.ndim == 0:
        raise ShapeError("prims.searchsorted needs a sequence with at least one dimension")
    if sorted_sequence.ndim > 1 and (
        values.ndim != sorted_sequence.ndim or values.shape[:-1] != sorted_sequence.shape[:-1]
    ):
        raise ShapeError(f"prims.searchsorted: values {list(values.shape)} must match the sequences "
                         f"{list(sorted_sequence.shape)} but in the last dimension")
    return TensorType(values.shape, dtypes.int64, values.device)


def _searchsorted(sorted_sequence, values, right):
    return torch.searchsorted(sorted_sequence, values, right=right)


# A binary search, so what it gives for a sequence that is not sorted, or holds NaN, is
# torch's own answer: no decomposition into comparisons would give the same one.
searchsorted = prim(
    "searchsorted", _searchsorted_meta, _searchsorted,
    doc="where each value would go in the sorted last dimension to keep it sorted (after equal ones, if right)",
)


# torch's kernels on the CPU and MPS count floating point values only; CUDA's and meta's
# count integers too (a mixture of experts counts its tokens per expert so there).
_HISTC_FLOATS_ONLY = ("cpu", "mps")


def _histc_meta(x: TensorValue, bins: int, low: float, high: float) -> TensorType:
    floats_only = x.device.partition(":")[0] in _HISTC_FLOATS_ONLY
    if not (x.dtype.is_float or (x.dtype.kind == "int" and not floats_only)):
        kinds = "floating point values" if floats_only else "floating point or integer values"
        raise ShapeError(f"prims.histc counts {kinds} on {x.device}, got {x.dtype.name}")
    if bins <= 0:
        raise ShapeError(f"prims.histc needs a positive number of bins, got {bins}")
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ShapeError(f"prims.histc: the range [{low}, {high}] is not finite")
    if low > high:
        raise ShapeError(f"prims.histc: max {high} is below min {low}")
    return TensorType((bins,), x.dtype, x.device)


# Counts per bin by torch's own kernel, whose bin of a value on an edge is settled by
# its own rounding (and whose range, with low == high, is the values' own, from the data).
histc = prim(
    "histc", _histc_meta, lambda x, bins, low, high: torch.histc(x, bins, low, high),
    doc="how many values fall in each of `bins` equal bins over [low, high] (the values' range if low == high)",
)


# --- where the nonzero elements are: as many rows as the data has ------------------------


def _nonzero_meta(x: TensorValue) -> TensorType:
    rows = unbacked("the count of nonzero elements", x.numel)
    return TensorType((rows, x.ndim), dtypes.int64, x.device)


nonzero = prim("nonzero", _nonzero_meta, lambda x: torch.nonzero(x),
               doc="the index of each nonzero element (row-major), one row each: a row count the data decide")


def _nonzero_flat_meta(x: TensorValue) -> TensorType:
    if x.ndim != 1:
        raise ShapeError(f"prims.nonzero_flat takes a vector, got {x.ndim} dimensions")
    return TensorType((unbacked("the count of nonzero elements", x.numel),), dtypes.int64, x.device)


nonzero_flat = prim("nonzero_flat", _nonzero_flat_meta, lambda x: torch.nonzero(x).reshape(-1),
                    doc="the position of each nonzero element of a vector: a length the data decide")
