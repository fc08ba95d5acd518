"""torch's `associative_scan` while tracing (HF Mamba's scan under torch.compile).

Eager, on CPU, it runs torch's generic algorithm: pairs of neighbours combined level by
level, with the combine function batched over each level by `torch.vmap`. The tracer's
proxies cannot enter vmap (it runs below `__torch_function__`), so the traced scan runs
the same algorithm, with the same pairs in the same order, and calls the combine
function once per element of each level instead, stacking the results: what vmap
computes, for any pure combine function, op by op. The trace is unrolled over the
scanned dim, so it holds for that length only (the length is pinned). torch's own
associative_scan still checks the arguments, moves the scanned dim first and flips a
reverse scan, all traced as usual.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch.utils import _pytree as pytree

from tracecli.core.errors import TracingError
from tracecli.frontend.proxy import TensorProxy


def traced_generic_scan(original: Callable) -> Callable:
    """torch's generic_associative_scan, which associative_scan calls for the generic mode
    after moving the scanned dim first: `original` for real tensors, the unrolled scan
    when any leaf is traced. Patching this step, not associative_scan itself, reaches
    every caller, however it imported the function, and keeps torch's own checks."""

    def generic_associative_scan(operator, leaves, dim=0, additional_inputs=()):
        if not any(isinstance(x, TensorProxy) for x in leaves):
            return original(operator, leaves, dim=dim, additional_inputs=additional_inputs)
        combine_fn, spec = _unbatched(operator)
        if dim != 0 or additional_inputs:
            raise TracingError("associative_scan: tracing follows torch's scan along dim 0 without lifted inputs only")
        return _scan(_per_element(combine_fn, spec), list(leaves))

    generic_associative_scan.__wrapped__ = original
    return generic_associative_scan


def _unbatched(operator) -> tuple[Callable, object]:
    """The user's combine function and the leaves' structure, from the operator torch
    builds: partial(wrap_combine_fn_flat, combine_fn=vmap(combine_fn), spec=...)."""
    keywords = getattr(operator, "keywords", None) or {}
    batched, spec = keywords.get("combine_fn"), keywords.get("spec")
    batched = getattr(batched, "transformed", batched)  # vmap as the tracer hands it out
    combine_fn = None
    if getattr(batched, "__module__", None) == "torch._functorch.apis":
        # vmap's wrapper names the function only outside compiling (functools.wraps),
        # and always holds it, with dims 0 in and out as associative_scan asks, in its closure.
        found = inspect.getclosurevars(batched).nonlocals
        if _all_zero(found.get("in_dims")) and _all_zero(found.get("out_dims")):
            combine_fn = found.get("func")
    if combine_fn is None or spec is None:
        raise TracingError("associative_scan: the combine function torch batched with vmap could not be recovered "
                           "to trace it element by element")
    return combine_fn, spec


def _all_zero(dims) -> bool:
    return all(d == 0 for d in pytree.tree_leaves(dims)) if dims is not None else False


def _per_element(combine_fn: Callable, spec) -> Callable:
    """combine_fn over a batch of pairs along dim 0: one call per pair, as vmap means."""

    def combine(*flat):
        half = len(flat) // 2
        lefts, rights = flat[:half], flat[half:]
        count = lefts[0].shape[0]
        if count == 0:
            # An empty level (a scan of two): the algorithm only asks that it is empty.
            return list(lefts)
        rows = []
        for k in range(count):
            lhs = pytree.tree_unflatten([x[k] for x in lefts], spec)
            rhs = pytree.tree_unflatten([x[k] for x in rights], spec)
            rows.append(pytree.tree_leaves(combine_fn(lhs, rhs)))
        return [torch.stack(column) for column in zip(*rows, strict=True)]

    return combine


def _scan(combine: Callable, elems: list) -> list:
    """torch's generic_associative_scan along dim 0, step for step."""
    count = elems[0].shape[0]
    if count < 2:
        return elems
    reduced = combine(*[x[0:-1:2] for x in elems], *[x[1::2] for x in elems])
    odd = _scan(combine, reduced)
    if count % 2 == 0:
        even = combine(*[x[0:-1] for x in odd], *[x[2::2] for x in elems])
    else:
        even = combine(*odd, *[x[2::2] for x in elems])
    # The scan's first element is the first element of the input.
    even = [torch.cat([x[0:1], r]) if r.numel() > 0 else x[0:1] for x, r in zip(elems, even, strict=True)]
    return [_interleave(a, b) for a, b in zip(even, odd, strict=True)]


def _interleave(a, b):
    """a[0], b[0], a[1], b[1], ... along dim 0 (a may be one longer)."""
    truncated = a.shape[0] == b.shape[0] + 1
    if truncated:
        b = F.pad(b, [0] * (2 * (b.ndim - 1)) + [0, 1])
    interleaved = torch.flatten(torch.stack([a, b], dim=1), start_dim=0, end_dim=1)
    return interleaved[: a.shape[0] + b.shape[0] - 1] if truncated else interleaved
