"""The map from torch callables (functions, methods, operators, properties) to ltorch.

Each entry is an adapter: it takes the call's arguments (tensors already replaced by
values) and calls ltorch symbols. An adapter that cannot model a particular form of
a call returns OPAQUE, and the call is recorded as an opaque `torch.*` symbol.
"""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F

from tracecli.core import dtypes
from tracecli.core.values import TensorValue
from tracecli.ops import ltorch, torch_map_indexing, torch_map_nn
from tracecli.ops.ltorch._base import shape_arg
from tracecli.ops.opaque import OPAQUE, UnsupportedCall
from tracecli.ops.promotion import ShapeError, canonical_dim
from tracecli.ops.torch_bridge import to_dtype


def _no_inplace(name: str, inplace: bool) -> None:
    if inplace:
        raise UnsupportedCall(f"{name}(..., inplace=True) mutates its input; in-place operations are not traced yet")


def _swap(sym) -> Callable:
    return lambda self, other: sym(other, self)


def _div(input, other, *, rounding_mode=None):
    if rounding_mode is None:
        return ltorch.true_divide(input, other)
    if rounding_mode == "floor":
        return ltorch.floor_divide(input, other)
    return OPAQUE


def _sizes(fn):
    """torch factories take sizes as varargs, one sequence or `size=`, plus options we ignore."""

    def adapter(*sizes, size=None, dtype=None, device=None, layout=None, pin_memory=False, requires_grad=False,
                out=None, generator=None, memory_format=None):
        if out is not None or generator is not None:
            return OPAQUE
        if size is not None:
            if sizes:
                raise TypeError("sizes given both positionally and as size=")
            sizes = (size,)
        return fn(shape_arg(sizes), dtype=dtype, device=device)

    return adapter


def _new(fn):
    """Tensor.new_zeros / new_ones: a factory defaulting to the tensor's dtype and device."""

    def adapter(self, *size, dtype=None, device=None, layout=None, pin_memory=False, requires_grad=False):
        return fn(shape_arg(size), dtype=dtype or self.dtype, device=device or self.device)

    return adapter


def _new_full(self, size, fill_value, *, dtype=None, device=None, layout=None, pin_memory=False,
              requires_grad=False):
    # Unlike torch.full, the dtype is the tensor's, whatever the fill value's type.
    return ltorch.full(shape_arg((size,)), fill_value, dtype=dtype or self.dtype, device=device or self.device)


def _like(fn):
    def adapter(input, *, dtype=None, device=None, layout=None, pin_memory=False, requires_grad=False,
                memory_format=None, generator=None):
        if generator is not None:
            return OPAQUE
        return fn(input, dtype=dtype, device=device)

    return adapter


def _full(size, fill_value, *, dtype=None, device=None, layout=None, pin_memory=False, requires_grad=False,
          out=None):
    if out is not None:
        return OPAQUE
    return ltorch.full(shape_arg((size,)), fill_value, dtype=dtype, device=device)


def _arange(*args, start=None, end=None, step=None, dtype=None, device=None, layout=None, pin_memory=False,
            requires_grad=False, out=None):
    if out is not None or len(args) > 3:
        return OPAQUE
    if start is None and end is None and step is None:
        if not args:
            return OPAQUE
        return ltorch.arange(*args, dtype=dtype, device=device)
    # torch's overloads: arange(end) and arange(start, end, step=1), any part by keyword.
    positional = ("end",) if len(args) == 1 and start is None and end is None else ("start", "end", "step")
    given = dict(zip(positional, args, strict=False))
    for key, value in (("start", start), ("end", end), ("step", step)):
        if value is not None:
            if key in given:
                raise TypeError(f"arange() got multiple values for {key}")
            given[key] = value
    if "end" not in given or ("step" in given and "start" not in given):
        raise TypeError(f"arange() cannot take {sorted(given)} alone")
    return ltorch.arange(given.get("start", 0), given["end"], given.get("step", 1), dtype=dtype, device=device)


