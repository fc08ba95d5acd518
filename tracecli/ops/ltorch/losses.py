"""Losses: nll_loss, cross_entropy (class indices or probabilities, label smoothing),
mse_loss and the elementwise losses (l1, smooth_l1, huber, binary cross entropy with and
without logits, kl_div, soft margin, margin ranking, hinge embedding, poisson nll),
composed the way ATen composes them so that half precision rounds alike."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch.nn import _reduction

from tracecli.core import dtypes
from tracecli.core.dims import Dim
from tracecli.ops import prims
from tracecli.ops.autocast import Autocast, Policy, everywhere
from tracecli.ops.ltorch import elementwise as ew
from tracecli.ops.ltorch import reductions as red
from tracecli.ops.ltorch._base import compute_dtype, convert, expect_tensor, symbol
from tracecli.ops.promotion import ShapeError
from tracecli.ops.torch_bridge import torch_dtype

_REDUCTIONS = ("none", "mean", "sum")


def _legacy_reduction(size_average, reduce, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        return _reduction.legacy_get_string(size_average, reduce)
    return reduction


def _check_reduction(reduction: str, op: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ShapeError(f"{op}: {reduction!r} is not a valid value for reduction (none, mean or sum)")


def _class_dim(input) -> int:
    return 0 if input.ndim == 1 else 1


def _check_class_target(input, target, weight, op: str) -> None:
    if not input.dtype.is_float:
        raise ShapeError(f"{op} needs a floating point input, got {input.dtype.name}")
    if input.ndim == 0:
        raise ShapeError(f"{op} needs an input with a class dimension")
    if target.dtype not in (dtypes.int64, dtypes.uint8):
        raise ShapeError(f"{op}: expected target dtype to be int64 or uint8, got {target.dtype.name}")
    class_dim = _class_dim(input)
    expected = input.shape[:class_dim] + input.shape[class_dim + 1 :]
    if target.shape != expected:
        raise ShapeError(f"{op}: target {list(target.shape)} does not match input {list(input.shape)} "
                         f"(expected {list(expected)})")
    if weight is not None:
        weight = expect_tensor(weight, op)
        if weight.dtype != input.dtype or weight.shape != (input.shape[class_dim],):
            raise ShapeError(f"{op}: weight must be a {input.dtype.name} tensor of shape [{input.shape[class_dim]}], "
                             f"got {weight.dtype.name}{list(weight.shape)}")


def _one_hot(target, like, class_dim: int):
    """target == c at each class c of `like`'s class dimension, as bool of like's shape."""
    classes = prims.iota(like.shape[class_dim], 0, 1, device=like.device, dtype=dtypes.int64)
    rest = tuple(d for d in range(like.ndim) if d != class_dim)
    target = convert(target, dtypes.int64)
    return prims.eq(prims.broadcast_in_dim(target, like.shape, rest), prims.broadcast_in_dim(classes, like.shape,
                                                                                            (class_dim,)))


def _pick(values, hot, class_dim: int):
    """The entry of `values` at each target class: a sum with one term, so exact."""
    return prims.sum(prims.where(hot, values, 0.0), (class_dim,))


def _target_weights(target, weight, hot, valid, like, class_dim: int):
    """weight[target] where the target counts, else 0 (1 where it counts without weights)."""
    if weight is None:
        return convert(valid, like.dtype)
    per_class = prims.broadcast_in_dim(convert(weight, like.dtype), like.shape, (class_dim,))
    return prims.where(valid, _pick(per_class, hot, class_dim), 0.0)


def _nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    return nll_loss(input, target, weight, ignore_index, _legacy_reduction(size_average, reduce, reduction))


@symbol(F.nll_loss, adapter=_nll_loss, autocast=everywhere(Policy.FP32))
def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """-weight[t] * input[t] per target t (0 where t is ignore_index), reduced"""
    input, target = expect_tensor(input, "nll_loss"), expect_tensor(target, "nll_loss")
    _check_class_target(input, target, weight, "nll_loss")
    _check_reduction(reduction, "nll_loss")
    class_dim = _class_dim(input)
    x = convert(input, compute_dtype(input.dtype))
    hot = _one_hot(target, x, class_dim)
    valid = prims.ne(convert(target, dtypes.int64), int(ignore_index))
    weights = _target_weights(target, weight, hot, valid, x, class_dim)
    # Ignored targets give 0, whatever the input holds there (an ignored class may be -inf).
    losses = prims.where(valid, prims.neg(prims.mul(_pick(x, hot, class_dim), weights)), 0.0)
    if reduction == "none":
        return convert(losses, input.dtype)
    every = tuple(range(losses.ndim))
    total = prims.sum(losses, every)
    if reduction == "mean":
        # Divided by the total weight of the counted targets: NaN when none counts, as in torch.
        total = prims.div(total, prims.sum(weights, every))
    return convert(total, input.dtype)


def _probability_loss(logp, target, weight, reduction, label_smoothing, class_dim):
    """torch's cross_entropy for class probabilities: -sum(logp * target * weight)."""
    if target.shape != logp.shape:
        raise ShapeError(f"cross_entropy: probability target {list(target.shape)} must match input {list(logp.shape)}")
    classes = logp.shape[class_dim]
    if label_smoothing > 0.0:
        target = ew.add(ew.mul(target, 1.0 - label_smoothing), _per_class(label_smoothing, classes, target))
    product = ew.mul(logp, target)
    if weight is not None:
        product = ew.mul(product, prims.broadcast_in_dim(weight, logp.shape, (class_dim,)))
    if reduction == "none":
        return ew.neg(red.sum(product, class_dim))
    total = ew.neg(red.sum(product))
    return ew.true_divide(total, logp.numel // classes) if reduction == "mean" else total


def _smoothed_loss(logp, target, weight, ignore_index, reduction, label_smoothing, class_dim):
    """torch's cross_entropy_loss_label_smoothing: the NLL blended with the mean over classes."""
    nll = nll_loss(logp, target, weight, ignore_index, reduction)
    classes = logp.shape[class_dim]
    if weight is not None:
        smooth = ew.neg(red.sum(ew.mul(logp, prims.broadcast_in_dim(weight, logp.shape, (class_dim,))), class_dim))
    else:
        smooth = ew.neg(red.sum(logp, class_dim))
    ignored = prims.eq(convert(target, dtypes.int64), int(ignore_index))
    smooth = ew.where(ignored, 0.0, smooth)
    if reduction == "mean":
        valid = prims.logical_not(ignored)
        if weight is not None:
            hot = _one_hot(target, logp, class_dim)
            counted = red.sum(_target_weights(target, weight, hot, valid, logp, class_dim))
        else:
            counted = red.sum(valid)
        smooth = ew.true_divide(red.sum(smooth), counted)
    elif reduction == "sum":
        smooth = red.sum(smooth)
    return ew.add(ew.mul(nll, 1.0 - label_smoothing), ew.mul(smooth, _per_class(label_smoothing, classes, smooth)))


def _per_class(amount: float, classes, like):
    """amount / classes: a number for a static class count; for a symbolic one a zero-dim
    tensor in `like`'s dtype computed from the count each call has (a float of the size
    would pin it to its example)."""
    if not isinstance(classes, Dim):
        return amount / classes
    return prims.div(prims.full((), amount, device=like.device, dtype=like.dtype), classes)


def _cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                   reduction="mean", label_smoothing=0.0):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing)


