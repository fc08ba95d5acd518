"""Shared machinery of the op matrix: argument specs, cases, and the check every case
goes through (trace, verify, no opaque calls, recorded types equal to what the
implementations return, torch level and prims level against eager); the checks for
forms left to torch and forms refused; the prim-level meta-vs-impl check; and the
data more than one family's module uses (the unary-op case generator, extreme values,
nn.Module instances built from a fixed seed); and the symbolic check: each case traced with
every input dim a symbol, run at its example and at two larger sizes where its guards
accept them, and classified by how far the one trace goes (`symbolic_result`)."""

from __future__ import annotations

import contextlib
import inspect
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch

from tracecli.core import dtypes
from tracecli.core.dims import Dim, Sym, evaluate, shape_matches
from tracecli.core.dtypes import DType
from tracecli.core.errors import TracingError
from tracecli.core.pytree import tree_leaves, tree_map
from tracecli.core.trace import Trace, walk
from tracecli.core.values import NumberValue, TensorType, TensorValue
from tracecli.core.verify import verify
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.symbolic import DimPolicy
from tracecli.frontend.tracer import TracedProgram, trace_callable
from tracecli.jobs.compare import compare_outputs
from tracecli.jobs.size_guards import size_check
from tracecli.ops import prims
from tracecli.ops.promotion import ShapeError
from tracecli.ops.torch_bridge import FROM_TORCH, TO_TORCH
from tracecli.passes.lower import lower

SEED = 1234

DT = {
    "f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16,
    "i64": torch.int64, "i32": torch.int32, "i16": torch.int16, "i8": torch.int8, "u8": torch.uint8,
    "bool": torch.bool, "c64": torch.complex64,
}
FLOATS = ("f32", "f64", "f16", "bf16")
SHAPES = ((), (5,), (3, 4), (2, 3, 4))


# --- inputs -------------------------------------------------------------------------


@dataclass(frozen=True)
class T:
    """A tensor argument: dtype short name, shape and value domain.

    Domains: "any" (floats in [-3, 3), ints in [-5, 5]), "pos" (floats in [0.25, 3),
    ints in [1, 5]), "nonzero" (as "pos" with random signs), "small" (ints in [0, 3]).
    """

    dtype: str
    shape: tuple[int, ...] = ()
    domain: str = "any"

    def make(self, gen: torch.Generator) -> torch.Tensor:
        dtype = DT[self.dtype]
        if dtype == torch.bool:
            return torch.rand(self.shape, generator=gen) < 0.5
        if dtype.is_complex:
            parts = torch.rand((2, *self.shape), generator=gen) * 6 - 3
            return torch.complex(parts[0], parts[1]).to(dtype)
        floating = dtype.is_floating_point
        if self.domain == "small":
            return torch.randint(0, 4, self.shape, generator=gen).to(dtype)
        if self.domain in ("pos", "nonzero"):
            mag = torch.rand(self.shape, generator=gen) * 2.75 + 0.25 if floating else torch.randint(
                1, 6, self.shape, generator=gen
            )
            if self.domain == "nonzero":
                mag = torch.where(torch.rand(self.shape, generator=gen) < 0.5, -mag, mag)
            return mag.to(dtype)
        if floating:
            return (torch.rand(self.shape, generator=gen, dtype=torch.float64) * 6 - 3).to(dtype)
        low = 0 if dtype == torch.uint8 else -5
        return torch.randint(low, 6, self.shape, generator=gen).to(dtype)

    def __str__(self) -> str:
        return f"{self.dtype}[{','.join(map(str, self.shape))}]"


X3 = T("f32", (2, 3, 4))  # the three-dimensional input of many cases


@dataclass(frozen=True)
class L:
    """A literal tensor argument, for values random inputs would rarely hit."""

    values: tuple | float | int  # a number makes a zero-dim tensor
    dtype: str

    def make(self, gen: torch.Generator) -> torch.Tensor:
        return torch.tensor(self.values, dtype=DT[self.dtype])

    def __str__(self) -> str:
        shown = list(self.values) if isinstance(self.values, tuple) else f"({self.values})"
        return f"{self.dtype}{shown}"


def _arg_id(arg) -> str:
    if isinstance(arg, (T, L)):
        return str(arg)
    if isinstance(arg, bool):
        return str(arg)
    return f"{type(arg).__name__}{arg}"


