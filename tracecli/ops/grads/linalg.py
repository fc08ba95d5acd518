"""Backward rules of the linear algebra prims that are solves in disguise: the inverse,
a linear solve and the log-determinant, each through a solve with the transposed
matrix, as torch's own formulas (real matrices; a complex one is refused before here)."""

from __future__ import annotations

from tracecli.ops import ltorch, prims
from tracecli.ops.grads.base import backward, is_differentiable, sum_to


def _mT(x):
    return ltorch.transpose(x, -2, -1)


@backward(prims.inv)
def _inv(g, out, A):
    # d(A⁻¹) = -A⁻¹ dA A⁻¹: grad_A = -A⁻ᵀ g A⁻ᵀ
    inverse_t = _mT(out)
    return (ltorch.neg(ltorch.matmul(ltorch.matmul(inverse_t, g), inverse_t)),)


@backward(prims.inv_ex)
def _inv_ex(g, out, A, check_errors):
    return (None if g[0] is None else _inv(g[0], out[0], A)[0],)


def _solve_grads(g, X, A, B, left: bool):
    if g is None:
        return None, None
    # A vector right-hand side is a one-column matrix: B one-dimensional, or a batch of
    # vectors with A's batch shape (torch's own rule; only for AX = B).
    vector = left and (B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1])))
    if vector:
        g, X = ltorch.unsqueeze(g, -1), ltorch.unsqueeze(X, -1)
    # left: AX = B, grad_B = A⁻ᵀ g, grad_A = -grad_B Xᵀ; right: XA = B, grad_B = g A⁻ᵀ,
    # grad_A = -Xᵀ grad_B.
    grad_B = ltorch.linalg_solve(_mT(A), g, left=left)
    grad_A = ltorch.neg(ltorch.matmul(grad_B, _mT(X)) if left else ltorch.matmul(_mT(X), grad_B))
    if vector:
        grad_B = ltorch.squeeze(grad_B, -1)
    return (sum_to(grad_A, A.shape) if is_differentiable(A) else None,
            sum_to(grad_B, B.shape) if is_differentiable(B) else None)


@backward(prims.solve)
def _solve(g, out, A, B, left):
    return _solve_grads(g, out, A, B, left)


@backward(prims.solve_ex)
def _solve_ex(g, out, A, B, left, check_errors):
    return _solve_grads(g[0], out[0], A, B, left)


@backward(prims.slogdet)
def _slogdet(g, out, A):
    # d log|det A| = tr(A⁻¹ dA): grad_A = g · A⁻ᵀ; the sign has no gradient.
    g_log = g[1]
    if g_log is None:
        return (None,)
    scale = ltorch.unsqueeze(ltorch.unsqueeze(g_log, -1), -1)
    return (ltorch.mul(scale, _mT(ltorch.linalg_inv(A))),)
