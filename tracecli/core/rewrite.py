"""Substituting values inside bound symbols: the one rewriting tool passes share.

A value map (`renamer`, `substituter`, or any function from value to value) says what
each value becomes; `map_bsym` applies it to one bound symbol, `map_trace` to a whole
trace. The trace's name registry follows by itself (`Trace.names`), so a pass that
renames values or adds new ones only builds the new trace.
"""

from __future__ import annotations

from collections.abc import Callable

from tracecli.core.dims import Dim
from tracecli.core.dtypes import DType
from tracecli.core.pytree import map_values, values_in
from tracecli.core.symbol import BoundSymbol, Tag, new_bound_symbol, restates
from tracecli.core.trace import Trace, substitute_sizes
from tracecli.core.values import NumberValue, TensorValue

ValueMap = Callable[[TensorValue | NumberValue], TensorValue | NumberValue]


class Renamer:
    """The value map `renamer` makes. `map_bsym` and `map_trace` read its table instead
    of calling it for every value: a renaming pass meets each value many times (as an
    output, then as an argument, at every level), 500 000 times on 100 000 calls."""

    __slots__ = ("table",)

    def __init__(self, names: dict[str, str]) -> None:
        # old name -> its new name until a value of that name is met, then its renamed
        # record, made once: one lookup says whether a value is renamed and what to.
        self.table: dict[str, str | TensorValue | NumberValue] = dict(names)

    def __call__(self, value):
        new = self.table.get(value.name)
        if new is None:
            return value
        if type(new) is str:
            new = self.table[value.name] = value.renamed(new)
        return new


def renamer(names: dict[str, str]) -> ValueMap:
    """A value map that renames values by name (as `names` says when it is made) and
    leaves the rest alone."""
    return Renamer(names)


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
    With `names`, bound symbols that mention none of them are returned as they are, and
    so is any bound symbol (or subsymbol) in which `fn` changes nothing. `fn` is a
    function of the value: a record that appears several times may be mapped once."""
    if names is not None and not touches(bsym, names):
        return bsym
    if type(fn) is Renamer:
        return _map(bsym, fn, names, fn.table, None)
    return _map(bsym, fn, names, None, None)


def _map(bsym: BoundSymbol, fn: ValueMap, names: dict | set | None, table: dict | None,
         parent: tuple | None) -> BoundSymbol:
    # This runs for every bound symbol a renaming pass rewrites, at every level (200 000
    # for 100 000 traced calls): the common shapes (one tensor output, a flat tuple of
    # arguments, one hint) skip the tree walks and the comprehensions, and what did not
    # change is kept, not built again.
    # `table`: a Renamer's table, read here instead of calling it for every value.
    # `parent`: the parent's (arguments, mapped arguments, output, mapped output). A
    # subsymbol mostly produces its parent's very output record, and one that restates
    # its parent's call may hold its very arguments tuple: those are mapped already.
    before = bsym.output
    if parent is not None and before is parent[2]:
        output = parent[3]
    elif type(before) is not TensorValue:
        output = map_values(fn, before)
    elif table is None:
        output = fn(before)
    else:
        output = table.get(before.name)
        if output is None:
            output = before
        elif type(output) is str:  # first met: where it is defined, as a rule
            output = table[before.name] = before.renamed(output)
    same = output is before
    hints = bsym.name_hints
    if hints and not same:
        if type(before) is TensorValue and type(output) in _VALUE_TYPES:
            old, new = before.name, output.name
            if len(hints) != 1:
                hints = tuple([(new if out == old else out, var) for out, var in hints])
            elif hints[0][0] == old:
                hints = ((new, hints[0][1]),)
        else:
            renamed = {old.name: new.name for old, new in zip(values_in(before), values_in(output), strict=True)}
            hints = tuple([(renamed.get(out, out), var) for out, var in hints])

    args = bsym.args
    if parent is not None and args is parent[0]:
        args = parent[1]
    elif type(args) is tuple:
        mapped = []
        changed = False
        for a in args:
            kind = type(a)
            if kind is TensorValue or kind is NumberValue:
                if table is None:
                    new = fn(a)
                else:
                    new = table.get(a.name)
                    if new is None:
                        new = a
                    elif type(new) is str:
                        new = table[a.name] = a.renamed(new)
            elif kind in _CONSTANTS:
                mapped.append(a)
                continue
            else:
                new = map_values(fn, a)
            mapped.append(new)
            if new is not a:
                changed = True
        if changed:
            args = tuple(mapped)
    else:
        args = map_values(fn, args)
    if args is not bsym.args:
        same = False

    kwargs = bsym.kwargs
    if kwargs:
        # Mostly constants (device, dtype): a pair is rebuilt only where its value changed.
        pairs = []
        changed = False
        for pair in kwargs:
            if type(pair[1]) in _CONSTANTS:
                pairs.append(pair)
                continue
            new = map_values(fn, pair[1])
            if new is not pair[1]:
                pair = (pair[0], new)
                changed = True
            pairs.append(pair)
        if changed:
            kwargs = tuple(pairs)
            same = False

    subsymbols = bsym.parts
    if type(subsymbols) is not tuple:
        pass  # restated by one primitive (most calls): its record follows the call mapped here
    elif len(subsymbols) == 1 and names is None:
        sub = subsymbols[0]
        if restates(sub, bsym.args, before):
            if output is not before or args is not bsym.args:
                subsymbols = sub.symbol  # the restatement, kept as its primitive from now on
                same = False
        else:
            sub = _map(sub, fn, names, table, (bsym.args, args, before, output))
            if sub is not subsymbols[0]:
                subsymbols = (sub,)
                same = False
    elif subsymbols:
        here = (bsym.args, args, before, output)
        mapped = []
        changed = False
        for sub in subsymbols:
            new = sub if names is not None and not touches(sub, names) else _map(sub, fn, names, table, here)
            mapped.append(new)
            if new is not sub:
                changed = True
        if changed:
            subsymbols = tuple(mapped)
            same = False

    if same:
        return bsym
    if args is not bsym.args and bsym.symbol.tags and Tag.REGION in bsym.symbol.tags:
        # A region is a function of its arguments: two that became one value (cse merged
        # them) are one parameter.
        named: dict[str, object] = {}
        for a in args:
            named.setdefault(a.name, a)
        args = tuple(named.values())
    return new_bound_symbol(bsym.symbol, args, kwargs, output, subsymbols, bsym.source, hints, bsym.scope)


_VALUE_TYPES = frozenset({TensorValue, NumberValue})
# Arguments no value map can change, met in most calls (a scalar, a device, a dtype):
# passed on without asking map_values.
_CONSTANTS = frozenset({int, float, bool, str, complex, type(None), DType})


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
    table = fn.table if type(fn) is Renamer else None
    # map_bsym for each, without its call: every bound symbol of the trace goes through here.
    bsyms = tuple([b if names is not None and not touches(b, names) else _map(b, fn, names, table, None)
                   for b in trace.bsyms])
    return trace.replace(bsyms=bsyms, output=map_values(fn, trace.output))
