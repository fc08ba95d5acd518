"""The verifier: checks the invariants every trace must keep, after every pass.

- each name is defined once, and before it is used;
- a name always denotes the same value (same shape, dtype and device) wherever it appears;
- a bound symbol never reads its own output (the `t1 = ltorch.add(t0, t1)` bug);
- subsymbols define every output of their parent that is not one of its inputs,
  with the parent's types;
- the trace's outputs are defined;
- symbolic shapes: each size symbol is bound once (by `prims.shape`) before any call
  reads it, at whatever level; type comments use only the trace's own symbols;
- a fusion region holds only modelled calls without effects (core/regions.py);
- every bound symbol, at every level, records the types its rule gives: re-run on the
  recorded arguments, its meta rule or decomposition accepts them and yields outputs of
  the recorded shapes, dtypes and devices (`typecheck`). A subsymbol is checked on its
  own, whatever its parent's check found.
"""

from __future__ import annotations

import contextlib

from tracecli.core.dims import DimEnv, SymBool, symbols_in
from tracecli.core.printing import format_bsym, format_trace
from tracecli.core.regions import is_region, region_problem
from tracecli.core.symbol import BoundSymbol
from tracecli.core.trace import Trace
from tracecli.core.typecheck import type_problem
from tracecli.core.values import TensorValue


class VerificationError(Exception):
    def __init__(self, problem: str, context: str = ""):
        super().__init__(problem + (("\n" + context) if context else ""))
        self.problem = problem
        self.context = context


def _context(trace: Trace, bsym: BoundSymbol | None, radius: int = 3) -> str:
    """The trace lines around the offending bound symbol, marked with `>>`."""
    lines = format_trace(trace, depth=float("inf")).splitlines()
    if bsym is None:
        return ""
    needle = format_bsym(bsym)
    at = next((i for i, line in enumerate(lines) if line.strip().lstrip("# ") == needle), None)
    if at is None:
        return ""
    lo, hi = max(0, at - radius), min(len(lines), at + radius + 1)
    return "\n".join((">> " if i == at else "   ") + lines[i] for i in range(lo, hi))


def verify(trace: Trace, *, types: bool = True) -> None:
    """Raise VerificationError describing the first broken invariant. `types=False`
    checks structure only (names, scopes)."""
    known: dict[str, object] = {}  # name -> value record, across all levels
    dim_names = {d.name for d in trace.dims} or None

    def fail(problem: str, bsym: BoundSymbol | None = None):
        raise VerificationError(problem, _context(trace, bsym))

    def note(value, bsym: BoundSymbol | None) -> None:
        seen = known.setdefault(value.name, value)
        # Parents and subsymbols share their records: identity settles most cases.
        if seen is not value and seen != value:
            fail(f"name {value.name} is used for two different values: {seen} and {value}", bsym)
        if dim_names is not None and seen is value and type(value) is TensorValue:
            foreign = symbols_in(value.shape) - dim_names
            if foreign:
                fail(f"the type of {value.name} uses {', '.join(sorted(foreign))}, not a size of this trace", bsym)

    def check_block(bsyms, scope: set[str]) -> None:
        """`scope` holds the names readable here; each definition is added to it."""
        for bsym in bsyms:
            arg_names = set()
            for arg in bsym.arg_values():
                name = arg.name
                if name not in scope:
                    fail(f"{bsym.symbol.qualname} reads {name} before it is defined", bsym)
                # Parents and subsymbols share their records: identity settles most cases.
                if known.get(name) is not arg or dim_names is not None:
                    note(arg, bsym)
                arg_names.add(name)
            parts = bsym.parts
            outputs = bsym.output_values()
            if type(parts) is not tuple:
                # Restated by one primitive on these very arguments and outputs: its record
                # would pass every check this call passes (the call's rule runs the
                # primitive's), so none is made for it.
                decomposed, produced = False, {out.name for out in outputs}
            elif parts:
                # A decomposition sees only its parent's arguments and its own results,
                # and the size symbols bound before its parent.
                inner = set(arg_names) | (dim_names & scope) if dim_names else set(arg_names)
                check_block(parts, inner)
                decomposed, produced = True, inner - arg_names - (dim_names or set())
            else:
                decomposed, produced = False, set()
            for out in outputs:
                name = out.name
                if name in arg_names:
                    fail(f"{bsym.symbol.qualname} uses {name} as both input and output", bsym)
                if name in scope or (name in known and name not in produced):
                    fail(f"{name} is defined twice", bsym)
                if decomposed and name not in produced:
                    fail(f"output {name} of {bsym.symbol.qualname} is not produced by its subsymbols", bsym)
                note(out, bsym)
                scope.add(name)
            # Most symbols have no tags: that case skips the lookup.
            if bsym.symbol.tags and is_region(bsym) and (problem := region_problem(bsym)) is not None:
                fail(problem, bsym)
            if types:
                if dim_names:
                    with sizes:
                        problem = type_problem(bsym, examples)
                else:
                    problem = type_problem(bsym, examples)
                if problem is not None:
                    fail(problem, bsym)

    # Rules re-run on symbolic sizes decide what shapes leave open from the traced example.
    sizes = _example_env(trace) if dim_names else contextlib.nullcontext()
    # A rule may decide on the example sizes (how many pieces a split makes): its outcome
    # is remembered per example, not per symbol name alone.
    examples = tuple((d.name, d.example) for d in trace.dims)
    top_level: set[str] = set()
    for value in trace.inputs:
        if value.name in top_level:
            fail(f"input {value.name} is declared twice")
        top_level.add(value.name)
        note(value, None)
    check_block(trace.bsyms, top_level)
    for out in trace.iter_outputs():
        if out.name not in top_level:
            fail(f"the trace returns {out.name}, which is never defined")
        note(out, None)


def _example_env(trace: Trace) -> DimEnv:
    env = DimEnv()
    for info in trace.dims:
        if not info.unbacked:
            env.dims[info.name] = info
            env.ranges[info.name] = (2, float("inf"))
    # Sizes the data decide as the tracing knew them: their ranges and the program's facts.
    for info in trace.dims:
        if info.unbacked:
            env.new_unbacked(info.name, info.made_by, info.upper, None)
            env.dims[info.name] = info
    for fact in trace.facts:
        env.assume(SymBool(env, fact.op, fact.lhs, fact.rhs))
    # A relation they leave open was settled no way a rule re-run can see (the tracing
    # refused it, or cut the trace there): the rule is told the sizes differ, so a record
    # that needed them equal (two counts a pass took for one) fails its check, named.
    env.on_open = lambda open_: open_.op == "!="
    return env