@dataclass(frozen=True)
class Case:
    id: str
    fn: Callable
    args: tuple
    symbols: tuple[str, ...]  # ltorch symbols the trace must record at the top level
    random: bool = False
    exact: bool = False  # bitwise equal to eager, not just within tolerance

    def make_args(self, draw: int = 0) -> tuple:
        """The arguments; another `draw` gives the random ones new values (same shapes)."""
        gen = torch.Generator().manual_seed(SEED + draw)
        return tuple(a.make(gen) if isinstance(a, (T, L)) else a for a in self.args)


def entry(fn: Callable) -> Callable:
    """`fn` as a traceable entry: torch builtins have no Python signature, which the
    tracer needs to bind the entry's arguments, so they are called from a function."""
    try:
        inspect.signature(fn)
    except ValueError:
        return lambda *args: fn(*args)
    return fn


def case_adder(cases: list[Case]) -> Callable[..., None]:
    """`case(symbol, form, fn, *args)` adding to `cases`: one list per test module."""

    def case(symbol: str | tuple[str, ...], form: str, fn: Callable, *args, random: bool = False,
             exact: bool = False) -> None:
        symbols = (symbol,) if isinstance(symbol, str) else symbol
        label = ",".join(_arg_id(a) for a in args)
        cases.append(Case(f"{symbols[0]}-{form}({label})", entry(fn), args, symbols, random, exact or random))

    return case


def rows_by_id(rows) -> list:
    """pytest params from rows `(id, *values)`: the tables of forms below read as data."""
    return [pytest.param(*row[1:], id=row[0]) for row in rows]


def module(factory: Callable, *, buffers: dict | None = None) -> torch.nn.Module:
    """An nn.Module built from a fixed seed without touching the global RNG; `buffers`
    gives running statistics values for normalisation layers."""
    with torch.random.fork_rng():
        torch.manual_seed(SEED)
        mod = factory()
        for name, make in (buffers or {}).items():
            getattr(mod, name).copy_(make())
    return mod


def unary_cases(case: Callable[..., None], table: dict) -> None:
    """Cases for unary ops given as `{symbol: (forms, dtypes, domain)}`: the first form
    at every rank in float32 and in every dtype, the other forms on two inputs."""
    for symbol, (forms, supported, domain) in table.items():
        first_form, first = next(iter(forms.items()))
        for shape in SHAPES:
            case(symbol, first_form, first, T("f32", shape, domain))
        for dtype in supported:
            if dtype != "f32":  # f32 is the shape matrix above
                case(symbol, first_form, first, T(dtype, (3, 4), domain))
        for form, fn in list(forms.items())[1:]:
            case(symbol, form, fn, T("f32", (2, 3, 4), domain))
            case(symbol, form, fn, T("bf16", (5,), domain))


# Where the formulas of smooth unary ops saturate or lose precision: large magnitudes, exact zeros.
EXTREMES = (-40.0, -10.0, -1e-4, 0.0, 1e-4, 10.0, 40.0, 88.0)


def _check_recorded_types(trace: Trace, inputs: list, random: bool) -> None:
    """Run the trace one bound symbol at a time: each recorded output type must be what
    the symbol's implementation returns (a wrong meta rule can hide behind later ops)."""
    env = {v.name: obj for v, obj in zip(trace.inputs, _fresh(inputs), strict=True)}

    def executed(leaf):
        """A leaf of an argument as the executors pass it: values loaded, IR dtypes as torch's."""
        if isinstance(leaf, (TensorValue, NumberValue)):
            return env[leaf.name]
        if isinstance(leaf, Dim):  # a size read where it was bound (`(u0,) = prims.shape(t7)`)
            return evaluate(leaf, {name: v for name, v in env.items() if isinstance(v, int)})
        return TO_TORCH[leaf] if isinstance(leaf, DType) else leaf

    torch.manual_seed(SEED)
    sizes: dict[str, int] = {}  # what each size the data decide is in this run
    for bsym in trace.bsyms:
        args = tree_map(executed, bsym.args)
        kwargs = {k: tree_map(executed, v) for k, v in bsym.kwargs}
        out = bsym.symbol.impl(*args, **kwargs)
        for value, obj in zip(tree_leaves(bsym.output), tree_leaves(out), strict=True):
            if isinstance(value, TensorValue):
                got = (tuple(obj.shape), obj.dtype)
                want = (value.shape, TO_TORCH[value.dtype])
                assert shape_matches(value.shape, got[0], sizes) and got[1] == want[1], (
                    f"{bsym.symbol.qualname} records {value.name} as {want}, its impl gives {got}")
                env[value.name] = obj
            elif isinstance(value, NumberValue):
                env[value.name] = obj


