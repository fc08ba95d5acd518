"""Backward rules at the torch level: where torch's gradient is not the one its
decomposition's prims would give (the subgradient at a kink, a padding row that gets no
gradient), or where one rule reads much better and rounds less than the prims' (softmax)."""

from __future__ import annotations

from tracecli.ops import ltorch, prims
from tracecli.ops.grads.base import NotDifferentiable, backward, is_differentiable, to_dtype, zeros_like
from tracecli.ops.promotion import canonical_dims


def _masked(g, keep):
    return prims.where(keep, g, zeros_like(g))


@backward(ltorch.relu)
def _relu(g, out, x):
    return (_masked(g, prims.gt(out, 0.0)),)


@backward(ltorch.relu6)
def _relu6(g, out, x):
    return (_masked(g, prims.bitwise_and(prims.gt(x, 0.0), prims.lt(x, 6.0))),)


@backward(ltorch.hardtanh)
def _hardtanh(g, out, x, min_val, max_val):
    return (_masked(g, prims.bitwise_and(prims.gt(x, min_val), prims.lt(x, max_val))), None, None)


@backward(ltorch.clamp)
def _clamp(g, out, x, min, max):  # noqa: A002
    if is_differentiable(min) or is_differentiable(max):
        raise NotDifferentiable("clamp with tensor bounds: the gradient of the bounds is not modelled yet")
    if x.dtype != g.dtype:
        raise NotDifferentiable("clamp that changes the dtype: not modelled yet")
    keep = None
    if min is not None:
        keep = prims.ge(x, min)
    if max is not None:
        upper = prims.le(x, max)
        keep = upper if keep is None else prims.bitwise_and(keep, upper)
    return (g if keep is None else _masked(g, keep),)


def _softmax_dim(out, dim) -> int:
    return canonical_dims((dim,), out.ndim)[0] if out.ndim else 0


@backward(ltorch.softmax)
def _softmax(g, out, x, dim, dtype):
    # out * (g - sum(g * out)) along dim, in the output's dtype, then the x's
    d = _softmax_dim(out, dim)
    gy = ltorch.mul(g, out)
    total = ltorch.sum(gy, d, keepdim=True)
    grad = ltorch.sub(gy, ltorch.mul(out, total))
    return (to_dtype(grad, x.dtype),)


@backward(ltorch.log_softmax)
def _log_softmax(g, out, x, dim, dtype):
    d = _softmax_dim(out, dim)
    total = ltorch.sum(g, d, keepdim=True)
    grad = ltorch.sub(g, ltorch.mul(ltorch.exp(out), total))
    return (to_dtype(grad, x.dtype),)


@backward(ltorch.embedding)
def _embedding(g, out, x, weight, padding_idx):
    # The padding row gets no gradient in torch, whatever looked it up.
    flat_index = prims.reshape(x, (x.numel,)) if x.ndim != 1 else x
    rows = prims.reshape(g, (x.numel, weight.shape[1]))
    if padding_idx is not None:
        index = padding_idx if padding_idx >= 0 else padding_idx + weight.shape[0]
        keep = prims.broadcast_in_dim(prims.ne(flat_index, index), rows.shape, (0,))
        rows = _masked(rows, keep)
    return None, prims.index_put(zeros_like(weight), (flat_index,), rows, True)