# CUDA has no rule for cross_entropy: the log_softmax and nll_loss it is made of have theirs.
@symbol(F.cross_entropy, adapter=_cross_entropy, autocast=Autocast(cpu=Policy.FP32))
def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """nll_loss(log_softmax(input)) for class indices, -sum(log_softmax(input) * target) for probabilities"""
    input, target = expect_tensor(input, "cross_entropy"), expect_tensor(target, "cross_entropy")
    _check_reduction(reduction, "cross_entropy")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ShapeError(f"cross_entropy: label_smoothing must be between 0.0 and 1.0, got {label_smoothing}")
    if not input.dtype.is_float or input.ndim == 0:
        raise ShapeError(f"cross_entropy needs a floating point input with a class dimension, got "
                         f"{input.dtype.name}{list(input.shape)}")
    class_dim = _class_dim(input)
    if target.dtype.is_float:
        if weight is not None and expect_tensor(weight, "cross_entropy").shape != (input.shape[class_dim],):
            raise ShapeError(f"cross_entropy: weight must have shape [{input.shape[class_dim]}]")
        logp = red.log_softmax(input, class_dim, dtype=input.dtype)
        return _probability_loss(logp, target, weight, reduction, float(label_smoothing), class_dim)
    _check_class_target(input, target, weight, "cross_entropy")
    # In the input's dtype, as torch asks for: CUDA autocast then leaves it alone.
    logp = red.log_softmax(input, class_dim, dtype=input.dtype)
    if label_smoothing > 0.0:
        return _smoothed_loss(logp, target, weight, ignore_index, reduction, float(label_smoothing), class_dim)
    return nll_loss(logp, target, weight, ignore_index, reduction)


