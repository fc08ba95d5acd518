"""The core prims: elementwise, shapes, reductions, matmul, factories."""

from __future__ import annotations

import builtins
import math

import torch

from tracecli.core import dtypes
from tracecli.core.dtypes import DType
from tracecli.core.symbol import Tag
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import _prim, _tdt
from tracecli.ops.promotion import ShapeError, broadcast_shapes, canonical_dims
from tracecli.ops.torch_bridge import to_device

# --- elementwise --------------------------------------------------------------


# The dtype kinds each elementwise prim accepts: exactly those its torch
# implementation computes in the operands' own dtype (or, for predicates, in bool).
# A prim refuses the rest at trace time instead of returning a dtype its meta rule
# did not promise (torch.exp of an int tensor is float32; ltorch converts first).
_NUMBER = frozenset({"int", "float", "complex"})
_ANY = _NUMBER | {"bool"}
_INEXACT = frozenset({"float", "complex"})
_REAL = frozenset({"int", "float"})
_INTEGRAL = frozenset({"bool", "int"})


def _check_kinds(name: str, dtype: DType, kinds: frozenset) -> None:
    if dtype.kind not in kinds:
        raise ShapeError(f"prims.{name} does not accept {dtype.name} operands ({', '.join(sorted(kinds))} only)")


def _unary_meta(name: str, kinds: frozenset, out_dtype: DType | None = None):
    def meta(x: TensorValue) -> TensorType:
        _check_kinds(name, x.dtype, kinds)
        return TensorType(x.shape, out_dtype or x.dtype, x.device)

    return meta


def _binary_type(name: str, a, b, out_dtype: DType | None = None, kinds: frozenset = _ANY) -> TensorType:
    tensors = [v for v in (a, b) if isinstance(v, TensorValue)]
    if not tensors:
        raise ShapeError(f"prims.{name} needs at least one tensor operand")
    first = tensors[0]
    for other in tensors[1:]:
        if other.shape != first.shape or other.dtype != first.dtype or other.device != first.device:
            raise ShapeError(
                f"prims.{name} operands differ: {first.dtype.short}{list(first.shape)} on {first.device} "
                f"vs {other.dtype.short}{list(other.shape)} on {other.device}"
            )
    _check_kinds(name, first.dtype, kinds)
    return TensorType(first.shape, out_dtype or first.dtype, first.device)


def _binary_meta(name: str, kinds: frozenset, out_dtype: DType | None = None):
    return lambda a, b: _binary_type(name, a, b, out_dtype, kinds)


def _number_as_tensor(fn):
    """Prims take a number operand on either side; where torch takes tensors only
    (maximum, atan2, fmod's first operand, ...) the number becomes a zero-dim tensor
    of the other operand's dtype, the dtype ltorch converted it for."""

    def apply(a, b):
        if not isinstance(a, torch.Tensor):
            a = torch.tensor(a, dtype=b.dtype, device=b.device)
        elif not isinstance(b, torch.Tensor):
            b = torch.tensor(b, dtype=a.dtype, device=a.device)
        return fn(a, b)

    apply.__name__ = fn.__name__
    return apply


def _div(a, b):
    # Integer division truncates, as C does: the meta rule promises the operands' dtype,
    # which torch.div's true division would not keep.
    tensor = a if isinstance(a, torch.Tensor) else b
    if tensor.dtype.is_floating_point or tensor.dtype.is_complex:
        return torch.div(a, b)
    return torch.div(a, b, rounding_mode="trunc")


_UNARY = {
    "neg": (torch.neg, _NUMBER), "abs": (torch.abs, _REAL), "exp": (torch.exp, _INEXACT),
    "log": (torch.log, _INEXACT), "log1p": (torch.log1p, _INEXACT), "expm1": (torch.expm1, _INEXACT),
    "sin": (torch.sin, _INEXACT), "cos": (torch.cos, _INEXACT), "tan": (torch.tan, _INEXACT),
    "tanh": (torch.tanh, _INEXACT), "sqrt": (torch.sqrt, _INEXACT), "rsqrt": (torch.rsqrt, _INEXACT),
    "erf": (torch.erf, frozenset({"float"})), "sign": (torch.sign, _ANY - {"complex"}),
    "floor": (torch.floor, _REAL), "ceil": (torch.ceil, _REAL), "round": (torch.round, _REAL),
    "reciprocal": (torch.reciprocal, _INEXACT), "bitwise_not": (torch.bitwise_not, _INTEGRAL),
}
_BINARY = {
    "add": (torch.add, _ANY), "sub": (torch.sub, _NUMBER), "mul": (torch.mul, _ANY), "div": (_div, _NUMBER),
    "pow": (torch.pow, _NUMBER), "maximum": (_number_as_tensor(torch.maximum), _ANY - {"complex"}),
    "minimum": (_number_as_tensor(torch.minimum), _ANY - {"complex"}),
    "fmod": (_number_as_tensor(torch.fmod), _REAL), "remainder": (_number_as_tensor(torch.remainder), _REAL),
    "atan2": (_number_as_tensor(torch.atan2), frozenset({"float"})),
    "bitwise_and": (_number_as_tensor(torch.bitwise_and), _INTEGRAL),
    "bitwise_or": (_number_as_tensor(torch.bitwise_or), _INTEGRAL),
    "bitwise_xor": (_number_as_tensor(torch.bitwise_xor), _INTEGRAL),
}
# torch's comparisons take a number only on the right: a number on the left flips the
# comparison, which is exact (no rounding of the number into the tensor's dtype).
_FLIPPED = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def _comparison(name: str):
    fn, flipped = getattr(torch, name), getattr(torch, _FLIPPED[name])

    def apply(a, b):
        return fn(a, b) if isinstance(a, torch.Tensor) else flipped(b, a)

    apply.__name__ = name
    return apply


