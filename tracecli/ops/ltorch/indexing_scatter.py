"""Writing at indices: scatter, scatter_add, scatter_reduce, index_add, index_copy,
index_fill, index_reduce, index_put, put and masked_scatter; and embedding_bag, the
scatter of embedding rows into their bags.

The scatter ops are one scatter prim each (prims/indexing_scatter.py). The index_* ops
write whole slices along a dimension at a vector of indices: index_add and index_reduce
are the scatter of their source with the index broadcast along each slice, index_copy
writes the slices with `prims.index_put` (eager's own kernel, so that duplicate indices
resolve as there), and index_fill is a `where` over the slices the index names. put
writes into the tensor read as a vector; masked_scatter gives the k-th true place of the
mask the k-th element of the source, counted by a running sum of the mask.

The kernels check index values at run time, as eager's do: an index out of range
raises there; where a kernel would accept what eager refuses (index_put wraps the
negative indices index_copy refuses), a `prims.check_all` says so.
"""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from tracecli.core import dtypes
from tracecli.core.dims import same_shape, statically_equal
from tracecli.core.symbol import Tag
from tracecli.core.values import TensorValue
from tracecli.ops import prims
from tracecli.ops.autocast import Autocast, Policy
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import broadcast_to, compute_dtype, convert, expect_tensor, is_tensor, symbol
from tracecli.ops.ltorch.indexing import assignment, fill_value, index_on_meta, indexed_shape, wrap_negative
from tracecli.ops.prims.indexing_scatter import REDUCTIONS
from tracecli.ops.promotion import ShapeError, broadcast_shapes, canonical_dim

_INDEX_DTYPES = (dtypes.int32, dtypes.int64)
_LONG = (dtypes.int64,)
# torch.autocast on CUDA computes these at the widest floating type among their tensors.
_CUDA_PROMOTE = Autocast(cuda=Policy.PROMOTE)


def _index(index, op: str, allowed: tuple = _INDEX_DTYPES, into: TensorValue | None = None) -> TensorValue:
    index = expect_tensor(index, op)
    if index.dtype not in allowed:
        names = " or ".join(d.name for d in allowed)
        raise ShapeError(f"{op} needs an {names} index, got {index.dtype.name}")
    return index if into is None else index_on_meta(into, index)


def _source(input: TensorValue, source, op: str) -> TensorValue:
    source = expect_tensor(source, op)
    if source.dtype != input.dtype:
        raise ShapeError(f"{op}: the source is {source.dtype.name} and the tensor {input.dtype.name}; "
                         "they must have one dtype")
    return source


def _no_complex32(input: TensorValue, op: str) -> None:
    # torch's CPU kernel has none; the prims the op lowers to would compute it anyway.
    if input.dtype == dtypes.complex32:
        raise ShapeError(f"{op} does not take complex32 tensors")


def _as_vector(x: TensorValue) -> TensorValue:
    # Torch's index kernels read a zero-dim tensor as a vector of one element.
    return prims.reshape(x, (1,)) if x.ndim == 0 else x


def _shaped(x: TensorValue, shape: tuple) -> TensorValue:
    return x if same_shape(x.shape, shape) else prims.reshape(x, shape)


def _shaped_as(out: TensorValue, like: TensorValue) -> TensorValue:
    return _shaped(out, like.shape)


def _nothing_to_write(index: TensorValue) -> bool:
    # An empty index writes nothing: torch then checks neither its dtype nor its rank.
    return statically_equal(index.numel, 0)


# --- scatter ------------------------------------------------------------------------------------


def _scatter(input, dim, index, src=None, value=None, *, reduce=None):
    given = [v for v in (src, value) if v is not None]
    if len(given) != 1 or (value is not None and is_tensor(value)):
        return OPAQUE  # torch's own error, or a tensor passed as a number
    return scatter(input, dim, index, given[0], reduce=reduce)