def _fresh(args) -> tuple:
    # In-place ops may write to their inputs: every run gets its own copies.
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)


def _run(fn: Callable, args, random: bool):
    if random:
        torch.manual_seed(SEED)
    with torch.no_grad():
        return fn(*_fresh(args))


def assert_matches(level: str, trace: Trace, expected, actual, exact: bool) -> None:
    names = [getattr(leaf, "name", repr(leaf)) for leaf in tree_leaves(trace.output)]
    problems = [f"{c.name}: {c.problem} (max abs {c.max_abs_error}, max rel {c.max_rel_error})"
                for c in compare_outputs(names, expected, actual) if not c.match]
    assert not problems, f"{level} level disagrees with eager: " + "; ".join(problems)
    if exact:
        for e, a in zip(tree_leaves(expected), tree_leaves(actual), strict=True):
            assert torch.equal(e, a), f"{level} level is not bitwise equal to eager: {a} vs {e}"


def check_case(case: Case) -> None:
    """Everything the op matrix asserts about one case."""
    args = case.make_args()
    # Most cases are lambdas: name the trace, since "<lambda>" is no Python identifier.
    program = trace_callable(case.fn, args, name="fn")
    trace = program.trace
    verify(trace)

    opaque = [b.symbol.qualname for _, b in walk(trace.bsyms) if b.symbol.namespace == "torch"]
    assert not opaque, f"opaque calls: {opaque}"
    recorded = {b.symbol.qualname for b in trace.bsyms}
    for symbol in case.symbols:
        assert f"ltorch.{symbol}" in recorded, f"ltorch.{symbol} not recorded; got {sorted(recorded)}"

    lowered = lower(trace).trace
    verify(lowered)
    assert {b.symbol.namespace for b in lowered.bsyms} <= {"prims"}

    # Trace outputs must say what eager returns, before any executor runs.
    expected = _run(case.fn, args, case.random)
    data_sizes(trace, expected)

    _check_recorded_types(trace, program.inputs, case.random)
    _check_recorded_types(lowered, program.inputs, case.random)
    compiled = [(level, t, compile_trace(t)) for level, t in (("ltorch", trace), ("prims", lowered))]
    for level, t, fn in compiled:
        actual = _run(fn, program.inputs, case.random)
        assert_matches(level, t, expected, actual, exact=case.exact)
    if any(info.unbacked for info in trace.dims):
        check_draws(case, program, compiled)

    if symbolic_sampled(case):
        result = symbolic_result(case)
        assert result.kind != "mismatch", f"the symbolic trace is wrong where its guards accept: {result.detail}"


def data_sizes(trace: Trace, expected) -> tuple[tuple[str, int], ...]:
    """The trace's outputs checked against what eager returned: the same dtypes and
    shapes, each size the data decide (`u0`) standing for what it is in this run; and
    those sizes, by name."""
    sizes: dict[str, int] = {}
    for value, e in zip(tree_leaves(trace.output), tree_leaves(expected), strict=True):
        assert isinstance(value, TensorValue) and isinstance(e, torch.Tensor)
        assert shape_matches(value.shape, tuple(e.shape), sizes) and TO_TORCH[value.dtype] == e.dtype, (
            f"traced output type differs: {value.shape} {value.dtype.name} vs eager's {tuple(e.shape)} {e.dtype}")
    return tuple(sorted(sizes.items()))


# How many more draws of a case's random inputs a trace with sizes the data decide serves.
DRAWS = 3


def check_draws(case: Case, program: TracedProgram, compiled: list) -> set[tuple]:
    """The one trace (at both levels) run on new draws of the case's inputs, which select
    other counts, each against eager; returns the sizes the data decided in each draw."""
    seen = set()
    for draw in range(DRAWS + 1):
        args = case.make_args(draw)
        expected = _run(case.fn, args, case.random)
        seen.add(data_sizes(program.trace, expected))
        inputs = program.inputs_for(args, {})
        for level, t, fn in compiled:
            assert_matches(f"{level} (draw {draw})", t, expected, _run(fn, inputs, case.random), exact=case.exact)
    return seen


