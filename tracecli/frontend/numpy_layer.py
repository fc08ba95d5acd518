"""torch._numpy as the numpy of traced arrays: which of its functions serves each of
numpy's, the corrections that make its dtypes numpy's, and the settings tracing gives it.

torch._numpy is numpy's API implemented with torch ops, the layer torch.compile traces
numpy through. Its dtypes follow torch's where numpy's differ (int / int is float32
there, float64 in numpy; a cumsum of int32 stays int32, numpy's is int64): ufuncs are
run in the dtypes numpy's own type resolution gives (`loop_dtypes`), and the reductions
known to differ are corrected here. Its defaults are numpy's (float64, int64), not the
ones torch.compile takes from its settings.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable

import numpy
import torch
import torch._numpy as tnp
import torch._numpy._dtypes_impl as tnp_dtypes_impl
import torch._numpy._util as tnp_util

from tracecli.core.dims import Dim
from tracecli.core.errors import TracingError
from tracecli.frontend.source import location_of, user_frame

# torch's dtypes that numpy has and torch._numpy follows, both ways (torch._numpy has no
# uint16, uint32 or uint64).
NUMPY_DTYPES = {
    torch.bool: numpy.dtype("bool"), torch.uint8: numpy.dtype("uint8"), torch.int8: numpy.dtype("int8"),
    torch.int16: numpy.dtype("int16"), torch.int32: numpy.dtype("int32"), torch.int64: numpy.dtype("int64"),
    torch.float16: numpy.dtype("float16"), torch.float32: numpy.dtype("float32"),
    torch.float64: numpy.dtype("float64"), torch.complex64: numpy.dtype("complex64"),
    torch.complex128: numpy.dtype("complex128"),
}
TORCH_DTYPES = {numpy_dtype: torch_dtype for torch_dtype, numpy_dtype in NUMPY_DTYPES.items()}


class NumpyRefusal(TracingError):
    """numpy inside the traced function doing what tracing cannot follow."""


def refusal(message: str) -> NumpyRefusal:
    """An error at the line of the user's code that called numpy (never a line inside
    numpy's files or tracecli's)."""
    frame = user_frame(sys._getframe(1))
    if frame is None:
        return NumpyRefusal(message)
    where = location_of(frame)
    return NumpyRefusal(message, file=where.file, line=where.line, source=where.text)


@functools.cache
def counterparts() -> dict:
    """numpy's functions and ufuncs -> torch._numpy's, by name in the matching module."""
    found = {}
    for np_module, tnp_module in ((numpy, tnp), (numpy.fft, tnp.fft), (numpy.linalg, tnp.linalg)):
        for name, fn in vars(tnp_module).items():
            np_fn = getattr(np_module, name, None) if callable(fn) and not name.startswith("_") else None
            if np_fn is not None and not isinstance(np_fn, type):
                found[np_fn] = fn
    found[numpy.asanyarray] = tnp.asarray  # an ndarray subclass is all asanyarray keeps: none is traced
    found[numpy.ascontiguousarray] = _ascontiguousarray
    for name in ("cumsum", "cumprod"):
        found[getattr(numpy, name)] = _accumulating(getattr(tnp, name))
    for name in ("any", "all"):
        found[getattr(numpy, name)] = _boolean(getattr(tnp, name))
    return found


# Methods whose torch._numpy function is corrected above: `a.cumsum()` is np.cumsum(a).
AS_FUNCTIONS = frozenset({"cumsum", "cumprod", "any", "all"})


def _accumulating(fn: Callable) -> Callable:
    """numpy accumulates bools and small integers in its default int (torch in their own dtype)."""

    def accumulate(a, axis=None, dtype=None, out=None):
        kind = tnp.asarray(a).dtype.torch_dtype
        if dtype is None and out is None and (kind == torch.bool or (not kind.is_floating_point and
                                                                     not kind.is_complex and kind.is_signed and
                                                                     kind.itemsize < 8)):
            dtype = tnp.int64
        return fn(a, axis=axis, dtype=dtype, out=out)

    return accumulate


def _boolean(fn: Callable) -> Callable:
    """numpy's any() and all() are bools (torch's, of uint8, are uint8)."""

    def reduce(*args, **kwargs):
        result = fn(*args, **kwargs)
        if kwargs.get("out") is None and isinstance(result, tnp.ndarray) and result.dtype.torch_dtype != torch.bool:
            return result.astype(tnp.bool_)
        return result

    return reduce


def _ascontiguousarray(a, dtype=None, *, like=None):
    # torch._numpy's own replaces the tensor of the array it was given: another array
    # would stop sharing its memory.
    return tnp.ndarray(tnp.asarray(a, dtype=dtype, like=like).tensor.contiguous())


def numpy_name(func: Callable) -> str:
    module = getattr(func, "__module__", None) or "numpy"
    return f"{module if module.startswith('numpy') else 'numpy'}.{getattr(func, '__name__', func)}"


# numpy's functions and methods whose 0-d result is an array; others (ufuncs,
# reductions, `a[i]`) give a numpy scalar then.
ARRAY_MAKERS = frozenset({
    "array", "asarray", "asanyarray", "ascontiguousarray", "copy", "reshape", "squeeze", "expand_dims",
    "broadcast_to", "transpose", "swapaxes", "moveaxis", "zeros_like", "ones_like", "full_like", "empty_like",
    "where", "astype", "view", "flatten", "ravel", "atleast_1d", "atleast_2d", "atleast_3d", "flip", "roll",
})


def loop_dtypes(ufunc: numpy.ufunc, inputs: tuple) -> tuple | None:
    """The dtypes numpy runs `ufunc` in on these inputs, then its outputs' (torch._numpy
    has its own rules, from torch's: int / int is float32 there, float64 in numpy).
    Python numbers are weak (NEP 50); None where numpy cannot say."""
    given = []
    for x in inputs:
        if isinstance(x, torch.Tensor):
            given.append(NUMPY_DTYPES.get(x.dtype))
        elif type(x) is bool:
            given.append(numpy.dtype(bool))
        elif type(x) in (int, float, complex):
            given.append(type(x))
        elif isinstance(x, Dim):  # a size under symbolic shapes
            given.append(int)
        elif isinstance(getattr(x, "dtype", None), numpy.dtype):  # an array, traced or not, or a numpy scalar
            given.append(x.dtype)
        else:
            return None
    if any(d is None for d in given):
        return None
    try:
        return ufunc.resolve_dtypes((*given, *(None,) * ufunc.nout))
    except (TypeError, AttributeError, numpy.exceptions.DTypePromotionError):
        return None


# -- torch._numpy's settings while tracing ---------------------------------------------------

# torch._numpy's defaults are numpy's (which torch.compile takes from its own settings):
# float64, complex128 and numpy's int.
_NUMPY_DEFAULTS = tnp_dtypes_impl.DefaultDTypes(
    float_dtype=TORCH_DTYPES[numpy.asarray(0.0).dtype], complex_dtype=TORCH_DTYPES[numpy.asarray(0j).dtype],
    int_dtype=TORCH_DTYPES[numpy.asarray(0).dtype],
)
_COERCE = tnp_util._coerce_to_tensor


def _coerce_to_tensor(obj, dtype=None, copy=False, ndmin=0):
    """torch._numpy making a tensor of what is not one (a list, a number, a numpy array):
    as torch._numpy does it, but with numpy's dtype for Python data named in the call
    (torch._numpy switches torch's default dtype for it, which tracing refuses)."""
    if not isinstance(obj, torch.Tensor):
        if isinstance(obj, numpy.ndarray):
            kind = obj.dtype
        else:
            kind = numpy.asarray(obj).dtype
            if kind not in TORCH_DTYPES:
                raise refusal(f"a numpy array of {kind} is not traced: a traced array holds one of torch's dtypes")
        obj = torch.as_tensor(obj, dtype=TORCH_DTYPES.get(kind))
    return _COERCE(obj, dtype, copy, ndmin)


_NEP50 = tnp_dtypes_impl.nep50_to_tensors
# (A size symbol is a number too, but torch's functions take it only as a tensor.)
_WEAK = (bool, int, float, complex)
# torch's comparisons take a number as it is, as the arithmetic ops do.
_COMPARISONS = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
                          "not_equal"})