@symbol(torch.scatter, methods=("scatter",), adapter=_scatter)
def scatter(input, dim, index, src, *, reduce=None):
    """input with src (a tensor, or one number) written at index along dim; reduce='add'
    or 'multiply' combines it with what is there"""
    input = expect_tensor(input, "scatter")
    index = expect_tensor(index, "scatter")
    d = canonical_dim(dim, input.ndim)
    if reduce not in (None, "add", "multiply"):
        raise ShapeError(f"scatter: reduce must be 'add' or 'multiply', got {reduce!r}")
    if is_tensor(src):
        src = _source(input, src, "scatter")
    else:
        src = fill_value(src, input.dtype, "scatter")
    if _nothing_to_write(index):
        return prims.clone(input)
    index = _index(index, "scatter", into=input)
    if not is_tensor(src):
        src = prims.full(index.shape, src, device=input.device, dtype=input.dtype)
    if reduce is None:
        return prims.scatter(input, index, src, d)
    if reduce == "add":
        return prims.scatter_add(input, index, src, d)
    return prims.scatter_reduce(input, index, src, d, "prod", True)


@symbol(torch.scatter_add, methods=("scatter_add",), autocast=_CUDA_PROMOTE)
def scatter_add(input, dim, index, src):
    """input with src added at index along dim (duplicate indices add up)"""
    input = expect_tensor(input, "scatter_add")
    d = canonical_dim(dim, input.ndim)
    src = _source(input, src, "scatter_add")
    index = expect_tensor(index, "scatter_add")
    if _nothing_to_write(index):
        return prims.clone(input)
    return prims.scatter_add(input, _index(index, "scatter_add", into=input), src, d)


# Names torch also takes for the extrema (one reduction in its kernels).
_SAME_REDUCTION = {"max": "amax", "min": "amin"}


@symbol(torch.scatter_reduce, methods=("scatter_reduce",))
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """input with the src values landing on each place reduced by sum, prod, mean, amax
    or amin (together with input's own value when include_self)"""
    input = expect_tensor(input, "scatter_reduce")
    d = canonical_dim(dim, input.ndim)
    reduce = _SAME_REDUCTION.get(reduce, reduce)
    if reduce not in REDUCTIONS:
        raise ShapeError(f"scatter_reduce: reduce must be one of {', '.join(REDUCTIONS)}, got {reduce!r}")
    src = _source(input, src, "scatter_reduce")
    index = expect_tensor(index, "scatter_reduce")
    if _nothing_to_write(index):
        return prims.clone(input)
    return prims.scatter_reduce(input, _index(index, "scatter_reduce", into=input), src, d, reduce, bool(include_self))


# --- whole slices at a vector of indices -----------------------------------------------------------


def _slices(op: str, input, dim, index, source, allowed: tuple, *, scalar_beside_vector: bool = False):
    """(tensor, dim, index, source) for an op writing source's slices along dim at index,
    by torch's rule: one rank (index_copy also takes a zero-dim tensor beside a vector),
    the source shaped as the tensor outside dim, one index per slice; zero-dim operands
    as vectors of one."""
    input = expect_tensor(input, op)
    index = _index(index, op, allowed)
    if index.ndim > 1:
        raise ShapeError(f"{op} needs a vector or zero-dim index, got {index.ndim} dimensions")
    source = _source(input, source, op)
    d = canonical_dim(dim, input.ndim)
    x, src = input, source
    if scalar_beside_vector and (x.ndim == 0) != (src.ndim == 0):
        x, src = _as_vector(x), _as_vector(src)
    if x.ndim != src.ndim:
        raise ShapeError(f"{op}: the source {list(source.shape)} and the tensor {list(input.shape)} "
                         "differ in rank")
    x, src, index = _as_vector(x), _as_vector(src), _as_vector(index)
    if src.shape[d] != index.shape[0]:
        raise ShapeError(f"{op}: {index.shape[0]} indices for {src.shape[d]} slices of the source along "
                         f"dimension {d}")
    if any(k != d and s != n for k, (s, n) in enumerate(zip(src.shape, x.shape, strict=True))):
        raise ShapeError(f"{op}: the source {list(source.shape)} must match the tensor {list(input.shape)} "
                         f"outside dimension {d}")
    return x, d, index, src


def _along(index: TensorValue, shape: tuple, dim: int) -> TensorValue:
    """A vector of indices repeated along every slice of `shape` at dim: scatter's index."""
    return prims.broadcast_in_dim(index, shape, (dim,))


def _scaled(source: TensorValue, alpha) -> TensorValue:
    """alpha * source as index_add computes it: alpha in the source's dtype."""
    if isinstance(alpha, complex) and not source.dtype.is_complex:
        raise ShapeError(f"index_add cannot scale a {source.dtype.name} tensor by a complex alpha")
    alpha = convert(alpha, source.dtype)
    if source.dtype == dtypes.bool8:
        return source if alpha else prims.full(source.shape, False, device=source.device, dtype=source.dtype)
    return source if alpha == 1 else prims.mul(source, alpha)