# --- symbolic shapes: how far one trace of a case goes ----------------------------------------

# What the symbolic check makes of a case, best first. "symbolic": the trace served both
# larger sizes; "guarded": a guard sends at least one of them to a new trace; "pinned": a
# guard fixes a dim to a number; "error": tracing, verifying or compiling raised;
# "mismatch": the trace ran where its guards accept and disagreed with eager (a wrong
# trace: never acceptable).
SYMBOLIC_KINDS = ("symbolic", "guarded", "pinned", "error", "mismatch")
# How much each symbol grows for the two calls after the example: +1 changes parity, +3 more.
GROWTHS = (1, 3)
# `make test` runs the symbolic check on about one case in this many (chosen by id, so
# the sample does not move when cases are added); the full matrix runs them all.
SAMPLE_EVERY = 5


@dataclass(frozen=True)
class SymbolicResult:
    kind: str  # one of SYMBOLIC_KINDS
    detail: str = ""  # the guards that refused, the pins, the error, or the disagreement


_SYMBOLIC: dict[str, SymbolicResult] = {}


def symbolic_sampled(case: Case) -> bool:
    return zlib.crc32(case.id.encode()) % SAMPLE_EVERY == 0


def symbolic_result(case: Case) -> SymbolicResult:
    """The case's symbolic check, run once per session (the matrix test reuses what the
    family tests computed)."""
    found = _SYMBOLIC.get(case.id)
    if found is None:
        found = _SYMBOLIC[case.id] = _symbolic_check(case)
    return found


def _symbolic_check(case: Case) -> SymbolicResult:
    args = case.make_args()
    try:
        program = trace_callable(case.fn, args, name="fn", dims=DimPolicy(dynamic=True))
        trace = program.trace
        verify(trace)
        lowered = lower(trace).trace
        verify(lowered)
        compiled = [(level, t, compile_trace(t)) for level, t in (("ltorch", trace), ("prims", lowered))]
        check = size_check(trace).failure
    except Exception as e:  # every failure to produce a trace is a class of its own
        return SymbolicResult("error", f"{type(e).__name__}: {e}")

    problem = _disagreement(case, compiled, args, program.inputs)
    if problem:
        return SymbolicResult("mismatch", f"at the example sizes: {problem}")
    refused, notes = [], []
    for growth in GROWTHS:
        grown = _grown_args(case, program, args, growth)
        inputs = program.inputs_for(grown, {})
        failure = check(inputs)
        if failure is not None:
            refused.append(f"+{growth}: {failure}")
            continue
        problem = _disagreement(case, compiled, grown, inputs)
        if problem is None:
            # Not wrong (the trace fails as eager does) but not served either: the guards
            # let through sizes the op cannot take.
            refused.append(f"+{growth}: the guards accept sizes eager refuses (the trace refuses them too)")
        elif problem and _static_agrees(case, compiled, grown, inputs):
            notes.append(f"+{growth}: as the static trace of these sizes: {problem}")
        elif problem:
            return SymbolicResult("mismatch", f"at sizes grown by {growth}: {problem}")
    pins = [g.text() for g in trace.guards if g.op == "==" and _pins(g.lhs - g.rhs)]
    if pins:
        return SymbolicResult("pinned", "; ".join(pins))
    if refused:
        return SymbolicResult("guarded", "; ".join(refused))
    return SymbolicResult("symbolic", "; ".join(notes))


def _static_agrees(case: Case, compiled: list, args: tuple, inputs: list) -> bool:
    """Whether the symbolic trace computes what a static trace of these very sizes does,
    where eager is the one that differs: the decomposition's own rounding on these
    values (low-precision sums, say), not the symbols. A static trace that cannot be
    made, or that eager agrees with, leaves the disagreement the symbolic trace's."""
    try:
        program = trace_callable(case.fn, args, name="fn")
        static = {"ltorch": program.trace, "prims": lower(program.trace).trace}
        expected = _run(case.fn, args, case.random)
        for level, t, fn in compiled:
            reference = _run(compile_trace(static[level]), program.inputs, case.random)
            if not _matches(level, static[level], expected, reference, case.exact):
                assert_matches(level, t, reference, _run(fn, inputs, case.random), exact=False)
            else:
                assert_matches(level, t, expected, _run(fn, inputs, case.random), exact=case.exact)
    except Exception:  # the symbolic trace differs from the static one, or no static trace
        return False
    return True


