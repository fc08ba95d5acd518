"""Norms: linalg.vector_norm (every order: 2, 1, inf, -inf, 0 and the others), the
spellings that reduce to it (torch.norm and Tensor.norm, linalg.norm of vectors and the
Frobenius, 1 and inf norms of matrices), dist and renorm, and the weight of weight-normed
modules (torch._weight_norm, torch.norm_except_dim), which nn.utils.parametrizations.weight_norm
computes on every forward.

Complex inputs, the nuclear and spectral norms, and `out=` stay torch calls.
"""

# Parameters keep torch's names (`input`, `ord`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch

from tracecli.core import dtypes
from tracecli.core.dims import statically_equal
from tracecli.ops import prims
from tracecli.ops.autocast import Autocast, Policy
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import (
    ALL,
    compute_dtype,
    convert,
    expect_tensor,
    is_tensor,
    keepdim_broadcast,
    keepdim_reshape,
    symbol,
    torch_form,
)
from tracecli.ops.ltorch.elementwise import sub
from tracecli.ops.promotion import ShapeError, canonical_dim, canonical_dims, promote_types
from tracecli.ops.torch_bridge import to_dtype

# CUDA autocast: vector_norm is in ATen's fp32_set_opt_dtype list, dist and renorm in its fp32 list.
_CUDA_FP32_DTYPE = Autocast(cuda=Policy.FP32_DTYPE)
_CUDA_FP32 = Autocast(cuda=Policy.FP32)


def _complex(x) -> bool:
    return is_tensor(x) and x.dtype.is_complex


def _dims_arg(dim) -> tuple[int, ...] | None:
    """torch's `dim` of a norm: None, an int, or a sequence of ints."""
    if dim is None:
        return None
    return (dim,) if isinstance(dim, int) else tuple(dim)


def _result_dtype(x, dtype, op: str):
    """The dtype a norm of `x` returns: `dtype` when given, which must hold the input's
    values without narrowing, else the input's."""
    if dtype is None:
        return x.dtype
    out = to_dtype(dtype)
    if not out.is_float:
        raise ShapeError(f"{op}: dtype should be real for real inputs, but got {out.name}")
    if promote_types(x.dtype, out) != out:
        raise ShapeError(f"{op}: the dtype of the input ({x.dtype.name}) should be convertible without "
                         f"narrowing to the specified dtype ({out.name})")
    return out


def _vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    return OPAQUE if _complex(x) else vector_norm(x, ord, dim, keepdim, dtype=dtype)


@symbol(torch.linalg.vector_norm, adapter=_vector_norm, autocast=_CUDA_FP32_DTYPE)
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """(sum |x|^ord)^(1/ord) over dim (all when None); max |x| for inf, min for -inf, the nonzero count for 0"""
    op = "linalg.vector_norm"
    x = expect_tensor(x, op)
    if not x.dtype.is_float:
        raise ShapeError(f"{op}: expected a floating point or complex tensor as input, got {x.dtype.name}")
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise ShapeError(f"{op}: ord must be a number, got {ord!r}")
    ord = float(ord)
    out_dtype = _result_dtype(x, dtype, op)
    dims = canonical_dims(dim, x.ndim)
    if (ord < 0 or ord == math.inf) and statically_equal(x.numel, 0):
        # No identity for a minimum or a maximum: torch refuses to reduce over nothing.
        if not _dims_arg(dim):
            raise ShapeError(f"{op} cannot compute the {ord} norm on an empty tensor because the operation "
                             "does not have an identity")
        for d in dims:
            if statically_equal(x.shape[d], 0):
                raise ShapeError(f"{op} cannot compute the {ord} norm on the dimension {d} because this "
                                 "dimension is empty and the operation does not have an identity")
    if all(statically_equal(x.shape[d], 1) for d in dims):
        # Each norm is of one element: torch takes |x| (for ord 0, x != 0) as it is.
        one = convert(x, out_dtype)
        out = prims.abs(one) if ord != 0 else convert(prims.ne(one, convert(0, one.dtype)), out_dtype)
        kept = tuple(d for i, d in enumerate(x.shape) if i not in dims)
        return out if keepdim or len(kept) == x.ndim else prims.reshape(out, kept)
    # Half precision accumulates in float32 and rounds once, as torch's kernel does.
    wide = convert(x, compute_dtype(out_dtype))
    if ord == 0:
        total = prims.sum(convert(prims.ne(wide, convert(0, wide.dtype)), wide.dtype), dims)
    elif ord == math.inf:
        total = prims.amax(prims.abs(wide), dims)
    elif ord == -math.inf:
        total = prims.amin(prims.abs(wide), dims)
    elif ord == 1:
        total = prims.sum(prims.abs(wide), dims)
    elif ord == 2:
        total = prims.sqrt(prims.sum(prims.mul(wide, wide), dims))
    else:
        total = prims.pow(prims.sum(prims.pow(prims.abs(wide), ord), dims), 1.0 / ord)
    out = convert(total, out_dtype)
    return keepdim_reshape(out, x, dims) if keepdim else out


