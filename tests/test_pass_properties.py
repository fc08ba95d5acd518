"""Property tests of the built-in passes on random valid traces built from IR records.

The traces are made directly from values and bound symbols, never by tracing Python,
so they reach shapes the tracer rarely makes: dead and duplicated subsymbols (the
repeated `prims.eq` / `prims.shape` of the second seed), nested decompositions,
random, side-effect, check and in-place calls inside decompositions, duplicated calls
on either side of an in-place update, and name hints that reassign a variable, look
generated (`t3`) or collide with an input (`x`) (the first seed).

Every pass, and random pipelines of them, must keep the trace valid, be idempotent,
compute the same results with the same random draws and effects, and leave its input
alone; each pass also has its own contract, checked against an oracle written here.
"""

from __future__ import annotations

import keyword
import math
from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from tracecli.core import dtypes
from tracecli.core.names import GENERATED, RESERVED, NameRegistry, sanitize
from tracecli.core.printing import format_bsym, format_trace
from tracecli.core.pytree import map_values
from tracecli.core.regions import flatten_regions, is_region
from tracecli.core.symbol import EFFECT_TAGS, BoundSymbol, SourceLocation, Symbol, Tag
from tracecli.core.trace import Trace, collect_names, walk, written_inputs
from tracecli.core.values import NumberValue, TensorValue
from tracecli.core.verify import VerificationError, verify
from tracecli.executors.codegen import TORCH_GLOBALS, compile_trace
from tracecli.frontend.tracer import trace_callable
from tracecli.ops import ltorch, prims
from tracecli.passes import REGISTRY, PassResult
from tracecli.passes.keys import call_key
from tracecli.passes.pipeline import BUILTIN, parse_passes, run_pipeline
from tracecli.render.diff import value_changes

SHAPE = (3,)
INPUT_NAMES = ("x", "y", "z")
# Variables the "user" stores values into: `a` is reassigned often, `t3` / `t7` look
# generated, `x` reassigns an input, `a_1` is a name the user wrote that versioning must not
# take, `torch` would shadow a name the generated code needs.
HINT_POOL = ("a", "a", "a", "b", "x", "t3", "t7", "a_1", "out", "torch")
LIMIT = 1e4  # bound on |value| for every float tensor, so results stay finite and comparable exactly
MAX_DEPTH = 2  # nesting of decompositions
SCALAR = NumberValue("s", 0.5)

# No deadline: the first example of a run pays for imports and code compilation.
SETTINGS = dict(deadline=None)


# --- test symbols -----------------------------------------------------------------------------

# What the effectful test symbols did during one run, in order: two runs must agree on it.
EFFECT_LOG: list[tuple[str, object]] = []


def _record(x):
    EFFECT_LOG.append(("record", x.clone()))


def _check(x):
    EFFECT_LOG.append(("check", bool(torch.isfinite(x).all())))


def _scale_(x):
    # Halving keeps every bound valid however often it runs.
    x.mul_(0.5)


def _halve_(x):
    return x.mul_(0.5)


RECORD = Symbol("tc_record", "ltorch", impl=_record, tags=frozenset({Tag.SIDE_EFFECT}))
CHECK = Symbol("tc_check", "ltorch", impl=_check, tags=frozenset({Tag.CHECK}))
# Two shapes of in-place call: one that only writes its argument (still read afterwards),
# and one like ltorch.add_: a new value in the trace, the same memory at run time, its
# argument never read again, and a functional decomposition.
SCALE_ = Symbol("tc_scale_", "ltorch", impl=_scale_, tags=frozenset({Tag.INPLACE}))
HALVE_ = Symbol("tc_halve_", "ltorch", impl=_halve_, tags=frozenset({Tag.INPLACE}))


def _replay(params: tuple[TensorValue, ...], keywords: tuple, subsymbols: tuple[BoundSymbol, ...], output):
    """Decomposition and implementation of a random composite: call its subsymbols' symbols
    in order. Traced, that records the subsymbols; run, it does the same arithmetic and
    draws the same random numbers as the lowered trace, which calls them one by one."""

    def replay(*args, **kwargs):
        env = {p.name: a for p, a in zip(params, args, strict=True)}
        env.update((v.name, kwargs[k]) for k, v in keywords)

        def look(value):
            return env[value.name]

        for sub in subsymbols:
            result = sub.symbol(*map_values(look, sub.args), **{k: map_values(look, v) for k, v in sub.kwargs})
            outputs = list(sub.iter_outputs())
            results = result if isinstance(sub.output, tuple) else [result] if outputs else []
            env.update((value.name, data) for value, data in zip(outputs, results, strict=True))
        return map_values(look, output)

    return replay


def _composite_symbol(name: str, params, keywords, subsymbols, output) -> Symbol:
    replay = _replay(params, keywords, subsymbols, output)
    return Symbol(name, "ltorch", impl=replay, decomposition=replay)


# --- the trace generator --------------------------------------------------------------------


def tensor(name: str, dtype=dtypes.float32) -> TensorValue:
    return TensorValue(name, SHAPE, dtype, "cpu")