def _mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    return mse_loss(input, target, _legacy_reduction(size_average, reduce, reduction), weight)


@symbol(F.mse_loss, adapter=_mse_loss, autocast=everywhere(Policy.FP32))
def mse_loss(input, target, reduction="mean", weight=None):
    """(input - target)², optionally weighted, reduced"""
    input, target = expect_tensor(input, "mse_loss"), expect_tensor(target, "mse_loss")
    _check_reduction(reduction, "mse_loss")
    squared = ew.pow(ew.sub(input, target), 2)
    if not squared.dtype.is_float:
        raise ShapeError(f"mse_loss needs a floating point input or target, got {input.dtype.name} and "
                         f"{target.dtype.name}")
    if weight is not None:
        if expect_tensor(weight, "mse_loss").shape != input.shape:
            raise ShapeError(f"mse_loss: weights {list(weight.shape)} and input {list(input.shape)} must have the same size")
        squared = ew.mul(squared, weight)
        if reduction == "mean":
            return ew.true_divide(red.sum(squared), red.sum(weight))
    if reduction == "none":
        return squared
    return red.mean(squared) if reduction == "mean" else red.sum(squared)


# --- elementwise losses -------------------------------------------------------------------------
# Each is ATen's formula (Loss.cpp, LossNLL.cpp) over the broadcast input and target, then
# reduced by apply_loss_reduction: mean, sum or none.


def _reduced(loss, reduction: str, op: str):
    _check_reduction(reduction, op)
    if reduction == "none":
        return loss
    return red.mean(loss) if reduction == "mean" else red.sum(loss)


def _float_pair(input, target, op: str, *, same_shape: str | None = None):
    input, target = expect_tensor(input, op), expect_tensor(target, op)
    if same_shape is not None and input.shape != target.shape:
        raise ShapeError(same_shape.format(target=list(target.shape), input=list(input.shape)))
    if not (input.dtype.is_float or target.dtype.is_float):
        raise ShapeError(f"{op} needs a floating point input or target, got {input.dtype.name} and {target.dtype.name}")
    return input, target


def _weighted(loss, weight, reduction: str, op: str, *, by_weights: bool = True):
    """A loss with per-element weights. F's `mean` divides by the weights' sum for
    l1_loss, by the element count for huber_loss."""
    if expect_tensor(weight, op).shape != loss.shape:
        raise ShapeError(f"{op}: weights {list(weight.shape)} and input {list(loss.shape)} must have the same size")
    loss = ew.mul(loss, weight)
    if reduction == "mean" and by_weights:
        return ew.true_divide(red.sum(loss), red.sum(weight))
    return _reduced(loss, reduction, op)


def _l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    return l1_loss(input, target, _legacy_reduction(size_average, reduce, reduction), weight)


@symbol(F.l1_loss, adapter=_l1_loss, autocast=everywhere(Policy.FP32))
def l1_loss(input, target, reduction="mean", weight=None):
    """|input - target|, optionally weighted, reduced"""
    input, target = _float_pair(input, target, "l1_loss")
    loss = ew.abs(ew.sub(input, target))
    return _reduced(loss, reduction, "l1_loss") if weight is None else _weighted(loss, weight, reduction, "l1_loss")


def _smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    return smooth_l1_loss(input, target, _legacy_reduction(size_average, reduce, reduction), beta)


@symbol(F.smooth_l1_loss, adapter=_smooth_l1_loss, autocast=everywhere(Policy.FP32))
def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """0.5 z² / beta where z = |input - target| < beta, else z - 0.5 beta; reduced"""
    input, target = _float_pair(input, target, "smooth_l1_loss")
    if beta < 0:
        raise ShapeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:
        return l1_loss(input, target, reduction)
    z, beta, dtype = _in_compute_type(input, target, beta)
    quadratic = ew.true_divide(ew.mul(ew.mul(z, 0.5), z), beta)
    loss = convert(ew.where(ew.lt(z, beta), quadratic, ew.sub(z, 0.5 * beta)), dtype)
    return _reduced(loss, reduction, "smooth_l1_loss")


