"""The live proxy user code touches while tracing.

A `torch.Tensor` wrapper subclass, so `isinstance(x, torch.Tensor)` holds and
nn.Module code runs unchanged. It carries only its IR value; every torch call on
it is caught by the tracer's TorchFunctionMode. Its storage-less wrapper claims the
traced device, which never needs to exist on this machine.
"""

from __future__ import annotations

import torch

from tracecli.core.values import TensorValue
from tracecli.frontend.numpy_arrays import tensor_array_function
from tracecli.frontend.segments import VALUE_READERS
from tracecli.ops.torch_bridge import TO_TORCH


class ProxyEscapedError(RuntimeError):
    """A traced tensor reached torch outside the trace: `names`, the values it held."""

    def __init__(self, message: str, names: tuple[str, ...] = ()):
        super().__init__(message)
        self.names = names


class TensorProxy(torch.Tensor):
    __slots__ = ("value",)

    @staticmethod
    def __new__(cls, value: TensorValue, sizes: tuple[int, ...] | None = None):
        # `sizes`: the example sizes of a value with symbolic dims. Reads of the shape are
        # answered by the tracer from the value; the wrapper only needs some ints.
        sizes = value.shape if sizes is None else sizes
        try:
            proxy = torch.Tensor._make_wrapper_subclass(cls, sizes, dtype=TO_TORCH[value.dtype], device=value.device)
        except RuntimeError:  # a device type this torch build does not know at all
            proxy = torch.Tensor._make_wrapper_subclass(cls, sizes, dtype=TO_TORCH[value.dtype], device="meta")
        proxy.value = value
        return proxy

    # Outside the tracer's mode a proxy behaves as an inert wrapper; anything that
    # reaches the dispatcher means a traced tensor escaped the trace.
    __torch_function__ = torch._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        names = tuple(a.value.name for a in (*args, *(kwargs or {}).values()) if isinstance(a, TensorProxy))
        raise ProxyEscapedError(
            f"a traced tensor was used outside the trace (in {func}); "
            "keep tensors created while tracing inside the traced function", names)

    def __array_function__(self, func, types, args, kwargs):
        # numpy's functions given a traced tensor (`np.full_like(t, 2)`) hand themselves to
        # it (NEP 18), where eager's tensor would be read as an array: traced as numpy on
        # the array `t.numpy()` is (frontend/numpy_arrays.py).
        return tensor_array_function(func, args, kwargs)

    def __repr__(self) -> str:  # noqa: D105 - shown if user code prints a traced tensor
        if VALUE_READERS:
            # A call traced in segments: printing reads the value (frontend/segments.py).
            return VALUE_READERS[-1](self)
        v = self.value
        return f"TensorProxy({v.name}: {v.device} {v.dtype.short}{list(v.shape)})"