# --- torch.norm, Tensor.norm, linalg.norm --------------------------------------------------


def _legacy_norm(input, p, dim, keepdim, dtype):
    """torch.norm's rule: a number p (None is 2) is a vector norm over dim; "fro" is the
    2-norm over at most two dims; anything else (the nuclear norm) is torch's."""
    if _complex(input):
        return OPAQUE
    dims = _dims_arg(dim)
    if isinstance(p, str):
        if p == "fro" and (dims is None or len(dims) <= 2):
            return vector_norm(input, 2, dims, keepdim, dtype=dtype)
        return OPAQUE
    return vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype=dtype)


@torch_form(torch.norm)
def _torch_norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    return _legacy_norm(input, p, dim, keepdim, dtype)


@torch_form(methods=("norm",))
def _tensor_norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    return _legacy_norm(self, p, dim, keepdim, dtype)


def _matrix_norm(A, ord, dim, keepdim, dtype):
    """linalg.matrix_norm for the orders a reduction gives: "fro" is the 2-norm over both
    dims; 1 and inf the largest sum of |A| down the columns or along the rows (-1 and -inf
    the smallest). The nuclear and spectral norms need singular values: torch's."""
    A = expect_tensor(A, "linalg.matrix_norm")
    if A.ndim < 2:
        raise ShapeError(f"linalg.matrix_norm: the input tensor A must have at least 2 dimensions, got {A.ndim}")
    if len(dim) != 2:
        raise ShapeError(f"linalg.matrix_norm: dim must be a 2-tuple, got {list(dim)}")
    rows, cols = (canonical_dim(d, A.ndim) for d in dim)
    if rows == cols:
        raise ShapeError(f"linalg.matrix_norm: dims must be different, got ({rows}, {cols})")
    if ord == "fro":
        return vector_norm(A, 2, (rows, cols), keepdim, dtype=dtype)
    if isinstance(ord, str) or abs(ord) == 2:
        if ord in ("nuc", 2, -2):
            return OPAQUE
        raise ShapeError(f"linalg.matrix_norm: order {ord!r} is not supported")
    if abs(ord) not in (1, math.inf):
        raise ShapeError(f"linalg.matrix_norm: order {ord} is not supported; use 'fro', 'nuc', inf, -inf, 1, -1, 2 or -2")
    # The inf norm is the 1 norm of the transpose: sum along the rows instead.
    summed, extremum = (cols, rows) if abs(ord) == math.inf else (rows, cols)
    if statically_equal(A.shape[extremum], 0):
        return OPAQUE  # torch's largest of no sums is 0, its smallest an error
    sums = vector_norm(A, 1, (summed,), keepdim, dtype=dtype)
    if not keepdim and summed < extremum:
        extremum -= 1
    return ALL["amax" if ord > 0 else "amin"](sums, extremum, keepdim)


@torch_form(torch.linalg.norm)
def _linalg_norm(A, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):
    if _complex(A):
        return OPAQUE
    A = expect_tensor(A, "linalg.norm")
    dims = _dims_arg(dim)
    if dims is not None and len(dims) not in (1, 2):
        raise ShapeError(f"linalg.norm: if dim is specified, it must be of length 1 or 2, got {list(dims)}")
    if dims is None and ord is not None and A.ndim not in (1, 2):
        raise ShapeError(f"linalg.norm: if dim is not specified but ord is, the input must be 1D or 2D, got {A.ndim}D")
    if isinstance(ord, str) or (ord is not None and (len(dims) == 2 if dims is not None else A.ndim == 2)):
        return _matrix_norm(A, ord, dims if dims is not None else (0, 1), keepdim, dtype)
    return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)


# --- dist, renorm ---------------------------------------------------------------------------


def _dist(input, other, p=2):
    return OPAQUE if _complex(input) or _complex(other) else dist(input, other, p)


@symbol(torch.dist, methods=("dist",), adapter=_dist, autocast=_CUDA_FP32)
def dist(input, other, p=2):
    """the p-norm of input - other (broadcast together)"""
    input, other = expect_tensor(input, "dist"), expect_tensor(other, "dist")
    difference = sub(input, other)
    if not difference.dtype.is_float:
        raise ShapeError(f"dist: norm(): input dtype should be either floating point or complex, got "
                         f"{difference.dtype.name}")
    return vector_norm(difference, p)


def _renorm(input, p, dim, maxnorm):
    return OPAQUE if _complex(input) else renorm(input, p, dim, maxnorm)


