"""Selection prims: argmax, argmin, sort and topk along one (canonical) dimension;
searchsorted and histc, where values fall among others; and those whose sizes the data
decide: nonzero, unique and unique_consecutive, bincount."""

from __future__ import annotations

import math

import torch

from tracecli.core import dtypes
from tracecli.core.dims import statically_equal, unbacked
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import check_dim, prim, torch_dtype
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


# --- the distinct values, as many as there are -------------------------------------------


def _distinct(name: str, made_by: str, x: TensorValue, return_inverse: bool, return_counts: bool, dim: int | None):
    """(values, inverse?, counts?) of unique and unique_consecutive: as many values (or
    slices along dim) as the data has, each element's index among them, each one's count."""
    if x.dtype.is_complex:
        raise ShapeError(f"prims.{name} does not accept complex operands")
    if dim is not None:
        if x.ndim == 0:
            raise ShapeError(f"prims.{name}: a zero-dim tensor has no dimension {dim}")
        check_dim(name, x, dim)
    size = x.numel if dim is None else x.shape[dim]
    # None of an empty tensor: torch's fake kernels say 0 there, and so does this.
    count = 0 if statically_equal(size, 0) else unbacked(made_by, size)
    values = (count,) if dim is None else x.shape[:dim] + (count,) + x.shape[dim + 1 :]
    out = [TensorType(values, x.dtype, x.device)]
    if return_inverse:
        out.append(TensorType(x.shape if dim is None else (x.shape[dim],), dtypes.int64, x.device))
    if return_counts:
        out.append(TensorType((count,), dtypes.int64, x.device))
    return out[0] if len(out) == 1 else tuple(out)


def _unique_meta(x: TensorValue, sorted: bool, return_inverse: bool, return_counts: bool, dim: int | None):  # noqa: A002
    return _distinct("unique", "the count of distinct values", x, return_inverse, return_counts, dim)


def _unique(x, sorted, return_inverse, return_counts, dim):  # noqa: A002
    return torch.unique(x, sorted=sorted, return_inverse=return_inverse, return_counts=return_counts, dim=dim)


# torch's own kernels, asked exactly what the program asked: the order of NaNs, of values
# left unsorted and of slices along dim is theirs.
unique = prim("unique", _unique_meta, _unique,
              doc="the distinct values of x (or slices along dim), then, as asked, each element's index among "
                  "them and each one's count: a count the data decide")


def _unique_consecutive_meta(x: TensorValue, return_inverse: bool, return_counts: bool, dim: int | None):
    return _distinct("unique_consecutive", "the count of runs of equal values", x, return_inverse, return_counts, dim)


def _unique_consecutive(x, return_inverse, return_counts, dim):
    return torch.unique_consecutive(x, return_inverse=return_inverse, return_counts=return_counts, dim=dim)


unique_consecutive = prim("unique_consecutive", _unique_consecutive_meta, _unique_consecutive,
                          doc="the first of each run of equal values of x (or slices along dim), then, as asked, "
                              "each element's run and each run's length: a count the data decide")


# --- how often each value occurs: as many bins as the largest value needs ------------------

_BIN_WEIGHTS = (dtypes.float32, dtypes.float64)


def _bincount_meta(x: TensorValue, weights: TensorValue | None, minlength: int) -> TensorType:
    if x.ndim != 1 or x.dtype.kind != "int":
        raise ShapeError(f"prims.bincount counts a vector of ints, got {x.dtype.name}{list(x.shape)}")
    if weights is not None and (weights.dtype not in _BIN_WEIGHTS or weights.shape != x.shape):
        raise ShapeError(f"prims.bincount takes float32 or float64 weights shaped as its input {list(x.shape)}, got "
                         f"{weights.dtype.name}{list(weights.shape)}")
    if isinstance(minlength, bool) or not isinstance(minlength, int) or minlength < 0:
        raise ShapeError(f"prims.bincount needs a non-negative int minlength, got {minlength!r}")
    if statically_equal(x.numel, 0):
        bins = minlength  # nothing counted: minlength bins, as torch gives
    else:
        # One more than the largest value, which only the dtype bounds: 256 bins hold any
        # uint8, and an int64's bound is no bound at all (None).
        largest = torch.iinfo(torch_dtype(x.dtype)).max if x.dtype.bits < 64 else None
        bins = unbacked("the bin count (the largest value + 1, at least minlength)",
                        None if largest is None else max(minlength, largest + 1))
    return TensorType((bins,), dtypes.int64 if weights is None else weights.dtype, x.device)


bincount = prim("bincount", _bincount_meta, lambda x, weights, minlength: torch.bincount(x, weights, minlength),
                doc="how often each value 0, 1, ... occurs in a vector of non-negative ints (the sum of their "
                    "weights, with weights) in max(minlength, largest + 1) bins: a count the data decide")
