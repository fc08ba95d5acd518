"""Backward rules of the indexing, scatter and matmul prims."""

from __future__ import annotations

from tracecli.ops import ltorch, prims
from tracecli.ops.grads.base import NotDifferentiable, backward, is_differentiable, sum_to, zeros_like


@backward(prims.take)
def _take(g, out, x, index, dim):
    # Indices may repeat: their cotangents add up.
    return (prims.index_put(zeros_like(x), (None,) * dim + (index,), g, True),)


@backward(prims.gather)
def _gather(g, out, x, index, dim):
    return (prims.scatter_add(zeros_like(x), index, g, dim),)


@backward(prims.index_put)
def _index_put(g, out, x, indices, values, accumulate):
    if any(i is not None and i.dtype.kind == "bool" for i in indices):
        raise NotDifferentiable("index_put with a boolean mask: its gradient depends on the mask's values")
    grad_x = g if accumulate else prims.index_put(g, indices, zeros_like(values), False)
    grad_values = None
    if is_differentiable(values):
        key = tuple(slice(None) if i is None else i for i in indices)
        grad_values = sum_to(ltorch.getitem(g, key), values.shape)
    return grad_x if is_differentiable(x) else None, None, grad_values


@backward(prims.scatter)
def _scatter(g, out, x, index, src, dim):
    grad_x = prims.scatter(g, index, zeros_like(src), dim) if is_differentiable(x) else None
    grad_src = prims.gather(g, index, dim) if is_differentiable(src) else None
    return grad_x, None, grad_src


@backward(prims.scatter_add)
def _scatter_add(g, out, x, index, src, dim):
    grad_src = prims.gather(g, index, dim) if is_differentiable(src) else None
    return (g if is_differentiable(x) else None), None, grad_src


# --- matmul -----------------------------------------------------------------------------


def _swap_last(x):
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return prims.transpose(x, perm)


@backward(prims.matmul)
def _matmul(g, out, a, b):
    # torch's 1-d operands are matrices with a unit dimension added (a row for the left
    # operand, a column for the right) and removed from the result again.
    a2 = prims.reshape(a, (1,) + a.shape) if a.ndim == 1 else a
    b2 = prims.reshape(b, b.shape + (1,)) if b.ndim == 1 else b
    if a.ndim == 1 and b.ndim == 1:
        g = prims.reshape(g, (1, 1))
    elif a.ndim == 1:
        g = prims.reshape(g, g.shape[:-1] + (1,) + g.shape[-1:])
    elif b.ndim == 1:
        g = prims.reshape(g, g.shape + (1,))
    grad_a = grad_b = None
    if is_differentiable(a):
        grad_a = sum_to(prims.matmul(g, _swap_last(b2)), a2.shape)
        grad_a = prims.reshape(grad_a, a.shape) if a.ndim == 1 else grad_a
    if is_differentiable(b):
        grad_b = sum_to(prims.matmul(_swap_last(a2), g), b2.shape)
        grad_b = prims.reshape(grad_b, b.shape) if b.ndim == 1 else grad_b
    return grad_a, grad_b


@backward(prims.scatter_reduce)
def _scatter_reduce(g, out, *args, **kwargs):
    raise NotDifferentiable("the gradient of scatter_reduce is not modelled yet")


# --- selecting by order: sort, topk, the k-th value, median, mode, max and min along a dim --
# Each gives the indices it picked: the gradient goes back exactly there, to the element
# torch picked among equal ones, never split between ties.


def _scattered(g, x, indices, dim: int, reduced: bool):
    if g is None:
        return None
    if x.ndim == 0:  # the one element picked from itself
        return prims.reshape(g, ()) if g.ndim else g
    dim = dim % x.ndim
    if reduced:  # one value per slice along dim, dim itself removed
        shape = tuple(1 if i == dim else s for i, s in enumerate(x.shape))
        g, indices = prims.reshape(g, shape), prims.reshape(indices, shape)
    return prims.scatter(zeros_like(x), indices, g, dim)


@backward(prims.sort)
def _sort(g, out, x, dim, descending, stable):
    return (_scattered(g[0], x, out[1], dim, reduced=False),)


@backward(prims.topk)
def _topk(g, out, x, k, dim, largest, sorted):  # noqa: A002
    return (_scattered(g[0], x, out[1], dim, reduced=False),)


@backward(prims.kthvalue)
def _kthvalue(g, out, x, k, dim):
    return (_scattered(g[0], x, out[1], dim, reduced=True),)


@backward(prims.median, prims.nanmedian, prims.mode)
def _picked_along(g, out, x, dim):
    return (_scattered(g[0], x, out[1], dim, reduced=True),)


@backward(ltorch.ALL["max"], ltorch.ALL["min"])
def _extremum_along(g, out, x, dim, keepdim):
    return (_scattered(g[0], x, out[1], dim, reduced=not keepdim),)


@backward(ltorch.median, ltorch.nanmedian)
def _median(g, out, x, dim, keepdim):
    if dim is not None:
        return (_scattered(g[0], x, out[1], dim, reduced=not keepdim),)
    # Over all elements torch spreads the gradient evenly over the elements equal to the
    # result (NaN counting as equal to a NaN result), as for a maximum over everything.
    value = prims.broadcast_in_dim(out, x.shape, ())
    equal = prims.bitwise_or(prims.eq(x, value), prims.bitwise_and(prims.ne(x, x), prims.ne(value, value)))
    share = prims.div(g, prims.sum(prims.convert_element_type(equal, x.dtype), tuple(range(x.ndim))))
    return (prims.where(equal, prims.broadcast_in_dim(share, x.shape, ()), zeros_like(x)),)
