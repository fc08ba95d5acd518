"""How backward rules are declared, and the helpers rules share.

A backward rule belongs to one symbol, prim or ltorch, and is registered once, keyed by
the symbol, as autocast policies are (ops/autocast.py). The grad transform
(passes/grad.py) calls it with the output cotangent `g` (a tuple, with None for outputs
that get none, when the op has several outputs), the op's recorded output `out` and the
op's own arguments as its signature binds them (defaults filled in). It returns one
gradient per positional parameter, in order: a value, None (no gradient: a number, an
index, a mask), or a list for a list of tensors (`cat`). Trailing Nones may be left out.

Rules are written with ltorch and prims calls on values, so the backward trace reads as
the forward does; they run under the transform's recorder.

A rule that cannot give torch's gradient for some arguments raises `NotDifferentiable`
saying why: a refused gradient is never replaced by a guess.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from tracecli.core.dims import same_shape
from tracecli.core.dtypes import DType
from tracecli.core.symbol import Symbol
from tracecli.core.values import TensorValue
from tracecli.ops import prims
from tracecli.ops.promotion import ShapeError

RULES: dict[Symbol, Callable] = {}
# For a rule that covers some of its op's calls only: whether it covers one (given the
# call's bound arguments). The others are differentiated through the decomposition.
APPLIES: dict[Symbol, Callable[[inspect.BoundArguments], bool]] = {}
# Symbols whose outputs never carry a gradient (comparisons, index results, shapes):
# the transform passes them by without a rule.
NO_GRADIENT: set[Symbol] = set()
# For a call whose rule reads values its decomposition makes but does not return (what
# a custom autograd.Function saves for its backward): `(bsym, registry) -> bsym` making
# the call that returns them too, which the forward holds in its place.
RESIDUALS: dict[Symbol, Callable] = {}
# For a symbol only some of whose outputs carry a gradient (a custom autograd.Function's
# results, not what it saves for its backward or writes in place): their positions.
CARRIES_GRADIENT: dict[Symbol, frozenset[int]] = {}
# Symbols whose gradient is refused, with why (a custom autograd.Function whose backward
# could not be traced): differentiating through one stops with that reason.
REFUSALS: dict[Symbol, str] = {}


class NotDifferentiable(ShapeError):
    """The gradient an op would need is not modelled: the message says which and why."""


def backward(*symbols: Symbol, when: Callable[[inspect.BoundArguments], bool] | None = None) -> Callable:
    """Register the decorated function as the backward rule of `symbols`; `when`: for
    the calls it covers only."""

    def register(rule: Callable) -> Callable:
        for sym in symbols:
            if sym in RULES:
                raise ValueError(f"{sym.qualname} has two backward rules")
            RULES[sym] = rule
            if when is not None:
                APPLIES[sym] = when
        return rule

    return register


def has_rule(bsym) -> bool:
    """Whether a backward rule covers this call of its symbol."""
    sym = bsym.symbol
    if sym not in RULES:
        return False
    applies = APPLIES.get(sym)
    return applies is None or applies(bind(sym, bsym.args, dict(bsym.kwargs)))


def no_gradient(*symbols: Symbol) -> None:
    for sym in symbols:
        NO_GRADIENT.add(sym)


_signatures: dict[Symbol, inspect.Signature] = {}


def bind(sym: Symbol, args: tuple, kwargs: dict) -> inspect.BoundArguments:
    """The call's arguments bound to the symbol's own signature, defaults filled in."""
    signature = _signatures.get(sym)
    if signature is None:
        signature = _signatures[sym] = inspect.signature(sym.decomposition or sym.meta)
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return bound


# --- helpers ----------------------------------------------------------------------------


def zeros_like(x: TensorValue) -> TensorValue:
    return prims.full(x.shape, 0.0 if x.dtype.is_float else 0, device=x.device, dtype=x.dtype)


def to_dtype(g: TensorValue, dtype: DType) -> TensorValue:
    return g if g.dtype == dtype else prims.convert_element_type(g, dtype)


def sum_to(g: TensorValue, shape: tuple) -> TensorValue:
    """`g` summed over the dimensions broadcasting added or stretched, to `shape`."""
    if same_shape(g.shape, shape):
        return g
    lead = g.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and not same_shape((g.shape[lead + i],), (1,))
    )
    if dims:
        g = prims.sum(g, dims)
    return g if same_shape(g.shape, shape) else prims.reshape(g, tuple(shape))


def expand_to(g: TensorValue, shape: tuple, kept: tuple[int, ...]) -> TensorValue:
    """A reduction's cotangent broadcast back over the reduced dimensions: `kept` are the
    dimensions of `shape` that `g` still has."""
    return g if same_shape(g.shape, shape) else prims.broadcast_in_dim(g, tuple(shape), kept)


def is_differentiable(x: object) -> bool:
    return isinstance(x, TensorValue) and x.dtype.is_float
