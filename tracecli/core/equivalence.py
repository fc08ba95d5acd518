"""Are two traces the same program? Equality up to renaming, as a function of the IR.

Two traces are equal when their bound symbols, aligned by structure, call the same
symbols with the same constants, read the values that correspond to each other, and
give the same types; the names values carry (generated `t7`, the user's `loss`) and
the source lines they came from are no part of it (lines count with `strict_lines`).

A trace is first reduced to an `Outline`: per bound symbol, its call with the values
it reads written as `%0, %1, ...` (a template no name can change), the names it reads
and defines, its output types and its source line. An outline is plain data, so a
stored one (a golden snapshot) compares with a trace made today.

Alignment, as the identity-aware diff needs it: inputs and size symbols by position;
bound symbols by a key that holds no name (template, types, which inputs it reads),
matched as a text diff matches lines; where runs differ, bound symbols of the same
symbol pair up in order. Each pair maps the old names of its outputs to the new ones,
and only then are the pairs compared in full, reads through that map: a value read in
place of another is a changed argument, even when every name is the same.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field

from tracecli.core.printing import format_call, format_constant, type_comment
from tracecli.core.pytree import map_values, values_in
from tracecli.core.symbol import BoundSymbol
from tracecli.core.trace import Trace

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Op:
    """One bound symbol, names kept apart from the structure."""

    template: str  # `ltorch.mul(%0, %1)`: the call, values as the place they are read in
    target: str  # the outputs' structure: `%`, `(%, %)`
    reads: tuple[str, ...]  # the names `%0, %1, ...` stand for
    outputs: tuple[str, ...]
    types: tuple[str, ...]  # type comment of each output
    line: int | None = None
    subsymbols: tuple[Op, ...] = ()

    @property
    def symbol(self) -> str:
        return self.template.split("(", 1)[0]

    def to_json(self) -> dict:
        out = {"call": self.template, "target": self.target, "reads": list(self.reads),
               "outputs": list(self.outputs), "types": list(self.types), "line": self.line}
        if self.subsymbols:
            out["subsymbols"] = [s.to_json() for s in self.subsymbols]
        return out

    @staticmethod
    def from_json(data: dict) -> Op:
        return Op(data["call"], data["target"], tuple(data["reads"]), tuple(data["outputs"]), tuple(data["types"]),
                  data.get("line"), tuple(Op.from_json(s) for s in data.get("subsymbols", ())))


@dataclass(frozen=True)
class Outline:
    """A trace as plain data: what comparing it needs, and nothing that names change."""

    inputs: tuple[str, ...]
    input_types: tuple[str, ...]
    sizes: tuple[str, ...]  # size symbols (`s0`, or the user's `rows`), in order
    guards: tuple[str, ...]
    ops: tuple[Op, ...]
    output: str  # the return's template
    output_reads: tuple[str, ...]

    def to_json(self) -> dict:
        return {"inputs": [[n, t] for n, t in zip(self.inputs, self.input_types, strict=True)],
                "sizes": list(self.sizes), "guards": list(self.guards), "ops": [op.to_json() for op in self.ops],
                "output": self.output, "output_reads": list(self.output_reads)}

    @staticmethod
    def from_json(data: dict) -> Outline:
        return Outline(tuple(n for n, _ in data["inputs"]), tuple(t for _, t in data["inputs"]),
                       tuple(data["sizes"]), tuple(data["guards"]), tuple(Op.from_json(o) for o in data["ops"]),
                       data["output"], tuple(data["output_reads"]))


def _placeholders(obj: object, prefix: str = "%") -> tuple[object, tuple[str, ...]]:
    """`obj` with each value it holds renamed to its place (`%0`, ...), and the names."""
    names: list[str] = []
    places: dict[str, str] = {}

    def place(value):
        if value.name not in places:
            places[value.name] = f"{prefix}{len(names)}"
            names.append(value.name)
        return value.renamed(places[value.name])

    return map_values(place, obj), tuple(names)


def _type(value) -> str:
    return type_comment(value).strip('"')


def _op(bsym: BoundSymbol, level: int, depth: float) -> Op:
    args, reads = _placeholders((bsym.args, bsym.kwargs))
    template = format_call(bsym.replace(args=args[0], kwargs=args[1]))
    outputs = values_in(bsym.output)
    target = format_constant(map_values(lambda v: v.renamed("%"), bsym.output))
    subs = tuple(_op(s, level + 1, depth) for s in bsym.subsymbols) if level <= depth else ()
    line = bsym.source.line if bsym.source is not None else None
    return Op(template, target, reads, tuple(v.name for v in outputs), tuple(_type(v) for v in outputs),
              line, subs)


def outline(trace: Trace, depth: float = math.inf) -> Outline:
    """The trace's outline, with subsymbols `depth` levels down (as `format_trace` shows them)."""
    output, output_reads = _placeholders(trace.output)
    return Outline(
        tuple(v.name for v in trace.inputs), tuple(_type(v) for v in trace.inputs),
        tuple(d.name for d in trace.dims), tuple(g.text() for g in trace.guards),
        tuple(_op(b, 1, depth) for b in trace.bsyms), format_constant(output), output_reads,
    )


