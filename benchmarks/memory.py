"""Peak memory of a call, on any device: the most bytes held at once by the tensors its
ops make (its inputs are the caller's and do not count).

A dispatch mode sees every tensor an op returns; each storage counts once however many
views of it live, from its first tensor's creation until its last one is freed. CPU
tensors have no allocator statistics, and process RSS moves in pages the allocator keeps,
so this is the measure that compares eager with a compiled trace on equal terms.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves


class _LiveBytes(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.live = 0
        self.peak = 0
        self.refs: dict[int, list[int]] = {}  # storage address -> [bytes, live tensors]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for leaf in tree_leaves(out):
            if isinstance(leaf, torch.Tensor):
                self._hold(leaf)
        return out

    def _hold(self, tensor: torch.Tensor) -> None:
        storage = tensor.untyped_storage()
        key = storage.data_ptr()
        entry = self.refs.get(key)
        if entry is None:
            entry = self.refs[key] = [storage.nbytes(), 0]
            self.live += entry[0]
            self.peak = max(self.peak, self.live)
        entry[1] += 1
        weakref.finalize(tensor, self._release, key)

    def _release(self, key: int) -> None:
        entry = self.refs.get(key)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] == 0:
            self.live -= entry[0]
            del self.refs[key]


def peak_bytes(call: Callable[[], object]) -> int:
    """The peak bytes held by the tensors `call` makes, its result included."""
    mode = _LiveBytes()
    with mode:
        result = call()
    del result
    return mode.peak