def _index_add(input, dim, index, source, *, alpha=1):
    if is_tensor(input) and input.dtype == dtypes.complex32:
        return OPAQUE  # torch adds slices of complex32; its scatter kernels take no complex32
    return index_add(input, dim, index, source, alpha=alpha)


@symbol(torch.index_add, methods=("index_add",), adapter=_index_add)
def index_add(input, dim, index, source, *, alpha=1):
    """input with alpha * source's slices added at index along dim (duplicates add up)"""
    x, d, index, src = _slices("index_add", input, dim, index, source, _INDEX_DTYPES)
    src = _scaled(src, alpha)
    return _shaped_as(prims.scatter_add(x, _along(index, src.shape, d), src, d), input)


@symbol(torch.index_copy, methods=("index_copy",), autocast=Autocast(cpu=Policy.PROMOTE))
def index_copy(input, dim, index, source):
    """input with source's slices written at index along dim"""
    x, d, index, src = _slices("index_copy", input, dim, index, source, _LONG, scalar_beside_vector=True)
    # index_put counts negative indices from the end; index_copy refuses them.
    prims.check_all(prims.ge(index, 0))
    return _shaped_as(prims.index_put(x, (None,) * d + (index,), src), input)


@symbol(torch.index_fill, methods=("index_fill",))
def index_fill(input, dim, index, value):
    """input with value in the slices at index along dim (negative indices from the end)"""
    input = expect_tensor(input, "index_fill")
    index = _index(index, "index_fill", _LONG)
    if index.ndim > 1:
        raise ShapeError(f"index_fill needs a vector or zero-dim index, got {index.ndim} dimensions")
    if is_tensor(value) and value.ndim:
        raise ShapeError(f"index_fill takes a number or a zero-dim tensor as value, got shape {list(value.shape)}")
    d = canonical_dim(dim, input.ndim)
    value = fill_value(value, input.dtype, "index_fill")
    size = input.shape[d] if input.ndim else 1
    index = _as_vector(index)
    # Which slices the index names: a flag per position along dim, set by a scatter
    # (which also checks that every index is in range).
    flags = prims.full((size,), False, device=input.device, dtype=dtypes.bool8)
    named = prims.full(index.shape, True, device=input.device, dtype=dtypes.bool8)
    hit = prims.scatter(flags, wrap_negative(index, size, index.shape), named, 0)
    mask = prims.broadcast_in_dim(hit, input.shape, (d,)) if input.ndim else prims.reshape(hit, ())
    return prims.where(mask, broadcast_to(value, input.shape), input)


_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def _index_reduce(input, dim, index, source, reduce, *, include_self=True):
    if is_tensor(input) and (input.dtype == dtypes.complex32 or (
            input.dtype in (dtypes.float16, dtypes.bfloat16) and reduce in ("prod", "mean"))):
        # torch rounds to the low precision after each product or sum of slices, where
        # scatter_reduce rounds once: the results differ beyond rounding noise.
        return OPAQUE
    return index_reduce(input, dim, index, source, reduce, include_self=include_self)


@symbol(torch.index_reduce, methods=("index_reduce",), adapter=_index_reduce)
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """input with source's slices reduced into the slices at index along dim, by prod,
    mean, amax or amin (together with input's own slice when include_self)"""
    if reduce not in _INDEX_REDUCTIONS:
        raise ShapeError(f"index_reduce: reduce must be one of {', '.join(_INDEX_REDUCTIONS)}, got {reduce!r}")
    x, d, index, src = _slices("index_reduce", input, dim, index, source, _INDEX_DTYPES)
    if x.dtype.kind in ("bool", "complex") and (x.ndim == 1 or not include_self):
        # torch has kernels for these only over slices, and only together with input's own
        # values (then those of scatter_reduce, which refuses the rest).
        raise ShapeError(f"index_reduce of a {x.dtype.name} tensor is supported by torch only with two or more "
                         "dimensions and include_self=True")
    out = prims.scatter_reduce(x, _along(index, src.shape, d), src, d, reduce, bool(include_self))
    return _shaped_as(out, input)


# --- index_put, put -------------------------------------------------------------------------------


