"""The trace: one entry function's inputs, bound symbols and output."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from tracecli.core.dims import Dim, DimInfo, Guard, substitute, symbols_in
from tracecli.core.pytree import map_values, values_in
from tracecli.core.symbol import BoundSymbol, Tag
from tracecli.core.values import NumberValue, TensorValue, Value


@dataclass(frozen=True, slots=True)
class TraceInfo:
    """Where a trace came from; printed as its header comment."""

    script: str = ""  # display path of the user script
    entry: str = ""
    device: str = "cpu"
    passes: tuple[str, ...] = ()
    captured: tuple[str, ...] = ()  # inputs the entry read from outside itself (globals, closures)


@dataclass(frozen=True, slots=True, eq=False)
class Trace:
    name: str  # the name of the printed function
    inputs: tuple[Value, ...]
    bsyms: tuple[BoundSymbol, ...]
    output: object  # pytree of values and constants
    info: TraceInfo = TraceInfo()
    # Symbolic shapes: each size symbol with where a call's inputs give it, and what the
    # trace assumed about the sizes while it was traced (it is valid only where they hold).
    dims: tuple[DimInfo, ...] = ()
    guards: tuple[Guard, ...] = ()
    # What the program stated of sizes the data decide (`torch._check(n > 0)`): the trace
    # relies on them, and checks them where it runs (ltorch.check_size).
    facts: tuple[Guard, ...] = ()
    # `names`, once asked for. Not a constructor argument: a trace built by `replace`
    # starts without it, so the registry can never lag behind the values defined.
    _names: frozenset[str] | None = field(default=None, init=False, repr=False)

    @property
    def names(self) -> frozenset[str]:
        """The trace's name registry: every name it defines, at every level, and its
        size symbols (a size no call binds still appears in types: a new value must
        not take its name). Derived from the trace itself, so a pass that renames or
        adds values never keeps it by hand; one walk, on first use (most traces a
        pipeline makes never ask)."""
        names = self._names
        if names is None:
            defined = collect_names(self.inputs, self.bsyms)
            defined.update(d.name for d in self.dims)
            names = frozenset(defined)
            object.__setattr__(self, "_names", names)
        return names

    def iter_outputs(self) -> Iterator[Value]:
        yield from values_in(self.output)

    def replace(self, **changes) -> Trace:
        return replace(self, **changes)

    def with_pass(self, pass_name: str) -> Trace:
        """This trace, its header naming one more pass that ran over it."""
        return replace(self, info=replace(self.info, passes=(*self.info.passes, pass_name)))


def collect_names(inputs, bsyms) -> set[str]:
    """Every name defined by inputs and bound symbols, subsymbols included."""
    names = {v.name for v in inputs}
    add = names.add
    stack = list(bsyms)
    while stack:
        bsym = stack.pop()
        output = bsym.output
        # Most bound symbols have one tensor output: that case skips the tree walk. The
        # registry is derived again for every trace a pipeline prints or compiles.
        if type(output) is TensorValue:
            add(output.name)
        else:
            names.update([v.name for v in values_in(output)])
        # A call restated by one primitive defines nothing more: its record is not made.
        parts = bsym.parts
        if parts and type(parts) is tuple:
            stack.extend(parts)
    return names


def sizes_read(bsym: BoundSymbol) -> set[str]:
    """The size symbols a bound symbol's arguments use, at every level of it. Sizes are
    bound once, at the top level: a subsymbol may read one its parent's arguments don't."""
    names = symbols_in(bsym.args) | symbols_in(tuple(v for _, v in bsym.kwargs))
    # A size given as a value of its own (a backward region takes the sizes it uses so).
    names |= symbols_in([v.value for v in values_in(bsym.args) if type(v) is NumberValue and v.is_size])
    for sub in bsym.subsymbols:
        names |= sizes_read(sub)
    return names


def substitute_sizes(trace: Trace, mapping: dict[str, int | Dim]) -> Trace:
    """`trace` with size symbols replaced everywhere they appear: tensor types, size
    arguments, the values `prims.shape` binds, dims and guards. A symbol mapped to a
    bare symbol is renamed (`s0` -> `rows`); mapped to anything else, it is replaced by
    that and its entry in `dims` says what it equals."""
    if not mapping:
        return trace
    memo: dict[str, tuple[object, object]] = {}

    def fix(value):
        found = memo.get(value.name)
        if found is not None and found[0] is value:
            return found[1]
        new = value
        if type(value) is TensorValue:
            if any(type(d) is Dim and not d.symbols().isdisjoint(mapping) for d in value.shape):
                new = replace(value, shape=tuple([substitute(d, mapping) for d in value.shape]))
        elif type(value) is NumberValue and value.is_size and value.name in mapping:
            target = mapping[value.name]
            renamed = target.as_symbol() if isinstance(target, Dim) else None
            new = NumberValue(renamed or value.name, target)
        memo[value.name] = (value, new)
        return new

    def fix_bsym(bsym: BoundSymbol) -> BoundSymbol:
        args = map_values(fix, bsym.args)
        if Tag.REGION in bsym.symbol.tags:
            # A region takes values: a size it took that is now known to be a number is
            # one no more (its members read the number).
            args = tuple(a for a in args if not (type(a) is NumberValue and a.name in mapping and not a.is_size))
        return bsym.replace(
            args=args,
            kwargs=tuple([(k, map_values(fix, v)) for k, v in bsym.kwargs]),
            output=map_values(fix, bsym.output),
            subsymbols=tuple([fix_bsym(s) for s in bsym.subsymbols]),
        )

    def fix_dim(info: DimInfo) -> DimInfo:
        target = mapping.get(info.name)
        renamed = target.as_symbol() if isinstance(target, Dim) else None
        if info.upper is not None:
            info = replace(info, upper=substitute(info.upper, mapping))
        if renamed:
            return replace(info, name=renamed, same_as=substitute(info.same_as, mapping))
        if target is not None:
            return replace(info, same_as=target)
        return replace(info, same_as=substitute(info.same_as, mapping))

    return trace.replace(
        inputs=tuple([fix(v) for v in trace.inputs]),
        bsyms=tuple([fix_bsym(b) for b in trace.bsyms]),
        output=map_values(fix, trace.output),
        dims=tuple([fix_dim(d) for d in trace.dims]),
        guards=tuple([g.renamed(mapping) for g in trace.guards]),
        facts=tuple([g.renamed(mapping) for g in trace.facts]),
    )


def walk(bsyms) -> Iterator[tuple[int, BoundSymbol]]:
    """(depth, bound symbol) for every bound symbol, parents before their subsymbols."""
    stack = [(0, b) for b in reversed(bsyms)]
    while stack:
        depth, bsym = stack.pop()
        yield depth, bsym
        stack.extend((depth + 1, s) for s in reversed(bsym.subsymbols))


def written_inputs(trace: Trace) -> dict[str, str]:
    """The inputs the trace writes in place, each with the value it ends up holding: an
    INPLACE call's result stands for its first argument from then on."""
    return _writes(trace)[1]