@symbol(F.huber_loss, autocast=everywhere(Policy.FP32))
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 z² where z = |input - target| < delta, else delta (z - 0.5 delta); reduced"""
    input, target = _float_pair(input, target, "huber_loss")
    if delta <= 0:
        raise ShapeError("huber_loss does not support non-positive values for delta.")
    z, delta, dtype = _in_compute_type(input, target, delta)
    loss = ew.where(ew.lt(z, delta), ew.mul(ew.mul(z, 0.5), z), ew.mul(ew.sub(z, 0.5 * delta), delta))
    loss = convert(loss, dtype)
    if weight is not None:
        return _weighted(loss, weight, reduction, "huber_loss", by_weights=False)
    return _reduced(loss, reduction, "huber_loss")


def _in_compute_type(input, target, parameter: float):
    """|input - target| and `parameter` as ATen's pointwise loss kernels hold them: the
    parameter in the operands' type, the arithmetic in its compute type (float32 for
    half precision), rounded once at the end (to the returned dtype)."""
    dtype = ew.sub(input, target).dtype
    parameter = torch.tensor(parameter, dtype=torch_dtype(dtype)).item()
    wide = compute_dtype(dtype)
    return ew.abs(ew.sub(convert(input, wide), convert(target, wide))), parameter, dtype


def _binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    return binary_cross_entropy(input, target, weight, _legacy_reduction(size_average, reduce, reduction))


@symbol(F.binary_cross_entropy, adapter=_binary_cross_entropy, autocast=Autocast(cpu=Policy.FP32))
def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """-(target log(input) + (1 - target) log(1 - input)), each log at least -100; reduced"""
    input, target = _float_pair(input, target, "binary_cross_entropy", same_shape=(
        "Using a target size ({target}) that is different to the input size ({input}) is deprecated. Please ensure "
        "they have the same size."))
    if input.dtype != target.dtype:
        raise ShapeError(f"binary_cross_entropy expects input and target of one dtype, got {input.dtype.name} and "
                         f"{target.dtype.name}")
    # Eager refuses probabilities outside [0, 1] when it runs: so does the trace.
    prims.check_all(prims.bitwise_and(prims.ge(input, 0.0), prims.le(input, 1.0)))
    log_input = prims.maximum(prims.log(input), -100.0)
    log_rest = prims.maximum(prims.log1p(prims.neg(input)), -100.0)
    loss = ew.sub(ew.mul(ew.sub(target, 1), log_rest), ew.mul(target, log_input))
    if weight is not None:
        loss = ew.mul(loss, weight)
    return _reduced(loss, reduction, "binary_cross_entropy")


def _log_sigmoid(x):
    """min(x, 0) - log1p(exp(-|x|)), ATen's log_sigmoid."""
    return prims.sub(prims.minimum(x, 0.0), prims.log1p(prims.exp(prims.neg(prims.abs(x)))))


def _bce_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
    return binary_cross_entropy_with_logits(input, target, weight, _legacy_reduction(size_average, reduce, reduction),
                                            pos_weight)


@symbol(F.binary_cross_entropy_with_logits, adapter=_bce_with_logits, autocast=everywhere(Policy.FP32))
def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean", pos_weight=None):
    """(1 - target) input - log_sigmoid(input) (weighted by 1 + (pos_weight - 1) target); reduced"""
    input, target = _float_pair(input, target, "binary_cross_entropy_with_logits", same_shape=(
        "Target size ({target}) must be the same as input size ({input})"))
    log_sigmoid = _log_sigmoid(convert(input, compute_dtype(input.dtype)))
    log_sigmoid = convert(log_sigmoid, input.dtype)
    if pos_weight is not None:
        log_sigmoid = ew.mul(log_sigmoid, ew.add(ew.mul(ew.sub(pos_weight, 1), target), 1))
    loss = ew.sub(ew.mul(ew.rsub(target, 1), input), log_sigmoid)
    if weight is not None:
        loss = ew.mul(loss, weight)
    return _reduced(loss, reduction, "binary_cross_entropy_with_logits")


def _kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    return kl_div(input, target, _legacy_reduction(size_average, reduce, reduction), log_target)


