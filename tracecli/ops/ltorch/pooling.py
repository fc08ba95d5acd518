"""Pooling: max and average pooling (1-D, 2-D, 3-D) as strided slices of a padded input, one
per kernel offset, combined elementwise; adaptive average pooling as window sums."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import itertools
import math

import torch
import torch.nn.functional as F

from tracecli.core import dtypes
from tracecli.core.dims import Dim, active, statically_equal
from tracecli.ops import prims
from tracecli.ops.autocast import Autocast, Policy
from tracecli.ops.ltorch._base import ALL, compute_dtype, convert, expect_tensor, symbol, torch_form
from tracecli.ops.ltorch.conv import ntuple
from tracecli.ops.promotion import ShapeError
from tracecli.ops.torch_bridge import torch_dtype


def _check_dtype(op: str, input, *, int64_ok: bool) -> None:
    if not (input.dtype.is_float or (int64_ok and input.dtype == dtypes.int64)):
        allowed = "floating point or int64" if int64_ok else "floating point"
        raise ShapeError(f"{op} needs a {allowed} input, got {input.dtype.name}")


def pool_output_size(size: int, kernel: int, stride: int, padding: int, dilation: int, ceil_mode: bool) -> int:
    """torch's pooling_output_shape: in ceil mode the last window must start inside the
    input or its left padding."""
    out = (size + 2 * padding - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


class _Pool:
    """The geometry of one pooling call over the trailing `n` dimensions."""

    def __init__(self, op: str, n: int, input, kernel_size, stride, padding, dilation, ceil_mode):
        self.input = expect_tensor(input, op)
        if input.ndim not in (n + 1, n + 2):
            raise ShapeError(f"{op} expects a {n + 1}-D (unbatched) or {n + 2}-D (batched) input, got {list(input.shape)}")
        self.n, self.lead = n, input.ndim - n
        self.kernel = ntuple(kernel_size, n, "kernel_size")
        # stride=None (or [], what nn modules pass) means stride = kernel_size.
        empty = stride is None or (isinstance(stride, (tuple, list)) and not stride)
        self.stride = self.kernel if empty else ntuple(stride, n, "stride")
        self.padding, self.dilation = ntuple(padding, n, "padding"), ntuple(dilation, n, "dilation")
        if min(self.kernel) < 1 or min(self.stride) < 1 or min(self.dilation) < 1 or min(self.padding) < 0:
            raise ShapeError(f"{op}: kernel_size, stride and dilation must be positive and padding non-negative")
        self.sizes = input.shape[self.lead :]
        self.ceil_mode = ceil_mode
        # Each size on its own: min() of symbolic sizes would compare them with each other.
        if any(size < 1 for size in self.sizes):
            raise ShapeError(f"{op} expects non-empty spatial dimensions, got {list(input.shape)}")
        self.out = tuple(
            pool_output_size(*geometry, ceil_mode)
            for geometry in zip(self.sizes, self.kernel, self.stride, self.padding, self.dilation, strict=True)
        )
        if any(o < 1 for o in self.out):
            raise ShapeError(f"{op}: output size {list(self.out)} is too small for input {list(input.shape)}")

    def windows(self, x, fill):
        """One strided slice of `x` per kernel offset, each shaped like the output: `x` padded
        by `fill` (the padding, plus whatever the last window reaches beyond in ceil mode)."""
        pads = []
        for size, k, s, p, d, o in zip(self.sizes, self.kernel, self.stride, self.padding, self.dilation, self.out,
                                       strict=True):
            if isinstance(size, Dim):
                # How far the last window reaches past the input depends on the size's
                # remainder: pad what any size may need (windows fit in size + 2p, or
                # stride - 1 more in ceil mode), which the slices below never exceed.
                pads.append((p, p + (s - 1 if self.ceil_mode else 0)))
                continue
            reach = (o - 1) * s + d * (k - 1) + 1
            pads.append((p, max(reach - size - p, 0)))
        if any(lo or hi for lo, hi in pads):
            x = prims.pad(x, fill, ((0, 0),) * self.lead + tuple(pads))
        lead = x.shape[: self.lead]
        for offsets in itertools.product(*(range(k) for k in self.kernel)):
            starts = tuple(i * d for i, d in zip(offsets, self.dilation, strict=True))
            stops = tuple(start + (o - 1) * s + 1 for start, o, s in zip(starts, self.out, self.stride, strict=True))
            yield prims.slice(x, (0,) * self.lead + starts, lead + stops, (1,) * self.lead + self.stride)

    @property
    def out_shape(self) -> tuple[int, ...]:
        return self.input.shape[: self.lead] + self.out


def _checked_max_pool(n: int, input, kernel_size, stride, padding, dilation, ceil_mode) -> _Pool:
    op = f"max_pool{n}d"
    pool = _Pool(op, n, input, kernel_size, stride, padding, dilation, ceil_mode)
    # torch's CPU kernels: max_pool2d and 3d also take integers, max_pool1d floats only.
    if not (input.dtype.is_float or (n > 1 and input.dtype.kind in ("int", "uint"))):
        allowed = "floating point or integer" if n > 1 else "floating point"
        raise ShapeError(f"{op} needs a {allowed} input, got {input.dtype.name}")
    for p, k, d in zip(pool.padding, pool.kernel, pool.dilation, strict=True):
        if p > ((k - 1) * d + 1) // 2:
            raise ShapeError(f"{op}: padding should be at most half of the effective kernel size, got pad={p}, "
                             f"kernel_size={k} and dilation={d}")
    return pool


def _lowest(dtype):
    return -math.inf if dtype.is_float else torch.iinfo(torch_dtype(dtype)).min


def _max_pool(n: int, input, kernel_size, stride, padding, dilation, ceil_mode):
    pool = _checked_max_pool(n, input, kernel_size, stride, padding, dilation, ceil_mode)
    # Padding never wins a maximum; NaN propagates through prims.maximum as through the kernel.
    windows = pool.windows(input, _lowest(input.dtype))
    out = next(windows)
    for window in windows:
        out = prims.maximum(out, window)
    return out


def _read_positions(pool: _Pool, offset: tuple[int, ...], device: str):
    """For one kernel offset: the flat index into the input's spatial dims each output
    position reads, and whether that position is inside the input (not padding)."""
    index = inside = None
    for i, (size, s, p, d, o, k) in enumerate(zip(pool.sizes, pool.stride, pool.padding, pool.dilation, pool.out,
                                                   offset, strict=True)):
        along = prims.iota(o, k * d - p, s, device=device, dtype=dtypes.int64)
        at = prims.broadcast_in_dim(along, pool.out_shape, (pool.lead + i,))
        ok = prims.bitwise_and(prims.ge(at, 0), prims.lt(at, size))
        index = at if index is None else prims.add(prims.mul(index, size), at)
        inside = ok if inside is None else prims.bitwise_and(inside, ok)
    return index, inside


def _max_pool_with_indices(n: int, input, kernel_size, stride, padding, dilation, ceil_mode):
    """(maxima, their flat spatial indices) as ATen's kernel scans each window: in order,
    a larger value or any NaN takes over, and a window of nothing above the lowest value
    points at its first position inside the input."""
    pool = _checked_max_pool(n, input, kernel_size, stride, padding, dilation, ceil_mode)
    lowest, device = _lowest(input.dtype), input.device
    best = prims.full(pool.out_shape, lowest, device=device, dtype=input.dtype)
    index = prims.full(pool.out_shape, 0, device=device, dtype=dtypes.int64)
    found = prims.full(pool.out_shape, False, device=device, dtype=dtypes.bool8)
    offsets = itertools.product(*(range(k) for k in pool.kernel))
    for offset, window in zip(offsets, pool.windows(input, lowest), strict=True):
        at, inside = _read_positions(pool, offset, device)
        index = prims.where(prims.bitwise_and(inside, prims.logical_not(found)), at, index)
        found = prims.bitwise_or(found, inside)
        larger = prims.gt(window, best)
        if input.dtype.is_float:
            larger = prims.bitwise_or(larger, prims.ne(window, window))
        take = prims.bitwise_and(inside, larger)
        best = prims.where(take, window, best)
        index = prims.where(take, at, index)
    return best, index


def _return_indices_form(name: str, flag_at: int, with_indices: str | None = None):
    """The adapter of F's max pooling spellings, whose last parameter, `return_indices`
    (positional at `flag_at` or a keyword), picks the op returning the indices too,
    `with_indices`; the *_with_indices spellings (no `with_indices`) return them always,
    and only pass the flag along."""

    def adapter(*args, return_indices=False, **kwargs):
        if len(args) > flag_at:
            args, return_indices = args[:flag_at], args[flag_at]
        return ALL[with_indices if with_indices and return_indices else name](*args, **kwargs)

    adapter.__name__ = f"_{name}"
    return adapter


def _torch_max_pool(name: str):
    # torch.max_pool1d/2d: stride=[] means the kernel size, as None does in F.
    def adapter(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        return ALL[name](input, kernel_size, stride or None, padding, dilation, ceil_mode)

    adapter.__name__ = f"_torch_{name}"
    return adapter


@symbol(F.max_pool1d, adapter=_return_indices_form("max_pool1d", 6, "max_pool1d_with_indices"))
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """maximum over sliding windows of the last dimension"""
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode)


@symbol(F.max_pool2d, adapter=_return_indices_form("max_pool2d", 6, "max_pool2d_with_indices"))
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """maximum over sliding windows of the last two dimensions"""
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode)


def _vector(values: list[int], device: str, dtype):
    """A constant 1-D tensor, built from runs of equal values (sizes equal whatever the
    symbols are: runs never assume two size expressions equal)."""
    runs: list[list] = []
    for value in values:
        if runs and statically_equal(runs[-1][0], value):
            runs[-1][1] += 1
        else:
            runs.append([value, 1])
    pieces = [prims.full((length,), convert(value, dtype), device=device, dtype=dtype) for value, length in runs]
    return pieces[0] if len(pieces) == 1 else prims.cat(pieces, 0)


def _uniform(counts: list) -> bool:
    return all(statically_equal(c, counts[0]) for c in counts)


def _divide_by_counts(total, counts: list, lead: int):
    """total / (product of per-dimension window sizes), a number when the sizes are
    uniform. A dimension's counts are a list of sizes, or a 1-D tensor of them (for a
    symbolic number of windows)."""
    if all(isinstance(c, list) and _uniform(c) for c in counts):
        return prims.div(total, convert(math.prod(c[0] for c in counts), total.dtype))
    spatial = total.shape[lead:]
    divisor = None
    for dim, c in enumerate(counts):
        vector = c if not isinstance(c, list) else _vector(c, total.device, total.dtype)
        vector = prims.broadcast_in_dim(vector, spatial, (dim,))
        divisor = vector if divisor is None else prims.mul(divisor, vector)
    return prims.div(total, prims.broadcast_in_dim(divisor, total.shape, tuple(range(lead, total.ndim))))


def _same_counts(count, windows) -> list:
    """`windows` equal counts: one stands for them all when their number is symbolic
    (it broadcasts along the dimension)."""
    return [count] * windows if isinstance(windows, int) else [count]


def _window_counts(size, k: int, s: int, p: int, o, include_pad: bool, ceil_mode: bool, device: str, dtype):
    """How many elements each of the `o` windows along a dimension of a symbolic size
    counts: k for all of them when no window can be clipped, else a 1-D tensor computed
    from the window positions (the number of windows is itself a size expression)."""
    if not ceil_mode and (include_pad or p == 0):
        return _same_counts(k, o)
    start = prims.sub(prims.mul(prims.iota(o, 0, 1, device=device, dtype=dtypes.int64), s), p)
    end = prims.minimum(prims.add(start, k), size + p)
    if include_pad:
        count = prims.sub(end, start)
    else:
        count = prims.sub(prims.minimum(end, size), prims.maximum(start, 0))
    return convert(count, dtype)


def _avg_pool(n: int, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    op = f"avg_pool{n}d"
    pool = _Pool(op, n, input, kernel_size, stride, padding, 1, ceil_mode)
    _check_dtype(op, input, int64_ok=True)  # int64 sums divide as C does: truncating
    if any(p > k // 2 for p, k in zip(pool.padding, pool.kernel, strict=True)):
        raise ShapeError(f"{op}: padding should be at most half of the kernel size, got padding={list(pool.padding)} "
                         f"and kernel_size={list(pool.kernel)}")
    if divisor_override is not None and divisor_override == 0:
        raise ShapeError(f"{op}: divisor must be non-zero")
    wide = compute_dtype(input.dtype)
    windows = pool.windows(convert(input, wide), convert(0, wide))
    total = next(windows)
    for window in windows:
        total = prims.add(total, window)
    if divisor_override is not None:
        return convert(prims.div(total, convert(divisor_override, wide)), input.dtype)
    # Window sizes as the kernel counts them: clipped to the padded input, and to the input
    # itself unless padding counts.
    counts = []
    for size, k, s, p, o in zip(pool.sizes, pool.kernel, pool.stride, pool.padding, pool.out, strict=True):
        if isinstance(size, Dim):
            counts.append(_window_counts(size, k, s, p, o, count_include_pad, ceil_mode, input.device, wide))
            continue
        dim_counts = []
        for i in range(o):
            start = i * s - p
            end = min(start + k, size + p)
            dim_counts.append(end - start if count_include_pad else min(end, size) - max(start, 0))
        counts.append(dim_counts)
    return convert(_divide_by_counts(total, counts, pool.lead), input.dtype)



torch_form(torch.max_pool1d)(_torch_max_pool("max_pool1d"))
torch_form(torch.max_pool2d)(_torch_max_pool("max_pool2d"))

@symbol(F.max_pool3d, adapter=_return_indices_form("max_pool3d", 6, "max_pool3d_with_indices"),
        autocast=Autocast(cpu=Policy.FP32))
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """maximum over sliding windows of the last three dimensions"""
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode)


@symbol(F.max_pool1d_with_indices, adapter=_return_indices_form("max_pool1d_with_indices", 6))
def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """(maximum, its index along the last dimension) over sliding windows"""
    return _max_pool_with_indices(1, input, kernel_size, stride, padding, dilation, ceil_mode)


@symbol(F.max_pool2d_with_indices, adapter=_return_indices_form("max_pool2d_with_indices", 6))
def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """(maximum, its flat index over the last two dimensions) over sliding windows"""
    return _max_pool_with_indices(2, input, kernel_size, stride, padding, dilation, ceil_mode)


@symbol(F.max_pool3d_with_indices, adapter=_return_indices_form("max_pool3d_with_indices", 6),
        autocast=Autocast(cpu=Policy.FP32))
def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """(maximum, its flat index over the last three dimensions) over sliding windows"""
    return _max_pool_with_indices(3, input, kernel_size, stride, padding, dilation, ceil_mode)


@symbol(F.avg_pool1d)
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """mean over sliding windows of the last dimension"""
    return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


@symbol(F.avg_pool2d)
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """mean over sliding windows of the last two dimensions"""
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


@symbol(F.avg_pool3d, autocast=Autocast(cpu=Policy.FP32))
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """mean over sliding windows of the last three dimensions"""
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


# --- adaptive average pooling ---------------------------------------------------------------


def _window_sums(x, dim: int, out: int):
    """Sums over torch's adaptive windows along `dim`: [floor(i*L/out), ceil((i+1)*L/out))."""
    size = x.shape[dim]
    if statically_equal(size, out):
        return x, _same_counts(1, out)
    # A symbolic size takes the general windows below, which hold for every size: this
    # shortcut would guard on its remainder.
    if not isinstance(size, Dim) and size % out == 0:
        k = size // out
        split = prims.reshape(x, x.shape[:dim] + (out, k) + x.shape[dim + 1 :])
        return prims.sum(split, (dim + 1,)), _same_counts(k, out)
    sums, counts = [], []
    for i in range(out):
        start, end = (i * size) // out, -((-(i + 1) * size) // out)
        starts = [0] * x.ndim
        stops = list(x.shape)
        starts[dim], stops[dim] = start, end
        window = prims.slice(x, tuple(starts), tuple(stops))
        sums.append(prims.reshape(prims.sum(window, (dim,)), x.shape[:dim] + (1,) + x.shape[dim + 1 :]))
        counts.append(end - start)
    return prims.cat(sums, dim), counts


