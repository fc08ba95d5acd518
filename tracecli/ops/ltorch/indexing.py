"""Indexing ltorch symbols: getitem (basic and integer-tensor indexing), index_select,
gather, take_along_dim, take, one_hot, masked_fill, masked_select, narrow; and how values
fill a tensor.

Basic indexing (ints, slices, None, Ellipsis) becomes one `prims.slice` and one
`prims.reshape`; integer index tensors then select with `prims.take`, after the
negative indices are wrapped (the values are only known at run time).
"""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

import torch

from tracecli.core import dtypes
from tracecli.core.dims import Dim, same_shape, statically_equal
from tracecli.core.dtypes import DType
from tracecli.core.symbol import Tag
from tracecli.core.values import TensorValue
from tracecli.ops import prims
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import broadcast_to, convert, expect_tensor, is_tensor, symbol, within
from tracecli.ops.promotion import DataDependentShape, ShapeError, broadcast_shapes, canonical_dim
from tracecli.ops.torch_bridge import TO_TORCH

_INDEX_DTYPES = (dtypes.int32, dtypes.int64)


def slice_along(x: TensorValue, dim: int, start: int, stop: int, *, always: bool = False) -> TensorValue:
    """x[start:stop] along `dim`; `x` itself when that is all of it, unless `always`
    (a piece beside others must be a new value, never its own input)."""
    if not always and statically_equal(start, 0) and statically_equal(stop, x.shape[dim]):
        return x
    starts = tuple(start if d == dim else 0 for d in range(x.ndim))
    stops = tuple(stop if d == dim else n for d, n in enumerate(x.shape))
    return prims.slice(x, starts, stops)


def _mask_error(what: str) -> ShapeError:
    return DataDependentShape(
        f"indexing with a boolean mask ({what}) gives a shape that depends on the mask's values, which a trace "
        "does not have; keep the shape with torch.where(mask, x, other) or x.masked_fill(~mask, value)"
    )


def _nested_ints(values, what: str) -> tuple[tuple[int, ...], list[int]]:
    """(shape, flat values) of a nested list of ints used as an index."""
    if not isinstance(values, (list, tuple)):
        if isinstance(values, bool):
            raise _mask_error(what)
        if not isinstance(values, int):
            raise ShapeError(f"an index list holds {type(values).__name__} {values!r}; only ints are supported")
        return (), [values]
    parts = [_nested_ints(v, what) for v in values]
    shapes = {shape for shape, _ in parts}
    if len(shapes) > 1:
        raise ShapeError(f"an index list is ragged: {values!r}")
    inner = shapes.pop() if shapes else ()
    return (len(parts),) + inner, [v for _, flat in parts for v in flat]


def _constant_index(values: list, device: str) -> TensorValue:
    """A Python list index as an int64 tensor built from prims (a trace has no constants)."""
    shape, flat = _nested_ints(values, "a list of bools")
    if not flat:
        return prims.full(shape, 0, device=device, dtype=dtypes.int64)
    parts = [prims.full((1,), v, device=device, dtype=dtypes.int64) for v in flat]
    out = parts[0] if len(parts) == 1 else prims.cat(parts, 0)
    return prims.reshape(out, shape) if not same_shape(out.shape, shape) else out


def on_indexed_device(x: TensorValue, index: TensorValue) -> TensorValue:
    """An index tensor on x's device: torch moves an index on the CPU there itself, and
    refuses one on any other device."""
    if index.device == x.device:
        return index
    if index.device != "cpu":
        raise ShapeError(f"indices should be either on cpu or on the same device as the indexed tensor ({x.device})")
    return prims.device_put(index, x.device)


def index_on_meta(x: TensorValue, index: TensorValue) -> TensorValue:
    """A CPU index read by a meta tensor, as eager's meta kernels of embedding,
    index_select, gather, take and the scatters read it: on meta (they check no device,
    and give a meta result). A model built on meta then takes its ids on the CPU. On any
    other device these ops refuse a CPU index, as eager's kernels do."""
    if x.device == "meta" and index.device == "cpu":
        return prims.device_put(index, "meta")
    return index


def _check_index_tensor(index: TensorValue) -> None:
    if index.dtype in (dtypes.bool8, dtypes.uint8):
        raise _mask_error(f"a {index.dtype.name} tensor")
    if index.dtype.kind != "int":
        raise ShapeError(f"tensors used as indices must be integer or bool tensors, got {index.dtype.name}")


