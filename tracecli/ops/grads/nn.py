"""Backward rules at the torch level: where torch's gradient is not the one its
decomposition's prims would give (the subgradient at a kink, a padding row that gets no
gradient), or where one rule reads much better and rounds less than the prims' (softmax)."""

from __future__ import annotations

import math

import torch

from tracecli.core.dims import same_shape
from tracecli.core.symbol import Symbol
from tracecli.ops import ltorch, prims
from tracecli.ops.grads.base import NotDifferentiable, backward, is_differentiable, sum_to, to_dtype, zeros_like
from tracecli.ops.ltorch._base import compute_dtype
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


def _wide(x):
    """x in the dtype torch computes its kernels' gradients in (float32 for half precision)."""
    return to_dtype(x, compute_dtype(x.dtype))


@backward(ltorch.gelu)
def _gelu(g, out, x, approximate):
    # d/dx x·Φ(x) = Φ(x) + x·φ(x); for the tanh form, the derivative of its formula.
    xw, gw = _wide(x), _wide(g)
    if approximate == "none":
        cdf = ltorch.mul(ltorch.add(ltorch.erf(ltorch.mul(xw, 1 / math.sqrt(2.0))), 1.0), 0.5)
        pdf = ltorch.mul(ltorch.exp(ltorch.mul(ltorch.mul(xw, xw), -0.5)), 1 / math.sqrt(2.0 * math.pi))
        slope = ltorch.add(cdf, ltorch.mul(xw, pdf))
    else:
        k = math.sqrt(2.0 / math.pi)
        squares = ltorch.mul(xw, xw)
        t = ltorch.tanh(ltorch.mul(ltorch.add(xw, ltorch.mul(ltorch.mul(squares, xw), 0.044715)), k))
        left = ltorch.mul(ltorch.add(t, 1.0), 0.5)
        inner_slope = ltorch.mul(ltorch.add(ltorch.mul(squares, 3 * 0.044715), 1.0), k)
        right = ltorch.mul(ltorch.mul(ltorch.mul(xw, 0.5), ltorch.rsub(ltorch.mul(t, t), 1.0)), inner_slope)
        slope = ltorch.add(left, right)
    return (to_dtype(ltorch.mul(gw, slope), x.dtype),)


@backward(ltorch.layer_norm)
def _layer_norm(g, out, x, normalized_shape, weight, bias, eps):
    # With x̂ = (x - mean)·rstd over the normalized dims (N elements) and ĝ = g·weight:
    # grad_x = rstd/N · (N·ĝ - Σĝ - x̂·Σ(ĝ·x̂)); grad_weight = Σ g·x̂ and grad_bias = Σ g over
    # the other dims. The statistics are computed again here, as torch's kernel saves them.
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    dims = tuple(range(x.ndim - len(shape), x.ndim))
    batch = tuple(range(x.ndim - len(shape)))
    count = math.prod(shape)
    xw, gw = _wide(x), _wide(g)
    mean = ltorch.mean(xw, dims, keepdim=True)
    centered = ltorch.sub(xw, mean)
    rstd = ltorch.rsqrt(ltorch.add(ltorch.mean(ltorch.mul(centered, centered), dims, keepdim=True), float(eps)))
    normalized = ltorch.mul(centered, rstd)
    scaled = ltorch.mul(gw, _wide(weight)) if weight is not None else gw
    total = ltorch.sum(scaled, dims, keepdim=True)
    along = ltorch.sum(ltorch.mul(scaled, normalized), dims, keepdim=True)
    inside = ltorch.sub(ltorch.sub(ltorch.mul(scaled, float(count)), total), ltorch.mul(normalized, along))
    grad_x = to_dtype(ltorch.mul(ltorch.mul(rstd, 1.0 / count), inside), x.dtype)
    grad_weight = grad_bias = None
    if weight is not None:
        product = ltorch.mul(gw, normalized)
        grad_weight = to_dtype(ltorch.sum(product, batch) if batch else product, weight.dtype)
    if bias is not None:
        grad_bias = to_dtype(ltorch.sum(gw, batch) if batch else gw, bias.dtype)
    return grad_x, None, grad_weight, grad_bias


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
# stride, dilation, padding and groups exchanged, which would not help a reader. Made at
# the first backward that needs it: an opaque symbol looks up its spelling in the index of
# torch's namespaces, which building costs every command's start-up some 30 ms.
def _convolution_backward() -> Symbol:
    return opaque_symbol(torch.ops.aten.convolution_backward.default)


@backward(prims.convolution)
def _convolution(g, out, x, weight, bias, stride, padding, dilation, groups):
    if not is_differentiable(g):
        return (None, None, None)
    grad_x, grad_weight, grad_bias = _convolution_backward()(
        g, x, weight, [weight.shape[0]], list(stride), list(padding), list(dilation), False, [0] * len(stride),
        groups, [True, True, True])
    return (grad_x, grad_weight, grad_bias if bias is not None else None)