def _near(items):
    """Any of `items`, often one of the last few: reusing fresh values makes the
    interactions passes get wrong (a duplicate next to an in-place update of it) likely."""
    return st.sampled_from(items[-3:]) | st.sampled_from(items)


class _Builder:
    """Names and value bounds shared by every level of one generated trace."""

    def __init__(self, draw, inputs):
        self.draw = draw
        # One registry for all levels: names are unique across subsymbols too.
        self.registry = NameRegistry({v.name for v in inputs})
        self.bounds = {v.name: 1.0 for v in inputs}  # float tensor name -> bound on |value|
        self.composites = 0

    def pick(self, items):
        return self.draw(_near(items))

    def value(self, symbol: Symbol, args, kwargs=(), name: str | None = None) -> TensorValue:
        t = symbol.meta(*args, **dict(kwargs))
        prefix = "b" if t.dtype == dtypes.bool8 else "t"
        return TensorValue(name or self.registry.fresh(prefix), t.shape, t.dtype, t.device)

    def pure_prim(self, pool, name: str | None = None, scalars: bool = False) -> BoundSymbol:
        draw = self.draw
        ops = ("neg", "exp", "sin", "cos", "tanh", "add", "sub", "mul", "add_c", "mul_c") + (("mul_s",) if scalars else ())
        op = draw(st.sampled_from(ops))
        a = self.pick(pool)
        ba = self.bounds[a.name]
        if op in ("add", "sub", "mul"):
            c = self.pick(pool)
            args, bound = (a, c), (ba * self.bounds[c.name] if op == "mul" else ba + self.bounds[c.name])
        elif op == "add_c":  # an int constant: keys must tell 1 from 1.0
            op, args, bound = "add", (a, 1), ba + 1
        elif op == "mul_c":
            op, args, bound = "mul", (a, 0.5), ba * 0.5
        elif op == "mul_s":
            op, args, bound = "mul", (a, SCALAR), ba * abs(SCALAR.value)
        else:
            args = (a,)
            bound = {"neg": ba, "exp": math.exp(min(ba, 50.0)), "sin": 1.0, "cos": 1.0, "tanh": 1.0}[op]
        if bound > LIMIT:
            op, args, bound = "tanh", (a,), 1.0
        symbol = prims.ALL[op]
        out = self.value(symbol, args, name=name)
        self.bounds[out.name] = bound
        return BoundSymbol(symbol, args, (), out)

    def restated(self, pool, name: str | None = None) -> BoundSymbol:
        """An ltorch call its primitive restates on the very same arguments, kept as the
        tracer keeps one: the primitive alone, its record made when read. (No number
        parameter: the tracer records ltorch calls with the number itself.)"""
        prim = self.pure_prim(pool, name)
        return BoundSymbol(getattr(ltorch, prim.symbol.name), prim.args, (), prim.output, prim.symbol)

    def compare(self, pool) -> BoundSymbol:
        """A bool result no float op can read: dead unless returned (the seed's `prims.ne`)."""
        symbol = prims.ALL[self.draw(st.sampled_from(("ne", "eq")))]
        args = (self.pick(pool), self.pick(pool))
        return BoundSymbol(symbol, args, (), self.value(symbol, args))

    def uniform(self) -> BoundSymbol:
        args, kwargs = (SHAPE, 0.0, 1.0), (("device", "cpu"), ("dtype", dtypes.float32))
        out = self.value(prims.uniform, args, kwargs)
        self.bounds[out.name] = 1.0
        return BoundSymbol(prims.uniform, args, kwargs, out)

    def effect(self, symbol: Symbol, pool) -> BoundSymbol:
        return BoundSymbol(symbol, (self.pick(pool),), (), None)

    def halve_(self, target: TensorValue) -> BoundSymbol:
        out = tensor(self.registry.fresh("t"))
        self.bounds[out.name] = self.bounds[target.name] * 0.5
        return BoundSymbol(HALVE_, (target,), (), out, (BoundSymbol(prims.mul, (target, 0.5), (), out),))

    def copy(self, bsym: BoundSymbol, name: str | None = None) -> BoundSymbol:
        """`bsym` computing the same from the same arguments into fresh names (or `name`)."""
        mapping: dict[str, str] = {}
        if name is not None:
            mapping[bsym.output.name] = name
        for _, sub in walk([bsym]):
            for out in sub.iter_outputs():
                if out.name not in mapping:
                    mapping[out.name] = self.registry.fresh(out.name[0])
        for old, new in mapping.items():
            if old in self.bounds:
                self.bounds[new] = self.bounds[old]
        return _rename_outputs(bsym, mapping).replace(name_hints=())

    def composite(self, pool, depth: int, name: str | None = None) -> BoundSymbol:
        """A bound symbol of a fresh ltorch symbol whose subsymbols read only its arguments
        and earlier subsymbols, with dead, duplicated, effectful and nested ones mixed in."""
        draw = self.draw
        params = tuple(draw(st.lists(_near(pool), min_size=1, max_size=3)))
        keywords = (("other", self.pick(pool)),) if draw(st.integers(0, 3)) == 0 else ()
        inner = list(dict.fromkeys(params + tuple(v for _, v in keywords)))  # float values readable inside
        subs: list[BoundSymbol] = []
        pure: list[BoundSymbol] = []  # pure subsymbols with one float output, to duplicate

        def add(sub: BoundSymbol) -> None:
            subs.append(sub)
            floats = [o for o in sub.iter_outputs() if o.dtype == dtypes.float32]
            inner.extend(floats)
            if isinstance(sub.output, TensorValue) and floats and not _pinned(sub):
                pure.append(sub)

        kinds = ["prim", "restated", "dead", "dup", "dup", "random", "record", "check", "inplace"]
        if depth < MAX_DEPTH:
            kinds.append("nested")
        for _ in range(draw(st.integers(1, 4))):
            kind = draw(st.sampled_from(kinds))
            if kind == "dup" and not pure:
                kind = "prim"
            if kind == "prim":
                add(self.pure_prim(inner))
            elif kind == "restated":
                add(self.restated(inner))
            elif kind == "dead":
                add(self.compare(inner))
            elif kind == "dup":
                add(self.copy(self.pick(pure)))
            elif kind == "random":
                add(self.uniform())
            elif kind in ("record", "check", "inplace"):
                add(self.effect({"record": RECORD, "check": CHECK, "inplace": SCALE_}[kind], inner))
            else:
                add(self.composite(inner, depth + 1))
        # Mostly one result, sometimes two (which may be equal), sometimes none.
        results = 1 if name is not None else draw(st.sampled_from((1, 1, 1, 2, 0)))
        outputs = []
        for _ in range(results):
            out_name = name or self.registry.fresh("t")
            last = draw(st.sampled_from(["prim", "dup", "dup"] + (["nested"] if depth < MAX_DEPTH else [])))
            if last == "dup" and pure:
                # A duplicate that produces the parent's result: dce may not simply drop it.
                add(self.copy(self.pick(pure), out_name))
            elif last == "nested":
                add(self.composite(inner, depth + 1, out_name))
            else:
                add(self.pure_prim(inner, out_name))
            outputs.append(subs[-1].output)
        if not outputs and not any(_pinned(s) for s in subs):
            # No result: a check-like call (the seed's `check_len`) whose effect must stay.
            add(self.effect(draw(st.sampled_from((CHECK, RECORD))), inner))
        output = None if not outputs else outputs[0] if results == 1 else tuple(outputs)
        self.composites += 1
        symbol = _composite_symbol(f"tc_comp{self.composites}", params, keywords, tuple(subs), output)
        return BoundSymbol(symbol, params, keywords, output, tuple(subs))