def _to(self, *args, dtype=None, device=None, non_blocking=False, copy=False, memory_format=None):
    for arg in args:
        if isinstance(arg, dtypes.DType):
            dtype = arg
        elif isinstance(arg, TensorValue):
            dtype, device = arg.dtype, arg.device
        elif isinstance(arg, str):
            device = arg
        elif arg is not None:
            return OPAQUE
    return ltorch.to(self, device=device, dtype=dtype)


def _to_dtype(dtype):
    return lambda self, memory_format=None: ltorch.to(self, dtype=dtype)


def _type(self, dtype=None, non_blocking=False, **kwargs):
    # Tensor.type() without a dtype returns a type name; with a string it converts by name.
    if not isinstance(dtype, dtypes.DType) or kwargs:
        return OPAQUE
    return ltorch.to(self, dtype=dtype)


def _var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if input.dtype.is_complex:
        return OPAQUE  # a real variance of complex values: no prim computes it
    if isinstance(dim, bool):  # the legacy var(input, unbiased) form
        dim, unbiased = None, dim
    if correction is None:
        correction = 0 if unbiased is False else 1
    return ltorch.var(input, dim, correction=correction, keepdim=keepdim)


def _softmax(sym):
    def adapter(input, dim=None, _stacklevel=3, dtype=None):
        return sym(input, dim, dtype=dtype)

    return adapter


def _identity(self, *args, **kwargs):
    return self


def _abs(input):
    # abs of a complex tensor is real: no prim computes it, so torch does.
    return OPAQUE if input.dtype.is_complex else ltorch.abs(input)


def _rdiv(self, other):
    # Python's `number / tensor`: torch computes it as reciprocal then product, which
    # rounds twice; a true division would be closer, but not what eager returns.
    return ltorch.mul(ltorch.reciprocal(self), other)


def _t(self):
    if self.ndim > 2:
        raise ShapeError(f"t() expects a tensor with at most 2 dimensions, got {self.ndim}")
    return ltorch.transpose(self, 0, 1) if self.ndim == 2 else self


def _flatten(input, start_dim=0, end_dim=-1):
    if isinstance(start_dim, str) or isinstance(end_dim, str):
        return OPAQUE  # named dimensions
    if input.ndim == 0:
        return ltorch.reshape(input, (1,))
    start, end = canonical_dim(start_dim, input.ndim), canonical_dim(end_dim, input.ndim)
    if start > end:
        raise ShapeError("flatten: start_dim cannot come after end_dim")
    shape = input.shape[:start] + (math.prod(input.shape[start : end + 1]),) + input.shape[end + 1 :]
    return ltorch.reshape(input, shape)


def _broadcast_to(input, size):
    return ltorch.expand(input, *shape_arg((size,)))


def _binary_extremum(sym):
    """torch.max(a, b) is maximum; its reductions (max(a), max(a, dim)) are not modelled."""

    def adapter(input, other=None, *args, **kwargs):
        if not isinstance(other, TensorValue) or args or kwargs:
            return OPAQUE
        return sym(input, other)

    return adapter


def _matrix_product(ndim: int):
    """torch.mm (ndim 2) and torch.bmm (ndim 3): matmul without broadcasting; other
    shapes are torch's error to raise."""

    def adapter(input, mat2, *, out=None):
        if out is not None or input.ndim != ndim or mat2.ndim != ndim or input.shape[:-2] != mat2.shape[:-2]:
            return OPAQUE
        return ltorch.matmul(input, mat2)

    return adapter


def _torch_layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    return ltorch.layer_norm(input, normalized_shape, weight, bias, eps)


def _where(condition, input=None, other=None):
    if input is None and other is None:
        return OPAQUE  # torch.where(condition) is nonzero: its shape depends on the data
    return ltorch.where(condition, input, other)


def _relu(input, inplace=False):
    _no_inplace("relu", inplace)
    return ltorch.relu(input)


def _silu(input, inplace=False):
    _no_inplace("silu", inplace)
    return ltorch.silu(input)


