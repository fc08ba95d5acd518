"""Torch functions written in Python that hand themselves whole to `__torch_function__`.

`F.multi_head_attention_forward` begins

    if has_torch_function(tens_ops):
        return handle_torch_function(multi_head_attention_forward, tens_ops, query, ...)

so under the tracer's mode every call of it reaches the tracer as that one call. One
that no ltorch form takes is traced through: its body runs again, under the mode, from a
copy of the function whose module globals answer `has_torch_function*` with False. The
one hand-off is skipped and nothing else changes: the functions the body calls keep their
own globals, so a modelled one (`F.linear`, `F.softmax`) is still recorded whole, and an
unmodelled one is traced through in turn.

A function whose hand-off happens in a helper it calls (`F.max_pool2d` picks
`_max_pool2d` by its `return_indices`; `torch.meshgrid` calls `_meshgrid`) is copied with
that helper's copy in place of the helper.

Some such functions are kept whole (STAYS_WHOLE, each with why): they are about the
Python object rather than its values (`copy.deepcopy`, pickling, storages, hooks), or
their body reads tensor values, which a trace does not have.
"""

from __future__ import annotations

import dis
import inspect
import types
from collections.abc import Callable

import torch
import torch.nn.functional as F

# The names a hand-off is spelled with, as torch's modules import them.
_CHECKS = frozenset({"has_torch_function", "has_torch_function_unary", "has_torch_function_variadic"})
_HAND_OFF = _CHECKS | {"handle_torch_function"}

_OBJECT_PROTOCOL = "a Python protocol of the tensor object, not a computation on its values"
_STORAGE = "about the tensor's storage, which a traced tensor does not have"
_HOOKS = "an autograd hook on the tensor object"

# Composites that are not traced through, with why (by name: some are not in every torch).
_STAYS_WHOLE_BY_NAME = {
    (torch.Tensor, "__deepcopy__"): _OBJECT_PROTOCOL + " (copy.deepcopy)",
    (torch.Tensor, "__reduce_ex__"): _OBJECT_PROTOCOL + " (pickling)",
    (torch.Tensor, "__setstate__"): _OBJECT_PROTOCOL + " (unpickling)",
    (torch.Tensor, "_clear_non_serializable_cached_data"): _OBJECT_PROTOCOL + " (pickling)",
    (torch.Tensor, "__repr__"): _OBJECT_PROTOCOL + " (printing reads the values)",
    (torch.Tensor, "__format__"): _OBJECT_PROTOCOL + " (formatting reads the value of a 0-d tensor)",
    (torch.Tensor, "__dir__"): _OBJECT_PROTOCOL + " (dir())",
    (torch.Tensor, "__dlpack__"): _OBJECT_PROTOCOL + " (DLPack export)",
    (torch.Tensor, "__dlpack_device__"): _OBJECT_PROTOCOL + " (DLPack export)",
    (torch.Tensor, "__array_wrap__"): _OBJECT_PROTOCOL + " (numpy's result wrapping)",
    (torch.Tensor, "module_load"): _OBJECT_PROTOCOL + " (load_state_dict's assignment)",
    (torch.Tensor, "__cuda_array_interface__"): _OBJECT_PROTOCOL + " (CUDA array interface)",
    (torch.Tensor, "index"): "binds first-class dimensions (functorch.dim), which the IR has no values for",
    (torch.Tensor, "storage"): _STORAGE,
    (torch.Tensor, "storage_type"): _STORAGE,
    (torch.Tensor, "is_shared"): _STORAGE,
    (torch.Tensor, "share_memory_"): _STORAGE,
    (torch.Tensor, "register_hook"): _HOOKS,
    (torch.Tensor, "register_post_accumulate_grad_hook"): _HOOKS,
    (torch, "_assert"): "asserts its condition: a Python bool is checked as Python, a traced tensor's value is not "
                        "known while tracing",
    (torch, "lobpcg"): "iterates until its residuals converge, so the steps it takes depend on the values: refused",
    (F, "gaussian_nll_loss"): "checks that its variance holds no negative entry, which reads the values: refused",
}


def _function(owner, name: str):
    """The function an attribute holds: a property's getter for a property."""
    found = inspect.getattr_static(owner, name, None)
    return found.fget if isinstance(found, property) else found


STAYS_WHOLE: dict[Callable, str] = {
    _function(owner, name): why for (owner, name), why in _STAYS_WHOLE_BY_NAME.items() if hasattr(owner, name)
}


class _Globals(dict):
    """A function's module globals with the hand-off checks answering False: the names
    set here, everything else read from the module as it is at the time of the read."""

    __slots__ = ("module",)

    def __missing__(self, name: str):
        return self.module[name]