@symbol(F.kl_div, adapter=_kl_div, autocast=everywhere(Policy.FP32))
def kl_div(input, target, reduction="mean", log_target=False):
    """target (log target - input) pointwise (0 where target is 0); reduced, `batchmean` per batch row"""
    input, target = expect_tensor(input, "kl_div"), expect_tensor(target, "kl_div")
    if log_target:
        loss = ew.mul(ew.exp(target), ew.sub(target, input))
    else:
        # xlogy(target, target): 0 where the target is 0, nan stays nan.
        x_log_x = ew.where(ew.eq(target, 0), 0.0, ew.mul(target, ew.log(target)))
        loss = ew.sub(x_log_x, ew.mul(target, input))
    if reduction == "batchmean":
        summed = red.sum(loss)
        return summed if input.ndim == 0 else ew.true_divide(summed, input.shape[0])
    return _reduced(loss, reduction, "kl_div")


def _soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return soft_margin_loss(input, target, _legacy_reduction(size_average, reduce, reduction))


@symbol(F.soft_margin_loss, adapter=_soft_margin_loss, autocast=everywhere(Policy.FP32))
def soft_margin_loss(input, target, reduction="mean"):
    """log(1 + exp(-target input)); reduced"""
    input, target = _float_pair(input, target, "soft_margin_loss")
    product = ew.mul(ew.neg(input), target)
    return _reduced(prims.log1p(ew.exp(product)), reduction, "soft_margin_loss")


def _margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    return margin_ranking_loss(input1, input2, target, margin, _legacy_reduction(size_average, reduce, reduction))


@symbol(F.margin_ranking_loss, adapter=_margin_ranking_loss, autocast=everywhere(Policy.FP32))
def margin_ranking_loss(input1, input2, target, margin=0.0, reduction="mean"):
    """max(0, -target (input1 - input2) + margin); reduced"""
    for t in (input1, input2, target):
        expect_tensor(t, "margin_ranking_loss")
    if not (input1.ndim == input2.ndim == target.ndim):
        raise ShapeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: "
                         f"{list(input1.shape)}, input2: {list(input2.shape)}, target: {list(target.shape)} ")
    loss = ew.add(ew.mul(ew.neg(target), ew.sub(input1, input2)), margin)
    return _reduced(ew.clamp(loss, 0), reduction, "margin_ranking_loss")


def _hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    return hinge_embedding_loss(input, target, margin, _legacy_reduction(size_average, reduce, reduction))


@symbol(F.hinge_embedding_loss, adapter=_hinge_embedding_loss, autocast=everywhere(Policy.FP32))
def hinge_embedding_loss(input, target, margin=1.0, reduction="mean"):
    """input where target is not -1, plus max(0, margin - input) where target is not 1; reduced"""
    input, target = expect_tensor(input, "hinge_embedding_loss"), expect_tensor(target, "hinge_embedding_loss")
    zeros = ew.mul(input, 0)
    margin_part = ew.where(ew.ne(target, 1), ew.clamp(ew.rsub(input, margin), 0), zeros)
    self_part = ew.where(ew.ne(target, -1), input, zeros)
    return _reduced(ew.add(margin_part, self_part), reduction, "hinge_embedding_loss")


def _poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                      reduction="mean"):
    return poisson_nll_loss(input, target, log_input, full, eps, _legacy_reduction(size_average, reduce, reduction))


@symbol(F.poisson_nll_loss, adapter=_poisson_nll_loss, autocast=everywhere(Policy.FP32))
def poisson_nll_loss(input, target, log_input=True, full=False, eps=1e-8, reduction="mean"):
    """exp(input) - target input (or input - target log(input + eps)), plus Stirling's term with full; reduced"""
    input, target = expect_tensor(input, "poisson_nll_loss"), expect_tensor(target, "poisson_nll_loss")
    _check_reduction(reduction, "poisson_nll_loss")
    if log_input:
        loss = ew.sub(ew.exp(input), ew.mul(target, input))
    else:
        loss = ew.sub(input, ew.mul(target, ew.log(ew.add(input, eps))))
    if full:
        stirling = ew.add(ew.sub(ew.mul(target, ew.log(target)), target),
                          ew.mul(ew.log(ew.mul(target, 2 * math.pi)), 0.5))
        loss = ew.add(loss, ew.where(ew.le(target, 1), 0.0, stirling))
    return _reduced(loss, reduction, "poisson_nll_loss")
