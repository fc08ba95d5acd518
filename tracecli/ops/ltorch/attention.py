"""scaled_dot_product_attention, decomposed the way eager torch computes it on CPU.

Eager picks one of two CPU kernels, and their roundings differ enough to matter in half
precision, so the decomposition follows the one eager would run:

- the fused ("flash") kernel, for 4-D inputs without dropout: scores in float32 for half
  inputs, unnormalised exponentials rounded to the input dtype before the product with
  value, the softmax's division applied last;
- the composite ("math") kernel otherwise: everything in float32 for half inputs, query
  and key each scaled by sqrt(scale), a softmax that gives 0 to fully masked rows, then
  dropout on the probabilities (the same RNG draw as eager's, see ltorch.dropout).
"""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math

import torch.nn.functional as F

from tracecli.core import dtypes
from tracecli.core.dims import Dim, same_shape, statically_equal
from tracecli.ops import prims
from tracecli.ops.autocast import Policy, everywhere
from tracecli.ops.ltorch._base import broadcast_to, compute_dtype, convert, expect_tensor, symbol
from tracecli.ops.ltorch.nn import check_probability, dropout
from tracecli.ops.promotion import ShapeError, broadcast_shapes


def _check_inputs(query, key, value, attn_mask, is_causal, enable_gqa):
    for t in (query, key, value):
        expect_tensor(t, "scaled_dot_product_attention")
    if not (query.dtype == key.dtype == value.dtype) or not query.dtype.is_float:
        raise ShapeError(
            "scaled_dot_product_attention expects query, key and value of one floating point dtype, got "
            f"{query.dtype.name}, {key.dtype.name} and {value.dtype.name}"
        )
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise ShapeError("scaled_dot_product_attention expects query, key and value with at least 2 dimensions")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise ShapeError(
            f"scaled_dot_product_attention: query {list(query.shape)}, key {list(key.shape)} and value "
            f"{list(value.shape)} disagree (query and key need the same last size, key and value the same length)"
        )
    if attn_mask is not None:
        attn_mask = expect_tensor(attn_mask, "scaled_dot_product_attention")
        if attn_mask.dtype not in (dtypes.bool8, query.dtype):
            raise ShapeError(
                f"scaled_dot_product_attention: attn_mask must be bool or {query.dtype.name}, got {attn_mask.dtype.name}"
            )
    if enable_gqa:
        if min(query.ndim, key.ndim, value.ndim) < 3:
            raise ShapeError("scaled_dot_product_attention with enable_gqa needs a heads dimension (-3)")
        heads = query.shape[-3]
        if key.shape[-3] != value.shape[-3] or key.shape[-3] == 0 or heads % key.shape[-3]:
            raise ShapeError(
                f"scaled_dot_product_attention with enable_gqa: {heads} query heads cannot be shared by "
                f"{key.shape[-3]} key and {value.shape[-3]} value heads"
            )


def _repeat_heads(x, groups: int | Dim):
    """repeat_interleave(x, groups, dim=-3): each key/value head serves `groups` query heads."""
    if statically_equal(groups, 1):
        return x  # with symbolic heads the repeat stays: by one it copies, not assumes
    n = x.ndim
    expanded = x.shape[:-2] + (groups,) + x.shape[-2:]
    dims = tuple(range(n - 2)) + (n - 1, n)
    return prims.reshape(
        prims.broadcast_in_dim(x, expanded, dims), x.shape[:-3] + (x.shape[-3] * groups,) + x.shape[-2:]
    )


def _uses_fused_kernel(query, key, value, attn_mask, dropout_p, enable_gqa) -> bool:
    """Whether eager's CPU dispatch picks the fused kernel (sdp_utils_cpp's conditions)."""
    if dropout_p > 0.0 or not query.ndim == key.ndim == value.ndim == 4:
        return False
    if not query.shape[0] == key.shape[0] == value.shape[0] or query.shape[-1] != value.shape[-1]:
        return False
    if not enable_gqa and not query.shape[1] == key.shape[1] == value.shape[1]:
        return False
    if query.shape[-2] == 0 or key.shape[-2] == 0:
        return False
    if attn_mask is not None:
        batch, heads, length, source = query.shape[0], query.shape[1], query.shape[2], key.shape[2]
        if attn_mask.shape[-2] not in (1, length) or attn_mask.shape[-1] not in (1, source):
            return False
        if attn_mask.ndim == 4:
            return attn_mask.shape[0] in (1, batch) and attn_mask.shape[1] in (1, heads)
        return attn_mask.ndim == 2
    return True


def _causal_mask(scores):
    """tril(ones(L, S)): row i attends to positions up to i."""
    length, source = scores.shape[-2:]
    rows = prims.broadcast_in_dim(prims.iota(length, 0, 1, device=scores.device, dtype=dtypes.int64),
                                  (length, source), (0,))
    cols = prims.broadcast_in_dim(prims.iota(source, 0, 1, device=scores.device, dtype=dtypes.int64),
                                  (length, source), (1,))
    return prims.ge(rows, cols)


def _apply_mask(scores, attn_mask, is_causal: bool):
    """Masked positions get -inf: a bool mask keeps where True, a float mask is added; the
    causal mask (the fused kernel applies it on top of attn_mask) keeps the lower triangle."""
    if attn_mask is not None:
        shape = broadcast_shapes(scores.shape, attn_mask.shape)
        if not same_shape(shape, scores.shape):
            raise ShapeError(f"scaled_dot_product_attention: attn_mask {list(attn_mask.shape)} does not broadcast "
                             f"to the attention scores {list(scores.shape)}")
        if attn_mask.dtype == dtypes.bool8:
            scores = prims.where(broadcast_to(attn_mask, shape), scores, -math.inf)
        else:
            scores = prims.add(scores, broadcast_to(convert(attn_mask, scores.dtype), shape))
    if is_causal:
        scores = prims.where(broadcast_to(_causal_mask(scores), scores.shape), scores, -math.inf)
    return scores