def expand_key(x: TensorValue, key) -> list:
    """The key's items with the Ellipsis expanded and trailing dimensions made explicit."""
    items = list(key) if isinstance(key, tuple) else [key]
    ellipses = [i for i, item in enumerate(items) if item is Ellipsis]
    if len(ellipses) > 1:
        raise ShapeError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for item in items if item is not None and item is not Ellipsis)
    if consumed > x.ndim:
        raise ShapeError(f"too many indices for a tensor of dimension {x.ndim}")
    fill = [slice(None)] * (x.ndim - consumed)
    if ellipses:
        items[ellipses[0] : ellipses[0] + 1] = fill
    else:
        items += fill
    return items


def index_bounds(x: TensorValue, items: list) -> tuple[list[tuple[int, int, int]], list[int], list[tuple[int, object]]]:
    """What a key's items select: (start, stop, step) per dimension of x, the shape of
    the selection, and (position in the selection, item) for each index tensor or list,
    whose dimension the selection keeps whole."""
    bounds: list[tuple[int, int, int]] = []
    shape: list[int] = []
    advanced: list[tuple[int, object]] = []
    dim = 0
    for item in items:
        if item is None:
            shape.append(1)
            continue
        size = x.shape[dim]
        if isinstance(item, (int, Dim, slice)):
            start, stop, step = _basic_bounds(item, size, dim)
            bounds.append((start, stop, step))
            if isinstance(item, slice):
                shape.append(_slice_length(start, stop, step))
        else:
            bounds.append((0, size, 1))
            advanced.append((len(shape), item))
            shape.append(size)
        dim += 1
    return bounds, shape, advanced


def _basic_bounds(item: int | Dim | slice, size: int | Dim, dim: int) -> tuple:
    """(start, stop, step) that an int or a slice selects in a dimension of that size.
    Symbolic sizes and bounds stay symbolic (`x[:-1]` is `(0, n - 1, 1)`); a comparison
    only adds a guard where the answer depends on the sizes (`x[:10]` of `n`)."""
    if not isinstance(item, slice):
        i = item + size if item < 0 else item
        if not within(i, size):
            raise ShapeError(f"index {item} is out of bounds for dimension {dim} with size {size}")
        return i, i + 1, 1
    step = 1 if item.step is None else item.step
    if step <= 0:
        raise ShapeError("slice step must be greater than zero (torch has no negative steps; use torch.flip)")
    start = _slice_end(item.start, size, 0)
    stop = _slice_end(item.stop, size, size)
    return start, (start if stop < start else stop), step


def _slice_end(bound, size, default):
    """Where a slice bound lands in a dimension of `size`, by Python's rules for a
    positive step: negative counts from the end, and both ends are clamped."""
    if bound is None:
        return default
    if bound < 0:
        bound = bound + size
        return 0 if bound < 0 else bound
    return size if bound > size else bound


def _slice_length(start, stop, step):
    """len(range(start, stop, step)) for stop >= start, symbolic sizes included."""
    return (stop - start + step - 1) // step


def whole_bounds(bounds, shape) -> bool:
    """Whether (start, stop, step) per dimension selects all of `shape`, whatever the
    symbols are (a shortcut, never a guard)."""
    return len(bounds) == len(shape) and all(
        step == 1 and statically_equal(start, 0) and statically_equal(stop, size)
        for (start, stop, step), size in zip(bounds, shape, strict=True)
    )


def _basic_index(x: TensorValue, items: list) -> tuple[TensorValue, list[tuple[int, TensorValue]]]:
    """Apply ints, slices and None; return the view and (view position, index tensor)
    for each advanced index, whose dimensions the view keeps whole."""
    bounds, view_shape, items_advanced = index_bounds(x, items)
    advanced: list[tuple[int, TensorValue]] = []
    for position, item in items_advanced:
        index = _constant_index(item, x.device) if isinstance(item, list) else expect_tensor(item, "indexing")
        _check_index_tensor(index)
        advanced.append((position, on_indexed_device(x, index)))
    out = x
    if not whole_bounds(bounds, x.shape):
        starts, stops, steps = (tuple(part) for part in zip(*bounds, strict=True))
        strided = any(s != 1 for s in steps)
        out = prims.slice(x, starts, stops, steps) if strided else prims.slice(x, starts, stops)
    if not same_shape(out.shape, tuple(view_shape)):
        out = prims.reshape(out, tuple(view_shape))
    return out, advanced


