"""Where the tensors a trace reads live, when it is made for a device they are not on.

A trace for a device this machine cannot run (`--device cuda:0` without a GPU, `--device
meta`) is made from tensors on the CPU: the script's own, and its sample inputs, made
there instead. Each real tensor the trace reads stands for the tensor a user running the
script on that device holds, who would have moved the model there with `.to(device)`:
the entry's inputs, the entry module's parameters and buffers, a module reached through
a global, tensors captured from globals, closures and containers, `.grad`s, and an
optimizer's state, which torch's `load_state_dict` puts beside its parameter (its step
count stays on the CPU, as torch keeps it). One rule for all of them: a tensor on the CPU
stands for one on the target device; a tensor elsewhere (already on `meta`) stays there.

Tensors the entry makes are not moved: a factory without `device=` makes a CPU tensor,
as eager on the device does, and mixing it with the device's tensors fails as eager fails.

An input made only to be traced (frontend/stand_ins.py) is traced as a tensor on the
device it stands for.
"""

from __future__ import annotations

import torch

from tracecli.core.values import TensorValue
from tracecli.frontend.proxy import TensorProxy
from tracecli.frontend.stand_ins import stands_for
from tracecli.ops.torch_bridge import type_of

# Metadata reads whose answer depends on the device: asked of a real tensor that stands
# for one on the target device (`self.fc.weight.device` of a module reached through a
# global), they answer for the device it stands for.
_DEVICE_READS = frozenset({"device", "is_cuda", "is_cpu", "is_meta", "get_device"})


class Placement:
    """The device a trace is made for, when its tensors are not there (None: every tensor
    is traced where it is)."""

    def __init__(self, device: str | None):
        self.device = device
        self._staying: set[int] = set()  # ids of real tensors torch keeps where they are

    def device_of(self, tensor: torch.Tensor) -> str:
        """The device `tensor` stands for in the trace."""
        real = stands_for(tensor) or type_of(tensor).device
        if self.device is None or real != "cpu" or id(tensor) in self._staying:
            return real
        return self.device

    def value(self, name: str, tensor: torch.Tensor) -> TensorValue:
        """The trace input a real tensor becomes, named `name`."""
        t = type_of(tensor)
        return TensorValue(name, t.shape, t.dtype, self.device_of(tensor))

    def optimizer_state(self, optimizer: torch.optim.Optimizer, param: torch.Tensor, key: str,
                        tensor: torch.Tensor) -> None:
        """Note where torch puts `optimizer.state[param][key]` on the device: beside its
        parameter, except a step count outside a capturable or fused group (torch's
        `Optimizer.load_state_dict` leaves that one on the CPU, and so does its first step)."""
        if key != "step":
            return
        group = next((g for g in optimizer.param_groups if any(p is param for p in g["params"])), {})
        if not (group.get("capturable") or group.get("fused")):
            self._staying.add(id(tensor))

    def device_read(self, func, args: tuple) -> tuple | None:
        """`w.device`, `w.is_cuda`, `w.get_device()` of a real tensor that stands for one
        on the target device: the arguments to answer from instead (None: as they are)."""
        if not args or not isinstance(args[0], torch.Tensor) or isinstance(args[0], TensorProxy):
            return None
        name = getattr(func, "__name__", "")
        if name == "__get__":
            name = getattr(getattr(func, "__self__", None), "__name__", "")
        if name not in _DEVICE_READS or self.device_of(args[0]) == type_of(args[0]).device:
            return None
        return (TensorProxy(self.value("placed", args[0])), *args[1:])


__all__ = ["Placement"]
