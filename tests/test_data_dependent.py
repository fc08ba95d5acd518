"""Ops whose output sizes the data decide (nonzero, argwhere, torch.where(cond), x[mask],
masked_select, unique, unique_consecutive, bincount, repeat_interleave with tensor repeats,
one_hot without num_classes): each traces once, with a size `u0` in its output's type,
and that one trace, at the torch level and lowered to prims, serves draws of the data that
select different counts, and (traced with symbolic inputs) inputs of other sizes too, its
guards accepting every one of them (no retrace). Their decompositions never read the count
they make as a number; the printed trace says what each count is."""

from __future__ import annotations

import inspect

import pytest
import torch
import torch.nn.functional as F

from tests.ops.harness import assert_matches, data_sizes
from tests.test_cli import write
from tracecli.core.dims import symbols_in
from tracecli.core.printing import format_trace
from tracecli.core.pytree import tree_leaves
from tracecli.core.trace import walk
from tracecli.core.values import TensorValue
from tracecli.core.verify import verify
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.symbolic import DimPolicy
from tracecli.frontend.tracer import trace_callable
from tracecli.jobs.size_guards import size_check
from tracecli.passes.lower import lower


def _floats(n: int, gen: torch.Generator) -> tuple:
    return (torch.randn(n, 3, generator=gen),)


def _ints(n: int, gen: torch.Generator) -> tuple:
    return (torch.randint(0, 4, (n, 3), generator=gen),)


def _labels(n: int, gen: torch.Generator) -> tuple:
    return (torch.randint(0, 2 * n, (2 * n,), generator=gen),)


def _label_rows(n: int, gen: torch.Generator) -> tuple:
    return (torch.randint(0, 2 * n, (2, n), generator=gen),)


def _bits(n: int, gen: torch.Generator) -> tuple:
    return (torch.randint(0, 2, (n, 2), generator=gen),)


def _labels_and_weights(n: int, gen: torch.Generator) -> tuple:
    return torch.randint(0, 2 * n, (2 * n,), generator=gen), torch.rand(2 * n, generator=gen)


def _rows_and_repeats(n: int, gen: torch.Generator) -> tuple:
    return torch.randn(n, 3, generator=gen), torch.randint(0, 4, (n,), generator=gen)


def _repeats(n: int, gen: torch.Generator) -> tuple:
    return (torch.randint(0, 4, (n,), generator=gen),)


# name -> (the program, its inputs at size n drawn from a generator, the ltorch symbol it
# records); each returns a tensor of a size the data decide, whose draws are compared.
OPS = {
    "nonzero": (lambda x: torch.nonzero(x > 0) + 1, _floats, "nonzero"),
    "argwhere": (lambda x: x.argwhere(), _ints, "argwhere"),
    "where-condition": (lambda x: torch.where(x > 0.5), _floats, "nonzero"),
    "getitem-mask": (lambda x: x[x > 0] * 3, _floats, "getitem"),
    "getitem-mask-rows": (lambda x: (x[x.sum(1) > 0].mean(0), x[x.sum(1) > 0]), _floats, "getitem"),
    "masked_select": (lambda x: torch.masked_select(x, x > 0).sum() + x.masked_select(x < -0.5), _floats,
                      "masked_select"),
    "unique": (lambda x: torch.unique(x, return_inverse=True, return_counts=True), _ints, "unique"),
    "unique-unsorted": (lambda x: (x.unique(sorted=False).float().mean(), x.unique(sorted=False)), _ints, "unique"),
    "unique-dim": (lambda x: x.unique(dim=0, return_counts=True), _bits, "unique"),
    "unique_consecutive": (lambda x: torch.unique_consecutive(x, return_inverse=True, return_counts=True), _labels,
                           "unique_consecutive"),
    "bincount": (lambda x, w: torch.bincount(x, w, minlength=3), _labels_and_weights, "bincount"),
    "bincount-counts": (lambda x: x.bincount().float() / x.numel(), _labels, "bincount"),
    "repeat_interleave": (lambda x, r: x.repeat_interleave(r, dim=0) * 2, _rows_and_repeats, "repeat_interleave"),
    "repeat_interleave-flat": (lambda x, r: torch.repeat_interleave(x[:, 0], r), _rows_and_repeats,
                               "repeat_interleave"),
    "repeat_interleave-repeats-alone": (lambda r: torch.repeat_interleave(r), _repeats, "repeat_interleave"),
    "one_hot": (lambda x: F.one_hot(x), _labels, "one_hot"),
    "one_hot-2d": (lambda x: F.one_hot(x, num_classes=-1).sum(0), _label_rows, "one_hot"),
}
SIZE = 4
DRAWS = range(5)


def _draw(make, n: int, seed: int) -> tuple:
    return make(n, torch.Generator().manual_seed(seed))


def _serves(fn, program, args: tuple, compiled: list) -> tuple:
    """The compiled traces on `args` agree with eager, and the trace's guards accept the
    call (it would not be traced again); returns the sizes the data decided."""
    inputs = program.inputs_for(args, {})
    assert size_check(program.trace).failure(inputs) is None, "the guards refuse a call the trace serves"
    with torch.no_grad():
        expected = fn(*(a.clone() for a in args))
    for level, trace, run in compiled:
        assert_matches(level, trace, expected, run(*(a.clone() for a in inputs)), exact=False)
    return data_sizes(program.trace, expected)