def wrap_negative(index: TensorValue, size: int, shape: tuple[int, ...]) -> TensorValue:
    """`index` as int64 in [0, size) where it was in [-size, 0), broadcast to `shape`."""
    index = convert(index, dtypes.int64)
    index = prims.where(prims.lt(index, 0), prims.add(index, size), index)
    return broadcast_to(index, shape)


def _advanced_index(view: TensorValue, advanced: list[tuple[int, TensorValue]],
                    positions_of_true: frozenset[str] = frozenset()) -> TensorValue:
    """`positions_of_true`: index vectors a mask made, which are never negative."""
    positions = [p for p, _ in advanced]
    sizes = [view.shape[p] for p in positions]
    shape = broadcast_shapes(*(index.shape for _, index in advanced))
    indices = [broadcast_to(index, shape) if index.name in positions_of_true else wrap_negative(index, size, shape)
               for (_, index), size in zip(advanced, sizes, strict=True)]
    k = len(positions)
    if positions != list(range(positions[0], positions[0] + k)):
        # Advanced indices apart from each other put their result first (torch and numpy agree).
        rest = [d for d in range(view.ndim) if d not in positions]
        view = prims.transpose(view, tuple(positions + rest))
        positions = list(range(k))
    first = positions[0]
    linear = indices[-1]
    if k > 1:
        # One index into the indexed dimensions merged into one, in row-major order.
        stride = sizes[-1]
        for index, size in zip(reversed(indices[:-1]), reversed(sizes[:-1]), strict=True):
            linear = prims.add(prims.mul(index, stride), linear)
            stride *= size
        view = prims.reshape(view, view.shape[:first] + (math.prod(sizes),) + view.shape[first + k :])
    return prims.take(view, linear, first)


def _plain_index_list(items) -> bool:
    return all(isinstance(i, int) or (isinstance(i, list) and _plain_index_list(i)) for i in items)


def _getitem(self, key):
    """The keys getitem models; the rest are left to torch."""
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
            if not all(b is None or isinstance(b, (int, Dim)) for b in bounds):
                return OPAQUE
        elif isinstance(item, list):
            if not _plain_index_list(item):
                return OPAQUE  # lists holding tensors or slices
        elif not (item is None or item is Ellipsis or isinstance(item, (int, Dim, TensorValue))):
            return OPAQUE
    return getitem(self, key)


def _basic_key(args: tuple, kwargs: dict) -> bool:
    """A key of ints, slices, None and Ellipsis gives a view; an index tensor or list a copy."""
    key = args[1]
    return not any(isinstance(item, (TensorValue, list)) for item in (key if isinstance(key, tuple) else (key,)))


def _masks_as_indices(x: TensorValue, key) -> tuple[TensorValue, object, frozenset[str]]:
    """x and the key with each boolean mask read as torch reads it (`x[mask]` is
    `x[mask.nonzero().unbind(1)]`): the dimensions it covers merged into one, indexed by
    the flat positions of its true elements, as many as the data has."""
    items = list(key) if isinstance(key, tuple) else [key]
    masks = [i for i, item in enumerate(items) if isinstance(item, TensorValue) and item.dtype in _MASK_DTYPES]
    if not masks:
        return x, key, frozenset()
    spans = [items[i].ndim if i in masks else 0 if item is None or item is Ellipsis else 1
             for i, item in enumerate(items)]
    ellipsis = x.ndim - sum(spans)  # the dimensions an Ellipsis stands for
    out, shape, dim, made = [], [], 0, set()
    for i, item in enumerate(items):
        span = ellipsis if item is Ellipsis else spans[i]
        if i not in masks:
            out.append(item)
            shape.extend(x.shape[dim : dim + span])
            dim += span
            continue
        mask = item if item.dtype == dtypes.bool8 else convert(item, dtypes.bool8)
        covered = x.shape[dim : dim + mask.ndim]
        if mask.ndim == 0 or len(covered) != mask.ndim or not all(
                statically_equal(a, b) or a == b for a, b in zip(mask.shape, covered, strict=True)):
            raise ShapeError(f"the shape of the mask {list(mask.shape)} at index {i} does not match the shape of the "
                             f"indexed tensor {list(x.shape)}")
        merged = math.prod(covered)
        flat = mask if mask.ndim == 1 else prims.reshape(mask, (merged,))
        positions = prims.nonzero_flat(flat)
        made.add(positions.name)
        out.append(positions)
        shape.append(merged)
        dim += mask.ndim
    shape.extend(x.shape[dim:])
    if not same_shape(tuple(shape), x.shape):
        x = prims.reshape(x, tuple(shape))
    return x, tuple(out), frozenset(made)


