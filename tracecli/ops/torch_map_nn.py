"""torch callables mapped to the neural-network ltorch symbols (see torch_map).

nn.Module classes (nn.Embedding, nn.Dropout, nn.Conv2d, nn.MaxPool2d, nn.RMSNorm,
nn.CrossEntropyLoss, ...) call the torch.nn.functional functions mapped here, which is
what the tracer intercepts.

Forms that ltorch does not model are recorded as opaque calls of the original torch
callable (they run as torch does); forms that would change state the trace cannot see
(in-place updates of running statistics or of the input) are refused with a message.
"""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch.nn import _reduction

from tracecli.ops import ltorch
from tracecli.ops.ltorch.nn import check_probability
from tracecli.ops.opaque import opaque_symbol
from tracecli.ops.promotion import ShapeError


def _opaque(func: Callable, *args, **kwargs):
    """Record the call as an opaque `torch.*` symbol: what torch_map's OPAQUE does, which
    this module cannot import (torch_map imports it)."""
    return opaque_symbol(func)(*args, **kwargs)


def _legacy_reduction(size_average, reduce, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        return _reduction.legacy_get_string(size_average, reduce)
    return reduction


# --- embedding ------------------------------------------------------------------------------


def _embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
               sparse=False):
    if max_norm is not None:
        # Renormalises rows of the weight in place before the lookup: left to torch.
        return _opaque(F.embedding, input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)
    return ltorch.embedding(input, weight, padding_idx)


def _torch_embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    # torch.embedding takes the weight first; -1 is its "no padding index".
    return ltorch.embedding(indices, weight, None if padding_idx == -1 else padding_idx)


# --- dropout --------------------------------------------------------------------------------


def _dropout(input, p=0.5, training=True, inplace=False):
    check_probability(p, "dropout")
    if not training or p == 0:
        return input  # the identity: nothing to record
    if inplace:
        raise ShapeError("dropout(..., inplace=True) in training mode overwrites its input; in-place dropout is "
                         "not traced (use inplace=False)")
    return ltorch.dropout(input, p)


def _torch_dropout(input, p, train):
    return _dropout(input, p, train)


def _feature_dropout(func: Callable, training_default: bool):
    """dropout1d/2d/3d and the alpha dropouts: the identity outside training; in training
    their masks (per channel, or with alpha scaling) are left to torch."""

    def adapter(input, p=0.5, training=training_default, inplace=False):
        check_probability(p, func.__name__)
        if not training or p == 0:
            return input
        return _opaque(func, input, p, training, inplace)

    return adapter


# --- normalisations -------------------------------------------------------------------------


def _batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
                eps=1e-05):
    return ltorch.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def _torch_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    return ltorch.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def _constant_pad_nd(input, pad, value=0):
    return ltorch.pad(input, pad, "constant", value)


def _torch_group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    return ltorch.group_norm(input, num_groups, weight, bias, eps)


# --- pooling --------------------------------------------------------------------------------


def _max_pool(sym, func: Callable):
    def adapter(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
        if return_indices:
            return _opaque(func, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)
        return sym(input, kernel_size, stride, padding, dilation, ceil_mode)

    return adapter


def _torch_max_pool(sym):
    # torch.max_pool1d/2d: stride=[] means the kernel size, as None does in F.
    def adapter(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        return sym(input, kernel_size, stride or None, padding, dilation, ceil_mode)

    return adapter


# --- losses ---------------------------------------------------------------------------------


def _cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                   reduction="mean", label_smoothing=0.0):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return ltorch.cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing)


def _nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return ltorch.nll_loss(input, target, weight, ignore_index, reduction)


def _mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return ltorch.mse_loss(input, target, reduction, weight)


FUNCTIONS: dict[Callable, Callable] = {
    F.embedding: _embedding, torch.embedding: _torch_embedding,
    F.dropout: _dropout, torch.dropout: _torch_dropout,
    F.dropout1d: _feature_dropout(F.dropout1d, True), F.dropout2d: _feature_dropout(F.dropout2d, True),
    F.dropout3d: _feature_dropout(F.dropout3d, True), F.alpha_dropout: _feature_dropout(F.alpha_dropout, False),
    F.feature_alpha_dropout: _feature_dropout(F.feature_alpha_dropout, False),
    F.scaled_dot_product_attention: ltorch.scaled_dot_product_attention,
    F.rms_norm: ltorch.rms_norm, torch.rms_norm: ltorch.rms_norm,
    F.batch_norm: _batch_norm, torch.batch_norm: _torch_batch_norm,
    F.group_norm: ltorch.group_norm, torch.group_norm: _torch_group_norm,
    # F.conv1d is torch.conv1d (one object), and so on.
    F.conv1d: ltorch.conv1d, F.conv2d: ltorch.conv2d, F.conv3d: ltorch.conv3d,
    F.pad: ltorch.pad, torch._C._nn.pad: ltorch.pad,
    torch.constant_pad_nd: _constant_pad_nd,
    F.max_pool1d: _max_pool(ltorch.max_pool1d, F.max_pool1d_with_indices),
    F.max_pool2d: _max_pool(ltorch.max_pool2d, F.max_pool2d_with_indices),
    torch.max_pool1d: _torch_max_pool(ltorch.max_pool1d), torch.max_pool2d: _torch_max_pool(ltorch.max_pool2d),
    F.avg_pool1d: ltorch.avg_pool1d, F.avg_pool2d: ltorch.avg_pool2d,
    F.adaptive_avg_pool1d: ltorch.adaptive_avg_pool1d, F.adaptive_avg_pool2d: ltorch.adaptive_avg_pool2d,
    F.cross_entropy: _cross_entropy, F.nll_loss: _nll_loss, F.mse_loss: _mse_loss,
}
METHODS: dict[str, Callable] = {}