def _rename_outputs(bsym: BoundSymbol, mapping: dict[str, str]) -> BoundSymbol:
    """Written here rather than borrowed from the passes, so the generator does not lean
    on the code under test."""

    def fn(value):
        return value.renamed(mapping[value.name]) if value.name in mapping else value

    return bsym.replace(
        args=map_values(fn, bsym.args),
        kwargs=tuple((k, map_values(fn, v)) for k, v in bsym.kwargs),
        output=map_values(fn, bsym.output),
        subsymbols=tuple(_rename_outputs(s, mapping) for s in bsym.subsymbols),
    )


class Case:
    # A plain class: hypothesis pretty-prints dataclasses field by field, ignoring __repr__.
    def __init__(self, trace: Trace, inputs: tuple):  # tensors, and numbers for number inputs
        self.trace = trace
        self.inputs = inputs

    def __repr__(self) -> str:
        # Hypothesis prints this for a failing example: the readable trace, not the records.
        hints = ", ".join(f"{o}: {var}" for b in self.trace.bsyms for o, var in b.name_hints)
        return f"Case(\n{format_trace(self.trace, depth=math.inf)}  # hints: {hints or '-'}\n)"


@st.composite
def cases(draw, max_bsyms: int = 12) -> Case:
    inputs = tuple(tensor(n) for n in INPUT_NAMES[: draw(st.integers(1, len(INPUT_NAMES)))])
    if draw(st.booleans()):
        inputs += (SCALAR,)  # a number parameter: the body reads it by name
    b = _Builder(draw, inputs)
    pool = [v for v in inputs if isinstance(v, TensorValue)]  # float tensors readable at the top level
    values = list(pool)  # every tensor, for the outputs
    bsyms: list[BoundSymbol] = []
    stale: set[str] = set()  # values an in-place call replaced: nothing reads them again
    kinds = ("prim", "restated", "compare", "random", "record", "check", "inplace", "update", "composite", "composite",
             "dup", "dup")
    for _ in range(draw(st.integers(1, max_bsyms))):
        kind = draw(st.sampled_from(kinds))
        fresh = [x for x in bsyms if not _reads(x) & stale]
        if kind == "update":
            target = b.pick(pool)
            bsym = b.halve_(target)
            stale.add(target.name)
            pool.remove(target)
            values = [v for v in values if v.name != target.name]
        elif kind == "prim":
            bsym = b.pure_prim(pool, scalars=SCALAR in inputs)
        elif kind == "restated":
            bsym = b.restated(pool)
        elif kind == "compare":
            bsym = b.compare(pool)
        elif kind == "random":
            bsym = b.uniform()
        elif kind in ("record", "check", "inplace"):
            bsym = b.effect({"record": RECORD, "check": CHECK, "inplace": SCALE_}[kind], pool)
        elif kind == "composite":
            bsym = b.composite(pool, 1)
        else:
            # Duplicated calls: pure ones for cse to merge, random and effectful ones it must not.
            bsym = b.copy(b.pick(fresh)) if fresh else b.pure_prim(pool)
        hints = []
        for out in bsym.iter_outputs():
            values.append(out)
            if out.dtype == dtypes.float32:
                pool.append(out)
            if draw(st.booleans()):
                hints.append((out.name, draw(st.sampled_from(HINT_POOL))))
        # Source lines repeat (several calls on one user line) and sometimes are unknown.
        line = draw(st.integers(0, 4))
        source = SourceLocation("prog.py", line, f"line {line}") if line else None
        bsyms.append(bsym.replace(name_hints=tuple(hints), source=source, scope=draw(st.sampled_from(("", "blk")))))
    chosen = draw(st.lists(_near(values), min_size=1, max_size=4))
    if draw(st.integers(0, 4)) == 0:
        chosen.append(None)  # a constant beside the values
    output = chosen[0] if len(chosen) == 1 and draw(st.booleans()) else tuple(chosen)
    trace = Trace("f", inputs, tuple(bsyms), output)
    verify(trace)  # the generator itself is under test: it must only make valid traces
    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**16)))
    data = tuple(torch.rand(SHAPE, generator=gen) * 2 - 1 if isinstance(v, TensorValue) else v.value for v in inputs)
    return Case(trace, data)