def input_versions(trace: Trace) -> dict[str, str]:
    """Each value an in-place write of an input made (`x_1 = ltorch.add_(x, 1)`), with
    the input's name: in eager they are all that one tensor."""
    return _writes(trace)[0]


def _writes(trace: Trace) -> tuple[dict[str, str], dict[str, str]]:
    inputs = {v.name for v in trace.inputs if isinstance(v, TensorValue)}
    root = {name: name for name in inputs}
    final: dict[str, str] = {}
    for bsym in _calls_run(trace.bsyms):
        if Tag.INPLACE not in bsym.symbol.tags:
            continue
        args, outs = bsym.arg_values(), bsym.output_values()
        if args and outs and args[0].name in root:
            origin = root[args[0].name]
            root[outs[0].name] = origin
            final[origin] = outs[0].name
    return {name: origin for name, origin in root.items() if name not in inputs}, final


def _calls_run(bsyms) -> Iterator[BoundSymbol]:
    """The calls in the order they run, a call kept whole (core/functions.py) as the calls
    it holds: an in-place write among them writes the tensor it was given, which the call
    returns the last value of."""
    for bsym in bsyms:
        if bsym.symbol.tags and Tag.FUNCTION in bsym.symbol.tags:
            yield from _calls_run(bsym.subsymbols)
        else:
            yield bsym
