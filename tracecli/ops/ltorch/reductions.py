"""Reductions: sum, prod, nansum, mean, nanmean, count_nonzero, amax, amin, aminmax,
var, std, var_mean, std_mean, logsumexp, all, any, softmax and log_softmax over
dimensions, trace, and the scans cumsum, cumprod, logcumsumexp, cummax and cummin.
Order statistics (median, mode, ...) and norms have modules of their own."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from tracecli.core import dtypes
from tracecli.core.dims import statically_equal
from tracecli.ops import prims
from tracecli.ops.autocast import Autocast, Policy, device_type
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import (
    ALL,
    compute_dtype,
    convert,
    divisor,
    expect_tensor,
    is_tensor,
    keepdim_broadcast,
    keepdim_reshape,
    symbol,
    torch_form,
)
from tracecli.ops.ltorch.elementwise import true_divide
from tracecli.ops.promotion import ShapeError, canonical_dim, canonical_dims
from tracecli.ops.torch_bridge import to_dtype

# CUDA autocast computes these in float32 when no dtype is given (ATen's fp32_set_opt_dtype).
_CUDA_FP32_DTYPE = Autocast(cuda=Policy.FP32_DTYPE)
# ATen's autocast lists put prod in CPU's fp32 list too; logsumexp in CUDA's.
_PROD_AUTOCAST = Autocast(cpu=Policy.FP32, cuda=Policy.FP32_DTYPE)
_CUDA_FP32 = Autocast(cuda=Policy.FP32)


def _reduce(prim, x, dim, keepdim, **kw):
    dims = canonical_dims(dim, x.ndim)
    out = prim(x, dims, **kw)
    return keepdim_reshape(out, x, dims) if keepdim else out


def _count(x, dims) -> int:
    return math.prod(x.shape[d] for d in dims)


def _accumulated(input, dtype):
    """`input` in the dtype torch sums and multiplies it in: `dtype` when given, else
    int64 for bools and integers, else its own."""
    if dtype is not None:
        return convert(input, to_dtype(dtype))
    if input.dtype.kind in ("bool", "int"):
        return convert(input, dtypes.int64)
    return input


def _not_nan(x):
    # NaN is the one value unequal to itself.
    return prims.eq(x, x)


def _complex_left_to_torch(name: str):
    """The form of ltorch.<name>, whose complex case it does not model: torch takes that."""

    def form(input, *args, **kwargs):
        return OPAQUE if is_tensor(input) and input.dtype.is_complex else ALL[name](input, *args, **kwargs)

    form.__name__ = f"_{name}"
    return form


@symbol(torch.sum, methods=("sum",), autocast=_CUDA_FP32_DTYPE)
def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001
    """sum over dims (all when dim is None); ints and bools sum as int64"""
    input = _accumulated(expect_tensor(input, "sum"), dtype)
    return _reduce(prims.sum, input, dim, keepdim)


@symbol(torch.nansum, methods=("nansum",), adapter=_complex_left_to_torch("nansum"))
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """sum over dims counting NaN as zero; ints and bools sum as int64"""
    input = expect_tensor(input, "nansum")
    if input.dtype.is_complex:
        raise ShapeError("nansum of complex values is left to torch")
    if input.dtype.is_float:
        # Zeroed before any conversion to `dtype`: a NaN read as an integer is garbage.
        input = prims.where(_not_nan(input), input, 0.0)
    return _reduce(prims.sum, _accumulated(input, dtype), dim, keepdim)


@symbol(torch.prod, methods=("prod",), autocast=_PROD_AUTOCAST)
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """product over one dim (all when dim is None); ints and bools multiply as int64"""
    input = expect_tensor(input, "prod")
    if dim is not None and not isinstance(dim, int):
        raise ShapeError(f"prod reduces one dimension or all of them, got dim={dim!r}")
    return _reduce(prims.prod, _accumulated(input, dtype), dim, keepdim)


@symbol(torch.mean, methods=("mean",))
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """sum / count, accumulated in float32 for half precision"""
    input = expect_tensor(input, "mean")
    out_dtype = to_dtype(dtype) if dtype is not None else input.dtype
    if not out_dtype.is_inexact:
        raise ShapeError(f"mean needs a floating point input, got {input.dtype.name}; pass dtype= or convert first")
    dims = canonical_dims(dim, input.ndim)
    wide = convert(input, compute_dtype(out_dtype))
    total = prims.sum(wide, dims)
    out = convert(prims.div(total, divisor(_count(input, dims))), out_dtype)
    return keepdim_reshape(out, input, dims) if keepdim else out


@symbol(torch.nanmean, methods=("nanmean",), adapter=_complex_left_to_torch("nanmean"))
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """nansum / the count of values that are not NaN, over dims"""
    input = expect_tensor(input, "nanmean")
    if not input.dtype.is_float:
        raise ShapeError(f"nanmean needs a floating point input, got {input.dtype.name}")
    dims = canonical_dims(dim, input.ndim)
    # torch's own composition: an int64 count divides the nansum, promoting as `/` does.
    count = prims.sum(convert(_not_nan(input), dtypes.int64), dims)
    count = keepdim_reshape(count, input, dims) if keepdim else count
    return true_divide(nansum(input, dim, keepdim, dtype=dtype), count)


@symbol(torch.count_nonzero, methods=("count_nonzero",))
def count_nonzero(input, dim=None):
    """the number of nonzero elements over dims (all when dim is None), as int64"""
    input = expect_tensor(input, "count_nonzero")
    return _reduce(prims.sum, convert(prims.ne(input, convert(0, input.dtype)), dtypes.int64), dim, False)


def _real(input, op: str):
    input = expect_tensor(input, op)
    if input.dtype.is_complex:
        raise ShapeError(f"{op} is not defined for complex tensors")
    return input


def _max_of_all(input):
    return torch.max(input)


def _min_of_all(input):
    return torch.min(input)


# Not amax(a): torch's max(a) picks another of two tied zeros of both signs (prims.max_all).
@symbol(_max_of_all, name="max_all")
def max_all(input):
    """the maximum over all elements, as torch.max(a)"""
    return prims.max_all(_real(input, "max"))


@symbol(_min_of_all, name="min_all")
def min_all(input):
    """the minimum over all elements, as torch.min(a)"""
    return prims.min_all(_real(input, "min"))


@symbol(torch.amax, methods=("amax",))
def amax(input, dim=(), keepdim=False):
    """maximum over dims"""
    return _reduce(prims.amax, expect_tensor(input, "amax"), dim, keepdim)


@symbol(torch.amin, methods=("amin",))
def amin(input, dim=(), keepdim=False):
    """minimum over dims"""
    return _reduce(prims.amin, expect_tensor(input, "amin"), dim, keepdim)


@symbol(torch.aminmax, methods=("aminmax",))
def aminmax(input, *, dim=None, keepdim=False):
    """(min, max) along dim, or over all elements when dim is None"""
    input = expect_tensor(input, "aminmax")
    dims = canonical_dims(None if dim is None else (dim,), input.ndim)
    low, high = prims.amin(input, dims), prims.amax(input, dims)
    if keepdim:
        low, high = keepdim_reshape(low, input, dims), keepdim_reshape(high, input, dims)
    return torch.return_types.aminmax((low, high))


def _variance_form(name: str):
    """torch's spellings of var, std, var_mean and std_mean: (input, dim, unbiased,
    keepdim), the legacy (input, unbiased), or correction= by keyword."""

    def adapter(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        if is_tensor(input) and input.dtype.is_complex:
            return OPAQUE  # a real variance of complex values: no prim computes it
        if isinstance(dim, bool):  # the legacy var(input, unbiased) form
            dim, unbiased = None, dim
        if correction is None:
            correction = 0 if unbiased is False else 1
        return ALL[name](input, dim, correction=correction, keepdim=keepdim)

    adapter.__name__ = f"_{name}"
    return adapter


def _variance(input, dim, correction, op: str):
    """(the variance, its dims, the input), the input and the variance in float32 for
    half precision."""
    input = expect_tensor(input, op)
    if not input.dtype.is_float:
        raise ShapeError(f"{op} needs a real floating point input, got {input.dtype.name}")
    dims = canonical_dims(dim, input.ndim)
    wide = convert(input, compute_dtype(input.dtype))
    return prims.var(wide, dims, float(correction)), dims, wide


def _finish(x, input, dims, keepdim):
    x = convert(x, input.dtype)
    return keepdim_reshape(x, input, dims) if keepdim else x


def _mean_of(wide, dims):
    return prims.div(prims.sum(wide, dims), divisor(_count(wide, dims)))


@symbol(torch.var, methods=("var",), adapter=_variance_form("var"))
def var(input, dim=None, *, correction=1, keepdim=False):
    """variance over dims with Bessel's correction by default"""
    variance, dims, _ = _variance(input, dim, correction, "var")
    return _finish(variance, input, dims, keepdim)


