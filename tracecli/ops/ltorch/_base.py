"""How ltorch symbols are declared, plus helpers their decompositions share.

An ltorch symbol is a torch-level operation: its Python signature mirrors the torch
function it models (so the printed call runs on torch as is), its decomposition
calls prims on values, and `impl` is the torch callable executors run.
"""

from __future__ import annotations

from collections.abc import Callable

from tracecli.core import dtypes
from tracecli.core.dims import Dim, SymBool, active, same_shape
from tracecli.core.dtypes import DType
from tracecli.core.symbol import Symbol, Tag
from tracecli.core.values import TensorValue
from tracecli.ops import prims
from tracecli.ops.autocast import POLICIES, Autocast
from tracecli.ops.forms import FORMS
from tracecli.ops.promotion import ShapeError, broadcast_shapes, mixed_devices
from tracecli.ops.views import VIEW_RULES

ALL: dict[str, Symbol] = {}


def _family(fn: Callable) -> str:
    return fn.__module__.rsplit(".", 1)[-1]


def _is_torch_form(impl: Callable) -> bool:
    # Only torch's own functions: a helper of ours (a lambda running an in-place method,
    # say) or operator.getitem is never what reaches the tracer, and Tensor methods are
    # forms by name (`methods=`), not by object.
    return (getattr(impl, "__module__", None) or "").split(".")[0] == "torch"


def symbol(impl: Callable, *, aliases: tuple[Callable, ...] = (), methods: tuple[str, ...] = (),
           adapter: Callable | None = None, tags: tuple[Tag, ...] = (), name: str | None = None,
           autocast: Autocast | None = None, view: Callable[[tuple, dict], bool] | None = None):
    """Declare the decorated decomposition as ltorch.<name>: everything the op is.

    - `impl`: the torch callable executors run; its signature is the decomposition's.
      It is also the op's first torch form, unless it is a helper of ours.
    - `aliases`: more torch callables that mean the same op (`torch.subtract`).
    - `methods`: Tensor method and operator names (`"add"`, `"__add__"`, `"__radd__"`).
    - `adapter`: where torch's spellings take arguments the decomposition does not
      (`torch.max(a, b)` vs `torch.max(a, dim)`), every form goes through it instead.
    - `tags`: RANDOM, INPLACE, VIEW, CHECK, ...
    - `autocast`: torch.autocast's policy for the op on CPU and CUDA (ops/autocast.py).
    - `view`: for a VIEW op whose arguments decide whether a call returns a view, the
      rule (args, kwargs) -> bool (ops/views.py); by default, a call reading one tensor does.
    """

    def declare(decomposition: Callable) -> Symbol:
        sym_name = name or decomposition.__name__.rstrip("_")
        if sym_name in ALL:
            raise ValueError(f"ltorch.{sym_name} is declared twice")
        doc = (decomposition.__doc__ or "").strip().splitlines()
        sym = Symbol(
            sym_name, "ltorch", impl=impl, decomposition=decomposition, tags=frozenset(tags),
            doc=doc[0] if doc else "", family=_family(decomposition),
        )
        functions = ((impl,) if _is_torch_form(impl) else ()) + tuple(aliases)
        FORMS.claim(adapter or sym, sym.qualname, functions=functions, methods=methods)
        ALL[sym_name] = sym
        if autocast is not None:
            POLICIES[sym] = autocast
        if view is not None:
            VIEW_RULES[sym] = view
        return sym

    return declare


def torch_form(*functions: Callable, methods: tuple[str, ...] = (), properties: tuple[Callable, ...] = ()):
    """Declare the decorated adapter as the way these torch spellings reach ltorch: for
    spellings that are other ops in disguise (`flatten` is a reshape, `x.float()` a
    conversion) or that take arguments their op does not."""

    def declare(adapter: Callable) -> Callable:
        declared_by = f"ltorch.{_family(adapter)}.{adapter.__name__}"
        FORMS.claim(adapter, declared_by, functions=functions, methods=methods, properties=properties)
        return adapter

    return declare


def is_tensor(x: object) -> bool:
    return isinstance(x, TensorValue)


def expect_tensor(x: object, op: str) -> TensorValue:
    if not isinstance(x, TensorValue):
        raise ShapeError(f"{op} expects a tensor, got {type(x).__name__}")
    return x


def convert(x, dtype: DType):
    """`x` in `dtype`; numbers stay numbers (prims accept them beside tensors)."""
    if isinstance(x, TensorValue):
        return x if x.dtype == dtype else prims.convert_element_type(x, dtype)
    if isinstance(x, Dim) and dtype.kind != "bool":
        return x  # a size stays symbolic: torch takes an int beside any number tensor
    if dtype.kind == "bool":
        return bool(x)
    if dtype.kind == "int" and not isinstance(x, bool):
        return int(x)
    if dtype.is_float and not isinstance(x, bool):
        return float(x)
    return x


def divisor(count: int | Dim) -> float | Dim:
    """A count of elements as a divisor: a float when static (torch divides in the
    tensor's dtype either way), the size expression itself when symbolic, so the trace
    divides by what each call's sizes give."""
    return count if isinstance(count, Dim) else float(count)