def _matches(level: str, trace: Trace, expected, actual, exact: bool) -> bool:
    try:
        assert_matches(level, trace, expected, actual, exact)
    except AssertionError:
        return False
    return True


def _pins(difference) -> bool:
    """Whether `difference == 0` leaves its symbols finitely many values (`s0 == 5`,
    `s0*s1 == 6`): a polynomial with a constant and every other coefficient of one sign,
    the symbols being at least 2. Divisibility (`s1%2 == 0`) and equalities between
    symbols (`s2 == s0`) leave infinitely many."""
    if not isinstance(difference, Dim):
        return False
    signs = set()
    constant = 0
    for mono, coeff in difference.terms:
        if not mono:
            constant = coeff
        elif all(isinstance(atom, Sym) for atom, _ in mono):
            signs.add(coeff > 0)
        else:
            return False
    return constant != 0 and len(signs) == 1


def _disagreement(case: Case, compiled: list, args: tuple, inputs: list) -> str | None:
    """How the compiled traces disagree with eager on these arguments: "" when they agree,
    None when eager refuses the arguments and the traces refuse them too."""
    try:
        expected = _run(case.fn, args, case.random)
    except Exception as e:
        # Sizes eager refuses: the trace must refuse them too, not make up a result.
        for level, _, fn in compiled:
            with contextlib.suppress(Exception):
                _run(fn, inputs, case.random)
                return f"{level} level runs where eager refuses the inputs ({type(e).__name__}: {e})"
        return None
    for level, t, fn in compiled:
        try:
            actual = _run(fn, inputs, case.random)
            assert_matches(level, t, expected, actual, exact=case.exact)
        except Exception as e:  # a crash where the guards accept is as wrong as a bad value
            return f"{level} level: {type(e).__name__}: {e}"
    return ""


def _grown_args(case: Case, program: TracedProgram, args: tuple, growth: int) -> tuple:
    """The case's arguments with every size symbol `growth` larger. Each input's axes are
    read off its traced type, so dims the trace made equal (or pinned) stay so."""
    trace = program.trace
    sizes = {info.name: info.example + growth for info in trace.dims}
    type_of = {id(obj): value for value, obj in zip(trace.inputs, program.inputs, strict=True)}
    gen = torch.Generator().manual_seed(SEED + growth)
    grown = []
    for spec, arg in zip(case.args, args, strict=True):
        value = type_of.get(id(arg)) if isinstance(arg, torch.Tensor) else None
        if value is None or not any(isinstance(d, Dim) for d in value.shape):
            grown.append(arg)
            continue
        shape = tuple(evaluate(d, sizes) for d in value.shape)
        grown.append(T(spec.dtype, shape, spec.domain).make(gen) if isinstance(spec, T) else _tiled(arg, shape))
    return tuple(grown)