# Tensor methods and operators, by name (torch reaches them under several objects).
METHODS: dict[str, Callable] = {
    "add": ltorch.add, "__add__": ltorch.add, "__radd__": ltorch.add,
    "sub": ltorch.sub, "__sub__": ltorch.sub, "__rsub__": ltorch.rsub, "subtract": ltorch.sub,
    "mul": ltorch.mul, "__mul__": ltorch.mul, "__rmul__": ltorch.mul, "multiply": ltorch.mul,
    "div": _div, "divide": _div, "true_divide": ltorch.true_divide, "__truediv__": ltorch.true_divide,
    "__rtruediv__": _rdiv, "__rdiv__": _rdiv, "reciprocal": ltorch.reciprocal,
    "floor_divide": ltorch.floor_divide, "__floordiv__": ltorch.floor_divide,
    "__rfloordiv__": _swap(ltorch.floor_divide),
    "pow": ltorch.pow, "__pow__": ltorch.pow, "__rpow__": _swap(ltorch.pow),
    "neg": ltorch.neg, "__neg__": ltorch.neg, "negative": ltorch.neg, "abs": _abs, "__abs__": _abs,
    "absolute": _abs,
    "exp": ltorch.exp, "log": ltorch.log, "sin": ltorch.sin, "cos": ltorch.cos, "tanh": ltorch.tanh,
    "sqrt": ltorch.sqrt, "rsqrt": ltorch.rsqrt, "erf": ltorch.erf, "sigmoid": ltorch.sigmoid, "relu": ltorch.relu,
    "matmul": ltorch.matmul, "__matmul__": ltorch.matmul, "__rmatmul__": _swap(ltorch.matmul),
    "maximum": ltorch.maximum, "minimum": ltorch.minimum,
    "max": _binary_extremum(ltorch.maximum), "min": _binary_extremum(ltorch.minimum),
    "mm": _matrix_product(2), "bmm": _matrix_product(3),
    "sum": ltorch.sum, "mean": ltorch.mean, "amax": ltorch.amax, "amin": ltorch.amin, "var": _var,
    "softmax": ltorch.softmax, "log_softmax": ltorch.log_softmax,
    "reshape": lambda self, *shape: ltorch.reshape(self, shape_arg(shape)),
    "view": lambda self, *shape: OPAQUE if shape and isinstance(shape[0], dtypes.DType)
    else ltorch.reshape(self, shape_arg(shape)),
    "view_as": lambda self, other: ltorch.reshape(self, other.shape),
    "reshape_as": lambda self, other: ltorch.reshape(self, other.shape),
    "permute": lambda self, *dims: ltorch.permute(self, shape_arg(dims)),
    "transpose": ltorch.transpose, "swapaxes": ltorch.transpose, "swapdims": ltorch.transpose,
    "unsqueeze": ltorch.unsqueeze, "squeeze": ltorch.squeeze,
    "expand": lambda self, *sizes: ltorch.expand(self, *shape_arg(sizes)),
    "expand_as": lambda self, other: ltorch.expand(self, *other.shape),
    "broadcast_to": _broadcast_to, "flatten": _flatten, "t": _t,
    "where": lambda self, condition, other: ltorch.where(condition, self, other),
    "to": _to, "type_as": lambda self, other: ltorch.to(self, dtype=other.dtype),
    "float": _to_dtype(dtypes.float32), "half": _to_dtype(dtypes.float16), "double": _to_dtype(dtypes.float64),
    "bfloat16": _to_dtype(dtypes.bfloat16), "int": _to_dtype(dtypes.int32), "long": _to_dtype(dtypes.int64),
    "short": _to_dtype(dtypes.int16), "bool": _to_dtype(dtypes.bool8), "byte": _to_dtype(dtypes.uint8),
    "char": _to_dtype(dtypes.int8), "type": _type,
    "new_zeros": _new(ltorch.zeros), "new_ones": _new(ltorch.ones), "new_full": _new_full,
    # Values are immutable, so copies and layout changes are the value itself.
    "contiguous": _identity, "detach": _identity, "clone": ltorch.clone,
    "T": lambda self: ltorch.permute(self, tuple(reversed(range(self.ndim)))),
    "mT": lambda self: ltorch.transpose(self, -2, -1),
}
for _cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
    METHODS[_cmp] = METHODS[f"__{_cmp}__"] = getattr(ltorch, _cmp)
