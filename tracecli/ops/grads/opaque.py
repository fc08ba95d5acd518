"""The backward of an opaque call: torch.autograd on the original callable.

The backward trace calls `<op>_vjp(*tensor arguments, *cotangents)`, a callable bound by
name in the generated code: it runs the call again with autograd on and returns
torch.autograd.grad's gradients of the arguments that need them (zeros where none
reaches). The forward saves the call's tensor arguments for it.
"""

from __future__ import annotations

import torch

from tracecli.core.dtypes import DType
from tracecli.core.pytree import tree_leaves, tree_map, values_in
from tracecli.core.symbol import BoundSymbol, Symbol
from tracecli.core.values import NumberValue, TensorType, TensorValue
from tracecli.ops.torch_bridge import TO_TORCH

_symbols: dict[tuple, Symbol] = {}


def opaque_backward(bsym: BoundSymbol, gs: list, needs: set[str]) -> list[tuple[TensorValue, TensorValue]]:
    """Record the opaque backward of `bsym`; (argument, gradient) pairs."""
    tensors = [v for v in values_in((bsym.args, bsym.kwargs)) if isinstance(v, TensorValue)]
    tensors = list({v.name: v for v in tensors}.values())
    wanted = [v for v in tensors if v.name in needs]
    given = [i for i, g in enumerate(gs) if g is not None]
    sym = _vjp_symbol(bsym, tensors, wanted, given)
    grads = sym(*tensors, *(gs[i] for i in given))
    return list(zip(wanted, grads, strict=True))


def _vjp_symbol(bsym: BoundSymbol, tensors: list, wanted: list, given: list[int]) -> Symbol:
    fn, args, kwargs = bsym.symbol.impl, bsym.args, dict(bsym.kwargs)
    positions = {v.name: i for i, v in enumerate(tensors)}
    want = [positions[v.name] for v in wanted]
    n = len(tensors)

    def vjp(*flat):
        leaves = [t.detach().requires_grad_(i in want) for i, t in enumerate(flat[:n])]

        def load(leaf):
            if isinstance(leaf, TensorValue):
                return leaves[positions[leaf.name]]
            if isinstance(leaf, NumberValue):
                return leaf.value
            return TO_TORCH[leaf] if isinstance(leaf, DType) else leaf

        with torch.enable_grad():
            out = fn(*tree_map(load, args), **{k: tree_map(load, v) for k, v in kwargs.items()})
        outs = [o for o in tree_leaves(out) if isinstance(o, torch.Tensor)]
        chosen = [outs[i] for i in given]
        inputs = [leaves[i] for i in want]
        grads = torch.autograd.grad(chosen, inputs, flat[n:], allow_unused=True)
        return tuple(torch.zeros_like(x) if g is None else g for g, x in zip(grads, inputs, strict=True))

    name = (bsym.symbol.name.replace(".", "_") or "opaque") + "_vjp"
    vjp.__name__ = vjp.__qualname__ = name

    def meta(*values):
        return tuple(TensorType(v.shape, v.dtype, v.device) for v in wanted)

    return Symbol(name, "", impl=vjp, meta=meta, doc=f"the backward of {bsym.symbol.qualname}, by torch.autograd")