def _row_max(scores):
    """The row maximum, 0 where the whole row is masked (-inf), and that condition."""
    last = (scores.ndim - 1,)
    kept = tuple(range(scores.ndim - 1))
    row_max = prims.amax(scores, last)
    masked_rows = prims.eq(row_max, -math.inf)
    row_max = prims.where(masked_rows, 0.0, row_max)
    return prims.broadcast_in_dim(row_max, scores.shape, kept), masked_rows


def _nonzero_total(total, masked_rows):
    """The softmax's denominator, 1 for a fully masked row (where it is 0): that row's 0 / 0
    would be NaN, which the result masks away but a gradient through it would not."""
    return prims.where(masked_rows, 1.0, total)


def _fused(query, key, value, attn_mask, is_causal, scale, groups):
    wide = compute_dtype(query.dtype)
    q, k, v = (convert(t, wide) for t in (query, key, value))
    k, v = _repeat_heads(k, groups), _repeat_heads(v, groups)
    scores = _scaled(prims.matmul(q, prims.transpose(k, _swap_last(k.ndim))), scale)
    scores = _apply_mask(scores, attn_mask, is_causal)
    row_max, masked_rows = _row_max(scores)
    weights = prims.exp(prims.sub(scores, row_max))
    total = _nonzero_total(prims.sum(weights, (weights.ndim - 1,)), masked_rows)
    # The kernel multiplies value by the unnormalised weights in the input's dtype.
    weights = convert(convert(weights, query.dtype), wide)
    out = prims.matmul(weights, v)
    kept = tuple(range(out.ndim - 1))
    out = prims.div(out, prims.broadcast_in_dim(total, out.shape, kept))
    # A fully masked row has no weights (0 / 0): the kernel gives it zeros.
    out = prims.where(prims.broadcast_in_dim(masked_rows, out.shape, kept), 0.0, out)
    return convert(out, query.dtype)


def _composite(query, key, value, attn_mask, dropout_p, is_causal, scale, groups):
    wide = compute_dtype(query.dtype)
    q, k, v = (convert(t, wide) for t in (query, key, value))
    k, v = _repeat_heads(k, groups), _repeat_heads(v, groups)
    if isinstance(scale, Dim):
        q = _scaled(q, scale, root=True)
        scores = prims.matmul(q, _scaled(prims.transpose(k, _swap_last(k.ndim)), scale, root=True))
    else:
        root = math.sqrt(abs(scale))
        q = prims.mul(q, root if scale >= 0 else -root)
        scores = prims.matmul(q, prims.mul(prims.transpose(k, _swap_last(k.ndim)), root))
    scores = _apply_mask(scores, attn_mask, is_causal)
    row_max, masked_rows = _row_max(scores)
    weights = prims.exp(prims.sub(scores, row_max))
    last = (weights.ndim - 1,)
    kept = tuple(range(weights.ndim - 1))
    total = _nonzero_total(prims.sum(weights, last), masked_rows)
    probs = prims.div(weights, prims.broadcast_in_dim(total, weights.shape, kept))
    # torch's _safe_softmax: a fully masked row attends to nothing (0, not NaN).
    probs = prims.where(prims.broadcast_in_dim(masked_rows, probs.shape, kept), 0.0, probs)
    if dropout_p > 0.0:
        probs = dropout(probs, dropout_p)
    return convert(prims.matmul(probs, v), query.dtype)


def _scaled(x, scale: float | Dim, root: bool = False):
    """x * scale, or x * sqrt(scale) with `root`. A symbolic head size E stands for the
    default scale 1/sqrt(E), computed in x's dtype from E as each call gives it (eager
    computes it in double: they may differ in the last bit)."""
    if not isinstance(scale, Dim):
        return prims.mul(x, scale)
    size = prims.full((), scale, device=x.device, dtype=x.dtype)
    factor = prims.rsqrt(prims.sqrt(size) if root else size)
    return prims.mul(x, prims.broadcast_in_dim(factor, x.shape, ()))


def _swap_last(ndim: int) -> tuple[int, ...]:
    return tuple(range(ndim - 2)) + (ndim - 1, ndim - 2)


@symbol(F.scaled_dot_product_attention, autocast=everywhere(Policy.LOWER))
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(query @ key.T * scale + mask) @ value, with dropout on the probabilities"""
    _check_inputs(query, key, value, attn_mask, is_causal, enable_gqa)
    dropout_p = check_probability(dropout_p, "scaled_dot_product_attention dropout")
    if scale is not None:
        scale = float(scale)
    elif isinstance(query.shape[-1], Dim):
        scale = query.shape[-1]  # 1/sqrt of it, computed in the trace: see _scaled
    else:
        scale = 1.0 / math.sqrt(query.shape[-1])
    groups = query.shape[-3] // key.shape[-3] if enable_gqa else 1
    if _uses_fused_kernel(query, key, value, attn_mask, dropout_p, enable_gqa):
        return _fused(query, key, value, attn_mask, is_causal, scale, groups)
    if is_causal and attn_mask is not None:
        # Only the fused kernel combines the two; the composite one refuses.
        raise ShapeError("scaled_dot_product_attention: attn_mask cannot be given together with is_causal=True "
                         "here (eager's composite kernel refuses it)")
    return _composite(query, key, value, attn_mask, dropout_p, is_causal, scale, groups)
