"""Re-running a bound symbol's shape/dtype rule on its recorded arguments.

The verifier's check of meaning, as JAX's `check_jaxpr` re-runs each equation's typing
rule. A prim's (or opaque symbol's) rule is its `meta`; an ltorch symbol's rule is its
decomposition, run under a handler that answers the symbols it calls as the recorder
does (a decomposition runs, a meta rule's types become fresh values) but keeps nothing.

A rule's outcome depends only on the symbol, the types of its arguments, its constants
and, for a symbolic trace, the example sizes of its symbols (a rule may decide on them:
how many pieces a split makes), so outcomes are memoised under that key: verifying after every pass re-runs
each distinct call once per process, not once per bound symbol per pass.
"""

from __future__ import annotations

import itertools
import math

from tracecli.core.dims import Dim, SymBool, is_placeholder, pop_unbacked_maker, push_unbacked_maker
from tracecli.core.dtypes import DType
from tracecli.core.pytree import rebuild_tuple
from tracecli.core.symbol import BoundSymbol, Symbol, pop_handler, push_handler
from tracecli.core.values import NumberValue, TensorType, TensorValue

# Enough for every distinct call of many large models; past it the cache starts over
# (cheap to refill) rather than growing without bound in a long-lived process.
CACHE_LIMIT = 1 << 16
_cache: dict[tuple, object] = {}
_MISS = object()


class _NoRule(Exception):
    """A symbol reached by the rule has neither meta rule nor decomposition."""


class _Refusal:
    """A rule that raised on the arguments: the outcome, cached like a type."""

    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message


_UNKNOWN = object()  # no rule to re-run: nothing to check

# Fresh values made while re-running a decomposition. `%` is in no legal name, so they
# cannot be confused with the trace's own values.
_fresh_names = itertools.count()


def clear_cache() -> None:
    _cache.clear()


def type_problem(bsym: BoundSymbol, examples: tuple = ()) -> str | None:
    """Why `bsym`'s recorded outputs are not what its rule gives, or None if they are.
    `examples` names the example size of each size symbol the types may use."""
    sym = bsym.symbol
    outcome = _outcome(sym, bsym, examples)
    if outcome is _UNKNOWN:
        return None
    if type(outcome) is _Refusal:
        return f"{sym.qualname} refuses its recorded arguments ({_describe_args(bsym)}): {outcome.message}"
    recorded = bsym.output
    if type(recorded) is TensorValue and type(outcome) is TensorType and _same_tensor(recorded, outcome):
        return None  # the common case, without the general walk
    difference = _difference(recorded, outcome)
    if difference is None:
        return None
    got, expected = difference
    if isinstance(got, TensorValue):
        return (f"{sym.qualname} records {got.name} as {_describe(got)} but its rule gives "
                f"{_describe(expected)} for its arguments")
    return (f"{sym.qualname} records {_describe(recorded, named=True)} but its rule gives {_describe(outcome)} "
            f"for its arguments")


def _outcome(sym: Symbol, bsym: BoundSymbol, examples: tuple) -> object:
    if sym.decomposition is None and sym.meta is None:
        return _UNKNOWN
    kwargs = bsym.kwargs
    key = (sym, _args_key(bsym.args), tuple([(k, _key(v)) for k, v in kwargs]) if kwargs else (), examples)
    try:
        outcome = _cache.get(key, _MISS)
    except TypeError:  # an unhashable constant: run the rule, keep nothing
        return _run_rule(sym, bsym.args, dict(bsym.kwargs))
    if outcome is _MISS:
        outcome = _run_rule(sym, bsym.args, dict(bsym.kwargs))
        if len(_cache) >= CACHE_LIMIT:
            _cache.clear()
        _cache[key] = outcome
    return outcome


def _args_key(args: tuple) -> tuple:
    # Most calls read tensors only: their keys are flat, one tuple per tensor.
    return tuple([(a.shape, a.dtype.name, a.device) if type(a) is TensorValue else _key(a) for a in args])


def _key(obj: object) -> object:
    """`obj` with each value replaced by what a rule may read of it: shape, dtype and
    device, with the dtype by name (DType's dataclass hash costs a Python call per
    lookup). Every constant is tagged with its type: 1, 1.0 and True are different
    arguments to a rule."""
    kind = type(obj)
    if kind is TensorValue:
        return (obj.shape, obj.dtype.name, obj.device)
    if kind is tuple or kind is list:
        return (kind, *[_key(item) for item in obj])
    if kind is DType:
        return (kind, obj.name)
    if kind is NumberValue:
        return (kind, type(obj.value), obj.value)
    if kind is slice:
        return (kind, _key(obj.start), _key(obj.stop), _key(obj.step))
    if kind is dict:
        return (kind, *[(k, _key(v)) for k, v in obj.items()])
    if isinstance(obj, tuple):  # named tuples
        return (kind, *[_key(item) for item in obj])
    return (kind, obj)