@symbol(torch.std, methods=("std",), adapter=_variance_form("std"))
def std(input, dim=None, *, correction=1, keepdim=False):
    """standard deviation over dims: sqrt of the variance (in float32 for half precision)"""
    variance, dims, _ = _variance(input, dim, correction, "std")
    return _finish(prims.sqrt(variance), input, dims, keepdim)


@symbol(torch.var_mean, adapter=_variance_form("var_mean"))
def var_mean(input, dim=None, *, correction=1, keepdim=False):
    """(variance, mean) over dims"""
    variance, dims, wide = _variance(input, dim, correction, "var_mean")
    return _finish(variance, input, dims, keepdim), _finish(_mean_of(wide, dims), input, dims, keepdim)


@symbol(torch.std_mean, adapter=_variance_form("std_mean"))
def std_mean(input, dim=None, *, correction=1, keepdim=False):
    """(standard deviation, mean) over dims"""
    variance, dims, wide = _variance(input, dim, correction, "std_mean")
    return _finish(prims.sqrt(variance), input, dims, keepdim), _finish(_mean_of(wide, dims), input, dims, keepdim)


@symbol(torch.logsumexp, aliases=(torch.special.logsumexp,), methods=("logsumexp",),
        adapter=_complex_left_to_torch("logsumexp"), autocast=_CUDA_FP32)