@symbol(torch.renorm, methods=("renorm",), adapter=_renorm, autocast=_CUDA_FP32)
def renorm(input, p, dim, maxnorm):
    """each slice along dim scaled down to p-norm maxnorm where its norm exceeds it"""
    input = expect_tensor(input, "renorm")
    if not input.dtype.is_float:
        raise ShapeError(f"renorm: expected a floating point input, got {input.dtype.name}")
    if input.ndim < 2:
        raise ShapeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    if p <= 0:
        raise ShapeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise ShapeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = canonical_dim(dim, input.ndim)
    others = tuple(i for i in range(input.ndim) if i != d)
    # torch takes the norms and the scale in float32 for half precision, then rounds the
    # scale to the input's dtype before multiplying.
    wide = compute_dtype(input.dtype)
    norms = vector_norm(input, p, others, True, dtype=None if wide == input.dtype else wide)
    scale = prims.div(float(maxnorm), prims.add(norms, 1e-7))
    scale = prims.where(prims.gt(norms, float(maxnorm)), scale, convert(1, norms.dtype))
    scale = convert(scale, input.dtype)
    return prims.mul(input, keepdim_broadcast(prims.reshape(scale, (input.shape[d],)), input, others))


# --- norm_except_dim, _weight_norm ----------------------------------------------------------


def _except_dim(v, dim: int) -> tuple[int, ...]:
    """The dims norm_except_dim reduces: all of them for ATen's dim -1 (the whole tensor),
    else all but `dim` (negative dims other than -1 count from the end)."""
    if dim == -1:
        return tuple(range(v.ndim))
    kept = canonical_dim(dim, v.ndim)
    return tuple(i for i in range(v.ndim) if i != kept)


def _norm_except_dim(v, pow=2, dim=0):
    return OPAQUE if _complex(v) else norm_except_dim(v, pow, dim)


@symbol(torch.norm_except_dim, adapter=_norm_except_dim)
def norm_except_dim(v, pow=2, dim=0):
    """the pow-norm of v over every dim but dim, kept as size-1 dims (over all of v, as a
    0-d tensor, for dim -1)"""
    v = expect_tensor(v, "norm_except_dim")
    if dim == -1:
        return vector_norm(v, pow)
    return _kept_norm(v, pow, _except_dim(v, dim))


def _kept_norm(v, pow, others: tuple[int, ...]):
    """The pow-norm over `others`, kept as size-1 dims; over no dims (a vector), each
    element's own (vector_norm would read an empty dim list as all of them)."""
    if not others:
        return vector_norm(prims.reshape(v, (*v.shape, 1)), pow, (v.ndim,))
    return vector_norm(v, pow, others, True)


def _norm_shape(v, dim: int) -> tuple:
    """The shape of norm_except_dim(v, 2, dim): v's with the reduced dims kept as 1."""
    others = _except_dim(v, dim)
    return () if dim == -1 else tuple(1 if i in others else d for i, d in enumerate(v.shape))


def _weight_norm(v, g, dim=0):
    # Mixed dtypes, a g not shaped as the norm (ATen's kernels read it in ways that differ
    # from broadcasting) and complex weights: torch's.
    if not (is_tensor(v) and is_tensor(g)) or _complex(v) or not v.dtype.is_float or g.dtype != v.dtype:
        return OPAQUE
    norm_shape = _norm_shape(v, dim) if v.ndim else None
    # Each size compared as torch would see it: with symbolic sizes, g's dims equal to the
    # weight's at the example are guarded equal, not told apart.
    if norm_shape is None or len(g.shape) != len(norm_shape) or any(a != b for a, b in zip(g.shape, norm_shape, strict=True)):
        return OPAQUE
    return weight_norm(v, g, dim)


@symbol(torch._weight_norm, adapter=_weight_norm)
def weight_norm(v, g, dim=0):
    """v * (g / norm_except_dim(v, 2, dim)): the weight a weight-normed module computes
    from its direction v and magnitude g"""
    v, g = expect_tensor(v, "_weight_norm"), expect_tensor(g, "_weight_norm")
    others = _except_dim(v, dim)
    if dim != -1 and dim in (0, v.ndim - 1) and v.dtype != dtypes.float16:
        # ATen's fused kernel (dim first or last, not float16): the norm, g / norm and the
        # product in float32 for bfloat16, rounded once at the end.
        wide = compute_dtype(v.dtype)
        wv = convert(v, wide)
        scale = prims.div(convert(g, wide), _kept_norm(wv, 2, others))
        return convert(prims.mul(wv, _spread(scale, v, others)), v.dtype)
    # Otherwise ATen composes the ops, each rounding to the dtype.
    return prims.mul(v, _spread(prims.div(g, norm_except_dim(v, 2, dim)), v, others))


def _spread(scale, v, others: tuple[int, ...]):
    """A norm-shaped tensor broadcast over the dims it was reduced over."""
    if scale.ndim == 0:
        return prims.broadcast_in_dim(scale, v.shape, ())
    kept = tuple(d for i, d in enumerate(scale.shape) if i not in others)
    return keepdim_broadcast(prims.reshape(scale, kept), v, others)