# --- oracles --------------------------------------------------------------------------------


def text(trace: Trace) -> str:
    return format_trace(trace, depth=math.inf)


def body(trace: Trace) -> str:
    """The text without its header line, which the pipeline stamps with each pass's name."""
    return text(trace).split("\n", 1)[1]


def _pinned(bsym: BoundSymbol) -> bool:
    return any(s.symbol.tags & EFFECT_TAGS for _, s in walk([bsym]))


def _mutated(bsyms) -> set[str]:
    """Names some INPLACE call overwrites, at any level."""
    return {v.name for _, b in walk(bsyms) if Tag.INPLACE in b.symbol.tags for v in b.iter_args()}


def _reads(bsym: BoundSymbol) -> set[str]:
    return {v.name for v in bsym.iter_args()}


def _effects(bsyms) -> list[tuple]:
    """Every effectful call at any level, in order: what dce and cse must keep."""
    return [(s.symbol, tuple(o.name for o in s.iter_outputs())) for _, s in walk(bsyms) if s.symbol.tags & EFFECT_TAGS]


def _hinted(trace: Trace) -> list[tuple[str, str]]:
    """(value, variable) name hints of top-level outputs (a fusion region's: its
    members'), in definition order."""
    out = []
    for bsym in flatten_regions(trace.bsyms):
        names = {o.name for o in bsym.iter_outputs()}
        out.extend((o, var) for o, var in bsym.name_hints if o in names)
    return out


def _name_map(before: Trace, after: Trace) -> dict[str, str]:
    """Old name -> new name, pairing values by position: rename and renumber change names only."""
    assert [v.name for v in after.inputs] == [v.name for v in before.inputs], "inputs must keep their names"
    old = list(walk(before.bsyms))
    new = list(walk(after.bsyms))
    assert [(d, b.symbol) for d, b in old] == [(d, b.symbol) for d, b in new], "a renaming pass changed structure"
    mapping = {v.name: v.name for v in before.inputs}
    for (_, b), (_, a) in zip(old, new, strict=True):
        for v, w in zip(b.iter_outputs(), a.iter_outputs(), strict=True):
            assert mapping.setdefault(v.name, w.name) == w.name, f"{v.name} renamed inconsistently"
    assert len(set(mapping.values())) == len(mapping), "two values got the same name"
    return mapping


def _globals_for(trace: Trace) -> dict:
    """The torch executor's globals plus the test symbols this trace calls."""
    ours = {b.symbol.name: b.symbol.impl for _, b in walk(trace.bsyms) if b.symbol.name.startswith("tc_")}
    scope = dict(TORCH_GLOBALS)
    scope["ltorch"] = SimpleNamespace(**{**vars(TORCH_GLOBALS["ltorch"]), **ours})
    return scope


def execute(trace: Trace, inputs) -> tuple[object, list]:
    fn = compile_trace(trace, _globals_for(trace))
    EFFECT_LOG.clear()
    torch.manual_seed(1234)
    # Clones: in-place calls may write to the inputs, and each run must start from the same data.
    result = fn(*(t.clone() if isinstance(t, torch.Tensor) else t for t in inputs))
    log = list(EFFECT_LOG)
    EFFECT_LOG.clear()
    return result, log


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def assert_same_execution(before: Trace, after: Trace, inputs) -> None:
    want, want_log = execute(before, inputs)
    got, got_log = execute(after, inputs)
    assert [k for k, _ in got_log] == [k for k, _ in want_log], "effects ran a different number of times or order"
    assert _same(got_log, want_log), "effects saw different values"
    assert _same(got, want), f"results differ:\n{want}\n{got}"