@backward(prims.convolution_transpose)
def _convolution_transpose(g, out, x, weight, bias, stride, padding, output_padding, dilation, groups):
    if not is_differentiable(g):
        return (None, None, None)
    grad_x, grad_weight, grad_bias = _convolution_backward()(
        g, x, weight, [weight.shape[1] * groups], list(stride), list(padding), list(dilation), True,
        list(output_padding), groups, [True, True, True])
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


def _class_indices(bound) -> bool:
    args = bound.arguments
    return (not args["target"].dtype.is_float and args["weight"] is None and args["label_smoothing"] == 0.0
            and args["input"].dtype.is_float)


@backward(ltorch.cross_entropy, when=_class_indices)
def _cross_entropy(g, out, x, target, weight, ignore_index, reduction, label_smoothing):
    # (softmax(x) - one_hot(target)) times each sample's cotangent; ignored samples get
    # nothing, and "mean" divides by the samples not ignored.
    class_dim = 1 if x.ndim >= 2 else 0
    classes = x.shape[class_dim]
    probabilities = ltorch.exp(ltorch.log_softmax(x, class_dim, dtype=x.dtype))
    index_shape = tuple(classes if d == class_dim else 1 for d in range(x.ndim))
    index = ltorch.reshape(ltorch.arange(classes, device=x.device), index_shape)
    picked = ltorch.unsqueeze(target, class_dim)
    one_hot = ltorch.to(ltorch.eq(picked, index), dtype=x.dtype)
    kept = ltorch.ne(picked, ignore_index)
    if reduction == "none":
        per_sample = ltorch.unsqueeze(g, class_dim)
    elif reduction == "sum":
        per_sample = g
    else:
        per_sample = ltorch.true_divide(g, ltorch.sum(ltorch.to(kept, dtype=x.dtype)))
    # Masked after scaling: with every sample ignored, "mean" divides by 0, and torch
    # still gives the ignored samples nothing.
    grad = ltorch.mul(ltorch.sub(probabilities, one_hot), per_sample)
    return (ltorch.where(kept, grad, ltorch.zeros_like(grad)),)


@backward(ltorch.logsigmoid)
def _logsigmoid(g, out, x):
    # d/dx log σ(x) = σ(-x)
    return (to_dtype(ltorch.mul(_wide(g), ltorch.sigmoid(ltorch.neg(_wide(x)))), x.dtype),)


@backward(ltorch.hardsigmoid)
def _hardsigmoid(g, out, x):
    # relu6(x + 3) / 6: slope 1/6 strictly between -3 and 3, as torch's kernel has it
    inside = prims.bitwise_and(prims.gt(x, -3.0), prims.lt(x, 3.0))
    return (_masked(prims.mul(g, 1.0 / 6.0), inside),)


@backward(ltorch.hardswish)
def _hardswish(g, out, x):
    # x · relu6(x + 3) / 6: 0 below -3, x/3 + 1/2 up to 3 (inclusive, as torch's kernel), 1 above
    xw, gw = _wide(x), _wide(g)
    middle = ltorch.mul(gw, ltorch.add(ltorch.true_divide(xw, 3.0), 0.5))
    grad = ltorch.where(ltorch.lt(xw, -3.0), ltorch.zeros_like(gw), ltorch.where(ltorch.le(xw, 3.0), middle, gw))
    return (to_dtype(grad, x.dtype),)


def _spread_reduction(g, like, reduction: str):
    """The cotangent of a reduced loss, per element of `like`."""
    if reduction == "none":
        return g
    share = ltorch.true_divide(g, like.numel) if reduction == "mean" else g
    return ltorch.expand(share, like.shape)


def _weight_grad(weight, unweighted, g_spread):
    """A weight's gradient: the unweighted loss times the cotangent, summed to its shape."""
    if not is_differentiable(weight):
        return None
    return sum_to(to_dtype(ltorch.mul(unweighted, g_spread), weight.dtype), weight.shape)