def _check_values(values: TensorValue, target: tuple, op: str) -> None:
    """torch.index_put's rule: the values broadcast to what the indices select (said
    here, not left to the kernel, so that a symbolic trace holds the equalities)."""
    shape = values.shape
    if len(shape) > len(target) or not same_shape(broadcast_shapes(shape, target), target):
        raise ShapeError(f"{op}: values of shape {list(shape)} cannot be broadcast to the indexed shape "
                         f"{list(target)}")


def _index_put(input, indices, values, accumulate=False):
    if isinstance(indices, (tuple, list)) and any(index is None for index in indices):
        return OPAQUE  # aten's whole dimension, which torch.index_put itself does not take
    return index_put(input, indices, values, accumulate)


@symbol(torch.index_put, methods=("index_put",), adapter=_index_put, autocast=_CUDA_PROMOTE)
def index_put(input, indices, values, accumulate=False):
    """input with values written (or added, with accumulate) where the index tensors and
    masks select, as `input[indices] = values` does"""
    input = expect_tensor(input, "index_put")
    values = _source(input, values, "index_put")
    if not isinstance(indices, (tuple, list)) or not indices:
        raise ShapeError("index_put takes a non-empty tuple of index tensors")
    for index in indices:
        index = expect_tensor(index, "index_put")
        if index.dtype not in (*_INDEX_DTYPES, dtypes.bool8):
            raise ShapeError(f"index_put needs int64, int32 or bool indices, got {index.dtype.name}")
    plan = assignment(input, tuple(indices))
    target = indexed_shape(plan)
    if target is not None:
        _check_values(values, target, "index_put")
    return prims.index_put(input, plan.indices, values, bool(accumulate))


@symbol(torch.put, methods=("put",))
def put(input, index, source, accumulate=False):
    """input read as a vector with source written (or added, with accumulate) at index
    (negative indices from the end)"""
    input = expect_tensor(input, "put")
    index = _index(index, "put", _LONG)
    source = _source(input, source, "put")
    _no_complex32(input, "put")
    if index.numel != source.numel:
        raise ShapeError(f"put: {source.numel} source elements for {index.numel} indices")
    flat, flat_index, flat_source = (_shaped(x, (x.numel,)) for x in (input, index, source))
    return _shaped_as(prims.index_put(flat, (flat_index,), flat_source, bool(accumulate)), input)


# --- masked_scatter -----------------------------------------------------------------------------------


@symbol(torch.masked_scatter, methods=("masked_scatter",))
def masked_scatter(input, mask, source):
    """input with source's elements, in order, at the places where mask is true (shapes
    broadcast)"""
    input = expect_tensor(input, "masked_scatter")
    mask = expect_tensor(mask, "masked_scatter")
    if mask.dtype != dtypes.bool8:
        raise ShapeError(f"masked_scatter needs a bool mask, got {mask.dtype.name}")
    source = _source(input, source, "masked_scatter")
    _no_complex32(input, "masked_scatter")
    shape = broadcast_shapes(input.shape, mask.shape)
    n = math.prod(shape)
    flat_mask = _shaped(broadcast_to(mask, shape), (n,))
    flat = _shaped(broadcast_to(input, shape), (n,))
    # How many true places up to each place: the k-th true place takes source element k - 1.
    count = prims.cumsum(convert(flat_mask, dtypes.int64), 0)
    prims.check_all(prims.le(count, source.numel))  # eager refuses a mask with more true places
    if statically_equal(source.numel, 0):
        taken = prims.full((n,), 0, device=input.device, dtype=input.dtype)  # no true place: nothing taken
    else:
        taken = prims.take(_shaped(source, (source.numel,)), prims.where(flat_mask, prims.sub(count, 1), 0), 0)
    return _shaped(prims.where(flat_mask, taken, flat), shape)


# --- in-place forms that read while they write -----------------------------------------------------------
# Eager's masked_scatter_ and index_fill_ read their source or index as they write, with no
# check that it does not overlap the tensor: the result then depends on the kernel's order.
# Declared as INPLACE ops of their own (not the generic twin, whose out-of-place op reads
# everything first), the tracer refuses a view of the tensor among their arguments, and
# they refuse the tensor itself there.


def _not_the_tensor(self: TensorValue, other, op: str, what: str) -> None:
    if is_tensor(other) and other.name == self.name:
        raise ShapeError(f"{op} reads its {what} from the tensor it writes, which eager does in an order a trace "
                         "cannot follow; pass a clone")