for _name, (_fn, _kinds) in _UNARY.items():
    globals()[_name] = _prim(_name, _unary_meta(_name, _kinds), _fn)
globals()["logical_not"] = _prim("logical_not", _unary_meta("logical_not", _ANY, dtypes.bool8), torch.logical_not)
for _name, (_fn, _kinds) in _BINARY.items():
    globals()[_name] = _prim(_name, _binary_meta(_name, _kinds), _fn)
for _name in _FLIPPED:
    # Ordering complex numbers has no meaning; equality does.
    _kinds = _ANY if _name in ("eq", "ne") else _ANY - {"complex"}
    globals()[_name] = _prim(_name, _binary_meta(_name, _kinds, dtypes.bool8), _comparison(_name))


def _where_meta(pred, a, b) -> TensorType:
    if not isinstance(pred, TensorValue) or pred.dtype != dtypes.bool8:
        raise ShapeError("prims.where needs a bool tensor condition")
    value = _binary_type("where", a, b) if any(isinstance(v, TensorValue) for v in (a, b)) else None
    if value is not None and value.shape != pred.shape:
        raise ShapeError("prims.where operands differ in shape from the condition")
    if value is None:
        raise ShapeError("prims.where needs a tensor operand besides the condition")
    return value


where = _prim("where", _where_meta, torch.where)


def _convert_meta(x: TensorValue, dtype: DType) -> TensorType:
    return TensorType(x.shape, dtype, x.device)


convert_element_type = _prim(
    "convert_element_type", _convert_meta, lambda x, dtype: x.to(_tdt(dtype))
)

# --- shapes -------------------------------------------------------------------


def _broadcast_in_dim_meta(x: TensorValue, shape, broadcast_dims) -> TensorType:
    shape, broadcast_dims = tuple(shape), tuple(broadcast_dims)
    if len(broadcast_dims) != x.ndim:
        raise ShapeError("prims.broadcast_in_dim needs one target dimension per input dimension")
    for d, target in zip(x.shape, broadcast_dims, strict=True):
        if d != 1 and d != shape[target]:
            raise ShapeError(f"cannot broadcast {list(x.shape)} to {list(shape)}")
    return TensorType(shape, x.dtype, x.device)


def _broadcast_in_dim(x: torch.Tensor, shape, broadcast_dims):
    view = [1] * len(shape)
    for d, target in zip(x.shape, broadcast_dims, strict=True):
        view[target] = d
    return x.reshape(view).expand(shape)


broadcast_in_dim = _prim("broadcast_in_dim", _broadcast_in_dim_meta, _broadcast_in_dim)


def _reshape_meta(x: TensorValue, shape) -> TensorType:
    shape = tuple(shape)
    if math.prod(shape) != x.numel:
        raise ShapeError(f"cannot reshape {list(x.shape)} to {list(shape)}")
    return TensorType(shape, x.dtype, x.device)


reshape = _prim("reshape", _reshape_meta, torch.reshape)


def _transpose_meta(x: TensorValue, permutation) -> TensorType:
    if sorted(permutation) != list(range(x.ndim)):
        raise ShapeError(f"{list(permutation)} is not a permutation of {x.ndim} dimensions")
    return TensorType(tuple(x.shape[p] for p in permutation), x.dtype, x.device)


transpose = _prim("transpose", _transpose_meta, torch.permute)