def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(x))) over dim, shifted by the maximum; ints and bools as float32"""
    input = expect_tensor(input, "logsumexp")
    if input.dtype.is_complex:
        raise ShapeError("logsumexp of complex values is left to torch")
    if isinstance(dim, (tuple, list)) and not dim and input.ndim and not keepdim:
        # torch reduces everything but keeps the maximum's shape, and refuses to add them.
        raise ShapeError(f"logsumexp over dim=() of a {input.ndim}-d tensor needs keepdim=True")
    x = convert(input, dtypes.float32) if input.dtype.kind in ("bool", "int") else input
    dims = canonical_dims(dim, x.ndim)
    if statically_equal(x.numel, 0):
        # No elements, no maximum: log(0) = -inf over empty dims.
        out = prims.log(prims.sum(prims.exp(x), dims))
        return keepdim_reshape(out, x, dims) if keepdim else out
    # torch computes in the input's own dtype: the shift, exp, sum and log. An infinite
    # maximum shifts by 0 instead (inf - inf would be NaN).
    top = prims.amax(x, dims)
    shift = prims.where(prims.eq(prims.abs(top), math.inf), convert(0, x.dtype), top)
    total = prims.sum(prims.exp(prims.sub(x, keepdim_broadcast(shift, x, dims))), dims)
    out = prims.add(prims.log(total), shift)
    return keepdim_reshape(out, x, dims) if keepdim else out


def _softmax_parts(x, dim, dtype):
    x = expect_tensor(x, "softmax")
    out_dtype = to_dtype(dtype) if dtype is not None else x.dtype
    if not out_dtype.is_float:
        raise ShapeError(f"softmax needs a real floating point input, got {out_dtype.name}")
    if dim is None:
        raise ShapeError("softmax needs an explicit dim")
    dims = canonical_dims(dim, x.ndim)
    # torch converts the input to `dtype` first (rounding it, for a half type), then
    # computes half types in float32.
    wide = convert(convert(x, out_dtype), compute_dtype(out_dtype))
    if 0 in (x.shape[d] for d in dims):
        return wide, dims, out_dtype  # no elements, no maximum to shift by
    shifted = prims.sub(wide, keepdim_broadcast(prims.amax(wide, dims), wide, dims))
    return shifted, dims, out_dtype


@symbol(torch.softmax, aliases=(torch.special.softmax,), methods=("softmax",), autocast=_CUDA_FP32_DTYPE)
def softmax(input, dim, dtype=None):
    """exp(x - max) / sum(exp(x - max)) along dim"""
    shifted, dims, out_dtype = _softmax_parts(input, dim, dtype)
    e = prims.exp(shifted)
    out = prims.div(e, keepdim_broadcast(prims.sum(e, dims), e, dims))
    return convert(out, out_dtype)


@symbol(
    torch.log_softmax, aliases=(torch.special.log_softmax,), methods=("log_softmax",), autocast=_CUDA_FP32_DTYPE
)
def log_softmax(input, dim, dtype=None):
    """(x - max) - log(sum(exp(x - max))) along dim"""
    shifted, dims, out_dtype = _softmax_parts(input, dim, dtype)
    total = prims.sum(prims.exp(shifted), dims)
    # torch's CPU kernel along the last dim keeps the sum, and its log, in a half type.
    keep = (out_dtype if out_dtype != shifted.dtype and device_type(shifted.device) == "cpu"
            and dims == (shifted.ndim - 1,) else None)
    log_total = prims.log(total if keep is None else convert(convert(total, keep), shifted.dtype))
    log_total = log_total if keep is None else convert(convert(log_total, keep), shifted.dtype)
    out = prims.sub(shifted, keepdim_broadcast(log_total, shifted, dims))
    return convert(out, out_dtype)


def _all_or_any(input, dim, keepdim, *, want_all: bool):
    input = expect_tensor(input, "all" if want_all else "any")
    flags = convert(input, dtypes.bool8)
    dims = canonical_dims(dim, input.ndim)
    # all = no element is false; any = some element is true: reduce as integers.
    counted = flags if want_all is False else prims.logical_not(flags)
    total = prims.sum(convert(counted, dtypes.int64), dims)
    out = prims.eq(total, 0) if want_all else prims.ne(total, 0)
    out = out if input.dtype != dtypes.uint8 else convert(out, dtypes.uint8)
    return keepdim_reshape(out, input, dims) if keepdim else out


@torch_form(F.softmax)
def _f_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return softmax(input, dim, dtype=dtype)


@torch_form(F.log_softmax)
def _f_log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return log_softmax(input, dim, dtype=dtype)


@symbol(torch.all, methods=("all",))
def all(input, dim=None, keepdim=False):
    """true where every element (along dim) is nonzero"""
    return _all_or_any(input, dim, keepdim, want_all=True)


@symbol(torch.any, methods=("any",))
def any(input, dim=None, keepdim=False):
    """true where some element (along dim) is nonzero"""
    return _all_or_any(input, dim, keepdim, want_all=False)


@symbol(torch.trace, methods=("trace",), autocast=Autocast(cpu=Policy.FP32))
def trace(input):
    """the sum of a matrix's main diagonal; ints as int64"""
    input = expect_tensor(input, "trace")
    if input.ndim != 2:
        raise ShapeError(f"trace expects a matrix, got a tensor with {input.ndim} dimensions")
    if input.dtype.kind == "bool":
        raise ShapeError("trace is not defined for bool tensors")
    x = _accumulated(input, None)
    rows, cols = x.shape
    row = prims.broadcast_in_dim(prims.iota(rows, 0, 1, device=x.device, dtype=dtypes.int64), x.shape, (0,))
    col = prims.broadcast_in_dim(prims.iota(cols, 0, 1, device=x.device, dtype=dtypes.int64), x.shape, (1,))
    # Off the diagonal a zero is added, never the element (a NaN there stays out).
    return prims.sum(prims.where(prims.eq(row, col), x, convert(0, x.dtype)), (0, 1))