def _run_rule(sym: Symbol, args: tuple, kwargs: dict) -> object:
    # On top of whatever handler may be there (verify called while tracing), and
    # always popped again.
    push_handler(_answer)
    push_unbacked_maker(None)  # a size the data decide is a placeholder: no new symbol
    try:
        out = sym.decomposition(*args, **kwargs) if sym.decomposition is not None else sym.meta(*args, **kwargs)
    except _NoRule:
        return _UNKNOWN
    except Exception as exc:  # the rule's own words say what is wrong with the arguments
        return _Refusal(str(exc) or type(exc).__name__)
    finally:
        pop_unbacked_maker()
        pop_handler()
    return _types(out)


def _answer(sym: Symbol, args: tuple, kwargs: dict) -> object:
    """How a symbol called inside a decomposition is answered (as the recorder would,
    keeping nothing)."""
    if sym.decomposition is not None:
        return sym.decomposition(*args, **kwargs)
    if sym.meta is not None:
        return _values(sym.meta(*args, **kwargs))
    raise _NoRule(sym.qualname)


def _values(types: object) -> object:
    if type(types) is TensorType:
        return TensorValue(f"%{next(_fresh_names)}", types.shape, types.dtype, types.device)
    if isinstance(types, tuple):
        return rebuild_tuple(types, [_values(t) for t in types])
    if isinstance(types, list):
        return [_values(t) for t in types]
    return types


def _types(out: object) -> object:
    """A rule's result as types: tensors as TensorType, any sequence as a tuple."""
    kind = type(out)
    if kind is TensorValue:
        return out.type
    if kind is TensorType:
        return out
    if isinstance(out, (tuple, list)):
        return tuple([_types(item) for item in out])
    if kind is NumberValue:
        return out.value
    return out


def _same_tensor(value: TensorValue, expected: TensorType) -> bool:
    return (
        (value.dtype is expected.dtype or value.dtype == expected.dtype) and value.device == expected.device
        and (value.shape == expected.shape or tuple(value.shape) == tuple(expected.shape)
             or _same_but_unbacked(value.shape, expected.shape))
    )


def _same_but_unbacked(recorded: tuple, expected: tuple) -> bool:
    """Shapes equal but where the rule made a size the data decide: its placeholder
    stands for the size the record names (`u0`), whatever it is called."""
    if len(recorded) != len(expected) or not any(is_placeholder(d) for d in expected):
        return False
    return all(is_placeholder(e) or (r.same(e) if isinstance(r, Dim) else r == e)
               for r, e in zip(recorded, expected, strict=True))


def _difference(recorded: object, expected: object) -> tuple[object, object] | None:
    """The first (recorded, expected) pair of leaves that disagree, or None."""
    if isinstance(recorded, TensorValue):
        if type(expected) is TensorType and _same_tensor(recorded, expected):
            return None
        return recorded, expected
    if isinstance(recorded, (tuple, list)):
        if not isinstance(expected, tuple) or len(expected) != len(recorded):
            return recorded, expected
        for r, e in zip(recorded, expected, strict=True):
            difference = _difference(r, e)
            if difference is not None:
                return difference
        return None
    if recorded is None and not isinstance(expected, TensorType):
        return None  # an output position the call discards (`_`): a size prims.shape does not bind there
    if type(expected) is TensorType or isinstance(expected, tuple):
        return recorded, expected
    return None if _same_constant(_types(recorded), expected) else (recorded, expected)


def _same_constant(a: object, b: object) -> bool:
    """Equal constants of one type; constants that cannot be compared are taken as equal."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a).__eq__ is object.__eq__:
        return True  # an object with no equality but identity (one an opaque call made each run)
    try:
        same = a == b
        if isinstance(same, SymBool):
            # Two sizes the data decide that no fact makes equal: the verifier's sizes
            # answer that they differ (core/verify.py), so a binding of the wrong one fails.
            same = bool(same)
    except Exception:
        return True
    return same if isinstance(same, bool) else True


def _describe(obj: object, named: bool = False) -> str:
    if isinstance(obj, (TensorValue, TensorType)):
        described = f"{obj.device} {obj.dtype.short}[{', '.join(str(d) for d in obj.shape)}]"
        return f"{obj.name}: {described}" if named and isinstance(obj, TensorValue) else described
    if isinstance(obj, (tuple, list)):
        inner = ", ".join(_describe(item, named) for item in obj)
        return f"({inner},)" if len(obj) == 1 else f"({inner})"
    if isinstance(obj, NumberValue):
        return f"{obj.name}: {obj.value!r}" if named else repr(obj.value)
    return repr(obj)


def _describe_args(bsym: BoundSymbol) -> str:
    values = {v.name: v for v in bsym.iter_args()}
    return ", ".join(_describe(v, named=True) for v in values.values()) or "no values"