_MASK_DTYPES = (dtypes.bool8, dtypes.uint8)


@symbol(operator.getitem, methods=("__getitem__",), adapter=_getitem, tags=(Tag.VIEW,), view=_basic_key)
def getitem(input, key):
    """input[key] with ints, slices, None, Ellipsis, integer index tensors and boolean masks"""
    input, key, from_masks = _masks_as_indices(expect_tensor(input, "indexing"), key)
    view, advanced = _basic_index(input, expand_key(input, key))
    return _advanced_index(view, advanced, from_masks) if advanced else view


@symbol(torch.index_select, methods=("index_select",))
def index_select(input, dim, index):
    """the slices of input at a vector of indices along dim"""
    input, index = expect_tensor(input, "index_select"), expect_tensor(index, "index_select")
    if index.dtype not in _INDEX_DTYPES or index.ndim > 1:
        got = f"{index.dtype.name}{list(index.shape)}"
        raise ShapeError(f"index_select needs a vector of int32 or int64 indices, got {got}")
    index = index_on_meta(input, index)
    if input.ndim == 0:
        # torch reads a zero-dim input as one element and gives one back.
        if index.numel != 1:
            raise ShapeError("index_select of a zero-dim tensor takes exactly one index")
        one = prims.take(prims.reshape(input, (1,)), prims.reshape(index, (1,)), 0)
        return prims.reshape(one, ())
    d = canonical_dim(dim, input.ndim)
    return prims.take(input, prims.reshape(index, (1,)) if index.ndim == 0 else index, d)


@symbol(torch.gather, methods=("gather",))
def gather(input, dim, index, *, sparse_grad=False):
    """out[i][j] = input[index[i][j]][j] (for dim 0), shaped like index"""
    input, index = expect_tensor(input, "gather"), expect_tensor(index, "gather")
    index = index_on_meta(input, index)
    d = canonical_dim(dim, input.ndim)
    if statically_equal(index.numel, 0):
        # Nothing to read: torch checks neither the index's dtype nor its rank then.
        return prims.full(index.shape, 0, device=input.device, dtype=input.dtype)
    if index.dtype not in _INDEX_DTYPES:
        raise ShapeError(f"gather needs an int32 or int64 index, got {index.dtype.name}")
    if input.ndim + index.ndim == 1:
        # A zero-dim tensor counts as one element beside a vector, as in torch.
        out = prims.gather(_as_vector(input), _as_vector(index), 0)
        return prims.reshape(out, ()) if index.ndim == 0 else out
    return prims.gather(input, index, d)


def _as_vector(x: TensorValue) -> TensorValue:
    return prims.reshape(x, (1,)) if x.ndim == 0 else x


@symbol(torch.take_along_dim, methods=("take_along_dim",))
def take_along_dim(input, indices, dim=None):
    """gather with input and indices broadcast against each other (flattened without dim);
    along a dim the indices count modulo its size, as torch's do"""
    input, indices = expect_tensor(input, "take_along_dim"), expect_tensor(indices, "take_along_dim")
    if indices.dtype != dtypes.int64:
        raise ShapeError(f"take_along_dim needs int64 indices, got {indices.dtype.name}")
    if dim is None:
        flat = prims.reshape(input, (input.numel,)) if input.ndim != 1 else input
        flat_indices = prims.reshape(indices, (indices.numel,)) if indices.ndim != 1 else indices
        return prims.gather(flat, flat_indices, 0)
    if input.ndim != indices.ndim:
        raise ShapeError(
            f"take_along_dim: input and indices need the same number of dimensions, got {input.ndim} and {indices.ndim}"
        )
    if input.ndim == 0:
        raise ShapeError("take_along_dim along a dim needs a tensor with dimensions, got a zero-dim one")
    d = canonical_dim(dim, input.ndim)
    others = broadcast_shapes(input.shape[:d] + input.shape[d + 1 :], indices.shape[:d] + indices.shape[d + 1 :])
    input = broadcast_to(input, others[:d] + input.shape[d : d + 1] + others[d:])
    indices = broadcast_to(indices, others[:d] + indices.shape[d : d + 1] + others[d:])
    return prims.gather(input, prims.remainder(indices, input.shape[d]), d)


