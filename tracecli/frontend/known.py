"""Tensors whose values tracing knows, read as Python numbers where Python needs one.

A tensor the entry makes from Python constants (`torch.tensor(2)`, `torch.arange(4)`,
`torch.zeros(3)`) holds the same values on every call, and so does what deterministic
ops make of such tensors alone (`torch.arange(4) * 2`, a write of constants into one).
Tracing computes those values, on the CPU, for small tensors, as their ops are
recorded; the ops stay in the trace. Where Python then needs a number
(`items[torch.as_tensor(2)]`, `int(t)`, `bool(t > 1)`, `t.item()`, `t.tolist()`), it
reads the known value, as eager would, where a tensor of unknown values stops tracing.

Never known: anything computed from an input (arguments, weights, captured tensors),
from a random draw, from uninitialised memory (`torch.empty`), from a size symbol, or
by an op with effects beyond its outputs. A write makes a new value, known only if
computed from known ones.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from tracecli.core.dims import Dim
from tracecli.core.dtypes import DType
from tracecli.core.pytree import tree_leaves, tree_map
from tracecli.core.symbol import BoundSymbol, Tag
from tracecli.core.trace import walk
from tracecli.core.values import TensorValue
from tracecli.ops import prims
from tracecli.ops.torch_bridge import TO_TORCH

# The most elements a tensor may have for tracing to compute it: reading numbers out of
# tensors is about indices, flags and small tables, not about data.
MOST_ELEMENTS = 4096

# Reads that turn a tensor into Python numbers (torch_map's DATA_DEPENDENT, but for those
# that hand the values to numpy or ask for memory).
NUMBER_READS = frozenset({"__bool__", "item", "tolist", "__int__", "__float__", "__index__", "__complex__"})

NOT_KNOWN = object()
_NEVER = frozenset({Tag.RANDOM, Tag.SIDE_EFFECT, Tag.CHECK})


class KnownValues:
    def __init__(self) -> None:
        self.values: dict[str, torch.Tensor] = {}  # value name -> its values, on the CPU

    def recorded(self, bsyms: list[BoundSymbol]) -> None:
        """Compute what the bound symbols just recorded at the top level make, where their
        values are known."""
        values = self.values
        for bsym in bsyms:
            tags = bsym.symbol.tags
            if tags and not tags.isdisjoint(_NEVER):
                # An effect may reach what it reads (an unmodelled call writing an argument).
                for value in bsym.arg_values():
                    values.pop(value.name, None)
                continue
            args = bsym.args
            if args and type(args[0]) is TensorValue and args[0].name not in values:
                continue  # most calls: they read a tensor whose values are not known
            computed = self._compute(bsym)
            if computed is not None:
                self.values.update(computed)

    def _compute(self, bsym: BoundSymbol) -> dict[str, torch.Tensor] | None:
        reads = bsym.arg_values()
        # Most calls read a value from outside (an input, what an input reaches): one lookup.
        if any(not isinstance(v, TensorValue) or v.name not in self.values for v in reads):
            return None  # a value from outside, or a number read from a size
        outputs = bsym.output_values()
        if not outputs or any(not isinstance(o, TensorValue) or _too_large(o) for o in outputs):
            return None
        sym = bsym.symbol
        if sym.impl is None or not (_modelled(bsym) or (not reads and _unmodelled_factory(bsym))):
            return None
        # The call as the generated code makes it, on the CPU.
        args = tree_map(self._real, bsym.args)
        kwargs = {k: "cpu" if k == "device" else tree_map(self._real, v) for k, v in bsym.kwargs}
        try:
            with torch._C.DisableTorchFunction(), torch.no_grad():
                result = sym.impl(*args, **kwargs)
        except Exception:  # noqa: BLE001 - not computable here (a kernel this machine lacks): not known
            return None
        made = [leaf for leaf in tree_leaves(result) if isinstance(leaf, torch.Tensor)]
        if len(made) != len(outputs):
            return None
        return {value.name: tensor.detach().cpu() for value, tensor in zip(outputs, made, strict=True)}

    def _real(self, leaf):
        if isinstance(leaf, TensorValue):
            # A copy each time: an in-place op computed here must not change what is known.
            return self.values[leaf.name].clone()
        return TO_TORCH[leaf] if isinstance(leaf, DType) else leaf

    def read(self, func: Callable, value: TensorValue | None, args: tuple, kwargs: dict) -> object:
        """What `func` (`Tensor.__index__`, `Tensor.item`, ...) gives for a tensor standing
        for `value`, or NOT_KNOWN."""
        known = self.values.get(value.name) if value is not None else None
        if known is None or getattr(func, "__name__", "") not in NUMBER_READS:
            return NOT_KNOWN
        with torch._C.DisableTorchFunction():
            return func(known, *args[1:], **kwargs)


def _too_large(value: TensorValue) -> bool:
    return any(isinstance(d, Dim) for d in value.shape) or value.numel > MOST_ELEMENTS


def _modelled(bsym: BoundSymbol) -> bool:
    """An ltorch op, whose meaning does not depend on memory layout (what an unmodelled
    op on a copy computes might: as_strided), and which reads no uninitialised memory."""
    return bsym.symbol.namespace == "ltorch" and not any(sub.symbol is prims.empty for _, sub in walk([bsym]))


def _unmodelled_factory(bsym: BoundSymbol) -> bool:
    """`torch.as_tensor(2)` and kin; not torch.empty_strided and its kin, whose values
    are whatever the memory held."""
    return bsym.symbol.namespace == "torch" and "empty" not in bsym.symbol.name


__all__ = ["NOT_KNOWN", "KnownValues"]
