"""Symbols (operations) and bound symbols (one call of a symbol in a trace)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields

from tracecli.core.pytree import values_in
from tracecli.core.values import Value


class Tag(enum.Enum):
    RANDOM = "random"  # draws from the RNG: never merged, never dropped
    SIDE_EFFECT = "side_effect"  # acts on the world beyond its outputs
    CHECK = "check"  # validates at run time; has no outputs worth keeping but must stay
    INPLACE = "inplace"  # mutates an argument: ordered against every reader of it
    # The output may share memory with the op's one tensor argument (reshape, transpose,
    # getitem, split, ...): a later in-place write to either changes the other. With
    # several tensor arguments (index tensors, einsum of two operands) the result is new.
    VIEW = "view"
    # A fusion region (core/regions.py): its subsymbols are the calls it stands for, run
    # as one. Not an effect: an unused region is dropped like any pure call.
    REGION = "region"
    # A call of the user's own function kept whole (a custom autograd.Function's apply,
    # core/functions.py): its subsymbols are what it ran, and what runs in its place.
    FUNCTION = "function"

    # Each member is one object for the life of the process: hashed by identity, in C,
    # not by Enum's own __hash__, a Python call every `tag in tags` would pay (passes,
    # the printer and the verifier ask of every bound symbol).
    __hash__ = object.__hash__


# Tags that pin a bound symbol in place: dce keeps it and cse never merges it.
EFFECT_TAGS = frozenset({Tag.RANDOM, Tag.SIDE_EFFECT, Tag.CHECK, Tag.INPLACE})

# The handler stack lets a Symbol call either run its torch implementation (no
# handler: plain execution) or be recorded by whoever is tracing. The core defines
# only the hook; the frontend pushes its recorder.
_handlers: list[Callable] = []


def push_handler(handler: Callable) -> None:
    _handlers.append(handler)


def pop_handler() -> None:
    _handlers.pop()


@dataclass(frozen=True, slots=True, eq=False)
class Symbol:
    """An operation. prims carry a `meta` rule, ltorch symbols a `decomposition`
    into other symbols, opaque `torch.*` symbols a meta tensor fallback. All carry
    `impl`, the torch callable that executors run."""

    name: str
    namespace: str
    impl: Callable | None = None
    meta: Callable | None = None
    decomposition: Callable | None = None
    tags: frozenset[Tag] = frozenset()
    doc: str = ""
    family: str = ""  # the op family that declares it: its module under ops/prims and ops/ltorch

    @property
    def qualname(self) -> str:
        # No namespace: an opaque callable with no dotted path, bound by name in the
        # generated code (see core/bindings.py).
        return f"{self.namespace}.{self.name}" if self.namespace else self.name

    @property
    def is_pure(self) -> bool:
        return not (self.tags & EFFECT_TAGS)

    def __call__(self, *args, **kwargs):
        if _handlers:
            return _handlers[-1](self, args, kwargs)
        return self.impl(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<symbol {self.qualname}>"


@dataclass(frozen=True, slots=True)
class SourceLocation:
    file: str  # display path: relative to the working directory or a package root
    line: int
    text: str  # the source line, stripped


@dataclass(frozen=True, slots=True, eq=False)
class BoundSymbol:
    symbol: Symbol
    args: tuple
    kwargs: tuple[tuple[str, object], ...]
    output: object  # a value, a tuple/list of values and constants, or None
    # What the call is made of (read it as `subsymbols`): its bound symbols, or, for a call
    # that one primitive restates on its very arguments and output (`ltorch.mul(a, b)` ->
    # `prims.mul(a, b)`), that primitive alone. Most traced calls are such: keeping the
    # primitive, not a record of it, halves what tracing and every renaming pass build,
    # and the record, made from the call when first read, follows any change of the
    # call's arguments or output by itself.
    parts: tuple[BoundSymbol, ...] | Symbol = ()
    source: SourceLocation | None = None
    # (output name, user variable) pairs noted by the tracer; `rename` applies them.
    name_hints: tuple[tuple[str, str], ...] = ()
    scope: str = ""  # qualified name of the nn.Module that issued the call, if any

    # Written out, not generated: a frozen dataclass's own __init__ sets each field through
    # object.__setattr__, which looks the field up on the class every time (1.07 µs for
    # these eight), while the slots' own setters, bound once below, take 0.74 µs. Tracing
    # builds two bound symbols per op and a renaming pass one per bound symbol at every level.
    def __init__(
        self, symbol: Symbol, args: tuple, kwargs: tuple[tuple[str, object], ...], output: object,
        subsymbols: tuple[BoundSymbol, ...] | Symbol = (), source: SourceLocation | None = None,
        name_hints: tuple[tuple[str, str], ...] = (), scope: str = "",
    ) -> None:
        _set_symbol(self, symbol)
        _set_args(self, args)
        _set_kwargs(self, kwargs)
        _set_output(self, output)
        _set_parts(self, subsymbols)
        _set_source(self, source)
        _set_name_hints(self, name_hints)
        _set_scope(self, scope)

    @property
    def tags(self) -> frozenset[Tag]:
        return self.symbol.tags

    @property
    def subsymbols(self) -> tuple[BoundSymbol, ...]:
        parts = self.parts
        if type(parts) is tuple:
            return parts
        # Restated by one primitive: its record, made once. (Immutable all the same: the
        # record is a function of the call's own fields.)
        made = (new_bound_symbol(parts, self.args, (), self.output, (), None, (), ""),)
        _set_parts(self, made)
        return made

    @property
    def restated_by(self) -> Symbol | None:
        """The primitive that restates this call, if that is all it is made of and its
        record was not asked for yet: walks that need no record of it (the names a
        trace defines: the restatement defines its parent's) read this instead."""
        parts = self.parts
        return None if type(parts) is tuple else parts

    def iter_args(self) -> Iterator[Value]:
        """The values this call reads (not constants)."""
        yield from values_in(self.args)
        for _, v in self.kwargs:
            yield from values_in(v)

    def iter_outputs(self) -> Iterator[Value]:
        yield from values_in(self.output)

    def arg_values(self) -> list[Value]:
        """The values this call reads, as a list (faster than iter_args in hot loops)."""
        out = values_in(self.args)
        for _, v in self.kwargs:
            out.extend(values_in(v))
        return out

    def output_values(self) -> list[Value]:
        return values_in(self.output)

    def with_subsymbols(self, subsymbols: tuple[BoundSymbol, ...]) -> BoundSymbol:
        return _replace(self, subsymbols=subsymbols)

    def replace(self, **changes) -> BoundSymbol:
        return _replace(self, **changes)


(_set_symbol, _set_args, _set_kwargs, _set_output, _set_parts, _set_source, _set_name_hints, _set_scope) = (
    BoundSymbol.__dict__[f.name].__set__ for f in fields(BoundSymbol)
)


class _Draft:
    """BoundSymbol's slots without the frozen guard (same names, same layout)."""

    __slots__ = BoundSymbol.__slots__


def new_bound_symbol(
    symbol: Symbol, args: tuple, kwargs: tuple[tuple[str, object], ...], output: object,
    subsymbols: tuple[BoundSymbol, ...] | Symbol, source: SourceLocation | None, name_hints: tuple[tuple[str, str], ...],
    scope: str,
) -> BoundSymbol:
    """`BoundSymbol(...)` with every field given, for loops that rebuild a whole trace.

    A renaming pass rebuilds every bound symbol at every level (200 000 for 100 000
    traced calls). The constructor calls a slot setter per field (0.54 µs for eight);
    plain attribute stores on a draft of the same layout, which then becomes a
    BoundSymbol, take 0.19 µs. The record is the constructor's: frozen from here on."""
    bsym = _Draft()
    bsym.symbol = symbol
    bsym.args = args
    bsym.kwargs = kwargs
    bsym.output = output
    bsym.parts = subsymbols
    bsym.source = source
    bsym.name_hints = name_hints
    bsym.scope = scope
    bsym.__class__ = BoundSymbol
    return bsym


def restates(sub: BoundSymbol, args: tuple, output: object) -> bool:
    """Whether `sub` is its parent's call (`args` -> `output`) restated by one primitive,
    and nothing more: the record `subsymbols` makes from a parent holding the primitive."""
    if sub.output is not output or sub.kwargs or sub.parts or sub.name_hints or sub.source is not None or sub.scope:
        return False
    own = sub.args
    if own is args:
        return True
    if len(own) != len(args):
        return False
    for mine, theirs in zip(own, args, strict=True):
        if mine is not theirs:
            return False
    return True


def _replace(bsym: BoundSymbol, **changes) -> BoundSymbol:
    # Passes call this for every bound symbol they rewrite (lower: every subsymbol).
    get = changes.get
    return new_bound_symbol(
        get("symbol", bsym.symbol), get("args", bsym.args), get("kwargs", bsym.kwargs), get("output", bsym.output),
        get("subsymbols", bsym.parts), get("source", bsym.source), get("name_hints", bsym.name_hints),
        get("scope", bsym.scope),
    )


__all__ = [
    "Tag", "EFFECT_TAGS", "Symbol", "BoundSymbol", "SourceLocation", "new_bound_symbol", "restates", "push_handler",
    "pop_handler",
]
