"""Backward rules of the reduction and scan prims, and of the Euclidean vector norm."""

from __future__ import annotations

import math

import torch

from tracecli.ops import ltorch, prims
from tracecli.ops.grads.base import backward, expand_to, no_gradient, zeros_like
from tracecli.ops.promotion import canonical_dims
from tracecli.ops.torch_bridge import TO_TORCH


def _kept(x, dims) -> tuple[int, ...]:
    reduced = canonical_dims(dims, x.ndim)
    return tuple(i for i in range(x.ndim) if i not in reduced)


@backward(prims.sum)
def _sum(g, out, x, dims):
    return (expand_to(g, x.shape, _kept(x, dims)),)


def _extremum(g, out, x, dims):
    # torch's amax/amin backward: the cotangent shared evenly among the elements that
    # reach the extremum.
    kept = _kept(x, dims)
    hit = prims.eq(x, expand_to(out, x.shape, kept))
    count = prims.sum(prims.convert_element_type(hit, g.dtype), tuple(i for i in range(x.ndim) if i not in kept))
    share = expand_to(prims.div(g, count), x.shape, kept)
    return (prims.where(hit, share, zeros_like(share)),)


backward(prims.amax, prims.amin)(_extremum)


@backward(prims.max_all, prims.min_all)
def _everything_extremum(g, out, x):
    return _extremum(g, out, x, tuple(range(x.ndim)))


@backward(prims.var)
def _var(g, out, x, dims, correction):
    kept = _kept(x, dims)
    reduced = [x.shape[i] for i in range(x.ndim) if i not in kept]
    n = math.prod(reduced)
    mean = expand_to(prims.div(prims.sum(x, tuple(i for i in range(x.ndim) if i not in kept)), n), x.shape, kept)
    scale = prims.div(prims.mul(g, 2.0), n - correction)
    return (prims.mul(expand_to(scale, x.shape, kept), prims.sub(x, mean)),)


@backward(prims.prod)
def _prod(g, out, x, dims):
    # The product of every other element, as exclusive running products from both ends:
    # exact where elements are zero, unlike out / x.
    kept = _kept(x, dims)
    reduced = tuple(i for i in range(x.ndim) if i not in kept)
    if not reduced:
        return (g,)
    order = kept + reduced
    moved = prims.transpose(x, order) if order != tuple(range(x.ndim)) else x
    kept_shape = tuple(x.shape[i] for i in kept)
    flat = prims.reshape(moved, kept_shape + (math.prod(x.shape[i] for i in reduced),))
    last = len(kept_shape)
    before = _exclusive_cumprod(flat, last)
    after = prims.flip(_exclusive_cumprod(prims.flip(flat, (last,)), last), (last,))
    others = prims.mul(before, after)
    grad = prims.mul(expand_to(g, flat.shape, tuple(range(last))), others)
    grad = prims.reshape(grad, tuple(moved.shape))
    inverse = [0] * len(order)
    for i, p in enumerate(order):
        inverse[p] = i
    return (prims.transpose(grad, tuple(inverse)) if order != tuple(range(x.ndim)) else grad,)


def _exclusive_cumprod(x, dim):
    """Running products along `dim` that leave out each element itself: 1, x0, x0*x1, ..."""
    padding = tuple((1, 0) if i == dim else (0, 0) for i in range(x.ndim))
    shifted = prims.pad(x, 1.0, padding)
    end = tuple(d for d in x.shape)
    return prims.cumprod(prims.slice(shifted, (0,) * x.ndim, end), dim)


@backward(prims.cumsum)
def _cumsum(g, out, x, dim):
    if x.ndim == 0:  # a running sum of one element is the element itself
        return (g,)
    return (prims.flip(prims.cumsum(prims.flip(g, (dim,)), dim), (dim,)),)


def _running_extremum(g, out, x, dim):
    g_values, _ = g
    _, indices = out
    if g_values is None:
        return (None,)
    return (prims.scatter_add(zeros_like(x), indices, g_values, dim),)


backward(prims.cummax, prims.cummin)(_running_extremum)


