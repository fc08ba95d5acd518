"""How the tracer treats numpy: the torch calls that meet it, numpy's own entry points
while tracing, and a numpy array the entry returns.

- `x.numpy()` (and numpy converting a tensor, which is the same call) is a TracedArray
  of x's own traced tensor (frontend/numpy_arrays.py), refused where eager refuses it:
  on a GPU, requiring grad, or of a dtype numpy lacks.
- `torch.from_numpy(a)` is that tensor itself (their memory is one, as in eager);
  `torch.as_tensor(a)`, `torch.asarray(a)`, `torch.tensor(a)` and `t.new_tensor(a)` are
  those calls on it.
- A numpy scalar given to torch is the number torch's argument parser reads it as;
  `torch.tensor(np.float64(0.1))` keeps its dtype, as torch does.
- numpy's constructors, which do not ask the objects they get (NEP 18 leaves them out),
  are stood in for while tracing: `np.asarray(t)`, `np.array(t)`. So is numpy's global
  random generator, refused at the line that draws from it.
- The entry returning an array returns one: its trace ends in `torch.Tensor.numpy(t)`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy
import torch
import torch._numpy as tnp

from tracecli.core.pytree import Rebuild, register_node, tree_leaves, tree_map
from tracecli.core.values import TensorValue
from tracecli.frontend.numpy_arrays import MIXED, TracedArray, traced_function
from tracecli.frontend.numpy_layer import NUMPY_DTYPES, counterparts, refusal, settings
from tracecli.frontend.proxy import TensorProxy

# A handler's answer for a call that is not numpy's to handle: the tracer traces it as
# the torch call it is.
UNHANDLED = object()


def torch_number(scalar: numpy.generic) -> object:
    """A numpy scalar given to torch, as torch's argument parser reads it: integers as
    ints; numpy's bool and floats as floats (torch has no case for numpy's bool: an int32
    tensor plus np.bool_(True) is float32 in eager); complex128, a Python complex, as
    one; complex64 as the float of its real part."""
    if isinstance(scalar, numpy.integer):
        return int(scalar)
    if isinstance(scalar, complex):
        return complex(scalar)
    if isinstance(scalar, (numpy.floating, numpy.bool_, numpy.complexfloating)):
        return float(scalar.real)
    return scalar


def numpy_leaf(obj: object) -> object:
    """A numpy object among a torch call's arguments, as the tracer hands it on."""
    if type(obj) is TracedArray:
        raise refusal(f"a numpy array made from traced tensors is given to torch: {MIXED}")
    return torch_number(obj)


NUMPY_LEAVES = (numpy.generic, TracedArray)


# -- torch calls ----------------------------------------------------------------------------


def _numpy(tracer, func, args: tuple, kwargs: dict):
    """`x.numpy(force=False)`."""
    tensor = args[0]
    if type(tensor) is not TensorProxy:
        return UNHANDLED  # a real tensor's values: read for real
    force = bool(args[1] if len(args) > 1 else kwargs.get("force", False))
    value = tracer.value_of(tensor)
    if force:
        tensor = tracer.on_torch_call(torch.Tensor.cpu, (tracer.on_torch_call(torch.Tensor.detach, (tensor,), {}),), {})
        value = tracer.value_of(tensor)
    if value.device != "cpu":
        raise refusal(f"can't convert {value.device} device type tensor to numpy, as eager says: use Tensor.cpu() to "
                      "copy the tensor to host memory first")
    if tracer.training.requires_grad(value):
        raise refusal("can't call numpy() on a tensor that requires grad, as eager says: use tensor.detach().numpy()")
    if value.dtype.name not in _NUMPY_NAMES:
        if value.dtype.name in ("uint16", "uint32", "uint64"):
            raise refusal(f"numpy arrays of {value.dtype.name} are not traced (torch's numpy layer has none): convert "
                          "the tensor first (t.long().numpy())")
        raise refusal(f"numpy has no dtype for {value.dtype.name}, as eager says: convert the tensor first "
                      "(t.float().numpy())")
    return TracedArray(tnp.ndarray(tensor))


_NUMPY_NAMES = frozenset(str(t).removeprefix("torch.") for t in NUMPY_DTYPES)


def _array(tracer, func, args: tuple, kwargs: dict):
    """`Tensor.__array__`: numpy's own code converting a traced tensor (a ufunc given one,
    `asarray` imported by name, a library reading it)."""
    if not any(type(leaf) is TensorProxy for leaf in tree_leaves((args, kwargs))):
        return UNHANDLED
    raise refusal("numpy converts a traced tensor to an array in its own code here, reading its values, which tracing "
                  "does not have: numpy is traced through its module's functions (np.asarray(t), np.sin(a) of an "
                  "array a = t.numpy()) and the arrays' methods; or use the torch op on the tensor")


def _data(position: int) -> Callable:
    """`torch.tensor(data)`, `torch.as_tensor(data)`, `torch.asarray(obj)`, `t.new_tensor(data)`
    (`data` at `position`): an array among the data is its tensor; numpy scalars are
    numbers of their own dtype."""

    def handle(tracer, func, args: tuple, kwargs: dict):
        given_by_name = len(args) <= position
        data = _data_argument(func, args, kwargs, position)
        if data is None or not any(type(x) is TracedArray or isinstance(x, numpy.generic) for x in tree_leaves(data)):
            return UNHANDLED
        kwargs = dict(kwargs)
        if kwargs.get("dtype") is None and func is not torch.Tensor.new_tensor and _numbers_only(data):
            # torch's own reading of the numbers gives the dtype (np.float64 in a list of floats makes float64).
            kwargs["dtype"] = func(data).dtype
        plain = tree_map(_plain_data, data)
        if given_by_name:
            kwargs[_DATA_NAMES[func]] = plain
        else:
            args = (*args[:position], plain, *args[position + 1:])
        return tracer.on_torch_call(func, args, kwargs)

    return handle