# --- per-pass contracts ---------------------------------------------------------------------


def check_dce(before: Trace, after: Trace) -> None:
    # Top level: exactly the bound symbols that are pinned or feed the outputs survive, as they were.
    live = {v.name for v in before.iter_outputs()}
    keep = []
    for bsym in reversed(before.bsyms):
        if _pinned(bsym) or any(o.name in live for o in bsym.iter_outputs()):
            keep.append(bsym)
            live |= _reads(bsym)
    keep.reverse()
    assert [format_bsym(b) for b in after.bsyms] == [format_bsym(b) for b in keep]
    assert _effects(after.bsyms) == _effects(keep), "dce dropped an effectful subsymbol"
    assert format_trace(after, codegen=True) == format_trace(before.replace(bsyms=tuple(keep)), codegen=True)
    # Inside: nothing dead, nothing computed twice.
    for _, parent in walk(after.bsyms):
        subs = parent.subsymbols
        results = {o.name for o in parent.iter_outputs()}
        # Only an in-place call inside the block runs between two of its subsymbols.
        mutated = _mutated(subs)
        seen: dict[tuple, BoundSymbol] = {}
        for i, sub in enumerate(subs):
            if _pinned(sub):
                continue
            later = set().union(*(_reads(s) for s in subs[i + 1 :]))
            outs = {o.name for o in sub.iter_outputs()}
            assert outs & (later | results), f"dead subsymbol left: {format_bsym(sub)} in {format_bsym(parent)}"
            if (_reads(sub) | outs) & mutated:
                continue  # reads or is overwritten by an in-place call: equal calls, different values
            first = seen.setdefault(call_key(sub), sub)
            # Two results of the parent may be equal; each must still be produced by name.
            both_results = {o.name for o in first.iter_outputs()} <= results and outs <= results
            assert first is sub or both_results, f"duplicated subsymbols left: {format_bsym(first)} / {format_bsym(sub)}"


def check_cse(before: Trace, after: Trace) -> None:
    assert _effects(after.bsyms) == _effects(before.bsyms), "cse merged or dropped an effectful call"
    assert [v.name for v in after.inputs] == [v.name for v in before.inputs]
    # Nothing left to merge: no two pure top-level calls with equal keys (unless an
    # in-place call makes equal calls mean different values).
    mutated = _mutated(after.bsyms)
    seen = {}
    for bsym in after.bsyms:
        outs = {o.name for o in bsym.iter_outputs()}
        if _pinned(bsym) or not outs or (_reads(bsym) | outs) & mutated:
            continue
        first = seen.setdefault(call_key(bsym), bsym)
        assert first is bsym, f"cse left duplicates: {format_bsym(first)} / {format_bsym(bsym)}"
    # The survivors inherit the merged calls' variable hints.
    assert sorted(var for _, var in _hinted(after)) == sorted(var for _, var in _hinted(before))


def _expected_renames(before: Trace) -> dict[str, str]:
    """The rename contract for hinted values: value -> the name it must end up with."""
    inputs = {v.name for v in before.inputs}
    # Variables are spelled legally: `torch` would shadow the module the code runs on.
    hinted = [(value, sanitize(var)) for value, var in _hinted(before)]
    user_names = {var for _, var in hinted}
    per_var: dict[str, list[str]] = {}
    named: set[str] = set()
    for value, var in hinted:
        if value not in named:  # a value merged by cse carries several hints: the first names it
            named.add(value)
            per_var.setdefault(var, []).append(value)
    expected = {}
    for var, values in per_var.items():
        # The first value gets the name exactly, unless an input has it; then `var_1`, `var_2`, ...
        # skipping only names that inputs or the user's own variables hold.
        versions = (f"{var}_{k}" for k in range(1, 10**6) if f"{var}_{k}" not in inputs | user_names)
        for i, value in enumerate(values):
            expected[value] = var if i == 0 and var not in inputs else next(versions)
    return expected


def check_rename(before: Trace, after: Trace) -> None:
    mapping = _name_map(before, after)
    expected = _expected_renames(before)
    for value, name in expected.items():
        assert mapping[value] == name, f"{value} should be named {name}, got {mapping[value]}"
    users = set(expected.values())
    for old, new in mapping.items():
        if old not in expected and old != new:
            # Only a name in a user name's way moves, and only to a fresh generated one.
            assert old in users and GENERATED.match(new) and new[0] == old[0], f"{old} moved to {new} for no reason"


