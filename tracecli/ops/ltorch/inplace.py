"""In-place ops: `x.add_(y)`, `x += y`, `x.copy_(y)`, `x.masked_fill_(m, v)`, ...

In the trace an in-place op is a new value (`t5 = ltorch.add_(x, y)`), tagged INPLACE
so no pass drops, merges or moves it; the tracer then makes the user's tensor stand for
the new value. Its decomposition is the functional result in the tensor's own dtype and
shape (what the prims executor computes); the torch executor runs the real in-place
method, so the memory effect happens too.
"""

# ruff: noqa: A002 - parameters keep torch's names

from __future__ import annotations

import torch

from tracecli.core.dims import oblivious_equal, same_shape
from tracecli.core.symbol import Tag
from tracecli.ops import prims
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch import elementwise, elementwise_binary, logical
from tracecli.ops.ltorch._base import broadcast_to, convert, expect_tensor, is_tensor, symbol, torch_form
from tracecli.ops.ltorch.indexing import assignment, indexed_shape, whole_bounds
from tracecli.ops.promotion import ShapeError, result_type

_KIND_ORDER = {"bool": 0, "int": 1, "float": 2, "complex": 3}


def _into(self, result, op: str):
    """`result` as the new contents of `self`: same shape, cast to self's dtype as torch
    does, refusing what torch refuses (a float result into an int tensor)."""
    if result.shape != self.shape:
        raise ShapeError(f"{op}: the result's shape {list(result.shape)} does not match the tensor's {list(self.shape)}")
    if _KIND_ORDER[result.dtype.kind] > _KIND_ORDER[self.dtype.kind]:
        raise ShapeError(f"{op}: result type {result.dtype.name} can't be cast to the tensor's {self.dtype.name}")
    # Always a new value, even when nothing converts: an in-place op is never the identity.
    return prims.convert_element_type(result, self.dtype)


def _check_castable(self, other, op: str) -> None:
    dtype = result_type(self, other)
    if _KIND_ORDER[dtype.kind] > _KIND_ORDER[self.dtype.kind]:
        raise ShapeError(f"{op}: result type {dtype.name} can't be cast to the tensor's {self.dtype.name}")


def written_in_place(self, result, op: str):
    """The generic in-place form of an op (`x.relu_()`, `F.relu(x, inplace=True)`): its
    out-of-place result written into `self`, under eager's rules for in-place results
    (the shape stays, and the dtype may not need a cast torch refuses)."""
    self = expect_tensor(self, op)
    if not is_tensor(result) or result.shape != self.shape:
        shape = list(result.shape) if is_tensor(result) else type(result).__name__
        raise ShapeError(f"{op}: the result's shape {shape} does not match the tensor's {list(self.shape)}")
    if _KIND_ORDER[result.dtype.kind] > _KIND_ORDER[self.dtype.kind]:
        raise ShapeError(f"{op}: result type {result.dtype.name} can't be cast to the tensor's {self.dtype.name}")
    return copy_(self, result)


# Python's augmented operators whose method is no `<op>_` twin (`x &= m`, `x %= 3`): the
# out-of-place op, written into the tensor as every in-place twin is.
_AUGMENTED = {
    "__iand__": logical.bitwise_and, "__ior__": logical.bitwise_or, "__ixor__": logical.bitwise_xor,
    "__ilshift__": logical.bitwise_left_shift, "__irshift__": logical.bitwise_right_shift,
    "__imod__": elementwise_binary.remainder,
}


def _augmented(method: str, op):
    def adapter(self, other):
        return written_in_place(self, op(self, other), method)

    adapter.__name__ = f"_{method.strip('_')}"
    return adapter


for _method, _op in _AUGMENTED.items():
    torch_form(methods=(_method,))(_augmented(_method, _op))


def _add_(self, other, *, alpha=1):
    return self.add_(other, alpha=alpha)


def _sub_(self, other, *, alpha=1):
    return self.sub_(other, alpha=alpha)


@symbol(_add_, methods=("add_", "__iadd__"), tags=(Tag.INPLACE,), name="add_")
def add_(self, other, *, alpha=1):
    """in place: self += alpha * other"""
    _check_castable(expect_tensor(self, "add_"), other, "add_")
    return _into(self, elementwise.add.decomposition(self, other, alpha=alpha), "add_")


@symbol(_sub_, methods=("sub_", "__isub__"), tags=(Tag.INPLACE,), name="sub_")
def sub_(self, other, *, alpha=1):
    """in place: self -= alpha * other"""
    _check_castable(expect_tensor(self, "sub_"), other, "sub_")
    return _into(self, elementwise.sub.decomposition(self, other, alpha=alpha), "sub_")


@symbol(torch.Tensor.mul_, methods=("mul_", "__imul__"), tags=(Tag.INPLACE,), name="mul_")
def mul_(self, other):
    """in place: self *= other"""
    _check_castable(expect_tensor(self, "mul_"), other, "mul_")
    return _into(self, elementwise.mul.decomposition(self, other), "mul_")


