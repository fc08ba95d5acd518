"""Which nn.Module a traced call came from, for the scope comments of module traces.

Global forward hooks keep a stack of the modules being called. A call's scope is the
innermost module whose class is not torch's own (Linear, LayerNorm, ...): those leaf
modules would change the scope at nearly every line, and the source comment already
names them (`self.query(x)`).
"""

from __future__ import annotations

import torch
from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook


def _is_torch_module(module: torch.nn.Module) -> bool:
    return type(module).__module__.startswith("torch.")


class ModuleScopes:
    def __init__(self, root: torch.nn.Module | None):
        self._names = {id(m): name for name, m in root.named_modules(remove_duplicate=False)} if root is not None else {}
        self._stack: list[str | None] = []
        self._handles = []

    def current(self) -> str:
        for name in reversed(self._stack):
            if name is not None:
                return name
        return ""

    def _enter(self, module, args):
        if _is_torch_module(module):
            self._stack.append(None)
        else:
            self._stack.append(self._names.get(id(module), type(module).__name__))

    def _exit(self, module, args, output):
        if self._stack:
            self._stack.pop()

    def __enter__(self) -> ModuleScopes:
        self._handles = [register_module_forward_pre_hook(self._enter), register_module_forward_hook(self._exit)]
        return self

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()
        self._stack.clear()