_DATA_NAMES = {torch.tensor: "data", torch.as_tensor: "data", torch.asarray: "obj", torch.Tensor.new_tensor: "data"}


def _data_argument(func, args: tuple, kwargs: dict, position: int):
    return args[position] if len(args) > position else kwargs.get(_DATA_NAMES[func])


def _numbers_only(data) -> bool:
    return all(isinstance(x, (int, float, complex, numpy.generic)) and type(x) is not TracedArray
               for x in tree_leaves(data))


def _plain_data(leaf):
    if type(leaf) is TracedArray:
        return leaf.tensor
    return leaf.item() if isinstance(leaf, numpy.generic) else leaf


HANDLERS = {
    torch.Tensor.numpy: _numpy,
    torch.Tensor.__array__: _array,
    torch.tensor: _data(0),
    torch.as_tensor: _data(0),
    torch.asarray: _data(0),
    torch.Tensor.new_tensor: _data(1),
}


# -- what the entry returns -------------------------------------------------------------------


@dataclass(frozen=True)
class ArrayOutput:
    """Where eager returns a numpy array (or a numpy scalar: `scalar`), the traced tensor
    holding its values. Printed code builds the array: `torch.Tensor.numpy(t3)`, and
    `numpy_scalar(torch.Tensor.numpy(t3))` for a scalar."""

    value: object
    scalar: bool = False


def numpy_scalar(array):
    """The numpy scalar a 0-d array holds, as numpy's reductions give it (`a.sum()`)."""
    if type(array) is TracedArray:  # a saved trace traced again
        return TracedArray(array.array, scalar=True)
    return array[()]


numpy_scalar.tracecli_module = __name__  # a saved file imports it from here


def _array_rebuild(out: ArrayOutput) -> Rebuild:
    if out.scalar:
        return Rebuild(numpy_scalar, (ArrayOutput(out.value),))
    return Rebuild(torch.Tensor.numpy, (out.value,))


register_node(ArrayOutput, lambda out: ([out.value], out.scalar),
              lambda children, scalar: ArrayOutput(children[0], scalar), rebuild=_array_rebuild)


def array_output(array: TracedArray, value: TensorValue) -> ArrayOutput:
    return ArrayOutput(value, array.scalar)


# -- numpy's own entry points while tracing --------------------------------------------------


def _holds_traced(obj) -> bool:
    return any(type(leaf) is TracedArray or isinstance(leaf, TensorProxy) for leaf in tree_leaves(obj))


def _constructor(original: Callable) -> Callable:
    """`np.asarray(t)`, `np.array(a)`: numpy's constructors take what they get without
    asking it (NEP 18 leaves them out): traced arrays and tensors go to torch._numpy."""

    def construct(*args, **kwargs):
        if not _holds_traced((args, kwargs)):
            return original(*args, **kwargs)
        return traced_function(original, args, kwargs)

    construct.__wrapped__ = original
    return construct


_FROM_NUMPY = torch.from_numpy


def _from_numpy(array):
    """`torch.from_numpy(a)`: the tensor holding the array's values, its memory."""
    if type(array) is not TracedArray:
        return _FROM_NUMPY(array)
    if array.scalar:
        raise TypeError(f"expected np.ndarray (got numpy.{array.__class__.__name__})")
    return array.tensor


def _refusing_draw(name: str) -> Callable:
    def draw(*args, **kwargs):
        raise refusal(f"numpy.random.{name} uses numpy's global generator while traced: the trace would keep the "
                      "numbers drawn now as constants, the same on every call; draw with torch instead (torch.rand, "
                      "torch.randn, torch.randint, torch.randperm), which the trace runs on every call")

    return draw


_GLOBAL_GENERATOR = numpy.random.mtrand._rand
_DRAWS = tuple(
    name for name in dir(numpy.random)
    if getattr(getattr(numpy.random, name), "__self__", None) is _GLOBAL_GENERATOR and name != "get_state"
) + ("seed",)

@contextmanager
def numpy_overrides() -> Iterator[None]:
    """numpy's constructors and global generator, torch.from_numpy and torch._numpy's
    defaults as tracing needs them, put back as they were after."""
    counterparts()  # numpy's own functions, before any stands in for one
    patches = [
        *((numpy, name, _constructor(getattr(numpy, name)))
          for name in ("array", "asarray", "asanyarray", "ascontiguousarray")),
        *((numpy.random, name, _refusing_draw(name)) for name in _DRAWS),
        (torch, "from_numpy", _from_numpy),
        *settings(),
    ]
    originals = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    for owner, name, stand_in in patches:
        setattr(owner, name, stand_in)
    try:
        yield
    finally:
        for owner, name, original in reversed(originals):
            setattr(owner, name, original)


__all__ = ["HANDLERS", "NUMPY_LEAVES", "UNHANDLED", "ArrayOutput", "array_output", "numpy_leaf", "numpy_overrides",
           "numpy_scalar", "torch_number"]