def check_renumber(before: Trace, after: Trace) -> None:
    mapping = _name_map(before, after)
    user_named = {o for b in flatten_regions(before.bsyms) for o, var in b.name_hints if o == var}
    taken = {v.name for v in before.inputs} | user_named
    order: dict[str, list[str]] = {}
    # Top-level values first, then subsymbol intermediates (so t0, t1, ... read in order at any --depth).
    top_level_first = list(before.bsyms) + [b for depth, b in walk(before.bsyms) if depth > 0]
    for bsym in top_level_first:
        for out in bsym.iter_outputs():
            if out.name in user_named or not GENERATED.match(out.name):
                assert mapping[out.name] == out.name, f"renumber renamed {out.name}, a name it must keep"
            elif mapping[out.name] not in order.setdefault(out.name[0], []):
                order[out.name[0]].append(mapping[out.name])
    for prefix, names in order.items():
        free = (f"{prefix}{n}" for n in range(10**6) if f"{prefix}{n}" not in taken)
        assert names == [next(free) for _ in names], f"{prefix}-names not consecutive in definition order: {names}"


def _lowered(bsyms, depth: float, source=None, scope="") -> list[tuple[BoundSymbol, object, str]]:
    """(bound symbol, source line, scope) after lowering: a subsymbol without a line of its
    own reports its nearest ancestor's, so the lowered trace still points at user code."""
    out = []
    for bsym in bsyms:
        own_source, own_scope = bsym.source or source, bsym.scope or scope
        if bsym.subsymbols and depth > 0:
            out.extend(_lowered(bsym.subsymbols, depth - 1, own_source, own_scope))
        else:
            out.append((bsym, own_source, own_scope))
    return out


def _made_of(bsym: BoundSymbol) -> tuple:
    return tuple((format_bsym(s), _made_of(s)) for s in bsym.subsymbols)


def check_lower(before: Trace, after: Trace, depth: float) -> None:
    want = _lowered(before.bsyms, depth)
    lowered, write_backs = after.bsyms[: len(want)], after.bsyms[len(want) :]
    assert [format_bsym(b) for b in lowered] == [format_bsym(b) for b, _, _ in want]
    # What each kept call is made of, at every level (a call its primitive restates reads
    # as a record made from the call: equal, not the same object).
    assert [_made_of(b) for b in lowered] == [_made_of(b) for b, _, _ in want]
    assert [(b.source, b.scope) for b in lowered] == [(src, scope) for _, src, scope in want]
    # Then each input an in-place op wrote, now computed out of place, gets its last value back.
    still_written = set(written_inputs(after).values())
    expected = {(name, final) for name, final in written_inputs(before).items() if final not in still_written}
    assert all(b.symbol is prims.copy_to for b in write_backs)
    assert {(b.args[0].name, b.args[1].name) for b in write_backs} == expected
    if depth == math.inf:
        assert all(not b.subsymbols for b in after.bsyms)
    # Hints follow the values down, so rename still works after lower.
    assert sorted(_hinted(after)) == sorted(_hinted(before))


def check_fuse(before: Trace, after: Trace) -> None:
    position = {id(b): i for i, b in enumerate(before.bsyms)}
    # Regions made by this run (one made earlier is a plain call to it), and the same
    # calls, each once: plain ones in their order, members in theirs.
    made = [b for b in after.bsyms if is_region(b) and id(b) not in position]
    flat = [m for b in after.bsyms for m in (b.subsymbols if b in made else (b,))]
    assert sorted(map(format_bsym, flat)) == sorted(map(format_bsym, before.bsyms)), "fuse lost or added a call"
    plain = [position[id(b)] for b in after.bsyms if b not in made]
    assert plain == sorted(plain), "fuse reordered calls it did not fuse"
    for region in made:
        members = [position[id(m)] for m in region.subsymbols]
        assert len(members) >= 2 and members == sorted(members), f"bad region {format_bsym(region)}"
        assert not any(_pinned(m) for m in region.subsymbols), f"an effect fused in {format_bsym(region)}"
        # Its outputs: exactly the member results read after it, at least one.
        read_outside = {v.name for b in after.bsyms if b is not region for v in b.iter_args()}
        read_outside |= {v.name for v in after.iter_outputs()}
        produced = [o.name for m in region.subsymbols for o in m.iter_outputs()]
        outputs = [o.name for o in region.iter_outputs()]
        assert outputs and outputs == [n for n in produced if n in read_outside], f"outputs of {format_bsym(region)}"


def check_summary(name: str, before: Trace, result: PassResult) -> None:
    """`diff --stat` reads what a pass did from the traces and its value map alone; for
    the built-in passes that is what their own stats count."""
    changes = value_changes(before, result.trace, result.value_map)
    counted = (changes.renamed, changes.merged, changes.subsymbols_removed)
    stats = result.stats
    expected = {
        "dce": lambda: (0, stats["collapsed"], stats["subsymbols_removed"]),
        "cse": lambda: (0, stats["merged"], 0),
        "rename": lambda: (stats["renamed"], 0, 0),
        "renumber": lambda: (stats["renamed"], 0, 0),
        "lower": lambda: (0, 0, 0),
        "fuse": lambda: (0, 0, 0),
    }[name]()
    assert counted == expected, f"{name}: summary {counted}, stats {stats}\n{text(before)}\n---\n{text(result.trace)}"