def _nep50_to_tensors(x1, x2, handle_weaks: bool, function_name: str):
    """torch._numpy promoting an array with a Python number (NEP 50): the number itself
    where the array's dtype is the result's, which torch's own promotion of a number then
    gives too (`a * 2` is `ltorch.mul(t0, 2)`), rather than a 0-d tensor made of it first.
    Half precision excepted: numpy rounds the number to it first, torch does not."""
    if ((handle_weaks or function_name in _COMPARISONS) and isinstance(x1, torch.Tensor) and type(x2) in _WEAK
            and function_name not in tnp_dtypes_impl._NEP50_FUNCS_TENSOR_ONLY
            and x1.dtype not in (torch.float16, torch.bfloat16)):
        try:
            weak, strong = tnp_dtypes_impl._category(_dtype_for_scalar(type(x2))), \
                tnp_dtypes_impl._category(x1.dtype)
        except KeyError:  # a dtype torch._numpy does not rank
            return _NEP50(x1, x2, handle_weaks, function_name)
        if weak < strong or (weak == strong and not (weak == 1 and _out_of_bounds(x2, x1.dtype))):
            return x1, x2
    return _NEP50(x1, x2, handle_weaks, function_name)


def _out_of_bounds(number: int, dtype: torch.dtype) -> bool:
    # NEP 50 refuses an integer the array's dtype cannot hold: torch._numpy's own says so.
    info = torch.iinfo(dtype)
    return not info.min <= number <= info.max


_IS_SCALAR = tnp_dtypes_impl.is_scalar_or_symbolic
_DTYPE_FOR_SCALAR = tnp_dtypes_impl._dtype_for_scalar


def _is_scalar_or_symbolic(x) -> bool:
    """torch._numpy's test for a Python number: a size symbol is one (an int)."""
    return isinstance(x, Dim) or _IS_SCALAR(x)


def _dtype_for_scalar(kind: type) -> torch.dtype:
    return torch.int64 if kind is Dim else _DTYPE_FOR_SCALAR(kind)


def settings() -> list[tuple[object, str, object]]:
    """(owner, attribute, value): torch._numpy as tracing needs it, set while tracing."""
    return [
        (tnp_dtypes_impl, "_default_dtypes", _NUMPY_DEFAULTS),
        (tnp_util, "_coerce_to_tensor", _coerce_to_tensor),
        (tnp_dtypes_impl, "nep50_to_tensors", _nep50_to_tensors),
        (tnp_dtypes_impl, "is_scalar_or_symbolic", _is_scalar_or_symbolic),
        (tnp_dtypes_impl, "_dtype_for_scalar", _dtype_for_scalar),
    ]


__all__ = ["ARRAY_MAKERS", "AS_FUNCTIONS", "NUMPY_DTYPES", "TORCH_DTYPES", "NumpyRefusal", "counterparts",
           "loop_dtypes", "numpy_name", "refusal", "settings"]