@symbol(torch.take, methods=("take",))
def take(input, index):
    """input read as a vector at index (negative indices from the end), shaped like index"""
    input, index = expect_tensor(input, "take"), expect_tensor(index, "take")
    if index.dtype != dtypes.int64:
        raise ShapeError(f"take needs an int64 index, got {index.dtype.name}")
    if input.dtype == dtypes.complex32:
        raise ShapeError("take does not take complex32 tensors")  # torch's CPU kernel has none
    index = index_on_meta(input, index)
    flat = prims.reshape(input, (input.numel,)) if input.ndim != 1 else input
    return prims.take(flat, wrap_negative(index, input.numel, index.shape), 0)


@symbol(torch.nn.functional.one_hot)
def one_hot(tensor, num_classes=-1):
    """int64 vectors of num_classes with a 1 at each value's position (values checked
    to lie in [0, num_classes) at run time, as torch does); without num_classes, as many
    classes as the largest value needs, which the data decide"""
    tensor = expect_tensor(tensor, "one_hot")
    if tensor.dtype != dtypes.int64:
        raise ShapeError(f"one_hot needs an int64 tensor, got {tensor.dtype.name}")
    if isinstance(num_classes, int) and not isinstance(num_classes, bool) and num_classes == -1:
        return prims.one_hot(tensor)
    if isinstance(num_classes, bool) or not isinstance(num_classes, (int, Dim)) or num_classes <= 0:
        raise ShapeError(f"one_hot needs a positive int num_classes (or -1), got {num_classes!r}")
    prims.check_all(prims.bitwise_and(prims.ge(tensor, 0), prims.lt(tensor, num_classes)))
    shape = tensor.shape + (num_classes,)
    values = prims.broadcast_in_dim(tensor, shape, tuple(range(tensor.ndim)))
    classes = prims.broadcast_in_dim(
        prims.iota(num_classes, 0, 1, device=tensor.device, dtype=dtypes.int64), shape, (tensor.ndim,)
    )
    return prims.convert_element_type(prims.eq(values, classes), dtypes.int64)


@symbol(torch.masked_fill, methods=("masked_fill",))
def masked_fill(input, mask, value):
    """value where mask is true, input elsewhere (input's dtype; shapes broadcast)"""
    input, mask = expect_tensor(input, "masked_fill"), expect_tensor(mask, "masked_fill")
    if mask.dtype != dtypes.bool8:
        raise ShapeError(f"masked_fill needs a bool mask, got {mask.dtype.name}")
    if is_tensor(value) and value.ndim:
        raise ShapeError(f"masked_fill takes a number or a zero-dim tensor as value, got shape {list(value.shape)}")
    shape = broadcast_shapes(input.shape, mask.shape)
    value = broadcast_to(fill_value(value, input.dtype, "masked_fill"), shape)
    return prims.where(broadcast_to(mask, shape), value, broadcast_to(input, shape))


def _flat(x: TensorValue) -> TensorValue:
    return x if x.ndim == 1 else prims.reshape(x, (x.numel,))


@symbol(torch.masked_select, methods=("masked_select",))
def masked_select(input, mask):
    """the elements of input where mask is true (both broadcast), in row-major order: as
    many as the mask has, which the data decide"""
    input, mask = expect_tensor(input, "masked_select"), expect_tensor(mask, "masked_select")
    if mask.dtype != dtypes.bool8:
        raise ShapeError(f"masked_select needs a bool mask, got {mask.dtype.name}")
    shape = broadcast_shapes(input.shape, mask.shape)
    flat_input, flat_mask = (_flat(broadcast_to(x, shape)) for x in (input, mask))
    # The flat positions of the true elements, read from the flat input: no op here reads
    # their count, which is known only once the positions are.
    return prims.take(flat_input, prims.nonzero_flat(flat_mask), 0)


# --- fill values: a number or zero-dim tensor written into a tensor ------------------------


def _limits(dtype: DType) -> tuple[float, float]:
    """The lowest and highest finite values of a dtype (a complex one: of its parts)."""
    info = torch.iinfo(TO_TORCH[dtype]) if dtype.kind == "int" else torch.finfo(TO_TORCH[dtype])
    return info.min, info.max


def _unsigned(dtype: DType) -> bool:
    return dtype.kind == "int" and _limits(dtype)[0] == 0