# --- scans ----------------------------------------------------------------------------


def _scan(prim, input, dim, dtype, op: str):
    input = _accumulated(expect_tensor(input, op), dtype)
    d = canonical_dim(dim, input.ndim)
    # Half precision accumulates in float32 and rounds each step once, as torch's kernel does.
    wide = compute_dtype(input.dtype)
    return convert(prim(convert(input, wide), d), input.dtype)


@symbol(torch.cumsum, methods=("cumsum",), autocast=_CUDA_FP32_DTYPE)
def cumsum(input, dim, *, dtype=None):
    """running sums along dim; bools and ints sum as int64"""
    return _scan(prims.cumsum, input, dim, dtype, "cumsum")


@symbol(torch.cumprod, methods=("cumprod",), autocast=_CUDA_FP32_DTYPE)
def cumprod(input, dim, *, dtype=None):
    """running products along dim; bools and ints multiply as int64"""
    return _scan(prims.cumprod, input, dim, dtype, "cumprod")


@symbol(torch.logcumsumexp, methods=("logcumsumexp",))
def logcumsumexp(input, dim):
    """running log(sum(exp(x))) along dim"""
    input = expect_tensor(input, "logcumsumexp")
    if not input.dtype.is_inexact:
        raise ShapeError(f"logcumsumexp needs a floating point or complex input, got {input.dtype.name}")
    return prims.logcumsumexp(input, canonical_dim(dim, input.ndim))


def _running_extremum(prim, kind, input, dim, op: str):
    input = expect_tensor(input, op)
    if input.dtype.is_complex:
        raise ShapeError(f"{op} is not defined for complex tensors")
    return kind(prim(input, canonical_dim(dim, input.ndim)))


@symbol(torch.cummax, methods=("cummax",))
def cummax(input, dim):
    """(values, indices) of the running maximum along dim; the last index among ties"""
    return _running_extremum(prims.cummax, torch.return_types.cummax, input, dim, "cummax")


@symbol(torch.cummin, methods=("cummin",))
def cummin(input, dim):
    """(values, indices) of the running minimum along dim; the last index among ties"""
    return _running_extremum(prims.cummin, torch.return_types.cummin, input, dim, "cummin")
