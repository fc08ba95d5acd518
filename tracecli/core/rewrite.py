"""Substituting values inside bound symbols: the one rewriting tool passes share.

A value map (`renamer`, `substituter`, or any function from value to value) says what
each value becomes; `map_bsym` applies it to one bound symbol, `map_trace` to a whole
trace. The trace's name registry follows by itself (`Trace.names`), so a pass that
renames values or adds new ones only builds the new trace.
"""

from __future__ import annotations

from collections.abc import Callable

from tracecli.core.dims import Dim
from tracecli.core.pytree import map_values, values_in
from tracecli.core.symbol import BoundSymbol
from tracecli.core.trace import Trace, substitute_sizes
from tracecli.core.values import NumberValue, TensorValue

ValueMap = Callable[[TensorValue | NumberValue], TensorValue | NumberValue]


def renamer(names: dict[str, str]) -> ValueMap:
    """A value map that renames values by name and leaves the rest alone."""

    done: dict[str, object] = {}  # a value appears many times: make its renamed record once

    def rename(value):
        new = names.get(value.name)
        if new is None:
            return value
        found = done.get(value.name)
        if found is None:
            found = done[value.name] = value.renamed(new)
        return found

    return rename


def substituter(env: dict[str, TensorValue | NumberValue]) -> ValueMap:
    """A value map that replaces values by name with other values (e.g. a CSE survivor)."""
    return lambda value: env.get(value.name, value)


def touches(bsym: BoundSymbol, names: dict | set) -> bool:
    """Whether this bound symbol reads or writes a value named in `names`.

    Its subsymbols need no look: they read only its arguments and their own
    intermediates, and `names` here are values visible at this bound symbol's level
    (merged duplicates, overwritten values). Passes that rename intermediates too
    (rename, renumber) map every bound symbol instead of asking."""
    for value in bsym.arg_values():
        if value.name in names:
            return True
    for value in bsym.output_values():
        if value.name in names:
            return True
    return False


def map_bsym(bsym: BoundSymbol, fn: ValueMap, names: dict | set | None = None) -> BoundSymbol:
    """`bsym` with every value passed through `fn`; hints follow renamed outputs.
    With `names`, bound symbols that mention none of them are returned as they are."""
    if names is not None and not touches(bsym, names):
        return bsym
    # This runs for every bound symbol a renaming pass rewrites, at every level: the
    # common shapes (one tensor output, a flat tuple of arguments) skip the tree walks.
    before = bsym.output
    output = fn(before) if type(before) is TensorValue else map_values(fn, before)
    hints = bsym.name_hints
    if hints:
        if type(before) is TensorValue and type(output) in _VALUE_TYPES:
            old, new = before.name, output.name
            hints = tuple([(new if out == old else out, var) for out, var in hints])
        else:
            renamed = {old.name: new.name for old, new in zip(values_in(before), values_in(output), strict=True)}
            hints = tuple([(renamed.get(out, out), var) for out, var in hints])
    args = bsym.args
    if type(args) is tuple:
        # A loop, not a comprehension: most calls have one to three arguments, and a
        # comprehension's own frame would cost as much as mapping them.
        mapped = []
        for a in args:
            mapped.append(fn(a) if type(a) in _VALUE_TYPES else map_values(fn, a))
        args = tuple(mapped)
    else:
        args = map_values(fn, args)
    kwargs = bsym.kwargs
    if kwargs:
        kwargs = tuple([(k, map_values(fn, v)) for k, v in kwargs])
    subsymbols = bsym.subsymbols
    if subsymbols:
        subsymbols = tuple([map_bsym(s, fn, names) for s in subsymbols])
    # Positional, in BoundSymbol's field order.
    return BoundSymbol(bsym.symbol, args, kwargs, output, subsymbols, bsym.source, hints, bsym.scope)


_VALUE_TYPES = frozenset({TensorValue, NumberValue})


def map_trace(trace: Trace, fn: ValueMap, names: dict | set | None = None) -> Trace:
    """`trace` with every value in its bound symbols (at every level) and its output
    passed through `fn`. Inputs are left as they are: they are the entry's parameters.
    With `names`, as `map_bsym`: bound symbols that mention none of them are kept.
    A size symbol the map renames or replaces changes everywhere it appears (types,
    dims, guards), inputs' types included."""
    sizes = {}
    for info in trace.dims:
        symbol = Dim.symbol(info.name)
        new = map_values(fn, symbol)
        if not (isinstance(new, Dim) and new.same(symbol)):
            sizes[info.name] = new
    trace = substitute_sizes(trace, sizes)
    bsyms = tuple([map_bsym(b, fn, names) for b in trace.bsyms])
    return trace.replace(bsyms=bsyms, output=map_values(fn, trace.output))