# torch's (and numpy's) spelled-out names for the comparisons.
COMPARISON_ALIASES = {
    "greater": ltorch.gt, "greater_equal": ltorch.ge, "less": ltorch.lt, "less_equal": ltorch.le,
    "not_equal": ltorch.ne,
}
METHODS.update(COMPARISON_ALIASES)

# Functions, by object.
FUNCTIONS: dict[Callable, Callable] = {
    torch.add: ltorch.add, torch.sub: ltorch.sub, torch.subtract: ltorch.sub, torch.rsub: ltorch.rsub,
    torch.mul: ltorch.mul, torch.multiply: ltorch.mul, torch.div: _div, torch.divide: _div,
    torch.true_divide: ltorch.true_divide, torch.floor_divide: ltorch.floor_divide, torch.pow: ltorch.pow,
    torch.neg: ltorch.neg, torch.negative: ltorch.neg, torch.abs: _abs, torch.exp: ltorch.exp,
    torch.log: ltorch.log, torch.sin: ltorch.sin, torch.cos: ltorch.cos, torch.tanh: ltorch.tanh,
    torch.sqrt: ltorch.sqrt, torch.rsqrt: ltorch.rsqrt, torch.erf: ltorch.erf, torch.sigmoid: ltorch.sigmoid,
    torch.special.expit: ltorch.sigmoid, F.sigmoid: ltorch.sigmoid, F.tanh: ltorch.tanh,
    torch.relu: ltorch.relu, F.relu: _relu, F.gelu: ltorch.gelu, F.silu: _silu,
    torch.eq: ltorch.eq, torch.ne: ltorch.ne, torch.lt: ltorch.lt, torch.le: ltorch.le, torch.gt: ltorch.gt,
    torch.ge: ltorch.ge, torch.where: _where, torch.maximum: ltorch.maximum, torch.minimum: ltorch.minimum,
    torch.matmul: ltorch.matmul, F.linear: ltorch.linear,
    torch.sum: ltorch.sum, torch.mean: ltorch.mean, torch.amax: ltorch.amax, torch.amin: ltorch.amin,
    torch.var: _var, torch.softmax: ltorch.softmax, F.softmax: _softmax(ltorch.softmax),
    torch.log_softmax: ltorch.log_softmax, F.log_softmax: _softmax(ltorch.log_softmax),
    F.layer_norm: ltorch.layer_norm,
    torch.reshape: ltorch.reshape, torch.permute: ltorch.permute, torch.transpose: ltorch.transpose,
    torch.swapaxes: ltorch.transpose, torch.unsqueeze: ltorch.unsqueeze, torch.squeeze: ltorch.squeeze,
    torch.cat: ltorch.cat, torch.concat: ltorch.cat, torch.concatenate: ltorch.cat,
    torch.zeros: _sizes(ltorch.zeros), torch.ones: _sizes(ltorch.ones), torch.full: _full,
    torch.arange: _arange, torch.rand: _sizes(ltorch.rand), torch.randn: _sizes(ltorch.randn),
    torch.rand_like: _like(ltorch.rand_like), torch.randn_like: _like(ltorch.randn_like),
    torch.zeros_like: _like(ltorch.zeros_like), torch.ones_like: _like(ltorch.ones_like),
    # Aliases and spellings of the same operations.
    torch.absolute: _abs, torch.reciprocal: ltorch.reciprocal, torch.special.erf: ltorch.erf,
    torch.swapdims: ltorch.transpose, torch.t: _t,
    torch.max: _binary_extremum(ltorch.maximum), torch.min: _binary_extremum(ltorch.minimum),
    torch.mm: _matrix_product(2), torch.bmm: _matrix_product(3),
    torch.special.softmax: ltorch.softmax, torch.special.log_softmax: ltorch.log_softmax,
    torch.layer_norm: _torch_layer_norm, torch.flatten: _flatten, torch.broadcast_to: _broadcast_to,
    **{getattr(torch, name): sym for name, sym in COMPARISON_ALIASES.items()},
}

def _inplace_div(self, other, *, rounding_mode=None):
    return ltorch.div_(self, other) if rounding_mode is None else OPAQUE


def _copy_(self, src, non_blocking=False):
    return ltorch.copy_(self, src)


