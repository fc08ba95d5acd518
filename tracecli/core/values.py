"""Immutable value records: what the IR says about a tensor or a number.

The live proxy that user code touches during tracing wraps a `TensorValue`; the IR
itself only ever holds these records, never live objects.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from math import prod

from tracecli.core.dims import Dim
from tracecli.core.dtypes import DType


@dataclass(frozen=True, slots=True)
class TensorType:
    """Shape, dtype and device: what a meta rule computes for one output."""

    shape: tuple[int, ...]
    dtype: DType
    device: str


@dataclass(frozen=True, slots=True)
class TensorValue:
    name: str
    shape: tuple[int, ...]
    dtype: DType
    device: str
    requires_grad: bool = False

    # Written out, not generated: every traced op and every value a pass renames makes
    # one, and the slots' own setters (bound below) take two thirds of the time of the
    # object.__setattr__ calls a frozen dataclass's __init__ makes.
    def __init__(self, name: str, shape: tuple[int, ...], dtype: DType, device: str, requires_grad: bool = False):
        _set_name(self, name)
        _set_shape(self, shape)
        _set_dtype(self, dtype)
        _set_device(self, device)
        _set_requires_grad(self, requires_grad)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return prod(self.shape)

    @property
    def type(self) -> TensorType:
        return TensorType(self.shape, self.dtype, self.device)

    def renamed(self, name: str) -> TensorValue:
        # A renaming pass makes one per renamed value (78 000 for 100 000 traced calls):
        # built as core/symbol.py's `new_bound_symbol` builds bound symbols, 0.15 µs
        # instead of the constructor's 0.38 µs.
        value = _TensorValueDraft()
        value.name = name
        value.shape = self.shape
        value.dtype = self.dtype
        value.device = self.device
        value.requires_grad = self.requires_grad
        value.__class__ = TensorValue
        return value


_set_name, _set_shape, _set_dtype, _set_device, _set_requires_grad = (
    TensorValue.__dict__[f.name].__set__ for f in fields(TensorValue)
)


class _TensorValueDraft:
    """TensorValue's slots without the frozen guard (same names, same layout)."""

    __slots__ = TensorValue.__slots__


@dataclass(frozen=True, slots=True)
class NumberValue:
    """A Python number (or other plain constant such as a device string) given as input,
    or a size symbol (`value` is the symbol itself) that `prims.shape` reads from a tensor.

    The trace is specialised on an input's known value: the body uses the value itself,
    the signature keeps the parameter so the compiled function takes the same arguments.
    """

    name: str
    value: object

    @property
    def python_type(self) -> str:
        return "int" if isinstance(self.value, Dim) else type(self.value).__name__

    @property
    def is_size(self) -> bool:
        return isinstance(self.value, Dim)

    def renamed(self, name: str) -> NumberValue:
        return NumberValue(name, Dim.symbol(name) if isinstance(self.value, Dim) else self.value)


Value = TensorValue | NumberValue