def _tiled(x: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    """`x` repeated cyclically along each axis to `shape`: a literal's values, at new sizes."""
    for axis, size in enumerate(shape):
        x = x.index_select(axis, torch.arange(size) % x.shape[axis])
    return x


EAGER_ERRORS = (RuntimeError, TypeError, ValueError, NotImplementedError, IndexError)


def check_refused(fn: Callable, arg) -> None:
    """A call eager torch rejects is rejected while tracing too, as a TracingError at the
    user's line rather than a crash or a wrong trace."""
    x = arg.make(torch.Generator().manual_seed(SEED))
    with pytest.raises(EAGER_ERRORS):
        fn(x)
    with pytest.raises(TracingError):
        trace_callable(entry(fn), (x,), name="fn")


def refusal_tests(rows, *, ours_only=()) -> tuple[Callable, Callable]:
    """The two tests of a table of refusals, rows `(id, fn, args, message)`, for a test
    module to bind to its names: `test_refused_with_a_clear_error` (what eager refuses, or
    what would change state the trace cannot see, stops tracing with an error at the
    user's line that matches `message`) and `test_eager_refuses_them_too` (the refusals
    mirror eager's; the rows of `ours_only` are the tracer's alone and are not asked)."""

    @pytest.mark.parametrize(("fn", "args", "message"), rows_by_id((*ours_only, *rows)))
    def test_refused_with_a_clear_error(fn, args, message):
        with pytest.raises(TracingError, match=message):
            trace_callable(entry(fn), args, name="fn")

    @pytest.mark.parametrize(("fn", "args"), rows_by_id(row[:3] for row in rows))
    def test_eager_refuses_them_too(fn, args):
        with pytest.raises(EAGER_ERRORS):
            fn(*args)

    return test_refused_with_a_clear_error, test_eager_refuses_them_too


def check_stays_torch_call(fn: Callable, args: tuple, opaque: str) -> list[str]:
    """A form of a mapped callable that ltorch does not model becomes the opaque call
    `opaque`, which still runs and agrees with eager (bitwise: the same torch call runs),
    instead of being forced into the wrong symbol. Returns the recorded qualnames."""
    gen = torch.Generator().manual_seed(SEED)
    args = tuple(a.make(gen) if isinstance(a, (T, L)) else a for a in args)
    program = trace_callable(entry(fn), args, name="fn")
    recorded = [b.symbol.qualname for b in program.trace.bsyms]
    assert opaque in recorded, recorded
    expected = _run(fn, args, random=True)
    actual = _run(compile_trace(program.trace), program.inputs, random=True)
    assert_matches("torch", program.trace, expected, actual, exact=True)
    return recorded


# --- prims: each meta rule promises what its implementation returns ---------------------------

PRIM_DTYPES = ("f32", "f64", "f16", "bf16", "i64", "i32", "u8", "bool", "c64")


def tensor_value(shape: tuple[int, ...], dtype: DType = dtypes.float32, name: str = "v") -> TensorValue:
    """A CPU tensor value, as a prim's meta rule receives it."""
    return TensorValue(name, shape, dtype, "cpu")


def _prim_operands(name: str, dtype: str) -> list[tuple]:
    """(meta arguments, impl arguments) for each operand form an elementwise prim takes:
    tensors only, and for binary prims a number (in the tensor's Python type) on either side."""
    gen = torch.Generator().manual_seed(SEED)
    torch_dtype = DT[dtype]
    # Positive, away from zero: no division by zero, no log of negatives.
    x = (torch.rand((2, 3), generator=gen) * 3 + 1).to(torch_dtype)
    y = (torch.rand((2, 3), generator=gen) * 3 + 1).to(torch_dtype)
    vx, vy = (TensorValue(n, (2, 3), FROM_TORCH[torch_dtype], "cpu") for n in ("x", "y"))
    if prims.ALL[name].meta.__code__.co_argcount == 1:
        return [((vx,), (x,))]
    number = {torch.bool: True}.get(torch_dtype, 2.0 if torch_dtype.is_floating_point else 2)
    if torch_dtype.is_complex:
        number = 2 + 1j
    return [((vx, vy), (x, y)), ((vx, number), (x, number)), ((number, vy), (number, y))]


def check_elementwise_prim_meta_matches_impl(name: str, dtype: str) -> None:
    """An elementwise prim either refuses a dtype at trace time or its implementation
    returns exactly the shape and dtype its meta rule recorded."""
    sym = prims.ALL[name]
    for meta_args, impl_args in _prim_operands(name, dtype):
        try:
            want = sym.meta(*meta_args)
        except ShapeError:
            continue
        got = sym.impl(*impl_args)
        assert (tuple(got.shape), got.dtype) == (want.shape, TO_TORCH[want.dtype]), meta_args


def float32_operands(name: str) -> tuple:
    """The operands of an elementwise prim, all float32 tensors."""
    value = TensorValue("x", (2,), FROM_TORCH[torch.float32], "cpu")
    return (value,) if prims.ALL[name].meta.__code__.co_argcount == 1 else (value, value)


def check_meta_matches_impl(sym, calls: list[tuple]) -> None:
    """A prim's meta rule against its implementation on real arguments: the types it
    declares are those the torch call returns (for prims running torch's own kernels)."""
    for args in calls:
        values = tuple(TensorValue(f"a{i}", tuple(a.shape), FROM_TORCH[a.dtype], "cpu") if isinstance(a, torch.Tensor)
                       else a for i, a in enumerate(args))
        want = tree_leaves(sym.meta(*values))
        got = tree_leaves(sym.impl(*args))
        assert want == [TensorType(tuple(g.shape), FROM_TORCH[g.dtype], "cpu") for g in got], (sym.qualname, args)