@symbol(torch.Tensor.masked_scatter_, methods=("masked_scatter_",), tags=(Tag.INPLACE,), name="masked_scatter_")
def masked_scatter_(self, mask, source):
    """in place: self = masked_scatter(self, mask, source), the mask broadcast to self"""
    self = expect_tensor(self, "masked_scatter_")
    _not_the_tensor(self, source, "masked_scatter_", "source")
    result = masked_scatter.decomposition(self, mask, source)
    if not same_shape(result.shape, self.shape):
        raise ShapeError(f"masked_scatter_: the mask {list(mask.shape)} does not broadcast to the tensor "
                         f"{list(self.shape)}")
    return prims.convert_element_type(result, self.dtype)  # a new value, as every in-place op's


@symbol(torch.Tensor.index_fill_, methods=("index_fill_",), tags=(Tag.INPLACE,), name="index_fill_")
def index_fill_(self, dim, index, value):
    """in place: self = index_fill(self, dim, index, value)"""
    self = expect_tensor(self, "index_fill_")
    _not_the_tensor(self, index, "index_fill_", "index")
    return prims.convert_element_type(index_fill.decomposition(self, dim, index, value), self.dtype)


# --- embedding_bag ---------------------------------------------------------------------------------------

_BAG_MODES = ("sum", "mean", "max")


def _embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                   sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    if max_norm is not None:
        return OPAQUE  # renormalises rows of the weight in place before the lookup: left to torch
    # scale_grad_by_freq and sparse change the gradients only.
    return embedding_bag(input, weight, offsets, mode=mode, per_sample_weights=per_sample_weights,
                         include_last_offset=include_last_offset, padding_idx=padding_idx)


def _bag_index(input: TensorValue, offsets, include_last_offset: bool):
    """(the indices as a vector, each one's bag, the number of bags) for F.embedding_bag's
    input: the rows of a 2-d input are its bags; a 1-d input is cut at offsets, each
    index in the bag of the last offset at or before it, as eager counts them."""
    if input.ndim == 2:
        if offsets is not None:
            raise ShapeError("embedding_bag of a 2-d input takes no offsets: its rows are the bags")
        bags, width = input.shape
        if statically_equal(width, 0):
            raise ShapeError("embedding_bag of a 2-d input needs bags of at least one index")
        rows = prims.iota(bags, 0, 1, device=input.device, dtype=dtypes.int64)
        bag = prims.reshape(prims.broadcast_in_dim(rows, input.shape, (0,)), (input.numel,))
        return prims.reshape(input, (input.numel,)), bag, bags
    offsets = expect_tensor(offsets, "embedding_bag") if offsets is not None else None
    if offsets is None or offsets.ndim != 1 or offsets.dtype not in _INDEX_DTYPES:
        raise ShapeError("embedding_bag of a 1-d input needs a vector of int32 or int64 offsets")
    count, n = offsets.shape[0], input.shape[0]
    if include_last_offset and statically_equal(count, 0):
        raise ShapeError("embedding_bag with include_last_offset needs at least one offset")
    offsets = convert(offsets, dtypes.int64)
    # Offsets are cut points: the first 0, none below the one before, none past the end
    # (with include_last_offset, the last one at the end). Eager refuses a first offset
    # other than 0 and one past the end, and gives no consistent result for the rest
    # (its kernels even read out of bounds): the trace refuses them all when it runs.
    if not statically_equal(count, 0):
        prims.check_all(prims.eq(prims.slice(offsets, (0,), (1,)), 0))
    prims.check_all(prims.le(offsets, n))
    if not (statically_equal(count, 0) or statically_equal(count, 1)):
        prims.check_all(prims.le(prims.slice(offsets, (0,), (count - 1,)), prims.slice(offsets, (1,), (count,))))
    if include_last_offset:
        prims.check_all(prims.eq(prims.slice(offsets, (count - 1,), (count,)), n))
    starts = prims.scatter_add(prims.full((n + 1,), 0, device=input.device, dtype=dtypes.int64), offsets,
                               prims.full((count,), 1, device=input.device, dtype=dtypes.int64), 0)
    bag = prims.sub(prims.slice(prims.cumsum(starts, 0), (0,), (n,)), 1)
    return input, bag, count - 1 if include_last_offset else count