@dataclass(frozen=True)
class Change:
    """One difference. `old` and `new` index the top-level bound symbols of each trace
    (None where that side has none: an added or removed one, the inputs, the return)."""

    kind: str  # "changed", "added", "removed", "inputs", "output", "guards"
    what: str  # for a reader: `ltorch.mul -> ltorch.add`, `arguments`, `type`, `line 7 -> 9`
    old: int | None = None
    new: int | None = None


@dataclass(frozen=True)
class Comparison:
    changes: tuple[Change, ...]
    # Old name -> new name for every value aligned with one of the new trace: the diff
    # shows a line whose only difference is these names as unchanged.
    value_map: dict[str, str] = field(default_factory=dict)

    @property
    def equal(self) -> bool:
        return not self.changes


def _sizes_renamed(text: str, sizes: dict[str, str]) -> str:
    return _IDENT.sub(lambda m: sizes.get(m.group(0), m.group(0)), text) if sizes else text


class _Aligner:
    def __init__(self, old: Outline, new: Outline, strict_lines: bool):
        self.old, self.new, self.strict = old, new, strict_lines
        # Size symbols by position, on each side spelled `$k`: types compare as structure.
        self.old_sizes = {s: f"${k}" for k, s in enumerate(old.sizes)}
        self.new_sizes = {s: f"${k}" for k, s in enumerate(new.sizes)}
        self.value_map = dict(zip(old.sizes, new.sizes, strict=False))
        self.value_map.update(zip(old.inputs, new.inputs, strict=False))

    def _key(self, op: Op, sizes: dict[str, str], inputs: dict[str, int]) -> tuple:
        # No name: what an op reads is only told apart when it is an input (by position).
        return (op.template, op.target, tuple(_sizes_renamed(t, sizes) for t in op.types),
                tuple(inputs.get(r, -1) for r in op.reads), len(op.subsymbols))

    def pairs(self) -> list[tuple[int | None, int | None]]:
        """(old index, new index) for each top-level op in trace order; None: unpaired."""
        old_in = {n: k for k, n in enumerate(self.old.inputs)}
        new_in = {n: k for k, n in enumerate(self.new.inputs)}
        a = [self._key(op, self.old_sizes, old_in) for op in self.old.ops]
        b = [self._key(op, self.new_sizes, new_in) for op in self.new.ops]
        out: list[tuple[int | None, int | None]] = []
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
            if tag == "equal":
                out.extend(zip(range(i1, i2), range(j1, j2), strict=True))
                continue
            # A changed op: same symbol with other arguments or types, or another symbol
            # in its place. Pair those in order, so that what reads its result is
            # matched through it.
            inner = difflib.SequenceMatcher(None, [op.symbol for op in self.old.ops[i1:i2]],
                                            [op.symbol for op in self.new.ops[j1:j2]], autojunk=False)
            for tag2, k1, k2, l1, l2 in inner.get_opcodes():
                # As many ops replaced by as many others: each one changed into its counterpart.
                if tag2 == "equal" or (tag2 == "replace" and k2 - k1 == l2 - l1):
                    out.extend((i1 + k, j1 + m) for k, m in zip(range(k1, k2), range(l1, l2), strict=True))
                else:
                    out.extend((i1 + k, None) for k in range(k1, k2))
                    out.extend((None, j1 + m) for m in range(l1, l2))
        return out

    def map_outputs(self, old: Op, new: Op) -> None:
        for a, b in zip(old.subsymbols, new.subsymbols, strict=False):
            self.map_outputs(a, b)
        # Last: the parent's outputs share names with the subsymbols that produce them,
        # and what reads the parent reads its outputs.
        self.value_map.update(zip(old.outputs, new.outputs, strict=False))

    def read(self, names: tuple[str, ...]) -> tuple[str, ...]:
        # An old value with no counterpart reads as nothing the new trace defines.
        return tuple(self.value_map.get(n, "\0" + n) for n in names)

    def difference(self, old: Op, new: Op) -> str | None:
        """What differs between two paired ops, the most telling first; None: nothing."""
        if old.symbol != new.symbol:
            return f"{old.symbol} -> {new.symbol}"
        if old.template != new.template or old.target != new.target or self.read(old.reads) != new.reads:
            return "arguments"
        if tuple(_sizes_renamed(t, self.old_sizes) for t in old.types) != tuple(
                _sizes_renamed(t, self.new_sizes) for t in new.types):
            return "type"
        if len(old.subsymbols) != len(new.subsymbols) or any(
                self.difference(a, b) is not None for a, b in zip(old.subsymbols, new.subsymbols, strict=True)):
            return "decomposition"
        if self.strict and old.line != new.line:
            return f"moved from line {old.line}"
        return None


