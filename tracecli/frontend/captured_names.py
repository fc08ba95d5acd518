"""The name a captured tensor gets: where the user's code holds it.

A tensor the entry reads from outside itself (a global, a module's weight it did not get
as its entry) is named after the variable that holds it, or after its place in a module
a variable holds: `model.layer4.1.bn1.bias` becomes `model_layer4_1_bn1_bias`, as the
weights of an entry module are named after their qualified names.

A tensor is often held several ways at once: a module's forward sees its block as
`self`, a loop over an `nn.ModuleList` as `module` (torch's own `nn.Sequential` does the
same), a helper as its parameter, and the script as `model`. The outermost holder names
it, the one the tensor lies deepest in (`model.layer4.1.bn1.bias`, not `module.bn1.bias`):
that path says where in the model it is, and it is the same for every tensor of the model.
Only the user's frames are searched (a library's loop variables are not the user's names).
"""

from __future__ import annotations

from collections.abc import Callable
from types import FrameType

import torch

from tracecli.frontend.source import user_frames
from tracecli.frontend.state import StateWatch

Home = Callable[[], object]


class CapturedNames:
    """Names for one trace's captured tensors. Where each module holds its tensors is
    listed once per trace, not once per tensor looked up."""

    def __init__(self) -> None:
        self._paths: dict[int, tuple[torch.nn.Module, dict[int, str]]] = {}

    def name(self, tensor: torch.Tensor, frame: FrameType | None,
             state: StateWatch | None = None) -> tuple[str, Home | None]:
        """The name `tensor` has where the user's code holds it, seen from `frame` (the
        innermost user frame) outward, or in the Python state the traced call reaches
        (`state`: a cache filled on an earlier call), and how to look there again (None
        for a function's local variable, gone once the call returns)."""
        scopes = [(scope, lasting, inside) for f, inside in user_frames(frame)
                  for scope, lasting in ((f.f_locals, False), (f.f_globals, True))]
        local_name = None
        for scope, lasting, _ in scopes:
            for name, obj in scope.items():
                if obj is tensor:
                    if lasting:
                        return name, lambda scope=scope, name=name: scope.get(name)
                    local_name = local_name or name
        best: tuple | None = None
        seen: set[tuple[str, int]] = set()
        for order, (scope, lasting, inside) in enumerate(scopes):
            for name, obj in scope.items():
                if not isinstance(obj, torch.nn.Module) or (name, id(obj)) in seen:
                    continue
                seen.add((name, id(obj)))
                path = self._paths_in(obj).get(id(tensor))
                if path is None:
                    continue
                # Deepest first; then a named variable before `self`, the traced call's
                # own before its caller's (the entry's parameter, not what main() called
                # the model), one that lasts (a global) before a local, an outer frame's
                # before an inner one's.
                rank = (-path.count("."), name == "self", not inside, not lasting, -order)
                if best is None or rank < best[0]:
                    best = (rank, name, obj, path)
        if best is not None:
            _, name, module, path = best
            return f"{name}.{path}", lambda module=module, path=path: _held(module, path)
        place = state.place_of(tensor) if state is not None else None
        if place is not None:
            return place.value_name, place.read
        return local_name or "captured", None

    def _paths_in(self, module: torch.nn.Module) -> dict[int, str]:
        """id(tensor) -> its qualified name in `module`, for its parameters, buffers and
        plain tensor attributes (the first name of a tensor held twice)."""
        found = self._paths.get(id(module))
        if found is not None and found[0] is module:
            return found[1]
        paths: dict[int, str] = {}
        for prefix, sub in module.named_modules():
            dot = f"{prefix}." if prefix else ""
            for store in (sub._parameters, sub._buffers):
                for key, tensor in store.items():
                    if tensor is not None:
                        paths.setdefault(id(tensor), dot + key)
            for key, value in vars(sub).items():
                if isinstance(value, torch.Tensor) and not key.startswith("_"):
                    paths.setdefault(id(value), dot + key)
        self._paths[id(module)] = (module, paths)
        return paths


def _held(module: torch.nn.Module, path: str) -> object:
    owner_path, _, key = path.rpartition(".")
    owner = module.get_submodule(owner_path) if owner_path else module
    found = owner._parameters.get(key, owner._buffers.get(key))
    return found if found is not None else getattr(owner, key, None)
