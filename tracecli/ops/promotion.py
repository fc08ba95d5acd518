"""Hand-written shape and dtype rules shared by prims and ltorch: broadcasting,
type promotion (torch's rules: dimensioned tensors, then zero-dim tensors, then
Python numbers, each only able to raise the category), dimension canonicalisation."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tracecli.core import dtypes
from tracecli.core.dims import Dim, exact_div, oblivious_equal, statically_equal
from tracecli.core.dtypes import DType
from tracecli.core.values import TensorValue

# torch.promote_types for same-category pairs that are not simply "the wider one".
_SPECIAL = {
    frozenset({dtypes.float16, dtypes.bfloat16}): dtypes.float32,
    frozenset({dtypes.uint8, dtypes.int8}): dtypes.int16,
}


class ShapeError(ValueError):
    """Shapes or dtypes that the operation does not accept (the user's bug, not ours)."""


class DataDependentShape(ShapeError):
    """A call whose result's shape depends on its inputs' values (`x[mask]`): no bug,
    but no trace either; a call traced in segments runs it eagerly."""


def promote_types(a: DType, b: DType) -> DType:
    if a == b:
        return a
    if a not in _LATTICE or b not in _LATTICE:
        return _promote_outside_lattice(a, b)
    ka, kb = dtypes.KIND_ORDER[a.kind], dtypes.KIND_ORDER[b.kind]
    if ka != kb:
        hi, lo = (a, b) if ka > kb else (b, a)
        if hi.is_complex and lo.is_float:
            # The complex dtype whose parts have the promoted float's precision.
            return _COMPLEX_OF[promote_types(_REAL_OF[hi], lo)]
        if hi == dtypes.uint8 and lo.kind == "int":
            return dtypes.int16
        return hi
    special = _SPECIAL.get(frozenset({a, b}))
    if special is not None:
        return special
    if a.kind == "int" and dtypes.uint8 in (a, b):
        other = b if a == dtypes.uint8 else a
        return other if other.bits > 8 else dtypes.int16
    return a if a.bits >= b.bits else b


# The dtypes torch promotes among one another.
_LATTICE = frozenset({*dtypes.CORE, dtypes.complex32})
# The complex dtype with a float's precision (bfloat16 has no complex twin: complex64).
_COMPLEX_OF = {
    dtypes.float16: dtypes.complex32, dtypes.bfloat16: dtypes.complex64,
    dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128,
}
_REAL_OF = {dtypes.complex32: dtypes.float16, dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}
# Unsigned integers other than uint8 meet only floats, which win; torch refuses the rest.
_FLOAT_ONLY_INTS = frozenset({dtypes.uint16, dtypes.uint32, dtypes.uint64, *(d for d in dtypes.SUB_BYTE if d.name[0] == "u")})
_LATTICE_FLOATS = frozenset({dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64})


def _promote_outside_lattice(a: DType, b: DType) -> DType:
    """torch's few promotions of its storage dtypes (float8, uint64, qint8, ...): every
    other pair torch refuses, and so does tracing, rather than guess."""
    for x, y in ((a, b), (b, a)):
        if x in _FLOAT_ONLY_INTS and y in _LATTICE_FLOATS:
            return y
    raise ShapeError(f"torch does not promote {a.name} with {b.name}; convert one of them first")


def _combine_categories(higher: DType | None, lower: DType | None) -> DType | None:
    """torch's combine_categories: `higher` is the dtype of the higher-priority category
    (dimensioned tensors over zero-dim tensors over Python numbers); `lower` can only
    raise its kind, never its precision within a kind."""
    if higher is None:
        return lower
    if lower is None or higher.is_complex:
        return higher
    if lower.is_complex:
        if not higher.is_float:
            return lower
        # A float meeting a lower-priority complex keeps its own precision.
        if higher not in _COMPLEX_OF:
            raise ShapeError(f"{higher.name} has no complex counterpart to promote to")
        return _COMPLEX_OF[higher]
    if higher.is_float:
        return higher
    if higher.kind == "bool" or lower.is_float:
        return promote_types(higher, lower)
    return higher


def result_type(*operands: object) -> DType:
    """The dtype torch computes an elementwise op in, for tensors and Python numbers."""
    if len(operands) == 2:
        a, b = operands
        # The pairs user code is mostly made of, `x * 1.5` and `x + y` with tensors of one
        # dtype, answered without the general walk (the same answer: a number of a kind
        # the tensor's dtype already has cannot raise it, nor can an equal dtype).
        if type(a) is TensorValue and a.shape:
            if type(b) in _SAME_KIND_NUMBERS.get(a.dtype.kind, ()):
                return a.dtype
            if type(b) is TensorValue and b.shape and b.dtype == a.dtype:
                return a.dtype
    dim_t: DType | None = None
    zero_t: DType | None = None
    number_t: DType | None = None
    for op in operands:
        if isinstance(op, TensorValue):
            if op.ndim:
                dim_t = op.dtype if dim_t is None else promote_types(dim_t, op.dtype)
            else:
                zero_t = op.dtype if zero_t is None else promote_types(zero_t, op.dtype)
        elif op is not None:
            # A Python number counts as the default dtype of its kind.
            as_dtype = dtypes.DEFAULT_FOR_KIND[dtypes.kind_of_number(op)]
            number_t = as_dtype if number_t is None else promote_types(number_t, as_dtype)
    result = _combine_categories(dim_t, _combine_categories(zero_t, number_t))
    if result is None:
        raise ShapeError("no operand to take a dtype from")
    return result


# Python numbers that leave a dimensioned tensor's dtype as it is, by the tensor's kind:
# a number only ever raises the kind (bool < int < float < complex), never the precision.
_SAME_KIND_NUMBERS = {
    "bool": (bool,),
    "int": (bool, int),
    "float": (bool, int, float),
    "complex": (bool, int, float, complex),
}


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        offset = ndim - len(shape)
        for i, d in enumerate(shape):
            if d < 0:
                raise ShapeError(f"shape {list(shape)} has a negative size")
            cur = out[offset + i]
            if statically_equal(d, cur):
                continue  # the same size (asking `cur == 1` of a symbolic one would guard)
            if oblivious_equal(cur, 1):
                out[offset + i] = d
            elif not oblivious_equal(d, 1) and d != cur:
                raise ShapeError(
                    f"shapes {', '.join(str(list(s)) for s in shapes)} cannot be broadcast together"
                )
    return tuple(out)


def mixed_devices(devices: list[str]) -> str:
    """Eager's refusal of tensors on two devices in one op, with what to do about it."""
    first, second = sorted(devices, key=lambda device: device == "cpu")[:2]
    advice = (" A tensor made without device= is on the CPU, as in eager: make it with device=x.device, or move "
              "it with .to(x.device)") if second == "cpu" else ""
    return f"Expected all tensors to be on the same device, but found at least two devices, {first} and {second}!{advice}"


def same_device(*operands) -> None:
    """Refuse tensors on more than one device, in eager's words (a prim's operands are on
    one device: ltorch moves a zero-dim CPU tensor where torch reads it as a number)."""
    devices = {x.device for x in operands if isinstance(x, TensorValue)}
    if len(devices) > 1:
        raise ShapeError(mixed_devices(sorted(devices)))


def canonical_dim(dim: int, ndim: int) -> int:
    # Zero-dim tensors accept dims 0 and -1, as in torch.
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise ShapeError(f"dimension {dim} is out of range for a tensor with {ndim} dimensions")
    return dim % bound


def canonical_dims(dims: int | Iterable[int] | None, ndim: int) -> tuple[int, ...]:
    """Reduction dims: None or () means all dimensions."""
    if dims is None:
        return tuple(range(ndim))
    if isinstance(dims, int):
        dims = (dims,)
    dims = tuple(dims)
    if not dims:
        return tuple(range(ndim))
    out = tuple(sorted({canonical_dim(d, ndim) for d in dims}))
    if len(out) != len(dims):
        raise ShapeError(f"dimension repeated in {list(dims)}")
    return out if ndim else ()


def infer_shape(shape: Sequence[int], numel: int) -> tuple[int, ...]:
    """Resolve one -1 in a reshape target. With symbolic sizes the -1 is `numel // known`,
    exact where the trace is valid (the divisibility is a guard, unless shapes settle it)."""
    shape = tuple(d if isinstance(d, Dim) else int(d) for d in shape)
    unknown = [i for i, d in enumerate(shape) if not isinstance(d, Dim) and d == -1]
    if len(unknown) > 1:
        raise ShapeError("only one dimension can be -1")
    known = 1
    for i, d in enumerate(shape):
        if i not in unknown:
            if d < 0:
                raise ShapeError(f"invalid shape dimension {d}")
            known *= d
    if unknown:
        if known == 0 or numel % known:
            raise ShapeError(f"shape {list(shape)} is invalid for input of size {numel}")
        shape = shape[: unknown[0]] + (exact_div(numel, known),) + shape[unknown[0] + 1 :]
    elif known != numel:
        raise ShapeError(f"shape {list(shape)} is invalid for input of size {numel}")
    return shape