@backward(prims.cumprod)
def _cumprod(g, out, x, dim):
    # grad_i = Σ_{k≥i} g_k · Π_{j≤k, j≠i} x_j, without dividing by a zero: before a slice's
    # first zero, Σ_{k≥i} g_k·out_k / x_i; at it, (the product before it) · Σ_{k≥z} g_k ·
    # (the product after it up to k); after it, 0 (every product holds that zero).
    if x.ndim == 0:
        return (g,)

    def reversed_cumsum(t):
        return prims.flip(prims.cumsum(prims.flip(t, (dim,)), dim), (dim,))

    def filled(mask, t, value):
        return prims.where(mask, t, prims.full(t.shape, value, device=t.device, dtype=t.dtype))

    is_zero = prims.eq(x, 0.0)
    zeros_so_far = prims.cumsum(prims.convert_element_type(is_zero, x.dtype), dim)
    before_first = prims.eq(zeros_so_far, 0.0)
    first = prims.bitwise_and(is_zero, prims.eq(zeros_so_far, 1.0))
    from_first = prims.ge(zeros_so_far, 1.0)
    before = prims.div(reversed_cumsum(prims.mul(g, out)), filled(before_first, x, 1.0))
    after_first = prims.bitwise_and(from_first, prims.bitwise_not(first))
    product_after = prims.cumprod(filled(after_first, x, 1.0), dim)
    at_first = prims.mul(_exclusive_cumprod(x, dim), reversed_cumsum(filled(from_first, prims.mul(g, product_after), 0.0)))
    return (prims.add(filled(before_first, before, 0.0), filled(first, at_first, 0.0)),)


@backward(prims.logcumsumexp)
def _logcumsumexp(g, out, x, dim):
    # exp(x) · Σ_{k≥i} g_k·exp(-out_k), in log space as torch computes it: the positive
    # and the negative parts of g each through a reversed logcumsumexp.
    if x.ndim == 0:
        return (g,)
    lowest = torch.finfo(TO_TORCH[g.dtype]).min

    def reversed_logcumsumexp(t):
        return prims.flip(prims.logcumsumexp(prims.flip(t, (dim,)), dim), (dim,))

    log_magnitude = prims.log(prims.abs(g))
    floor = prims.full(g.shape, lowest, device=g.device, dtype=g.dtype)
    positive = prims.where(prims.gt(g, 0.0), log_magnitude, floor)
    negative = prims.where(prims.lt(g, 0.0), log_magnitude, floor)
    part = lambda logs: prims.exp(prims.add(reversed_logcumsumexp(prims.sub(logs, out)), x))  # noqa: E731
    return (prims.sub(part(positive), part(negative)),)


no_gradient(prims.argmax, prims.argmin, prims.searchsorted, prims.histc)


def _nonzero_order(bound) -> bool:
    args = bound.arguments
    return args["ord"] != 0 and args["dtype"] is None and args["x"].dtype.is_float


@backward(ltorch.vector_norm, when=_nonzero_order)
def _vector_norm(g, out, x, ord, dim, keepdim, dtype):  # noqa: A002
    # torch's norm_backward: sgn(x) |x|^(p-1) g / norm^(p-1), with the 0 / 0 its chain
    # rule would give at a zero vector (or at a zero element, for p < 1) masked to 0;
    # the decomposition's chain rule gives NaN or inf there. At p = ±inf, the cotangent
    # shared evenly among the elements whose magnitude is the norm (or NaN), as amax's.
    given = () if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    dims = canonical_dims(given, x.ndim) if given else tuple(range(x.ndim))
    if keepdim:
        g, out = (prims.reshape(t, tuple(d for i, d in enumerate(x.shape) if i not in dims)) for t in (g, out))
    kept = tuple(i for i in range(x.ndim) if i not in dims)

    def spread(t):
        return prims.broadcast_in_dim(t, x.shape, kept)

    if ord == 1:
        return (prims.mul(prims.sign(x), spread(g)),)
    magnitude = prims.abs(x)
    if math.isinf(ord):
        hit = prims.bitwise_or(prims.eq(magnitude, spread(out)), prims.ne(magnitude, magnitude))
        count = prims.sum(prims.convert_element_type(hit, g.dtype), dims)
        share = spread(prims.div(g, count))
        return (prims.mul(prims.sign(x), prims.where(hit, share, zeros_like(share))),)
    if ord < 1:
        scaled = prims.mul(prims.sign(x), prims.pow(magnitude, ord - 1.0))
        scaled = prims.where(prims.eq(x, 0.0), zeros_like(x), scaled)
        return (prims.mul(scaled, spread(prims.mul(g, prims.pow(out, 1.0 - ord)))),)
    if ord == 2:
        scaled = x
    elif ord < 2:
        scaled = prims.mul(prims.sign(x), prims.pow(magnitude, ord - 1.0))
    else:
        scaled = prims.mul(x, prims.pow(magnitude, ord - 2.0))
    norm = out if ord == 2 else prims.pow(out, ord - 1.0)
    scale = prims.where(prims.eq(out, 0.0), zeros_like(out), prims.div(g, norm))
    return (prims.mul(scaled, spread(scale)),)