@torch_form(methods=("div_",))
def _div_method(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return div_(self, other)
    result = elementwise.div_rounding(self, other, rounding_mode=rounding_mode)
    return OPAQUE if result is OPAQUE else written_in_place(self, result, "div_")


@symbol(torch.Tensor.div_, methods=("__itruediv__", "__idiv__"), tags=(Tag.INPLACE,), name="div_")
def div_(self, other):
    """in place: self /= other"""
    self = expect_tensor(self, "div_")
    result = elementwise.true_divide.decomposition(self, other)
    return _into(self, result, "div_")


def _copy_(self, src, non_blocking=False):
    return copy_(self, src)


@symbol(torch.Tensor.copy_, methods=("copy_",), adapter=_copy_, tags=(Tag.INPLACE,), name="copy_")
def copy_(self, src):
    """in place: self = src, converted and broadcast to self"""
    self, src = expect_tensor(self, "copy_"), expect_tensor(src, "copy_")
    if src.device != self.device:
        src = prims.device_put(src, self.device)  # copy_ copies across devices
    return prims.convert_element_type(broadcast_to(src, self.shape), self.dtype)


def _set_data(self, src):
    with torch.no_grad():
        return self.copy_(src)


@symbol(_set_data, tags=(Tag.INPLACE,), name="set_data_")
def set_data_(self, src):
    """in place: self = src, written through `self.detach()` or `self.data`: autograd does
    not see the write, and a gradient of self after it still reaches self"""
    self, src = expect_tensor(self, "set_data_"), expect_tensor(src, "set_data_")
    return prims.convert_element_type(broadcast_to(src, self.shape), self.dtype)


@symbol(torch.Tensor.fill_, methods=("fill_",), tags=(Tag.INPLACE,), name="fill_")
def fill_(self, value):
    """in place: every element = value"""
    self = expect_tensor(self, "fill_")
    return prims.full(self.shape, value, device=self.device, dtype=self.dtype)


@symbol(torch.Tensor.zero_, methods=("zero_",), tags=(Tag.INPLACE,), name="zero_")
def zero_(self):
    """in place: every element = 0"""
    self = expect_tensor(self, "zero_")
    return prims.full(self.shape, 0, device=self.device, dtype=self.dtype)


@symbol(torch.Tensor.masked_fill_, methods=("masked_fill_",), tags=(Tag.INPLACE,), name="masked_fill_")
def masked_fill_(self, mask, value):
    """in place: self = value where mask"""
    self = expect_tensor(self, "masked_fill_")
    filled = elementwise.where.decomposition(mask, value, self)
    return _into(self, broadcast_to(filled, self.shape) if not same_shape(filled.shape, self.shape) else filled, "masked_fill_")


def _setitem(self, key, value):
    self[key] = value
    return self


def _check_fits(value_shape: tuple, target: tuple) -> None:
    """torch's rule for the values of `x[index] = v`: v broadcasts to what x[index] is
    (leading dimensions of size 1 dropped). Said here, not left to the kernel, so that
    a trace with symbolic sizes holds the equalities it needs. A size the data decide is
    taken to be no 1, as broadcasting takes it (`out[idx] += y`, y as many rows as idx)."""
    extra = len(value_shape) - len(target)
    kept = value_shape[max(extra, 0) :]
    if any(not oblivious_equal(d, 1) for d in value_shape[: max(extra, 0)]) or any(
        not oblivious_equal(v, 1) and v != t for v, t in zip(kept, target[len(target) - len(kept) :], strict=True)
    ):
        raise ShapeError(f"shape mismatch: value tensor of shape {list(value_shape)} cannot be broadcast to "
                         f"indexing result of shape {list(target)}")


@symbol(_setitem, methods=("__setitem__",), tags=(Tag.INPLACE,), name="setitem_")
def setitem_(self, key, value):
    """in place: self[key] = value, for every key torch takes: ints, slices with steps,
    None, Ellipsis, index tensors and lists, masks, and their mixes"""
    self = expect_tensor(self, "item assignment")
    plan = assignment(self, key)
    value = convert(value, self.dtype)
    if not is_tensor(value):
        value = prims.full((), value, device=self.device, dtype=self.dtype)
    elif value.device != self.device and (plan.indices is None or (value.device == "cpu" and not value.shape)):
        value = prims.device_put(value, self.device)  # copied across, as eager copies into the region
    starts, stops, steps = (tuple(part) for part in zip(*plan.bounds, strict=True)) if plan.bounds else ((), (), ())
    whole = whole_bounds(plan.bounds, self.shape)
    region = self if whole else prims.slice(self, starts, stops, steps if any(s != 1 for s in steps) else None)
    view = region if same_shape(region.shape, plan.view_shape) else prims.reshape(region, plan.view_shape)
    if plan.indices is None:
        written = broadcast_to(value, plan.view_shape)
    else:
        target = indexed_shape(plan)
        if target is not None:
            _check_fits(value.shape, target)
        written = prims.index_put(view, plan.indices, value)
    written = written if same_shape(written.shape, region.shape) else prims.reshape(written, region.shape)
    if whole:
        return _into(self, written, "item assignment")
    return prims.slice_scatter(self, written, starts, stops, steps if any(s != 1 for s in steps) else None)