def _adaptive_sizes(op: str, input, n: int, output_size) -> tuple[int, tuple, tuple]:
    """An adaptive pooling's leading dims, input sizes and output sizes over its last `n`
    dims, refusing what torch refuses."""
    if input.ndim not in (n + 1, n + 2):
        raise ShapeError(f"{op} expects a {n + 1}-D (unbatched) or {n + 2}-D (batched) input, got {list(input.shape)}")
    lead = input.ndim - n
    sizes = input.shape[lead:]
    if not isinstance(output_size, (tuple, list)):
        output_size = (output_size,) * n
    if len(output_size) != n:
        raise ShapeError(f"{op}: output_size must have {n} entries, got {list(output_size)}")
    # None keeps the input's size in that dimension.
    out = tuple(size if o is None else o if isinstance(o, Dim) else int(o)
                for o, size in zip(output_size, sizes, strict=True))
    if any(s < 1 for s in sizes) or any(o < 1 for o in out):
        raise ShapeError(f"{op} needs non-empty input and output sizes, got {list(input.shape)} -> {list(out)}")
    return lead, sizes, out


def _adaptive_avg_pool(n: int, input, output_size):
    op = f"adaptive_avg_pool{n}d"
    input = expect_tensor(input, op)
    if input.ndim in (n + 1, n + 2):
        _check_dtype(op, input, int64_ok=False)
    lead, sizes, out = _adaptive_sizes(op, input, n, output_size)
    wide = compute_dtype(input.dtype)
    x = convert(input, wide)
    counts = []
    for dim, o in enumerate(out):
        x, dim_counts = _window_sums(x, lead + dim, o)
        counts.append(dim_counts)
    return convert(_divide_by_counts(x, counts, lead), input.dtype)


