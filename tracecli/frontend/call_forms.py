"""Whether torch accepts a call in the form a trace prints it.

The recorder prints each ltorch call in one canonical form, leaving out arguments equal
to their defaults. Left out, some are not optional to torch: `torch.sum(x, keepdim=True)`
is refused where `torch.sum(x, dim=None, keepdim=True)` is not (torch's overloads), and
`Tensor.repeat(x)` is refused where `Tensor.repeat(x, ())` is not. The generated code
runs the printed call, so a form torch refuses is a trace that does not run.

Torch's own argument parser answers: the implementation is called on stand-in tensors
that stop the call as soon as it is dispatched, after its arguments were accepted. The
answer depends on which arguments are given and of which types, never on their values,
so it is asked once per form.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from tracecli.core.dims import Dim
from tracecli.core.dtypes import DType
from tracecli.core.values import NumberValue, TensorValue
from tracecli.ops.torch_bridge import TO_TORCH


class _Accepted(Exception):
    """The call got past torch's argument parsing."""


class _Probe(torch.Tensor):
    @staticmethod
    def __new__(cls, value: TensorValue):
        sizes = tuple(2 if isinstance(d, Dim) else d for d in value.shape)
        return torch.Tensor._make_wrapper_subclass(cls, sizes, dtype=TO_TORCH[value.dtype], device="meta")

    __torch_function__ = torch._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        raise _Accepted


class _Stop(TorchDispatchMode):
    """Stops factories too (no tensor argument), before they allocate anything."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise _Accepted


def _stand_in(obj):
    if isinstance(obj, TensorValue):
        return _Probe(obj)
    if isinstance(obj, NumberValue):
        return 2 if isinstance(obj.value, Dim) else obj.value
    if isinstance(obj, Dim):
        return 2
    if isinstance(obj, DType):
        return TO_TORCH[obj]
    if isinstance(obj, (tuple, list)):
        return type(obj)(_stand_in(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _stand_in(v) for k, v in obj.items()}
    return obj


def accepts(impl: Callable, args: tuple, kwargs: dict) -> bool:
    """Whether `impl` takes these arguments (values of the IR). A call that fails for any
    other reason than its arguments' form counts as accepted: only a refusal is news."""
    try:
        stand_args, stand_kwargs = _stand_in(args), _stand_in(kwargs)
        # No torch function handling (the tracer's mode is active when a symbol is called
        # directly): the call goes straight from the parser to the dispatcher.
        with torch._C.DisableTorchFunction(), _Stop(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            impl(*stand_args, **stand_kwargs)
    except _Accepted:
        return True
    except TypeError:
        return False
    except Exception:  # noqa: S110 - refused for its values, not its form
        return True
    return True


def form_key(args: tuple, kwargs: dict) -> tuple:
    """What the answer of `accepts` depends on: which arguments, of which types."""
    return (tuple(_kind(a) for a in args), tuple((k, _kind(v)) for k, v in kwargs.items()))


def _kind(obj) -> object:
    if isinstance(obj, (tuple, list)):
        return (type(obj), type(obj[0]) if obj else None)
    if isinstance(obj, NumberValue):
        return int if isinstance(obj.value, Dim) else type(obj.value)
    return type(obj)
