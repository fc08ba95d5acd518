"""The trace: one entry function's inputs, bound symbols and output."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from tracecli.core.dims import DimInfo, Guard
from tracecli.core.pytree import values_in
from tracecli.core.symbol import BoundSymbol, Tag
from tracecli.core.values import TensorValue, Value


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
        if bsym.subsymbols:
            stack.extend(bsym.subsymbols)
    return names


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
    root = {v.name: v.name for v in trace.inputs if isinstance(v, TensorValue)}
    final: dict[str, str] = {}
    for bsym in trace.bsyms:
        if Tag.INPLACE not in bsym.symbol.tags:
            continue
        args, outs = bsym.arg_values(), bsym.output_values()
        if args and outs and args[0].name in root:
            origin = root[args[0].name]
            root[outs[0].name] = origin
            final[origin] = outs[0].name
    return final