def _number_fits(value, dtype: DType) -> bool:
    """Whether torch converts the number into dtype, by c10's overflow rule: finite values
    within the dtype's range (infinities and NaN only into floats), negative ints into
    unsigned ones down to -max (they wrap), anything into bool."""
    if dtype.kind == "bool" or isinstance(value, bool):
        return True
    lowest, highest = _limits(dtype)
    for part in (value.real, value.imag) if isinstance(value, complex) else (value,):
        if isinstance(part, float) and not math.isfinite(part):
            if dtype.kind == "int":
                return False
        elif isinstance(part, int) and part < 0 and _unsigned(dtype):
            if -part > highest:
                return False
        elif not lowest <= part <= highest:
            return False
    return True


def _range_within(source: DType, dtype: DType) -> bool:
    """Whether every value of `source` converts into `dtype` without overflow."""
    if dtype.kind == "bool" or source.kind == "bool":
        return True
    if source.is_inexact and dtype.kind == "int":
        return False  # infinities and NaN
    low, high = _limits(source)
    lowest, highest = _limits(dtype)
    if _unsigned(dtype) and source.kind == "int":
        lowest = -highest
    return lowest <= low and high <= highest


def _tensor_fits(value: TensorValue, dtype: DType) -> TensorValue:
    """A bool zero-dim tensor: whether the value converts into dtype without overflow
    (what eager checks when it reads the value to fill with)."""
    lowest, highest = _limits(dtype)
    if value.dtype.kind == "int":
        v = convert(value, dtypes.int64)
        if _unsigned(dtype):
            lowest = -highest
        return prims.bitwise_and(prims.ge(v, int(lowest)), prims.le(v, int(highest)))
    v = convert(value, dtypes.float64)  # compared in double, as c10 does
    if dtype.kind == "int":
        return prims.bitwise_and(prims.ge(v, float(lowest)), prims.le(v, float(highest)))
    magnitude = prims.abs(v)
    finite_in_range = prims.le(magnitude, float(highest))
    return prims.bitwise_or(finite_in_range, prims.bitwise_or(prims.eq(magnitude, math.inf), prims.ne(v, v)))


def fill_value(value, dtype: DType, op: str):
    """A number or zero-dim tensor to fill part of a `dtype` tensor with, converted as
    eager converts it; refused where eager refuses it (a complex value into a real
    tensor, a number out of the dtype's range), and a zero-dim tensor that may hold such
    a value is checked at run time, as eager checks the value it reads."""
    if is_tensor(value):
        if value.dtype.is_complex and not dtype.is_complex:
            raise ShapeError(f"{op} cannot put a complex value into a {dtype.name} tensor")
        if not _range_within(value.dtype, dtype):
            if value.dtype.is_complex:
                raise ShapeError(f"{op} with a {value.dtype.name} value for a {dtype.name} tensor is not traced; "
                                 f"convert the value to {dtype.name} first")
            prims.check_all(_tensor_fits(value, dtype))
        return convert(value, dtype)
    if not isinstance(value, (bool, int, float, complex, Dim)):
        raise ShapeError(f"{op} takes a number or a zero-dim tensor as value, got {type(value).__name__}")
    if isinstance(value, complex) and not dtype.is_complex:
        raise ShapeError(f"{op} cannot put a complex value into a {dtype.name} tensor")
    if not isinstance(value, Dim) and not _number_fits(value, dtype):
        raise ShapeError(f"{op}: value {value!r} cannot be converted to {dtype.name} without overflow")
    return convert(value, dtype)


def _narrow(input, dim, start, length):
    if isinstance(start, TensorValue):
        return OPAQUE  # a tensor start: which elements are kept depends on its value
    return narrow(input, dim, start, length)


@symbol(torch.narrow, methods=("narrow",), adapter=_narrow, tags=(Tag.VIEW,))
def narrow(input, dim, start, length):
    """input[start:start + length] along dim (start may be negative)"""
    input = expect_tensor(input, "narrow")
    if input.ndim == 0:
        raise ShapeError("narrow() cannot be applied to a zero-dim tensor")
    d = canonical_dim(dim, input.ndim)
    size = input.shape[d]
    begin = start + size if start < 0 else start
    if not (0 <= begin <= size and 0 <= length <= size - begin):
        raise ShapeError(f"narrow: start {start} and length {length} exceed dimension {d} of size {size}")
    return slice_along(input, d, begin, begin + length)