def _compiled(program) -> list:
    lowered = lower(program.trace).trace
    verify(program.trace)
    verify(lowered)
    assert {b.symbol.namespace for b in lowered.bsyms} <= {"prims"}
    return [(level, t, compile_trace(t)) for level, t in (("torch", program.trace), ("prims", lowered))]


@pytest.mark.parametrize("name", sorted(OPS))
def test_one_static_trace_serves_draws_that_select_other_counts(name):
    fn, make, symbol = OPS[name]
    program = trace_callable(fn, _draw(make, SIZE, 0), name="fn")
    assert f"ltorch.{symbol}" in {b.symbol.qualname for b in program.trace.bsyms}
    assert any(info.unbacked for info in program.trace.dims)
    compiled = _compiled(program)
    counts = {_serves(fn, program, _draw(make, SIZE, seed), compiled) for seed in DRAWS}
    assert len(counts) > 1, f"every draw selects the same counts {counts}"


@pytest.mark.parametrize("name", sorted(OPS))
def test_one_symbolic_trace_serves_other_sizes_and_counts(name):
    fn, make, _ = OPS[name]
    program = trace_callable(fn, _draw(make, SIZE, 0), name="fn", dims=DimPolicy(dynamic=True))
    assert any(not info.unbacked for info in program.trace.dims), "no input size became a symbol"
    compiled = _compiled(program)
    counts = {_serves(fn, program, _draw(make, n, seed), compiled) for n in (SIZE, 3, 7) for seed in DRAWS[:2]}
    assert len(counts) > 1, counts


@pytest.mark.parametrize("name", sorted(OPS))
def test_no_decomposition_reads_the_count_it_makes(name):
    # There is no binding inside a decomposition: an op after the one that makes u0 may
    # have it in a type, never as a number in its arguments.
    fn, make, _ = OPS[name]
    trace = trace_callable(fn, _draw(make, SIZE, 0), name="fn").trace
    for bsym in trace.bsyms:
        made: set[str] = set()
        for _, part in walk(bsym.subsymbols):
            read = symbols_in((part.args, dict(part.kwargs)))
            assert not read & made, f"{part.symbol.qualname} in {bsym.symbol.qualname} reads {read & made}"
            made |= {name for v in tree_leaves(part.output) if isinstance(v, TensorValue)
                     for name in symbols_in(v.shape) if name.startswith("u")}


def _picked(x):
    return torch.masked_select(x, x > 0)


def test_the_trace_says_what_its_count_is():
    trace = trace_callable(_picked, (torch.randn(3, 4),), name="picked").trace
    line = inspect.getsourcelines(_picked)[1] + 1
    text = format_trace(trace)
    assert (f"  # u0: the count of nonzero elements, in torch.masked_select  (test_data_dependent.py:{line}  "
            f"return torch.masked_select(x, x > 0)); 0 <= u0 <= 12") in text.splitlines()
    assert '  t4 = ltorch.masked_select(x, t0)  # t4: "cpu f32[u0]"' in text.splitlines()
    assert '    # t3 = prims.nonzero_flat(t2)  # t3: "cpu i64[u0]"' in text.splitlines()


def test_each_count_is_bounded_by_what_the_op_can_give():
    program = trace_callable(lambda x, w, r: (x.unique(), x.bincount(w), F.one_hot(x), w.repeat_interleave(r)),
                             (torch.tensor([0, 3, 3], dtype=torch.uint8).long(), torch.rand(3),
                              torch.tensor([1, 0, 2])), name="fn")
    bounds = {info.made_by.rsplit(", in ", 1)[0]: info.upper for info in program.trace.dims}
    assert bounds == {
        "the count of distinct values": 3,  # at most one per element
        # Nothing but int64 itself bounds these: no bound, and the header says none.
        "the bin count (the largest value + 1, at least minlength)": None,
        "the class count (the largest value + 1)": None,
        "the sum of the repeats": None,
    }
    assert "; 0 <= u3\n" in format_trace(program.trace)
    small = trace_callable(lambda x: x.bincount(minlength=300), (torch.tensor([1, 7], dtype=torch.uint8),), name="fn")
    assert [info.upper for info in small.trace.dims] == [300]  # 256 bins hold any uint8, minlength is more
    int8 = trace_callable(lambda x: x.bincount(), (torch.tensor([1, 7], dtype=torch.int8),), name="fn")
    assert [info.upper for info in int8.trace.dims] == [128]


SCRIPT = """
    import torch
    import torch.nn.functional as F


    def summarize(x, labels):
        picked = torch.masked_select(x, x > 0)
        classes, counts = torch.unique(labels, return_counts=True)
        hot = F.one_hot(labels)
        bins = torch.bincount(labels, minlength=2)
        spread = x[:, 0].repeat_interleave(counts.sum() * 0 + 2)
        return picked.mean(), classes * counts, hot.sum(0), bins, spread


    if __name__ == "__main__":
        torch.manual_seed(0)
        for n in (6, 6, 9):
            summarize(torch.randn(n, 3), torch.randint(0, n, (n,)))
"""


def test_a_script_runs_each_call_through_one_trace(cli, tmp_path):
    path = write(tmp_path, "summary.py", SCRIPT)
    result = cli("run", path, "--dynamic", "--no-timing", "--color", "never", "--fullgraph")
    assert result.exit_code == 0, result.output
    out = result.stdout
    for made_by in ("the count of nonzero elements, in torch.masked_select", "the count of distinct values",
                    "the class count (the largest value + 1)", "the bin count", "the sum of the repeats"):
        assert made_by in out
    assert "1 trace for 3 calls; every call matches eager" in out
