"""Losses: nll_loss, cross_entropy (class indices or probabilities, label smoothing) and
mse_loss, composed the way torch composes them so that half precision rounds alike."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

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