def _as_outline(trace: Trace | Outline, depth: float) -> Outline:
    return trace if isinstance(trace, Outline) else outline(trace, depth)


def compare_traces(old: Trace | Outline, new: Trace | Outline, *, strict_lines: bool = False,
                   depth: float = math.inf) -> Comparison:
    """Whether `new` is `old` up to renaming (and, with `strict_lines`, on the same lines);
    the changes in trace order, the first real one first. `depth`: how many subsymbol
    levels of a `Trace` count (an `Outline` has the levels it was made with)."""
    old, new = _as_outline(old, depth), _as_outline(new, depth)
    align = _Aligner(old, new, strict_lines)
    changes: list[Change] = []
    if (len(old.inputs) != len(new.inputs) or len(old.sizes) != len(new.sizes)
            or tuple(_sizes_renamed(t, align.old_sizes) for t in old.input_types)
            != tuple(_sizes_renamed(t, align.new_sizes) for t in new.input_types)):
        changes.append(Change("inputs", "inputs: " + ", ".join(new.input_types)))
    if tuple(_sizes_renamed(g, align.old_sizes) for g in old.guards) != tuple(
            _sizes_renamed(g, align.new_sizes) for g in new.guards):
        changes.append(Change("guards", "guards"))
    pairs = align.pairs()
    for i, j in pairs:
        if i is not None and j is not None:
            align.map_outputs(old.ops[i], new.ops[j])
    for i, j in pairs:
        if i is None:
            op = new.ops[j]
            opaque = " (opaque)" if op.symbol.startswith("torch.") else ""
            changes.append(Change("added", f"{op.symbol}{opaque}", None, j))
        elif j is None:
            changes.append(Change("removed", old.ops[i].symbol, i, None))
        else:
            what = align.difference(old.ops[i], new.ops[j])
            if what is not None:
                changes.append(Change("changed", what, i, j))
    if old.output != new.output or align.read(old.output_reads) != new.output_reads:
        changes.append(Change("output", "return " + new.output))
    value_map = {k: v for k, v in align.value_map.items() if k != v}
    return Comparison(tuple(changes), value_map)
