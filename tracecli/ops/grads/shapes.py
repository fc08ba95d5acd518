"""Backward rules of the shape prims and conversions: each moves the cotangent back
where the forward moved the values (and sums what broadcasting repeated)."""

from __future__ import annotations

from tracecli.core.dims import same_shape
from tracecli.ops import ltorch, prims
from tracecli.ops.grads.base import backward, is_differentiable, no_gradient, to_dtype, zeros_like
from tracecli.ops.ltorch.state import STORES


def _is_one(d) -> bool:
    return isinstance(d, int) and d == 1


@backward(prims.broadcast_in_dim)
def _broadcast_in_dim(g, out, x, shape, broadcast_dims):
    stretched = {t for d, t in zip(x.shape, broadcast_dims, strict=True) if _is_one(d) and not _is_one(shape[t])}
    summed = tuple(i for i in range(len(shape)) if i not in broadcast_dims or i in stretched)
    if summed:
        g = prims.sum(g, summed)
    return (g if same_shape(g.shape, x.shape) else prims.reshape(g, x.shape),)


@backward(prims.reshape)
def _reshape(g, out, x, shape):
    return (prims.reshape(g, x.shape),)


@backward(prims.transpose)
def _transpose(g, out, x, permutation):
    inverse = [0] * len(permutation)
    for i, p in enumerate(permutation):
        inverse[p] = i
    return (prims.transpose(g, tuple(inverse)),)


@backward(prims.flip)
def _flip(g, out, x, dims):
    return (prims.flip(g, dims),)


@backward(prims.slice)
def _slice(g, out, x, start_indices, end_indices, strides):
    return (prims.slice_scatter(zeros_like(x), g, start_indices, end_indices, strides),)


@backward(prims.slice_scatter)
def _slice_scatter(g, out, x, src, start_indices, end_indices, strides):
    grad_x = prims.slice_scatter(g, zeros_like(src), start_indices, end_indices, strides)
    return grad_x, prims.slice(g, start_indices, end_indices, strides)


@backward(prims.cat)
def _cat(g, out, tensors, dim):
    grads, offset = [], 0
    for t in tensors:
        start = tuple(offset if i == dim else 0 for i in range(g.ndim))
        end = tuple(offset + t.shape[dim] if i == dim else d for i, d in enumerate(g.shape))
        grads.append(prims.slice(g, start, end) if is_differentiable(t) else None)
        offset = offset + t.shape[dim]
    return (grads,)


@backward(prims.pad)
def _pad(g, out, x, value, padding):
    start = tuple(lo for lo, _ in padding)
    end = tuple(lo + d for (lo, _), d in zip(padding, x.shape, strict=True))
    return (prims.slice(g, start, end), None)


@backward(prims.convert_element_type)
def _convert_element_type(g, out, x, dtype):
    return (to_dtype(g, x.dtype) if is_differentiable(x) else None,)


@backward(prims.device_put)
def _device_put(g, out, x, device):
    return (g if g.device == x.device else prims.device_put(g, x.device),)


@backward(prims.clone)
def _clone(g, out, x):
    return (g,)


no_gradient(prims.full, prims.iota, prims.empty, prims.tensor, prims.linspace, prims.logspace)
# A draw shaped like a tensor reads it for its shape and layout only: as in eager, what it
# draws carries no gradient back to that tensor (`noise = torch.randn_like(latents)`).
no_gradient(prims.uniform, prims.normal, prims.bernoulli, prims.randint, prims.randperm,
            ltorch.rand_like, ltorch.randn_like, ltorch.randint_like)
# What the user detached passes no gradient back, whatever it is made of.
no_gradient(ltorch.detach)
# A store into Python state makes nothing a gradient could flow through.
no_gradient(*STORES)


@backward(ltorch.set_data_)
def _set_data(g, out, self, src):
    # A write through a detached alias is invisible to autograd: the tensor keeps its
    # place in the graph, and what was written gets nothing.
    return g, None