@backward(ltorch.binary_cross_entropy_with_logits)
def _bce_with_logits(g, out, x, target, weight, reduction, pos_weight):
    # d/dx = (1 - t) - σ(-x)·(1 + (p - 1)·t), d/dt = -x - (p - 1)·log σ(x), times the
    # weight; d/dweight = the unweighted loss, d/dp = -t·log σ(x) times the weight.
    spread = _spread_reduction(g, x, reduction)
    gw = ltorch.mul(spread, weight) if weight is not None else spread
    log_sigmoid = ltorch.logsigmoid(x)
    rest = ltorch.sigmoid(ltorch.neg(x))
    scale = ltorch.add(ltorch.mul(ltorch.sub(pos_weight, 1), target), 1) if pos_weight is not None else None
    grad_x = ltorch.rsub(target, 1)
    grad_x = ltorch.sub(grad_x, rest if scale is None else ltorch.mul(rest, scale))
    grad_t = None
    if is_differentiable(target):
        grad_t = ltorch.neg(x)
        if pos_weight is not None:
            grad_t = ltorch.sub(grad_t, ltorch.mul(ltorch.sub(pos_weight, 1), log_sigmoid))
        grad_t = ltorch.mul(grad_t, gw)
    grad_w = grad_p = None
    if is_differentiable(weight):
        weighted_log = log_sigmoid if scale is None else ltorch.mul(log_sigmoid, scale)
        grad_w = _weight_grad(weight, ltorch.sub(ltorch.mul(ltorch.rsub(target, 1), x), weighted_log), spread)
    if is_differentiable(pos_weight):
        grad_p = _weight_grad(pos_weight, ltorch.neg(ltorch.mul(target, log_sigmoid)), gw)
    return ltorch.mul(grad_x, gw), grad_t, grad_w, None, grad_p


@backward(ltorch.binary_cross_entropy)
def _bce(g, out, x, target, weight, reduction):
    # torch's: (x - t) / max(x·(1 - x), 1e-12) for the input; for the target, the
    # difference of the two logs the loss reads, each at least -100; for the weight, the
    # unweighted loss.
    spread = _spread_reduction(g, x, reduction)
    gw = ltorch.mul(spread, weight) if weight is not None else spread
    denominator = ltorch.clamp(ltorch.mul(x, ltorch.rsub(x, 1)), min=1e-12)
    grad_x = ltorch.mul(ltorch.true_divide(ltorch.sub(x, target), denominator), gw)
    log_x = ltorch.clamp(ltorch.log(x), min=-100.0)
    log_rest = ltorch.clamp(ltorch.log1p(ltorch.neg(x)), min=-100.0)
    grad_t = ltorch.mul(ltorch.sub(log_rest, log_x), gw) if is_differentiable(target) else None
    unweighted = ltorch.sub(ltorch.mul(ltorch.sub(target, 1), log_rest), ltorch.mul(target, log_x))
    return grad_x, grad_t, _weight_grad(weight, unweighted, spread)


def _nearest_at_the_same_size(bound) -> bool:
    args = bound.arguments
    x, scale = args["input"], args["scale_factor"]
    if args["mode"] != "nearest" or scale is None or args["recompute_scale_factor"]:
        return False
    scales = scale if isinstance(scale, (tuple, list)) else (scale,) * (x.ndim - 2)
    sizes = [math.floor(s * f) for s, f in zip(x.shape[2:], scales, strict=False)]
    return sizes == list(x.shape[2:]) and any(f != 1 for f in scales)


@backward(ltorch.interpolate, when=_nearest_at_the_same_size)
def _interpolate_nearest_same_size(g, out, x, size, scale_factor, mode, align_corners, recompute_scale_factor):
    # Every other call differentiates through the decomposition (the cotangent added at
    # each source index). Here torch's backward kernel passes the cotangent through as
    # if no index repeated, which is not the derivative of its forward.
    raise NotDifferentiable("nearest interpolation by a scale_factor that keeps the size: torch's backward "
                            "kernel does not differentiate its own forward there, so no gradient would match it")


def _adaptive_max_pool_rules(dims: int):
    """Adaptive max pooling's gradient goes to the element torch picks in each window, as
    max pooling's does: the indices (of the flattened spatial dims) computed again from
    the saved input, the cotangent added there."""
    with_indices = getattr(ltorch, f"adaptive_max_pool{dims}d_with_indices")

    def scattered(g, x, indices):
        lead = x.shape[:-dims]
        flat = lambda t, shape: ltorch.reshape(t, (*lead, math.prod(shape[-dims:])))  # noqa: E731
        grad = ltorch.scatter_add(flat(zeros_like(x), x.shape), -1, flat(indices, indices.shape), flat(g, g.shape))
        return ltorch.reshape(grad, x.shape)

    def values_rule(g, out, x, output_size):
        if not is_differentiable(g):
            return (None,)
        return (scattered(g, x, with_indices(x, output_size)[1]),)

    def pair_rule(g, out, x, output_size):
        values_grad = g[0]
        return (None,) if values_grad is None else (scattered(values_grad, x, out[1]),)

    backward(getattr(ltorch, f"adaptive_max_pool{dims}d"))(values_rule)
    backward(with_indices)(pair_rule)


for _dims in (1, 2, 3):
    _adaptive_max_pool_rules(_dims)