def check_step(spec: str, before: Trace, result: PassResult, inputs) -> None:
    """Everything a pass promises, for the step `spec` that turned `before` into `result`."""
    (step,) = parse_passes([spec])
    after = result.trace
    verify(after)
    for name in collect_names(after.inputs, after.bsyms):
        assert name.isidentifier() and not keyword.iskeyword(name) and name not in RESERVED, f"illegal name {name}"
    if not result.changed:
        assert body(after) == body(before), "changed=False but the trace differs"
    # Idempotence; `lower:1` peels one level per run by design.
    if spec != "lower:1":
        before_again = text(after)
        again = step.pass_.run(after, **step.options)
        assert not again.changed, f"{spec} is not idempotent:\n{text(after)}\n---\n{text(again.trace)}"
        assert body(again.trace) == body(after)
        assert text(after) == before_again, "the second run mutated its input"
    assert_same_execution(before, after, inputs)
    check_summary(step.pass_.name, before, result)
    name = step.pass_.name
    if name == "dce":
        check_dce(before, after)
    elif name == "cse":
        check_cse(before, after)
    elif name == "rename":
        check_rename(before, after)
    elif name == "renumber":
        check_renumber(before, after)
    elif name == "fuse":
        check_fuse(before, after)
    elif name == "lower":
        depth = step.options.get("depth", math.inf)
        check_lower(before, after, depth)
        if depth != math.inf:
            # Lowering a level at a time ends where lowering all the way does.
            steps = after
            while (again := step.pass_.run(steps, **step.options)).changed:
                steps = again.trace
            assert body(steps) == body(step.pass_.run(before).trace)


# --- the properties -------------------------------------------------------------------------

SPECS = ["dce", "cse", "rename", "renumber", "lower", "lower:1", "fuse"]


@pytest.mark.parametrize("spec", SPECS)
@settings(max_examples=400, **SETTINGS)
@given(case=cases())
def test_each_pass_keeps_its_contract(spec, case):
    (step,) = parse_passes([spec])
    printed = text(case.trace)
    result = step.pass_.run(case.trace, **step.options)
    assert text(case.trace) == printed, f"{spec} mutated its input trace"
    check_step(spec, case.trace, result, case.inputs)


@settings(max_examples=500, **SETTINGS)
@given(case=cases(), specs=st.lists(st.sampled_from(SPECS), min_size=2, max_size=5))
def test_pipelines_keep_every_contract(case, specs):
    printed = text(case.trace)
    stages = run_pipeline(case.trace, parse_passes([",".join(specs)]))  # verifies every stage
    assert text(case.trace) == printed, "the pipeline mutated its input trace"
    assert [s.name for s in stages[1:]] == specs
    for spec, prev, stage in zip(specs, stages[:-1], stages[1:], strict=True):
        result = PassResult(stage.trace, stage.changed, stage.stats, stage.value_map)
        check_step(spec, prev.trace, result, case.inputs)
    assert_same_execution(case.trace, stages[-1].trace, case.inputs)


def test_every_builtin_pass_is_covered():
    # BUILTIN, not REGISTRY: other tests register passes of their own.
    assert {s.partition(":")[0] for s in SPECS} == set(BUILTIN)


# --- the second seed ------------------------------------------------------------------------


def _seed_trace(add_subsymbols) -> Trace:
    x = tensor("x")
    t0, t1, t2 = tensor("t0"), tensor("t1"), tensor("t2")
    bsyms = (
        BoundSymbol(ltorch.cos, (x,), (), t0, (BoundSymbol(prims.cos, (x,), (), t0),)),
        BoundSymbol(ltorch.sin, (x,), (), t1, (BoundSymbol(prims.sin, (x,), (), t1),)),
        BoundSymbol(ltorch.add, (t0, t1), (), t2, tuple(add_subsymbols(t0, t1, t2))),
    )
    return Trace("foo", (x,), bsyms, t2)


def test_seed_dead_check_free_subsymbol_is_dropped_without_a_name_collision():
    # `y = torch.cos(x) + torch.sin(x)`: ltorch.add's decomposition starts with a dead
    # comparison (`i0 = prims.ne(alpha, 1)` in the seed), then the add itself.
    def subsymbols(t0, t1, t2):
        b0 = TensorValue("b0", SHAPE, dtypes.bool8, "cpu")
        return [BoundSymbol(prims.ne, (t0, t1), (), b0), BoundSymbol(prims.add, (t0, t1), (), t2)]

    trace = _seed_trace(subsymbols)
    verify(trace)
    result = REGISTRY["dce"].run(trace)
    assert result.changed and result.stats["subsymbols_removed"] == 1
    after = result.trace
    verify(after)
    assert "prims.ne" not in text(after)
    assert [format_bsym(s) for s in after.bsyms[-1].subsymbols] == ["t2 = prims.add(t0, t1)  # t2: \"cpu f32[3]\""]
    assert collect_names(after.inputs, after.bsyms) == {"x", "t0", "t1", "t2"}
    # The seed's collision came from names handed out by a registry that did not know the
    # trace's names: one seeded from the trace after dce gives only unused ones.
    registry = NameRegistry(after.names)
    assert {registry.fresh("t"), registry.fresh("b")}.isdisjoint({"x", "t0", "t1", "t2"})
    x = torch.randn(SHAPE)
    assert torch.equal(compile_trace(after)(x), torch.cos(x) + torch.sin(x))

    # The collision the seed hit: the add's result named like one of its operands.
    t0, t1 = tensor("t0"), tensor("t1")
    add = after.bsyms[-1]
    colliding = add.replace(output=t1, subsymbols=(add.subsymbols[0].replace(output=t1),))
    bad = after.replace(bsyms=(*after.bsyms[:-1], colliding), output=t1)
    with pytest.raises(VerificationError, match="t1 is defined twice|both input and output"):
        verify(bad)
    # ... and without the earlier definition of t1, the add reads its own output.
    alone = Trace("foo", (t0,), (colliding.replace(args=(t0, t1)),), t1)
    with pytest.raises(VerificationError, match="reads t1 before it is defined|both input and output"):
        verify(alone)