def _slice_meta(x: TensorValue, start_indices, end_indices, strides=None) -> TensorType:
    strides = strides or (1,) * x.ndim
    shape = []
    for size, lo, hi, step in zip(x.shape, start_indices, end_indices, strides, strict=True):
        if not 0 <= lo <= hi <= size or step < 1:
            raise ShapeError(f"slice [{lo}:{hi}:{step}] is out of bounds for size {size}")
        shape.append((hi - lo + step - 1) // step)
    return TensorType(tuple(shape), x.dtype, x.device)


def _slice(x: torch.Tensor, start_indices, end_indices, strides=None):
    strides = strides or (1,) * x.ndim
    return x[tuple(builtins.slice(lo, hi, s) for lo, hi, s in zip(start_indices, end_indices, strides, strict=True))]


slice_prim = _prim("slice", _slice_meta, _slice)


def _cat_meta(tensors, dim: int) -> TensorType:
    first = tensors[0]
    size = 0
    for t in tensors:
        if t.ndim != first.ndim or t.dtype != first.dtype or t.device != first.device:
            raise ShapeError("prims.cat operands must share rank, dtype and device")
        if any(a != b for i, (a, b) in enumerate(zip(t.shape, first.shape, strict=True)) if i != dim):
            raise ShapeError(f"cannot concatenate {list(first.shape)} and {list(t.shape)} along {dim}")
        size += t.shape[dim]
    return TensorType(first.shape[:dim] + (size,) + first.shape[dim + 1 :], first.dtype, first.device)


cat = _prim("cat", _cat_meta, torch.cat)

# --- reductions ---------------------------------------------------------------


def _reduction_meta(x: TensorValue, dims) -> TensorType:
    dims = canonical_dims(dims, x.ndim)
    shape = tuple(d for i, d in enumerate(x.shape) if i not in dims)
    return TensorType(shape, x.dtype, x.device)


def _var_meta(x: TensorValue, dims, correction) -> TensorType:
    # torch's variance of a complex tensor is real: not the input's dtype.
    _check_kinds("var", x.dtype, frozenset({"float"}))
    return _reduction_meta(x, dims)


def _extremum_meta(x: TensorValue, dims) -> TensorType:
    _check_kinds("amax/amin", x.dtype, _ANY - {"complex"})
    # Unlike a sum, a max over no elements has no value: torch refuses it, so do we.
    for d in canonical_dims(dims, x.ndim):
        if x.shape[d] == 0:
            raise ShapeError(f"cannot take the max or min over dimension {d} of size 0 in {list(x.shape)}")
    return _reduction_meta(x, dims)


def _amax(x, dims):
    return torch.amax(x, dims) if x.ndim else x.clone()


def _amin(x, dims):
    return torch.amin(x, dims) if x.ndim else x.clone()


sum = _prim("sum", _reduction_meta, lambda x, dims: torch.sum(x, dims, dtype=x.dtype))  # noqa: A001
amax = _prim("amax", _extremum_meta, _amax)
amin = _prim("amin", _extremum_meta, _amin)
var = _prim("var", _var_meta, lambda x, dims, correction: torch.var(x, dims, correction=correction))

# --- linear algebra -----------------------------------------------------------


def _matmul_meta(a: TensorValue, b: TensorValue) -> TensorType:
    if a.dtype != b.dtype or a.device != b.device:
        raise ShapeError("prims.matmul operands must share dtype and device")
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError("matmul needs tensors with at least one dimension")
    a_shape = (1,) + a.shape if a.ndim == 1 else a.shape
    b_shape = b.shape + (1,) if b.ndim == 1 else b.shape
    if a_shape[-1] != b_shape[-2]:
        raise ShapeError(f"cannot multiply {list(a.shape)} by {list(b.shape)}: inner sizes differ")
    batch = broadcast_shapes(a_shape[:-2], b_shape[:-2])
    shape = batch + (a_shape[-2], b_shape[-1])
    if a.ndim == 1:
        shape = shape[:-2] + shape[-1:]
    if b.ndim == 1:
        shape = shape[:-1]
    return TensorType(shape, a.dtype, a.device)


matmul = _prim("matmul", _matmul_meta, torch.matmul)

# --- factories ----------------------------------------------------------------


def _factory_meta(shape, *_, device, dtype) -> TensorType:
    return TensorType(tuple(shape), dtype, device)


def _sampling_meta(name: str):
    def meta(shape, *_, device, dtype) -> TensorType:
        # torch samples floating point (and complex) values only.
        _check_kinds(name, dtype, _INEXACT)
        return _factory_meta(shape, device=device, dtype=dtype)

    return meta


def _iota_meta(length, start, step, *, device, dtype) -> TensorType:
    return TensorType((length,), dtype, device)


def _full(shape, fill_value, *, device, dtype):
    return torch.full(shape, fill_value, device=device, dtype=_tdt(dtype))


def _iota(length, start, step, *, device, dtype):
    return torch.arange(start, start + length * step, step, device=device, dtype=_tdt(dtype))[:length]


def _uniform(shape, low, high, *, device, dtype):
    # Same RNG stream as torch.rand / Tensor.uniform_, so eager and traced agree.
    return torch.empty(shape, device=device, dtype=_tdt(dtype)).uniform_(low, high)


def _normal(shape, mean, std, *, device, dtype):
    return torch.empty(shape, device=device, dtype=_tdt(dtype)).normal_(mean, std)


full = _prim("full", _factory_meta, _full)
iota = _prim("iota", _iota_meta, _iota)
uniform = _prim("uniform", _sampling_meta("uniform"), _uniform, tags=(Tag.RANDOM,))
normal = _prim("normal", _sampling_meta("normal"), _normal, tags=(Tag.RANDOM,))


def _device_put_meta(x: TensorValue, device: str) -> TensorType:
    return TensorType(x.shape, x.dtype, to_device(device))


device_put = _prim("device_put", _device_put_meta, lambda x, device: x.to(device))

globals()["slice"] = slice_prim  # printed as prims.slice


def _clone_meta(x: TensorValue) -> TensorType:
    return x.type


# A copy in new memory: what keeps an in-place write on the copy away from the original.
clone = _prim("clone", _clone_meta, torch.clone)