def pieces_of(total: int | Dim, size: int | Dim) -> int:
    """How many pieces of `size` (positive) cover `total`: ceil(total / size). A count of
    outputs must be a number: with symbolic sizes it is the example's, and the two
    comparisons that fix it, (count - 1) * size < total <= count * size, are guards, so
    the trace holds for every total cut into that many pieces."""
    if not isinstance(total, Dim) and not isinstance(size, Dim):
        return -(-total // size)
    env = active()
    if env is None:
        raise TypeError(f"the symbolic sizes {total} and {size} have no value outside tracing")
    count = -(-env.example(total) // env.example(size))
    if not (count - 1) * size < total <= count * size:
        raise AssertionError(f"{count} pieces of {size} do not cover {total} at the example sizes")
    return count


def broadcast_to(x, shape: tuple[int, ...]):
    if not isinstance(x, TensorValue) or same_shape(x.shape, shape):
        return x
    offset = len(shape) - x.ndim
    if offset < 0:
        raise ShapeError(f"cannot broadcast {list(x.shape)} to {list(shape)}")
    return prims.broadcast_in_dim(x, shape, tuple(range(offset, len(shape))))


def broadcast_all(*operands):
    tensors = [x for x in operands if isinstance(x, TensorValue)]
    if any(x.device != tensors[0].device for x in tensors):
        operands = on_one_device(operands)
    shapes = [x.shape for x in tensors]
    if shapes and all(_static(s) and s == shapes[0] for s in shapes):
        # One static shape, as elementwise code mostly has: nothing to broadcast.
        return operands
    shape = broadcast_shapes(*shapes)
    return tuple(broadcast_to(x, shape) for x in operands)


def on_one_device(operands: tuple) -> tuple:
    """The operands of one elementwise op on one device, by torch's rule: a zero-dim CPU
    tensor is read as the number it holds, beside tensors on any device (`p / bias_correction`
    with an optimizer's step count on the CPU and `p` on the GPU), and is moved to theirs;
    tensors on two other devices are refused, as in eager."""
    placed = {x.device for x in operands if isinstance(x, TensorValue) and not (x.device == "cpu" and not x.shape)}
    if len(placed) > 1:
        raise ShapeError(mixed_devices(sorted(placed)))
    if not placed:
        return operands
    device = placed.pop()
    return tuple(prims.device_put(x, device) if isinstance(x, TensorValue) and x.device != device else x
                 for x in operands)


def _static(shape: tuple) -> bool:
    # Comparing symbolic sizes may record a guard: only plain sizes are compared directly.
    return all(type(d) is int and d >= 0 for d in shape)


def float_dtype_for(x: TensorValue) -> DType:
    """The float dtype torch gives a float-only op on `x` (ints become float32)."""
    return x.dtype if x.dtype.is_inexact else dtypes.float32


def compute_dtype(dtype: DType) -> DType:
    """Low-precision floats are computed in float32 in composite ops, as torch's kernels do."""
    return dtypes.float32 if dtype in (dtypes.float16, dtypes.bfloat16) else dtype


def keepdim_broadcast(reduced: TensorValue, like: TensorValue, dims: tuple[int, ...]) -> TensorValue:
    """Re-expand a reduction result over the reduced `dims` to `like`'s shape."""
    kept = tuple(i for i in range(like.ndim) if i not in dims)
    return prims.broadcast_in_dim(reduced, like.shape, kept)


def keepdim_reshape(reduced: TensorValue, like: TensorValue, dims: tuple[int, ...]) -> TensorValue:
    shape = tuple(1 if i in dims else d for i, d in enumerate(like.shape))
    return prims.reshape(reduced, shape) if not same_shape(reduced.shape, shape) else reduced


def keyword_sizes(sizes: tuple, named: object, what: str) -> tuple:
    """Sizes given as varargs, as one sequence, or by their keyword (`x.view(size=(2, 3))`,
    `x.permute(dims=[1, 0])`): as `shape_arg` takes them."""
    if named is None:
        return sizes
    if sizes:
        raise TypeError(f"{what} given both positionally and by keyword")
    return (named,)


def shape_arg(shape) -> tuple[int, ...]:
    """torch accepts sizes as varargs or as one sequence: normalise to a tuple of ints."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    try:
        # A symbolic size stays one: int() would pin it to the example's value.
        return tuple(d if isinstance(d, Dim) else int(d) for d in shape)
    except TypeError:
        raise ShapeError(f"sizes must be integers, got {shape!r}") from None


def within(index, size) -> bool:
    """`0 <= index < size`, as eager's bounds check asks it. Where that is a relation of
    sizes the data decide that no fact settles (`pos[3]` of a count), the trace checks
    it when it runs, as eager does, and relies on it from here on (a `# fact:`)."""
    for relation in (0 <= index, index < size):
        if isinstance(relation, SymBool):
            relation.env.assume(relation, "an index in range")
            prims.check_size(relation.lhs, relation.op, relation.rhs)
        elif not relation:
            return False
    return True
