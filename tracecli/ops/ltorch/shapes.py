"""Shape operations: reshape/view, permute, transpose, unsqueeze, squeeze, expand, cat."""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import torch

from tracecli.ops import prims
from tracecli.ops.ltorch._base import broadcast_to, convert, expect_tensor, shape_arg, symbol
from tracecli.ops.promotion import ShapeError, canonical_dim, infer_shape, result_type


@symbol(torch.reshape)
def reshape(input, shape):
    """the same elements in a new shape (one dimension may be -1)"""
    input = expect_tensor(input, "reshape")
    shape = infer_shape(shape_arg((shape,)), input.numel)
    return input if shape == input.shape else prims.reshape(input, shape)


@symbol(torch.permute)
def permute(input, dims):
    """reorder dimensions"""
    input = expect_tensor(input, "permute")
    perm = tuple(canonical_dim(d, input.ndim) for d in shape_arg((dims,)))
    if sorted(perm) != list(range(input.ndim)):
        raise ShapeError(f"permute: {list(dims)} is not a permutation of {input.ndim} dimensions")
    return input if perm == tuple(range(input.ndim)) else prims.transpose(input, perm)


@symbol(torch.transpose)
def transpose(input, dim0, dim1):
    """swap two dimensions"""
    input = expect_tensor(input, "transpose")
    d0, d1 = canonical_dim(dim0, input.ndim), canonical_dim(dim1, input.ndim)
    if d0 == d1 or input.ndim < 2:
        return input
    perm = list(range(input.ndim))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return prims.transpose(input, tuple(perm))


@symbol(torch.unsqueeze)
def unsqueeze(input, dim):
    """insert a dimension of size 1"""
    input = expect_tensor(input, "unsqueeze")
    d = canonical_dim(dim, input.ndim + 1)
    return prims.reshape(input, input.shape[:d] + (1,) + input.shape[d:])


@symbol(torch.squeeze)
def squeeze(input, dim=None):
    """remove dimensions of size 1 (all, or the given ones)"""
    input = expect_tensor(input, "squeeze")
    if dim is None:
        dims = {i for i, d in enumerate(input.shape) if d == 1}
    else:
        dims = {canonical_dim(d, input.ndim) for d in ((dim,) if isinstance(dim, int) else dim)}
        dims = {d for d in dims if input.ndim and input.shape[d] == 1}
    if not dims:
        return input
    return prims.reshape(input, tuple(d for i, d in enumerate(input.shape) if i not in dims))


@symbol(torch.Tensor.expand)
def expand(input, *sizes):
    """broadcast to sizes (-1 keeps a dimension)"""
    input = expect_tensor(input, "expand")
    sizes = shape_arg(sizes)
    offset = len(sizes) - input.ndim
    if offset < 0:
        raise ShapeError(f"expand: cannot expand {list(input.shape)} to fewer dimensions {list(sizes)}")
    target = tuple(
        input.shape[i - offset] if s == -1 and i >= offset else s for i, s in enumerate(sizes)
    )
    if any(s < 0 for s in target):
        raise ShapeError(f"expand: -1 is not allowed for a new leading dimension in {list(sizes)}")
    return broadcast_to(input, target)


@symbol(torch.cat)
def cat(tensors, dim=0):
    """concatenate along dim, promoting dtypes"""
    tensors = [expect_tensor(t, "cat") for t in tensors]
    # torch skips legacy empty 1-D tensors beside others.
    kept = [t for t in tensors if t.shape != (0,)] or tensors[:1]
    if not kept:
        raise ShapeError("cat needs at least one tensor")
    # ... but still promotes over them: cat([f64[0], f32[2, 3]]) is float64.
    dtype = result_type(*tensors)
    d = canonical_dim(dim, kept[0].ndim)
    kept = [convert(t, dtype) for t in kept]
    return kept[0] if len(kept) == 1 else prims.cat(kept, d)