def _no_override(*args, **kwargs) -> bool:
    return False


def hands_itself_off(func) -> bool:
    """Whether `func`'s own code hands a call to `__torch_function__` through names it
    reads from its module's globals (the only spelling a copy can answer)."""
    code = getattr(func, "__code__", None)
    if type(func) is not types.FunctionType or not _HAND_OFF & set(code.co_names):
        return False
    for instruction in dis.get_instructions(code):
        if instruction.argval in _HAND_OFF and instruction.opname != "LOAD_GLOBAL":
            return False  # imported inside the function, or read as an attribute
        if instruction.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            return False  # a copy would write its own globals, not the module's
    return True


def handed_off(func) -> list:
    """The callables `func`'s code hands to `handle_torch_function` (itself, most
    often), read from the instructions that load handle_torch_function's first argument."""
    if type(func) is not types.FunctionType or "handle_torch_function" not in func.__code__.co_names:
        return []
    instructions = list(dis.get_instructions(func.__code__))
    cells = dict(zip(func.__code__.co_freevars, (c.cell_contents for c in func.__closure__ or ()), strict=True))
    handed = []
    for i, instruction in enumerate(instructions[:-1]):
        if instruction.argval != "handle_torch_function" or not instruction.opname.startswith("LOAD_"):
            continue
        first = instructions[i + 1]
        if first.opname == "LOAD_GLOBAL":
            obj = func.__globals__.get(first.argval)
        elif first.opname == "LOAD_DEREF":
            obj = cells.get(first.argval)
        else:
            continue
        for attribute in instructions[i + 2:]:
            if attribute.opname not in ("LOAD_ATTR", "LOAD_METHOD"):
                break
            obj = getattr(obj, attribute.argval, None)
        handed.append(obj)
    return handed


def handed_over(func) -> list:
    """What a call of `func` reaches `__torch_function__` as: what its own code hands
    off, or `func` itself where a helper it calls hands it off for it."""
    return handed_off(func) or ([func] if _helpers(func) else [])


_bodies: dict = {}


def body(func) -> Callable | None:
    """A copy of `func` that runs its Python body instead of handing the call to
    `__torch_function__`, or None where there is none: not a Python function handing
    itself off, kept whole (STAYS_WHOLE), or spelled so a copy cannot skip it."""
    try:
        if func in _bodies:
            return _bodies[func]
    except TypeError:  # an unhashable callable object
        return None
    found = _bodies[func] = None if func in STAYS_WHOLE else _copy(func)
    return found


def _copy(func) -> Callable | None:
    if hands_itself_off(func):
        if not any(handed is func for handed in handed_off(func)):
            return None  # it hands off something else: running it would hand that off again
        return _rebuilt(func, dict.fromkeys(_CHECKS, _no_override), func.__closure__)
    helpers = _helpers(func)
    if not helpers:
        return None
    names = {name: copy for name, copy in helpers.items() if name in func.__code__.co_names}
    closure = func.__closure__
    if closure is not None:
        closure = tuple(
            types.CellType(helpers[name]) if name in helpers and name not in names else cell
            for name, cell in zip(func.__code__.co_freevars, closure, strict=True)
        )
    return _rebuilt(func, names, closure)


def _helpers(func) -> dict[str, Callable]:
    """The functions `func` reaches by name (a global or a closure cell) that hand a call
    of `func` off for it, each as its copy that does not."""
    if type(func) is not types.FunctionType:
        return {}
    cells = zip(func.__code__.co_freevars, (c.cell_contents for c in func.__closure__ or ()), strict=True)
    reached = [*((name, func.__globals__.get(name)) for name in func.__code__.co_names), *cells]
    helpers = {}
    for name, obj in reached:
        if obj is not func and hands_itself_off(obj) and any(h is func for h in handed_off(obj)):
            helpers[name] = _rebuilt(obj, dict.fromkeys(_CHECKS, _no_override), obj.__closure__)
    return helpers


def _rebuilt(func: types.FunctionType, names: dict, closure) -> Callable:
    overlay = _Globals(names)
    overlay.module = func.__globals__
    # Read directly, not through __missing__: builtins by the new function, the module's
    # name by whoever asks a frame where it runs (warnings, tracing's error messages).
    for name in ("__builtins__", "__name__"):
        if name in func.__globals__:
            overlay[name] = func.__globals__[name]
    copy = types.FunctionType(func.__code__, overlay, func.__name__, func.__defaults__, closure)
    copy.__kwdefaults__ = func.__kwdefaults__
    copy.__qualname__ = func.__qualname__
    copy.__module__ = func.__module__
    copy.__wrapped__ = func
    return copy


__all__ = ["STAYS_WHOLE", "body", "handed_off", "handed_over", "hands_itself_off"]
