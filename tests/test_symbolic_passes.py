"""The built-in passes on symbolic traces, traced from programs as users write them.

Each program is a random chain of steps that read sizes the ways scripts do (a size
unpacked into variables, a mean that divides by a count inside its decomposition, a
reshape by sizes, a size used as a number, dead and duplicated work). Every pipeline of
passes must keep the trace valid at every stage, keep every size bound exactly once,
and compute what eager PyTorch computes at the example sizes and at other sizes the
trace's size check accepts; rename names each size after the variable that held it.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from tracecli.core.dims import Dim
from tracecli.core.printing import format_trace
from tracecli.core.trace import Trace, walk
from tracecli.core.verify import verify
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.symbolic import DimPolicy
from tracecli.frontend.tracer import trace_callable
from tracecli.jobs.size_guards import size_check
from tracecli.passes.pipeline import parse_passes, run_pipeline


def centre(x):
    return x - x.mean(0)  # the count of rows is read inside mean's decomposition


def by_rows(x):
    rows, cols = x.shape
    return x.reshape(rows, cols) * rows


def flat_and_back(x):
    n = x.numel()
    return x.reshape(n).reshape(x.shape)


def scaled_by_width(x):
    width = x.shape[-1]
    unused = torch.zeros(width)  # noqa: F841 - dead: dce drops it
    return x.sum(-1, keepdim=True) / width + x


def twice(x):
    return x.sin() + x.sin()  # a duplicate: cse merges it


def square_gram(x):
    return (x.T @ x)[: x.shape[1], : x.shape[1]].sum(0) + x


STEPS = [centre, by_rows, flat_and_back, scaled_by_width, twice, square_gram]
PIPELINES = ["dce", "cse", "rename", "renumber", "lower", "lower:1", "fuse"]


def program(steps):
    def f(x):
        for step in steps:
            x = step(x)
        return x

    return f


def _shape_reads(trace: Trace) -> list[str]:
    return [b.output for _, b in walk(trace.bsyms) if b.symbol.name == "shape"]


def _check_runs(trace: Trace, fn, example: torch.Tensor, others: list[torch.Tensor]) -> None:
    compiled = compile_trace(trace)
    check = size_check(trace)
    served = 0
    for x in [example, *others]:
        if check.failure([x]) is not None:
            continue
        served += 1
        torch.testing.assert_close(compiled(x), fn(x), rtol=1e-4, atol=1e-4)
    assert served >= 1, "the example itself fails the size check"


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(st.sampled_from(STEPS), min_size=1, max_size=4),
    passes=st.lists(st.sampled_from(PIPELINES), min_size=1, max_size=5),
    rows=st.integers(2, 6),
    cols=st.integers(2, 6),
)
def test_pipelines_on_symbolic_traces(steps, passes, rows, cols):
    fn = program(steps)
    example = torch.randn(rows, cols, dtype=torch.float64)
    traced = trace_callable(fn, (example,), name="f", dims=DimPolicy(dynamic=True)).trace
    stages = run_pipeline(traced, parse_passes([",".join(passes)]))  # verifies every stage
    others = [torch.randn(r, c, dtype=torch.float64) for r, c in ((rows + 1, cols), (rows, cols + 3), (7, 2))]
    for stage in stages:
        trace = stage.trace
        verify(trace)
        assert trace.dims == () or len(trace.dims) == len(traced.dims)
        # One `prims.shape` per input at most: passes never duplicate or lose the binding.
        assert len(_shape_reads(trace)) <= 1, format_trace(trace)
        _check_runs(trace, fn, example, others)


def test_dce_keeps_the_shape_a_decomposition_reads():
    # `x.mean(0)` reads the row count only inside its decomposition (prims.div by s0).
    trace = trace_callable(lambda x: x.mean(0), (torch.randn(4, 6),), name="f", dims=DimPolicy(dynamic=True)).trace
    for spec in ("dce", "dce,cse", "lower,dce"):
        final = run_pipeline(trace, parse_passes([spec]))[-1].trace
        assert len(_shape_reads(final)) == 1, format_trace(final)
        _check_runs(final, lambda x: x.mean(0), torch.randn(4, 6), [torch.randn(9, 3)])


@pytest.mark.parametrize("spec", ["rename", "dce,cse,rename", "rename,renumber,lower", "fuse,rename"])
def test_rename_names_sizes_after_the_users_variables(spec):
    trace = trace_callable(by_rows, (torch.randn(3, 5),), name="f", dims=DimPolicy(dynamic=True)).trace
    assert [d.hint for d in trace.dims] == ["rows", "cols"]
    final = run_pipeline(trace, parse_passes([spec]))[-1].trace
    text = format_trace(final)
    assert "# x: \"cpu f32[rows, cols]\"" in text
    assert "(rows, cols) = prims.shape(x)" in text
    assert "s0" not in text and "s1" not in text, text
    assert [d.name for d in final.dims] == ["rows", "cols"]
    assert all(isinstance(d, Dim) for d in final.inputs[0].shape)
    _check_runs(final, by_rows, torch.randn(3, 5), [torch.randn(8, 2)])


def test_rename_renames_sizes_in_guards_too():
    def branch(x):
        n, m = x.shape
        if n > 4:
            return x * 2
        return x.reshape(n, m // 2, 2).sum(-1)

    trace = trace_callable(branch, (torch.randn(3, 6),), name="f", dims=DimPolicy(dynamic=True)).trace
    final = run_pipeline(trace, parse_passes(["rename"]))[-1].trace
    guards = [g.text() for g in final.guards]
    assert "n <= 4" in guards and any("m" in g for g in guards), guards
    assert size_check(final).failure([torch.randn(5, 6)]).startswith("n <= 4 failed")
