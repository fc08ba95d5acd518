"""torch's legacy constructors, traced as the factories they stand for.

`x.new(...)`, `torch.Tensor(...)` and the typed classes (`torch.FloatTensor(...)`,
`torch.cuda.LongTensor(...)`) read their arguments in a way of their own: integers, or
one torch.Size, are sizes (`x.new(5, 8)`, `x.new(torch.Size([5, 8]))` are 5x8 and
uninitialised), while one tuple or list is data (`x.new((5, 8))` holds 5 and 8); no
argument is an empty tensor, and a tensor is that tensor under another name. Each call
is traced as the modelled call it means (`torch.empty`, `torch.tensor`, the tensor
itself), from the arguments as the user wrote them, before any torch.Size among them
becomes a tuple like every other shape.

`torch.Tensor(...)` and the typed classes never ask for `__torch_function__`: while
tracing, `torch.Tensor.__new__` and the typed classes in `torch` and `torch.cuda` are
stand-ins that hand the call to the tracer (the real class is used whenever no trace
is being made, as when a module built inside the entry makes its weights).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch
from torch.overrides import handle_torch_function

from tracecli.core.dims import Dim
from tracecli.frontend.symbolic import SymSize

# A legacy call traced as another: (callable, args, kwargs), or None where it is not one of
# the forms above (torch's own parsing then refuses it, as in eager).
Rewritten = tuple[Callable, tuple, dict] | None

_BASE_NEW = torch._C.TensorBase.__new__
_DENSE_CLASSES = sorted((cls for cls in torch._tensor_classes if not cls.is_sparse),
                        key=lambda cls: (cls.__module__, cls.__name__))


def _rewrite(what: str, dtype: torch.dtype, device: object, args: tuple, kwargs: dict,
             same_dtype: bool) -> Rewritten:
    """The factory call `what(*args, **kwargs)` means, making tensors of `dtype` on
    `device` unless it says another device. `same_dtype`: a tensor argument must have
    `dtype` (as `x.new(t)` requires; `torch.Tensor(t)` takes any)."""
    options = dict(kwargs)
    given = options.pop("device", None)
    if options:
        return None
    if given is not None:
        wanted, allowed = torch.device(given).type, torch.device(device).type
        if wanted != allowed:
            raise TypeError(f"{what}: legacy constructor expects device type: {allowed} but device type: "
                            f"{wanted} was passed")
        device = given
    made = {"dtype": dtype, "device": device}
    if not args:
        return torch.empty, (0,), made
    if len(args) == 1 and isinstance(args[0], torch.Tensor):
        other = args[0]
        if same_dtype and other.dtype != dtype:
            raise TypeError(f"{what}: expected {dtype} (got {other.dtype})")
        # The same memory under another name: writes to either reach the other.
        return torch.Tensor.view_as, (other, other), {}
    if len(args) == 1 and isinstance(args[0], (torch.Size, SymSize)):
        return torch.empty, (tuple(args[0]),), made
    if all(_is_size(a) for a in args):
        return torch.empty, args, made
    if len(args) == 1 and isinstance(args[0], (tuple, list, range)):
        return _TENSOR, args, made
    return None


# torch's own, as imported: while tracing, `torch.tensor` is a stand-in that hands sizes
# to the tracer (frontend/overrides.py), which the tracer does not know as torch.tensor.
_TENSOR = torch.tensor


def _is_size(obj: object) -> bool:
    return isinstance(obj, (int, Dim)) and not isinstance(obj, bool)


def _tensor_method_new(self, *args, **kwargs) -> Rewritten:
    return _rewrite("Tensor.new", self.dtype, self.device, args, kwargs, same_dtype=True)


def _constructor(cls: type) -> Callable[..., Rewritten]:
    device = "cuda" if cls.is_cuda else "cpu"

    def rewrite(*args, **kwargs) -> Rewritten:
        return _rewrite(f"{cls.__module__}.{cls.__name__}", cls.dtype, device, args, kwargs, same_dtype=True)

    return rewrite


def _default_constructor(*args, **kwargs) -> Rewritten:
    # torch.Tensor makes tensors of the default dtype, on the CPU, and takes a tensor of any dtype.
    return _rewrite("torch.Tensor", torch.get_default_dtype(), "cpu", args, kwargs, same_dtype=False)


# Each legacy callable, as it reaches the tracer, with the rewrite of its calls.
LEGACY_CALLS: dict[Callable, Callable[..., Rewritten]] = {
    torch.Tensor.new: _tensor_method_new,
    torch.Tensor: _default_constructor,
    **{cls: _constructor(cls) for cls in _DENSE_CLASSES},
}


def _handed_on(original: type, args: tuple, kwargs: dict):
    """`original(*args, **kwargs)` handed to the tracer's mode."""
    relevant = tuple(a for a in args if isinstance(a, torch.Tensor))
    return handle_torch_function(original, relevant, *args, **kwargs)


def _tensor_new(*args, **kwargs):
    # Any signature but this one makes torch._dynamo, when it is first imported while a
    # trace is being made, refuse its own stand-in for torch.Tensor.__new__.
    cls, *args = args
    if cls is torch.Tensor and torch._C._is_torch_function_mode_enabled():
        return _handed_on(torch.Tensor, args, kwargs)
    return _BASE_NEW(cls, *args, **kwargs)


class _StandIn(type):
    """A typed class while tracing: called, it is traced; asked anything else (isinstance,
    its dtype, whether it is CUDA's), it answers as the class."""

    original: type

    def __call__(cls, *args, **kwargs):
        if torch._C._is_torch_function_mode_enabled():
            return _handed_on(cls.original, args, kwargs)
        return cls.original(*args, **kwargs)  # a module built while tracing makes its weights so

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, cls.original)

    def __getattr__(cls, name: str):
        return getattr(cls.original, name)

    def __repr__(cls) -> str:
        return repr(cls.original)


def _stand_in(cls: type) -> type:
    return _StandIn(cls.__name__, (), {"original": cls, "__module__": cls.__module__, "__qualname__": cls.__name__})


_STAND_INS = [(sys.modules[cls.__module__], cls.__name__, _stand_in(cls)) for cls in _DENSE_CLASSES]


@contextmanager
def legacy_constructors() -> Iterator[None]:
    """While tracing: `torch.Tensor(...)` and the typed classes reach the tracer."""
    torch.Tensor.__new__ = staticmethod(_tensor_new)
    for owner, name, stand_in in _STAND_INS:
        setattr(owner, name, stand_in)
    try:
        yield
    finally:
        for owner, name, stand_in in _STAND_INS:
            setattr(owner, name, stand_in.original)
        # Deleting it uncovers TensorBase's own again.
        del torch.Tensor.__new__


__all__ = ["LEGACY_CALLS", "legacy_constructors"]