def test_seed_duplicated_subsymbols_collapse():
    # The symbolic-values shape: the same comparison computed again and again inside one call.
    def subsymbols(t0, t1, t2):
        b = [TensorValue(f"b{i}", SHAPE, dtypes.bool8, "cpu") for i in range(3)]
        eqs = [BoundSymbol(prims.eq, (t0, t1), (), v) for v in b]
        return [*eqs, BoundSymbol(CHECK, (t0,), (), None), BoundSymbol(prims.add, (t0, t1), (), t2)]

    after = REGISTRY["dce"].run(_seed_trace(subsymbols)).trace
    verify(after)
    assert [s.symbol for s in after.bsyms[-1].subsymbols] == [CHECK, prims.add]


# --- the bugs these properties found, pinned down -------------------------------------------


def test_cse_does_not_merge_calls_around_an_in_place_update():
    # t1 recomputes t0 after t0 was halved in place: merging them would return a halved t1.
    x, t0, t1 = tensor("x"), tensor("t0"), tensor("t1")
    bsyms = (BoundSymbol(prims.neg, (x,), (), t0), BoundSymbol(SCALE_, (t0,), (), None), BoundSymbol(prims.neg, (x,), (), t1))
    trace = Trace("f", (x,), bsyms, (t0, t1))
    result = REGISTRY["cse"].run(trace)
    assert not result.changed
    # ... nor calls reading a value that is updated in place between them.
    t2 = tensor("t2")
    bsyms = (BoundSymbol(prims.neg, (x,), (), t0), BoundSymbol(SCALE_, (x,), (), None), BoundSymbol(prims.neg, (x,), (), t2))
    trace = Trace("f", (x,), bsyms, (t0, t2))
    assert not REGISTRY["cse"].run(trace).changed
    check_step("cse", trace, REGISTRY["cse"].run(trace), (torch.randn(SHAPE),))


def test_cse_keeps_a_traced_in_place_update_from_leaking_into_a_merged_value():
    # The same bug end to end: merging `b` into `a` made the torch executor return `a`
    # after `a.add_(1)` ran on it.
    def f(x):
        a = x * 2
        b = x * 2
        a.add_(1)
        return b

    x = torch.ones(SHAPE)
    trace = trace_callable(f, (x,)).trace
    after = run_pipeline(trace, parse_passes(["cse,dce"]))[-1].trace
    assert torch.equal(compile_trace(after)(x.clone()), f(x.clone()))


def test_dce_collapses_a_duplicate_that_produces_the_parents_result():
    # t0 is still read by the check, and t1 = the parent's result computes it again:
    # the first occurrence takes the result's name instead of leaving the value computed twice.
    x, t0, t1 = tensor("x"), tensor("t0"), tensor("t1")
    subs = (BoundSymbol(prims.sin, (x,), (), t0), BoundSymbol(CHECK, (t0,), (), None), BoundSymbol(prims.sin, (x,), (), t1))
    comp = BoundSymbol(_composite_symbol("tc_comp1", (x,), (), subs, t1), (x,), (), t1, subs)
    trace = Trace("f", (x,), (comp,), t1)
    result = REGISTRY["dce"].run(trace)
    assert [format_bsym(s) for s in result.trace.bsyms[0].subsymbols] == [
        't1 = prims.sin(x)  # t1: "cpu f32[3]"',
        "ltorch.tc_check(t1)",
    ]
    check_step("dce", trace, result, (torch.randn(SHAPE),))


def test_rename_never_shadows_what_the_generated_code_needs():
    x, t0, t1 = tensor("x"), tensor("t0"), tensor("t1")
    bsyms = (
        BoundSymbol(prims.uniform, (SHAPE, 0.0, 1.0), (("device", "cpu"), ("dtype", dtypes.float32)), t0, name_hints=(("t0", "torch"),)),
        BoundSymbol(prims.add, (t0, x), (), t1, name_hints=(("t1", "torch"),)),
    )
    trace = Trace("f", (x,), bsyms, t1)
    result = REGISTRY["rename"].run(trace)
    assert result.value_map == {"t0": "torch_", "t1": "torch__1"}
    check_step("rename", trace, result, (torch.randn(SHAPE),))