def _bag_max(values: TensorValue, bag: TensorValue, spread: TensorValue, zeros: TensorValue) -> TensorValue:
    """The largest value per bag as eager's kernel finds it: a bag's first value, then
    each later one that compares larger; so NaN stays only where it comes first."""
    m = values.shape[0]
    nan = prims.ne(values, values)
    largest = prims.scatter_reduce(zeros, spread, prims.where(nan, -math.inf, values), 0, "amax", False)
    if statically_equal(m, 0):
        return largest
    firsts = prims.scatter_reduce(prims.full((zeros.shape[0],), m, device=values.device, dtype=dtypes.int64), bag,
                                  prims.iota(m, 0, 1, device=values.device, dtype=dtypes.int64), 0, "amin", True)
    empty = prims.eq(firsts, m)
    first_nan = prims.take(nan, prims.where(empty, 0, firsts), 0)
    first_nan = prims.bitwise_and(first_nan, prims.broadcast_in_dim(prims.logical_not(empty), zeros.shape, (0,)))
    return prims.where(first_nan, math.nan, largest)


@symbol(F.embedding_bag, adapter=_embedding_bag)
def embedding_bag(input, weight, offsets=None, *, mode="mean", per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """the rows of weight at the indices in input, reduced per bag by sum, mean or max (the
    rows of a 2-d input are its bags; a 1-d input is cut into bags at offsets); indices
    equal to padding_idx are left out, and an empty bag gives zeros"""
    input, weight = expect_tensor(input, "embedding_bag"), expect_tensor(weight, "embedding_bag")
    if input.dtype not in _INDEX_DTYPES or input.ndim not in (1, 2):
        raise ShapeError(f"embedding_bag needs a 1-d or 2-d int32 or int64 input, got "
                         f"{input.dtype.name}{list(input.shape)}")
    if weight.ndim != 2 or not weight.dtype.is_float:
        raise ShapeError(f"embedding_bag needs a 2-d floating point weight, got {weight.dtype.name}{list(weight.shape)}")
    if mode not in _BAG_MODES:
        raise ShapeError(f"embedding_bag: mode must be one of {', '.join(_BAG_MODES)}, got {mode!r}")
    if per_sample_weights is not None:
        per_sample_weights = expect_tensor(per_sample_weights, "embedding_bag")
        if mode != "sum":
            raise ShapeError(f"embedding_bag takes per_sample_weights with mode='sum' only, got mode={mode!r}")
        if per_sample_weights.shape != input.shape or per_sample_weights.dtype != weight.dtype:
            raise ShapeError("embedding_bag: per_sample_weights must have the input's shape and the weight's dtype")
    table = weight.shape[0]
    if padding_idx is not None and not -table <= padding_idx < table:
        raise ShapeError(f"embedding_bag: padding_idx {padding_idx} is out of range for {table} embeddings")
    index, bag, bags = _bag_index(input, offsets, include_last_offset)
    if padding_idx is not None:
        # Indices at padding_idx are left out: they go to the spare bag past the end.
        bag = prims.where(prims.ne(index, padding_idx % table), bag, bags)
    dtype = compute_dtype(weight.dtype)
    values = convert(prims.take(weight, index, 0), dtype)
    shape = values.shape
    if per_sample_weights is not None:
        scale = convert(_shaped(per_sample_weights, (index.shape[0],)), dtype)
        values = prims.mul(values, prims.broadcast_in_dim(scale, shape, (0,)))
    # One row per bag and a spare one, dropped at the end, for the padding indices.
    zeros = prims.full((bags + 1, shape[1]), 0, device=weight.device, dtype=dtype)
    spread = prims.broadcast_in_dim(bag, shape, (0,))
    if mode == "max":
        out = _bag_max(values, bag, spread, zeros)
    else:
        out = prims.scatter_add(zeros, spread, values, 0)
        if mode == "mean":
            ones = prims.full((shape[0],), 1, device=weight.device, dtype=dtype)
            sizes = prims.scatter_add(prims.full((bags + 1,), 0, device=weight.device, dtype=dtype), bag, ones, 0)
            out = prims.div(out, prims.broadcast_in_dim(prims.maximum(sizes, 1), out.shape, (0,)))
    return convert(prims.slice(out, (0, 0), (bags, shape[1])), weight.dtype)
