"""Backward rules at the torch level: where torch's gradient is not the one its
decomposition's prims would give (the subgradient at a kink, a padding row that gets no
gradient), or where one rule reads much better and rounds less than the prims' (softmax)."""

from __future__ import annotations

import math

import torch

from tracecli.core.dims import same_shape
from tracecli.ops import ltorch, prims
from tracecli.ops.grads.base import NotDifferentiable, backward, is_differentiable, sum_to, to_dtype, zeros_like
from tracecli.ops.opaque import opaque_symbol
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
    # torch's clamp_backward_min_max: x's cotangent where min <= x <= max; a tensor min's
    # where x < min (and min < max, else max wins), a tensor max's where x > max or max < min.
    # The comparisons promote and broadcast as clamp itself does; each gradient is summed
    # back to its argument's shape.
    zero = zeros_like(g)

    def part(keep, arg):
        if not is_differentiable(arg):
            return None
        return to_dtype(sum_to(prims.where(_as(keep, g), g, zero), arg.shape), arg.dtype)

    keep = None
    if min is not None:
        keep = ltorch.ge(x, min)
    if max is not None:
        upper = ltorch.le(x, max)
        keep = upper if keep is None else ltorch.logical_and(keep, upper)
    grads = [g if keep is None else part(keep, x), None, None]
    if is_differentiable(min):
        below = ltorch.lt(x, min)
        grads[1] = part(below if max is None else ltorch.logical_and(below, ltorch.lt(min, max)), min)
    if is_differentiable(max):
        above = ltorch.gt(x, max)
        grads[2] = part(above if min is None else ltorch.logical_or(above, ltorch.lt(max, min)), max)
    if grads[0] is g and is_differentiable(x):
        grads[0] = to_dtype(g, x.dtype)
    return tuple(grads)


def _as(mask, like):
    """A mask broadcast to the cotangent's shape (bounds may broadcast x further)."""
    if same_shape(mask.shape, like.shape):
        return mask
    lead = like.ndim - mask.ndim
    return prims.broadcast_in_dim(mask, tuple(like.shape), tuple(range(lead, like.ndim)))


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


@backward(ltorch.linear)
def _linear(g, out, x, weight, bias=None):
    # out = x @ weight.T + bias over x's leading dims: one rule reads as the layer does,
    # where its prims' would transpose, broadcast and reduce step by step.
    if weight.ndim != 2 or x.ndim == 0:
        raise NotDifferentiable("linear with a weight that is not a matrix: its gradient is not modelled yet")
    if len({x.dtype, weight.dtype, g.dtype} | ({bias.dtype} if bias is not None else set())) != 1:
        raise NotDifferentiable("linear of mixed dtypes (autocast's casts come before it): not modelled yet")
    grad_x = ltorch.matmul(g, weight)
    if x.ndim == 1:
        grad_weight = ltorch.mul(ltorch.unsqueeze(g, 1), ltorch.unsqueeze(x, 0))
        grad_bias = g
    else:
        rows = ltorch.reshape(g, (-1, weight.shape[0])) if g.ndim != 2 else g
        inputs = ltorch.reshape(x, (-1, weight.shape[1])) if x.ndim != 2 else x
        grad_weight = ltorch.matmul(ltorch.transpose(rows, 0, 1), inputs)
        grad_bias = ltorch.sum(rows, 0)
    return grad_x, grad_weight, grad_bias if bias is not None else None


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


# torch's own convolution backward kernel, as an opaque call: spelled out, the gradients
# are a transposed convolution and a convolution of the input with the cotangent, with
# stride, dilation, padding and groups exchanged, which would not help a reader.
_CONVOLUTION_BACKWARD = opaque_symbol(torch.ops.aten.convolution_backward.default)


@backward(prims.convolution)
def _convolution(g, out, x, weight, bias, stride, padding, dilation, groups):
    if not is_differentiable(g):
        return (None, None, None)
    grad_x, grad_weight, grad_bias = _CONVOLUTION_BACKWARD(
        g, x, weight, [weight.shape[0]], list(stride), list(padding), list(dilation), False, [0] * len(stride),
        groups, [True, True, True])
    return (grad_x, grad_weight, grad_bias if bias is not None else None)


def _max_pool_rule(dims: int):
    """Max pooling's gradient goes to the element torch picks in each window (the first
    maximum, as ATen scans it): the indices are computed again from the saved input and
    the cotangent is added at them, windows that share a maximum adding up."""
    with_indices = getattr(ltorch, f"max_pool{dims}d_with_indices")

    def rule(g, out, x, kernel_size, stride, padding, dilation, ceil_mode):
        if not is_differentiable(g):
            return (None,)
        _, indices = with_indices(x, kernel_size, stride, padding, dilation, ceil_mode)
        lead = x.shape[:-dims]
        flat = lambda t, shape: ltorch.reshape(t, (*lead, math.prod(shape[-dims:])))  # noqa: E731
        grad = ltorch.scatter_add(flat(zeros_like(x), x.shape), -1, flat(indices, indices.shape),
                                  flat(g, g.shape))
        return (ltorch.reshape(grad, x.shape),)

    return rule


for _dims in (1, 2, 3):
    backward(getattr(ltorch, f"max_pool{_dims}d"))(_max_pool_rule(_dims))