# --- where an assignment writes ---------------------------------------------------------


@dataclass(frozen=True)
class Assignment:
    """How `x[key] = v` writes, as torch does it: the key's ints, slices, None and Ellipsis
    pick a region of x (a view: `bounds` per dimension of x, then `view_shape` without the
    ints' dimensions and with the Nones'), and its index tensors and masks, if any, pick
    places within that view (`indices`: one per view dimension or mask, None for a whole one)."""

    bounds: tuple[tuple[int, int, int], ...]
    view_shape: tuple[int, ...]
    indices: tuple | None  # None: the whole view is written


def assignment(x: TensorValue, key) -> Assignment:
    items = list(key) if isinstance(key, tuple) else [key]
    for i, item in enumerate(items):
        if isinstance(item, bool):
            raise ShapeError("x[True] = v / x[False] = v is not traced; index with a tensor mask instead")
        if isinstance(item, list):
            items[i] = _constant_index(item, x.device)
        elif isinstance(item, slice) and any(isinstance(b, TensorValue) for b in (item.start, item.stop, item.step)):
            raise ShapeError("a slice bound is a tensor, so where the write lands depends on its value; use ints")
        elif not (item is None or item is Ellipsis or isinstance(item, (int, Dim, slice, TensorValue))):
            raise ShapeError(f"cannot assign through an index of type {type(item).__name__}")
    if sum(1 for item in items if item is Ellipsis) > 1:
        raise ShapeError("an index can only have a single ellipsis ('...')")
    consumed = sum(_dims_taken(item) for item in items)
    if consumed > x.ndim:
        raise ShapeError(f"too many indices for a tensor of dimension {x.ndim}")
    fill = [slice(None)] * (x.ndim - consumed)
    at = next((i for i, item in enumerate(items) if item is Ellipsis), None)
    if at is not None:
        items[at : at + 1] = fill
    else:
        items += fill
    bounds: list[tuple[int, int, int]] = []
    view_shape: list[int] = []
    indices: list = []
    dim = 0
    for item in items:
        if item is None:
            view_shape.append(1)
            indices.append(None)
            continue
        if isinstance(item, TensorValue):
            index = on_indexed_device(x, item if item.dtype != dtypes.uint8 else convert(item, dtypes.bool8))
            if not (index.dtype == dtypes.bool8 or index.dtype in _INDEX_DTYPES):
                raise ShapeError(f"tensors used as indices must be integer or bool tensors, got {index.dtype.name}")
            taken = index.ndim if index.dtype == dtypes.bool8 else 1
            if index.dtype == dtypes.bool8 and index.shape != x.shape[dim : dim + taken]:
                raise ShapeError(f"the mask's shape {list(index.shape)} does not match the indexed dimensions "
                                 f"{list(x.shape[dim : dim + taken])}")
            for d in range(dim, dim + taken):
                bounds.append((0, x.shape[d], 1))
                view_shape.append(x.shape[d])
            indices.append(index)
            dim += taken
            continue
        start, stop, step = _basic_bounds(item, x.shape[dim], dim)
        bounds.append((start, stop, step))
        if isinstance(item, slice):
            view_shape.append(_slice_length(start, stop, step))
            indices.append(None)
        dim += 1
    advanced = any(index is not None for index in indices)
    return Assignment(tuple(bounds), tuple(view_shape), tuple(indices) if advanced else None)


def indexed_shape(plan: Assignment) -> tuple | None:
    """The shape `x[key]` has for an assignment with index tensors, by torch's rule
    (their broadcast shape in place of the dimensions they index when those are
    adjacent, first otherwise); None with a mask, whose count the values decide."""
    if plan.indices is None:
        return plan.view_shape
    positions = [i for i, index in enumerate(plan.indices) if index is not None]
    if any(plan.indices[i].dtype == dtypes.bool8 for i in positions):
        return None
    indexed = broadcast_shapes(*(plan.indices[i].shape for i in positions))
    rest = [size for i, size in enumerate(plan.view_shape) if i not in positions]
    first = positions[0]
    if positions == list(range(first, first + len(positions))):
        return tuple(rest[:first]) + indexed + tuple(rest[first:])
    return indexed + tuple(rest)


def _dims_taken(item) -> int:
    if item is None or item is Ellipsis:
        return 0
    if isinstance(item, TensorValue) and item.dtype in (dtypes.bool8, dtypes.uint8):
        return item.ndim
    return 1