@symbol(F.adaptive_avg_pool1d)
def adaptive_avg_pool1d(input, output_size):
    """mean over output_size windows covering the last dimension"""
    return _adaptive_avg_pool(1, input, output_size)


@symbol(F.adaptive_avg_pool2d)
def adaptive_avg_pool2d(input, output_size):
    """mean over output_size windows covering the last two dimensions"""
    return _adaptive_avg_pool(2, input, output_size)


@symbol(F.adaptive_avg_pool3d, autocast=Autocast(cpu=Policy.FP32))
def adaptive_avg_pool3d(input, output_size):
    """mean over output_size windows covering the last three dimensions"""
    return _adaptive_avg_pool(3, input, output_size)


# --- adaptive max pooling -------------------------------------------------------------------


def _adaptive_windows(size, out: int, device: str):
    """torch's adaptive windows along one dimension: [floor(i*L/out), ceil((i+1)*L/out)),
    as start and end index vectors, and the longest window's length (static: with a
    symbolic size, the example's, held by a guard)."""
    positions = prims.iota(out, 0, 1, device=device, dtype=dtypes.int64)
    starts = prims.div(prims.mul(positions, size), out)
    ends = prims.div(prims.add(prims.mul(prims.add(positions, 1), size), out - 1), out)
    if isinstance(size, Dim):
        longest = -(-size // out) + 1  # no window is longer
        widest = active().example(longest)
        if not longest <= widest:  # decided true at the example: a guard that retraces longer windows
            raise AssertionError("the example's windows are longer than its own bound")
    else:
        widest = max(-(-(i + 1) * size // out) - (i * size) // out for i in range(out))
    return starts, ends, widest


def _adaptive_max(input, n: int, output_size, op: str, with_indices: bool):
    input = expect_tensor(input, op)
    if input.ndim in (n + 1, n + 2) and not input.dtype.is_float:
        raise ShapeError(f'"{op}" not implemented for {input.dtype.name}')
    lead, sizes, out = _adaptive_sizes(op, input, n, output_size)
    device, lowest = input.device, _lowest(input.dtype)
    # Separable, last dimension first: per row the first maximum (or last NaN), then the
    # first row holding the overall one, which is the first maximum in row-major order,
    # as ATen's scan finds it. `flat` follows each value's flat spatial index.
    values, flat, stride = input, None, 1
    for i in reversed(range(n)):
        dim, size, o = lead + i, sizes[i], out[i]
        starts, ends, widest = _adaptive_windows(size, o, device)
        shape = values.shape[:dim] + (o,) + values.shape[dim + 1 :]
        best = prims.full(shape, lowest, device=device, dtype=input.dtype)
        index = found = None
        for j in range(widest):
            position = prims.add(starts, j)
            inside = prims.broadcast_in_dim(prims.lt(position, ends), shape, (dim,))
            position = prims.minimum(position, size - 1)
            candidate = prims.take(values, position, dim)
            if not with_indices:
                best = prims.where(inside, prims.maximum(best, candidate), best)
                continue
            at = prims.mul(prims.broadcast_in_dim(position, shape, (dim,)), stride)
            if flat is not None:
                at = prims.add(at, prims.take(flat, position, dim))
            if index is None:
                index, found = at, inside
            index = prims.where(prims.bitwise_and(inside, prims.logical_not(found)), at, index)
            found = prims.bitwise_or(found, inside)
            larger = prims.bitwise_or(prims.gt(candidate, best), prims.ne(candidate, candidate))
            take = prims.bitwise_and(inside, larger)
            best = prims.where(take, candidate, best)
            index = prims.where(take, at, index)
        values, flat, stride = best, index, stride * size
    return (values, flat) if with_indices else values


@symbol(F.adaptive_max_pool1d,
        adapter=_return_indices_form("adaptive_max_pool1d", 2, "adaptive_max_pool1d_with_indices"))
def adaptive_max_pool1d(input, output_size):
    """maximum over output_size windows covering the last dimension"""
    return _adaptive_max(input, 1, output_size, "adaptive_max_pool1d", False)


@symbol(F.adaptive_max_pool2d,
        adapter=_return_indices_form("adaptive_max_pool2d", 2, "adaptive_max_pool2d_with_indices"))
def adaptive_max_pool2d(input, output_size):
    """maximum over output_size windows covering the last two dimensions"""
    return _adaptive_max(input, 2, output_size, "adaptive_max_pool2d", False)


@symbol(F.adaptive_max_pool3d, adapter=_return_indices_form("adaptive_max_pool3d", 2, "adaptive_max_pool3d_with_indices"), autocast=Autocast(cpu=Policy.FP32))
def adaptive_max_pool3d(input, output_size):
    """maximum over output_size windows covering the last three dimensions"""
    return _adaptive_max(input, 3, output_size, "adaptive_max_pool3d", False)


@symbol(F.adaptive_max_pool1d_with_indices, adapter=_return_indices_form("adaptive_max_pool1d_with_indices", 2))
def adaptive_max_pool1d_with_indices(input, output_size):
    """(maximum, its index) over output_size windows covering the last dimension"""
    return _adaptive_max(input, 1, output_size, "adaptive_max_pool1d", True)


@symbol(F.adaptive_max_pool2d_with_indices, adapter=_return_indices_form("adaptive_max_pool2d_with_indices", 2))
def adaptive_max_pool2d_with_indices(input, output_size):
    """(maximum, its flat index) over output_size windows covering the last two dimensions"""
    return _adaptive_max(input, 2, output_size, "adaptive_max_pool2d", True)


@symbol(F.adaptive_max_pool3d_with_indices, adapter=_return_indices_form("adaptive_max_pool3d_with_indices", 2),
        autocast=Autocast(cpu=Policy.FP32))
def adaptive_max_pool3d_with_indices(input, output_size):
    """(maximum, its flat index) over output_size windows covering the last three dimensions"""
    return _adaptive_max(input, 3, output_size, "adaptive_max_pool3d", True)