METHODS.update({
    "__and__": ltorch.bitwise_and, "__rand__": ltorch.bitwise_and, "bitwise_and": ltorch.bitwise_and,
    "__or__": ltorch.bitwise_or, "__ror__": ltorch.bitwise_or, "bitwise_or": ltorch.bitwise_or,
    "__xor__": ltorch.bitwise_xor, "__rxor__": ltorch.bitwise_xor, "bitwise_xor": ltorch.bitwise_xor,
    "__invert__": ltorch.bitwise_not, "bitwise_not": ltorch.bitwise_not,
    "logical_and": ltorch.logical_and, "logical_or": ltorch.logical_or, "logical_not": ltorch.logical_not,
    "all": ltorch.all, "any": ltorch.any, "diff": ltorch.diff,
    # In place: the tracer rebinds the user's tensor to the op's new value.
    "add_": ltorch.add_, "__iadd__": ltorch.add_, "sub_": ltorch.sub_, "__isub__": ltorch.sub_,
    "mul_": ltorch.mul_, "__imul__": ltorch.mul_, "div_": _inplace_div, "__itruediv__": ltorch.div_,
    "__idiv__": ltorch.div_, "copy_": _copy_, "fill_": ltorch.fill_, "zero_": ltorch.zero_,
    "masked_fill_": ltorch.masked_fill_, "__setitem__": ltorch.setitem_,
})
FUNCTIONS.update({
    torch.bitwise_and: ltorch.bitwise_and, torch.bitwise_or: ltorch.bitwise_or,
    torch.bitwise_xor: ltorch.bitwise_xor, torch.bitwise_not: ltorch.bitwise_not,
    torch.logical_and: ltorch.logical_and, torch.logical_or: ltorch.logical_or,
    torch.logical_not: ltorch.logical_not, torch.all: ltorch.all, torch.any: ltorch.any, torch.diff: ltorch.diff,
    torch.clone: ltorch.clone,
})

# The op families kept in their own modules.
for _family in (torch_map_nn, torch_map_indexing):
    FUNCTIONS.update(_family.FUNCTIONS)
    METHODS.update(_family.METHODS)

# Property getters reach __torch_function__ as `Tensor.<name>.__get__`.
PROPERTIES: dict[Callable, Callable] = {
    torch.Tensor.T.__get__: METHODS["T"], torch.Tensor.mT.__get__: METHODS["mT"],
}

# Calls answered from the proxy's own metadata: they record nothing.
METADATA_METHODS = frozenset({
    "size", "dim", "ndimension", "numel", "nelement", "is_floating_point", "is_complex", "element_size",
    "is_contiguous", "get_device", "is_signed", "__len__", "__hash__", "stride", "storage_offset",
    "__get__",  # property reads not listed in PROPERTIES: shape, dtype, device, ndim, ...
})
# Reads that need tensor values, which a trace does not have.
DATA_DEPENDENT = frozenset({
    "__bool__", "item", "tolist", "__int__", "__float__", "__index__", "__complex__", "numpy",
    "__array__", "nonzero", "data_ptr",
})


def resolve(func: Callable) -> tuple[str, Callable | None]:
    """Classify a torch callable: ('ltorch', adapter), ('metadata', None), ('data', None),
    ('unsupported-inplace', None) or ('opaque', None)."""
    adapter = FUNCTIONS.get(func) or PROPERTIES.get(func)
    if adapter is not None:
        return "ltorch", adapter
    name = getattr(func, "__name__", "")
    qualname = getattr(func, "__qualname__", "")
    is_method = qualname.startswith(("Tensor.", "TensorBase.", "getset_descriptor."))
    if is_method or (name == "__get__" and not qualname):
        if name in DATA_DEPENDENT:
            return "data", None
        if name in METADATA_METHODS:
            return "metadata", None
        adapter = METHODS.get(name)
        if adapter is not None:
            return "ltorch", adapter
        if name.endswith("_") and not name.startswith("__"):
            # An opaque call would record a new value but leave the user's tensor as it was.
            return "unsupported-inplace", None
    return "opaque", None


__all__ = ["OPAQUE", "UnsupportedCall", "resolve", "to_dtype"]
