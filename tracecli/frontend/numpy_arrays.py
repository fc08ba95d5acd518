"""numpy arrays inside the traced function.

`x.numpy()`, `np.asarray(x)` and numpy functions given traced tensors hand the user's
code a TracedArray: a numpy array whose values are a traced tensor. What the code does
with it is numpy's API as torch._numpy implements it with torch ops, the layer
torch.compile traces numpy through: each operation is torch calls, which the tracer
records at the user's line like any other, with numpy's own dtype rules (float64 and
int64 by default, NEP 50 promotion). numpy hands itself to such an array through its
protocols: ufuncs and operators through `__array_ufunc__` (NEP 13), its other functions
through `__array_function__` (NEP 18).

An array from `x.numpy()` holds x's own traced tensor, so a write through either
(`a[0] = 0`, `a += 1`, `x.add_(1)`) is seen by both, as their shared memory makes it in
eager. What reads an array's values (`if a.sum() > 0`, `a.tolist()`, `float(s)`), and
what torch._numpy has no counterpart for, is refused at the user's line, naming numpy.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable

import numpy
import torch
import torch._numpy as tnp
from torch._numpy import _dtypes as tnp_dtypes

from tracecli.core.errors import TracingError
from tracecli.frontend.numpy_layer import (
    ARRAY_MAKERS,
    AS_FUNCTIONS,
    NUMPY_DTYPES,
    TORCH_DTYPES,
    NumpyRefusal,
    counterparts,
    loop_dtypes,
    numpy_name,
    refusal,
)
from tracecli.frontend.segments import VALUE_READERS

# Reads of an array's values, and what to do instead.
_BRANCH_ADVICE = ("a data-dependent branch: compute both sides and pick with np.where, or move the branch out of "
                  "the traced function")
_READ_ADVICE = ("a number read out of a traced array: keep it an array, and read it where the traced function is "
                "called")
MIXED = ("an operation between a numpy array and a tensor: eager takes it through numpy's deprecated conversions, or "
         "refuses it; convert one side first (torch.from_numpy(a), or t.numpy())")


# -- into and out of torch._numpy ---------------------------------------------------------


def _tnp_dtype(dtype: numpy.dtype) -> object:
    torch_dtype = TORCH_DTYPES.get(dtype)
    if torch_dtype is None:
        raise refusal(f"numpy's {dtype} dtype is not traced: a traced array holds one of torch's dtypes "
                      "(object, string and structured arrays have none)")
    return tnp_dtypes.dtype(torch_dtype)


_OBJECT_NAMES = frozenset({"O", "object"})


def _to_tnp(obj: object, operands: bool, mine: dict) -> object:
    """An argument as torch._numpy takes it. `mine`: id(its array) -> each TracedArray met,
    so that what comes back as one of them is that very array. `operands`: numpy scalars
    are arrays of their dtype (NEP 50 promotes with them as with arrays); elsewhere (an
    axis, a fill value) they are the numbers they hold."""
    kind = type(obj)
    if kind is TracedArray:
        mine[id(obj.array)] = obj
        return obj.array
    if kind is tuple or kind is list:
        return kind(_to_tnp(item, operands, mine) for item in obj)
    if kind is dict:
        return {key: _to_tnp(value, operands, mine) for key, value in obj.items()}
    if kind is slice:
        return slice(*(_to_tnp(part, False, mine) for part in (obj.start, obj.stop, obj.step)))
    if isinstance(obj, torch.Tensor):
        # numpy takes a tensor as Tensor.__array__ gives it: t.numpy(), its own memory
        # (the tracer refuses it where eager does: on a GPU, or requiring grad).
        array = obj.numpy()
        return _to_tnp(array, operands, mine) if type(array) is TracedArray else tnp.ndarray(obj)
    if isinstance(obj, numpy.dtype):
        return _tnp_dtype(obj)
    if isinstance(obj, type) and issubclass(obj, numpy.generic) or obj is object or (type(obj) is str and obj in _OBJECT_NAMES):
        return _tnp_dtype(numpy.dtype(obj))
    if isinstance(obj, numpy.generic):
        return tnp.asarray(obj) if operands else obj.item()
    return obj


def _from_tnp(result: object, scalar: bool, mine: dict) -> object:
    """torch._numpy's result as the user's code sees it: its arrays as TracedArrays (the
    caller's own where they are one of them), its dtypes as numpy's."""
    kind = type(result)
    if kind is tnp.ndarray:
        found = mine.get(id(result))
        if found is not None:
            return found
        return TracedArray(result, scalar and result.ndim == 0)
    if kind is tuple or kind is list:
        return kind(_from_tnp(item, scalar, mine) for item in result)
    if isinstance(result, tnp_dtypes.DType):
        return NUMPY_DTYPES[result.torch_dtype]
    return result


def traced_call(fn: Callable, what: str, args: tuple, kwargs: dict, *, scalar: bool, operands: bool = False):
    """`fn` of torch._numpy on the user's arguments; `what` names it as numpy does."""
    mine: dict = {}
    args, kwargs = _to_tnp(args, operands, mine), _to_tnp(kwargs, False, mine)
    try:
        result = fn(*args, **kwargs)
    except NotImplementedError as exc:
        raise refusal(f"{what} is not traced with these arguments (torch's numpy layer: {exc}); compute it with "
                      "torch ops on torch.from_numpy(a), or outside the traced function") from None
    except NumpyRefusal:
        raise
    except TracingError as exc:
        raise TracingError(f"{what}: {exc.message}", file=exc.file, line=exc.line, source=exc.source) from None
    return _from_tnp(result, scalar, mine)


def traced_function(func: Callable, args: tuple, kwargs: dict):
    """numpy's `func` called on traced arrays or tensors."""
    fn = counterparts().get(func)
    if fn is None:
        raise refusal(f"{numpy_name(func)} is not traced: torch's numpy layer (torch._numpy) has no counterpart; "
                      "compute it with torch ops on torch.from_numpy(a), or outside the traced function")
    return traced_call(fn, numpy_name(func), args, kwargs, scalar=getattr(func, "__name__", "") not in ARRAY_MAKERS)


def traced_ufunc(ufunc: numpy.ufunc, method: str, inputs: tuple, kwargs: dict):
    """A numpy ufunc (or an operator, which numpy makes one) on traced arrays."""
    name = f"numpy.{ufunc.__name__}"
    if method != "__call__":
        raise refusal(f"{name}.{method} is not traced: torch's numpy layer has the ufuncs' plain calls only; "
                      "write it as a function (np.sum(a, axis=0) for np.add.reduce(a))")
    fn = counterparts().get(ufunc)
    if fn is None:
        raise refusal(f"{name} is not traced: torch's numpy layer (torch._numpy) has no counterpart; compute it "
                      "with torch ops on torch.from_numpy(a), or outside the traced function")
    out = kwargs.get("out")
    if out is not None:
        outs = out if isinstance(out, tuple) else (out,)
        if any(type(o) is not TracedArray for o in outs):
            raise refusal(f"{name}(..., out=...) writes into an array that is not traced: write into an array made "
                          "from traced tensors, or assign the result")
        kwargs = {**kwargs, "out": outs[0] if len(outs) == 1 else outs}
    loops = None if "dtype" in kwargs or "signature" in kwargs else loop_dtypes(ufunc, inputs)
    tensors_in = any(isinstance(x, torch.Tensor) for x in inputs)
    if loops is not None:
        inputs = tuple(_cast(x, dtype) for x, dtype in zip(inputs, loops, strict=False))
    result = traced_call(fn, name, inputs, kwargs, scalar=True, operands=True)
    if loops is not None and out is None:
        # What torch computes in, numpy's loop may not (`np.square` of ints is ints).
        results = result if isinstance(result, tuple) else (result,)
        results = tuple(_cast(r, dtype) for r, dtype in zip(results, loops[ufunc.nin:], strict=True))
        result = results if isinstance(result, tuple) else results[0]
    if tensors_in:
        # numpy gives a ufunc's result to Tensor.__array_wrap__ when a tensor was among
        # its inputs: a tensor of the array's memory, bool as uint8.
        return _wrapped_in_tensor(result)
    return result


def _cast(x: object, dtype: numpy.dtype) -> object:
    """`x` in numpy's `dtype` where it is an array or numpy scalar of another (Python
    numbers stay weak)."""
    if type(x) is TracedArray:
        return x if x.dtype == dtype else x.astype(dtype)
    if isinstance(x, torch.Tensor):
        return _cast(x.numpy(), dtype)
    if isinstance(x, (numpy.ndarray, numpy.generic)) and x.dtype != dtype:
        return x.astype(dtype)
    return x


def _wrapped_in_tensor(result):
    if isinstance(result, tuple):
        return tuple(_wrapped_in_tensor(r) for r in result)
    tensor = result.tensor
    return tensor.to(torch.uint8) if tensor.dtype == torch.bool else tensor


# -- the array -----------------------------------------------------------------------------


def _refuse_read(what: str, advice: str = _READ_ADVICE, as_tensor: Callable | None = None) -> Callable:
    """A read of the array's values: refused, or while the call is traced in segments, the
    same read of its tensor (`as_tensor`), which cuts the trace there and gets the value."""

    def read(self, *args, **kwargs):
        if as_tensor is not None and VALUE_READERS:
            return as_tensor(self.tensor, *args, **kwargs)
        raise refusal(f"{what} of a numpy array made from traced tensors needs its values, which tracing does "
                      f"not have ({advice})")

    read.__name__ = what
    return read


def _refusing(message: str) -> Callable:
    def refuse(self, *args, **kwargs):
        raise refusal(message)

    return refuse


def _operator(ufunc: numpy.ufunc, symbol: str, *, reflected: bool = False, in_place: bool = False) -> Callable:
    """An operator, as numpy's arrays have it: its ufunc (`a + b` is np.add(a, b))."""

    def apply(self, other):
        if isinstance(other, torch.Tensor):
            raise refusal(f"`{symbol}`: {MIXED}")
        if getattr(type(other), "__array_ufunc__", False) is None:
            return NotImplemented  # a type that asks numpy to leave the operator to it
        inputs = (other, self) if reflected else (self, other)
        return traced_ufunc(ufunc, "__call__", inputs, {"out": (self,)} if in_place else {})

    return apply


def _unary(ufunc: numpy.ufunc) -> Callable:
    def apply(self):
        return traced_ufunc(ufunc, "__call__", (self,), {})

    return apply


@functools.cache
def _method_call(name: str) -> Callable:
    def call(array, *args, **kwargs):
        return getattr(array, name)(*args, **kwargs)

    return call


def _index_gives_scalar(key: object) -> bool:
    """Whether indexing with `key` picks one element, which numpy gives as a scalar."""
    keys = key if type(key) is tuple else (key,)
    return all(isinstance(k, (int, numpy.integer)) and not isinstance(k, bool) for k in keys)


class TracedArray:
    """A numpy array (or numpy scalar: `scalar`) the traced code holds, its values the
    traced tensor `array.tensor`, `array` being torch._numpy's ndarray around it."""

    __slots__ = ("array", "scalar")
    __hash__ = None  # as numpy's arrays

    def __init__(self, array: tnp.ndarray, scalar: bool = False):
        self.array = array
        self.scalar = scalar

    @property
    def __class__(self):  # noqa: D105 - isinstance(a, np.ndarray) (or np.floating) holds, as in eager
        return NUMPY_DTYPES[self.array.tensor.dtype].type if self.scalar else numpy.ndarray

    @property
    def tensor(self) -> torch.Tensor:
        return self.array.tensor

    # numpy hands its ufuncs and functions to the array (NEP 13, NEP 18).
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return traced_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return traced_function(func, args, kwargs)

    # What it is: answered without recording anything.
    @property
    def dtype(self) -> numpy.dtype:
        return NUMPY_DTYPES[self.array.tensor.dtype]

    @property
    def shape(self) -> tuple:
        return self.array.shape

    @property
    def ndim(self) -> int:
        return self.array.ndim

    @property
    def size(self) -> int:
        return self.array.size

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.array.size * self.dtype.itemsize

    @property
    def T(self) -> TracedArray:  # noqa: N802 - numpy's name
        return traced_call(operator.attrgetter("T"), "ndarray.T", (self,), {}, scalar=False)

    @property
    def real(self) -> TracedArray:
        return traced_call(operator.attrgetter("real"), "ndarray.real", (self,), {}, scalar=False)

    @property
    def imag(self) -> TracedArray:
        return traced_call(operator.attrgetter("imag"), "ndarray.imag", (self,), {}, scalar=False)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.array.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (TracedArray(row, row.ndim == 0) for row in self.array)

    def __getitem__(self, key):
        return traced_call(operator.getitem, "numpy indexing", (self, key), {}, scalar=_index_gives_scalar(key))

    def __setitem__(self, key, value) -> None:
        traced_call(operator.setitem, "numpy item assignment", (self, key, value), {}, scalar=False)

    def __copy__(self) -> TracedArray:
        return self.copy()

    def __deepcopy__(self, memo) -> TracedArray:
        return self.copy()

    def __getattr__(self, name: str):
        # Methods (a.sum(axis=0), a.reshape(2, -1), a.astype(np.float64), ...) are
        # torch._numpy's, on the same arguments.
        if name.startswith("__"):
            raise AttributeError(name)
        if name in AS_FUNCTIONS:
            function = getattr(numpy, name)
            return lambda *args, **kwargs: traced_function(function, (self, *args), kwargs)
        try:
            found = getattr(self.array, name)
        except AttributeError:
            if hasattr(numpy.ndarray, name):
                raise refusal(f"numpy's ndarray.{name} is not traced: torch's numpy layer (torch._numpy) has no "
                              "counterpart; compute it with torch ops on torch.from_numpy(a)") from None
            raise AttributeError(f"'numpy.ndarray' object has no attribute '{name}'") from None
        if not callable(found):
            return traced_call(operator.attrgetter(name), f"ndarray.{name}", (self,), {}, scalar=False)
        scalar = name not in ARRAY_MAKERS

        def method(*args, **kwargs):
            return traced_call(_method_call(name), f"ndarray.{name}", (self, *args), kwargs, scalar=scalar)

        method.__name__ = name
        return method

    def __repr__(self) -> str:
        value = getattr(self.array.tensor, "value", None)
        what = "numpy scalar" if self.scalar else "numpy array"
        if value is None:
            return f"<traced {what}>"
        return f"<traced {what} {value.name}: {value.dtype.short}{list(value.shape)}>"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if not spec:
            return repr(self)
        return _refuse_read("formatting")(self)

    __bool__ = _refuse_read("bool()", _BRANCH_ADVICE, torch.Tensor.__bool__)
    __int__ = _refuse_read("int()", as_tensor=torch.Tensor.__int__)
    __float__ = _refuse_read("float()", as_tensor=torch.Tensor.__float__)
    __complex__ = _refuse_read("complex()", as_tensor=torch.Tensor.__complex__)
    __index__ = _refuse_read("using as an index", as_tensor=torch.Tensor.__index__)
    __contains__ = _refuse_read("`in`")
    __array__ = _refuse_read("converting it with np.asarray outside numpy's module functions (or another library "
                             "reading it)", "numpy's functions called as np.<name>, and the array's methods, are "
                                            "traced; a library that reads arrays runs outside the traced function")
    item = _refuse_read("ndarray.item()", as_tensor=torch.Tensor.item)
    resize = _refusing("ndarray.resize() changes an array's shape in place, which tracing does not follow (eager "
                       "refuses it for an array sharing a tensor's memory): use np.resize(a, shape) or "
                       "a.reshape(shape)")
    tolist = _refuse_read("ndarray.tolist()", as_tensor=torch.Tensor.tolist)
    tobytes = _refuse_read("ndarray.tobytes()")
    tofile = _refuse_read("ndarray.tofile()")
    __reduce__ = _refuse_read("pickling")

    @property
    def data(self):
        return _refuse_read("ndarray.data (its memory)")(self)


_BINARY = {
    "add": (numpy.add, "+"), "sub": (numpy.subtract, "-"), "mul": (numpy.multiply, "*"),
    "truediv": (numpy.true_divide, "/"), "floordiv": (numpy.floor_divide, "//"), "mod": (numpy.remainder, "%"),
    "pow": (numpy.power, "**"), "matmul": (numpy.matmul, "@"), "and": (numpy.bitwise_and, "&"),
    "or": (numpy.bitwise_or, "|"), "xor": (numpy.bitwise_xor, "^"), "lshift": (numpy.left_shift, "<<"),
    "rshift": (numpy.right_shift, ">>"), "divmod": (numpy.divmod, "divmod"),
}
for _name, (_ufunc, _symbol) in _BINARY.items():
    setattr(TracedArray, f"__{_name}__", _operator(_ufunc, _symbol))
    setattr(TracedArray, f"__r{_name}__", _operator(_ufunc, _symbol, reflected=True))
    if _name != "divmod":
        setattr(TracedArray, f"__i{_name}__", _operator(_ufunc, f"{_symbol}=", in_place=True))
for _name, _ufunc, _symbol in (("eq", numpy.equal, "=="), ("ne", numpy.not_equal, "!="), ("lt", numpy.less, "<"),
                               ("le", numpy.less_equal, "<="), ("gt", numpy.greater, ">"),
                               ("ge", numpy.greater_equal, ">=")):
    setattr(TracedArray, f"__{_name}__", _operator(_ufunc, _symbol))
for _name, _ufunc in (("neg", numpy.negative), ("pos", numpy.positive), ("abs", numpy.absolute),
                      ("invert", numpy.invert)):
    setattr(TracedArray, f"__{_name}__", _unary(_ufunc))


def tensor_array_function(func: Callable, args: tuple, kwargs: dict):
    """numpy's `func` given a traced tensor (`np.full_like(t, 2)`, `np.concatenate([t, u])`):
    what numpy does with a tensor. The functions numpy writes as a call of the object's
    own method (`np.sum(t)` calls `t.sum(axis=None, ...)`) call the tensor's; the others
    take it as an array, as `np.asarray(t)` gives it."""
    implementation = getattr(func, "_implementation", None)
    code = getattr(implementation, "__code__", None)
    if code is not None and code.co_filename.replace("\\", "/").endswith("/fromnumeric.py"):
        return implementation(*args, **kwargs)
    return traced_function(func, args, kwargs)


__all__ = ["MIXED", "TracedArray", "tensor_array_function", "traced_call", "traced_function", "traced_ufunc"]
