"""The device a job traces for and runs on.

On a device this machine has (`cuda:0` with a GPU), the script's state is moved there
before its entry is traced, as a user running it there would have moved it: every module
the script holds in a global (or the entry's closure), with its parameters, buffers and
their `.grad`s (`module.to(device)`); every optimizer's state, where torch's
`load_state_dict` puts it (beside its parameter; a step count stays on the CPU); and the
tensors held in globals. The tensor objects stay the same ones, so what holds them (an
optimizer's param groups) holds the moved tensors.

On a device it lacks, and on `meta`, whose tensors hold no values, nothing moves: the
trace is made from the tensors where they are, each standing for its twin on the device
(frontend/placement.py), and only `tracecli trace` works.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch

from tracecli.core.errors import UserError
from tracecli.core.trace import Trace
from tracecli.core.values import TensorValue
from tracecli.frontend.inputs import device_available


def require_device(device: str, command: str) -> None:
    if torch.device(device).type == "meta":
        raise UserError(f"tensors on meta hold no values; `tracecli {command}` needs them to execute and compare "
                        "with eager. Use `tracecli trace` to see the trace without running it")
    if not device_available(device):
        raise UserError(
            f"device {device} is not available on this machine"
            + (" (torch.cuda.is_available() is False)" if device.startswith("cuda") else "")
            + f"; `tracecli {command}` needs it to execute. Use `tracecli trace` to see the trace without running it"
        )


def require_values(trace: Trace, command: str = "run") -> None:
    """Refuse to execute a trace that reads tensors on meta (a model built under `with
    torch.device("meta"):`): they have no values, and eager would fail at its first read
    of one, far from the cause."""
    on_meta = [v.name for v in trace.inputs if isinstance(v, TensorValue) and v.device == "meta"]
    if on_meta:
        which = on_meta[0] + (f" and {len(on_meta) - 1} more" if len(on_meta) > 1 else "")
        raise UserError(f"the program reads tensors on meta ({which}): meta tensors have no values, so "
                        f"`tracecli {command}` cannot execute "
                        "the program and compare it with eager. `tracecli trace`, `examine` and `diff` show its "
                        "trace without running it")


def runs_here(device: str) -> bool:
    """Whether tensors on `device` can be made and run here: else a trace for it stands
    the script's CPU tensors for tensors there."""
    return torch.device(device).type != "meta" and device_available(device)


def move_state(device: str, entry: Callable, namespace: dict) -> None:
    """Move what the script holds to `device` (which this machine has), as `.to(device)`
    would: the entry itself when it is a module, the modules, optimizers and tensors in
    the script's globals and in the entry's closure."""
    if torch.device(device).type == "cpu":
        return  # where the script made them
    holders = [namespace, *_closure_of(entry)]
    objects = [entry, *(obj for holder in holders for obj in holder.values())]
    # Each parameter stays the object it is, whatever the two devices (an optimizer holds them).
    swapping = torch.__future__.get_swap_module_params_on_conversion()
    torch.__future__.set_swap_module_params_on_conversion(True)
    try:
        for obj in objects:
            if isinstance(obj, torch.nn.Module):
                obj.to(device)
    finally:
        torch.__future__.set_swap_module_params_on_conversion(swapping)
    for obj in objects:
        if isinstance(obj, torch.optim.Optimizer):
            # torch's own rule for where each state tensor goes: beside its parameter.
            obj.load_state_dict(obj.state_dict())
        elif isinstance(obj, torch.Tensor) and obj.device.type == "cpu":
            _move_tensor(obj, device)


def _move_tensor(tensor: torch.Tensor, device: str) -> None:
    """The same tensor object, on `device` (a Parameter an optimizer holds stays the one it holds)."""
    with torch.no_grad():
        moved = tensor.detach().to(device)
        if isinstance(tensor, torch.nn.Parameter):
            moved = torch.nn.Parameter(moved, requires_grad=tensor.requires_grad)
        grad = tensor.grad
        torch.utils.swap_tensors(tensor, moved)
        if grad is not None:
            tensor.grad = grad.to(device)


def _closure_of(entry: Callable) -> Iterable[dict]:
    function = getattr(entry, "__func__", entry)
    cells = getattr(function, "__closure__", None) or ()
    names = getattr(getattr(function, "__code__", None), "co_freevars", ())
    yield {name: _cell_contents(cell) for name, cell in zip(names, cells, strict=False)}


def _cell_contents(cell) -> object:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell: a name the closure has not bound yet
        return None


__all__ = ["move_state", "require_device", "require_values", "runs_here"]
