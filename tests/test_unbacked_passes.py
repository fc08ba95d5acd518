"""The passes and the torch and prims executors on traces with sizes the data decide
(`u0`, `u1`, ...): every pipeline keeps the trace valid, each size declared once, bound
at most once and named in the header only while a type uses it, and the result computes
what eager PyTorch computes on draws of the data that select other counts than the
traced one. Then what each pass does with them: cse merges equal counting calls and
their counts, dce drops what nothing reads (checks never), rename names the counts after
the user's variables, renumber keeps u0, u1, ... consecutive, fuse gathers counting
calls into regions that run."""

from __future__ import annotations

import re

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_cli import write
from tracecli.core.dims import Dim, symbols_in
from tracecli.core.printing import format_trace
from tracecli.core.regions import is_region
from tracecli.core.rewrite import map_trace, substituter
from tracecli.core.trace import Trace, walk
from tracecli.core.values import TensorValue
from tracecli.core.verify import VerificationError, verify
from tracecli.executors import compile_for
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable
from tracecli.passes.pipeline import parse_passes, run_pipeline


def picked(x):
    vals = x[x > 0]
    n = vals.shape[0]
    torch._check(n > 0)
    return vals * 2, vals.mean(), torch.arange(n) + 1


def rows_twice(x):
    mask = x > 0
    a = mask.nonzero()
    b = mask.nonzero()  # the same call: cse merges it, and its count with it
    m = b.shape[0]
    k = a.shape[0]
    return a * 2, b.sum(0), torch.zeros(m) + k  # m is bound before k


def dead_rows(x):
    unused = (x < 0).nonzero()  # noqa: F841 - dead: dce drops it and its count
    idx = (x > 0).nonzero()
    return torch.ones(idx.shape[0]) * 3, x.sum()


def mean_of_positive(x):
    return x[x > 0].mean() + x  # the count is read only inside mean's decomposition


def router(x, w):
    top = (x @ w).argmax(-1)
    out = torch.zeros_like(x)
    for e in range(3):
        idx, = torch.where(top == e)
        out.index_add_(0, idx, x[idx] * (e + 1))
    return out


def _draws(fn):
    """Two draws of the inputs whose masks select different counts."""
    torch.manual_seed(0)
    x = torch.randn(6, 5)
    other = x.abs()
    other[:2] = -other[:2]  # 20 of 30 positive
    assert int((x > 0).sum()) != int((other > 0).sum())
    if fn is router:
        w = torch.randn(5, 3)
        return [(x, w), (other, w)]
    return [(x,), (other,)]


PROGRAMS = [picked, rows_twice, dead_rows, mean_of_positive, router]
PASSES = ["dce", "cse", "rename", "renumber", "fuse", "lower"]
_traced: dict = {}


def _trace(fn) -> Trace:
    if fn not in _traced:
        _traced[fn] = trace_callable(fn, _draws(fn)[0], name=fn.__name__).trace
    return _traced[fn]


def _unbacked(trace: Trace) -> list[str]:
    return [d.name for d in trace.dims if d.unbacked]


def _sizes_in_types(trace: Trace) -> set[str]:
    used = set()
    for _, bsym in walk(trace.bsyms):
        for value in (*bsym.arg_values(), *bsym.output_values()):
            if type(value) is TensorValue:
                used |= symbols_in(value.shape)
    return used


def _bindings(trace: Trace) -> list[str]:
    return [v.name for b in trace.bsyms if b.symbol.name == "shape" for v in b.output_values()]


def _check_sizes(trace: Trace) -> None:
    text = format_trace(trace)
    declared = _unbacked(trace)
    assert sorted(declared) == sorted(_sizes_in_types(trace) & set(declared)), text
    assert set(_sizes_in_types(trace)) <= {d.name for d in trace.dims}, text
    bound = _bindings(trace)
    assert len(bound) == len(set(bound)), text
    for name in declared:
        assert f"# {name}: " in text, text


def _runs_like_eager(trace: Trace, fn, executor: str = "torch") -> None:
    compiled = compile_trace(trace) if executor == "torch" else compile_for(trace, executor)
    for args in _draws(fn):
        want = fn(*[a.clone() for a in args])
        torch.testing.assert_close(compiled(*[a.clone() for a in args]), want, rtol=1e-5, atol=1e-5)


@settings(max_examples=40, deadline=None)
@given(fn=st.sampled_from(PROGRAMS), passes=st.lists(st.sampled_from(PASSES), min_size=1, max_size=5))
def test_pipelines_keep_traces_with_counts_valid_and_equal_to_eager(fn, passes):
    stages = run_pipeline(_trace(fn), parse_passes([",".join(passes)]))  # verified after every pass
    for stage in stages:
        _check_sizes(stage.trace)
        _runs_like_eager(stage.trace, fn)


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_the_prims_executor_runs_each_program_after_every_pass(fn):
    final = run_pipeline(_trace(fn), parse_passes(["dce,cse,rename,renumber,fuse"]))[-1].trace
    _runs_like_eager(final, fn, "prims")


def test_cse_merges_equal_counting_calls_and_their_counts():
    trace = _trace(rows_twice)
    assert _unbacked(trace) == ["u0", "u1"]
    final = run_pipeline(trace, parse_passes(["cse"]))[-1]
    text = format_trace(final.trace)
    assert text.count("ltorch.nonzero(") == 1 and "u1" not in text, text
    assert _unbacked(final.trace) == ["u0"]
    # One binding: the duplicate's, bound first, now binds the survivor's count.
    assert _bindings(final.trace) == ["u0"]
    assert final.value_map["u1"] == "u0"
    _runs_like_eager(final.trace, rows_twice)


def test_the_verifier_names_two_counts_taken_for_one_instead_of_crashing():
    # What cse made before it merged sizes: the duplicate's values replaced, its u1 left in the types.
    trace = _trace(rows_twice)
    nonzeros = [b for b in trace.bsyms if b.symbol.name == "nonzero"]
    keep, dup = nonzeros
    env = {dup.output.name: keep.output}
    wrong = map_trace(trace.replace(bsyms=tuple(b for b in trace.bsyms if b is not dup)), substituter(env))
    with pytest.raises(VerificationError, match="records .* but its rule gives"):
        verify(wrong)


def test_dce_drops_a_dead_count_and_its_header_line():
    final = run_pipeline(_trace(dead_rows), parse_passes(["dce"]))[-1].trace
    text = format_trace(final)
    assert text.count("ltorch.nonzero(") == 1 and _unbacked(final) == ["u1"], text
    assert "# u0:" not in text and "(u1, _) = prims.shape(" in text
    _runs_like_eager(final, dead_rows)


@pytest.mark.parametrize("spec", ["dce", "fuse,dce", "lower,dce", "dce,cse,fuse,dce"])
def test_dce_keeps_the_binding_of_a_count_read_at_any_depth(spec):
    final = run_pipeline(_trace(mean_of_positive), parse_passes([spec]))[-1].trace
    assert _bindings(final) == ["u0"], format_trace(final)
    _runs_like_eager(final, mean_of_positive)


def test_dce_never_drops_a_check_of_a_count():
    def checked(x):
        vals = x[x > 0]
        torch._check(vals.shape[0] >= 3)
        return x * 2

    trace = trace_callable(checked, (torch.randn(6, 5),), name="checked").trace
    final = run_pipeline(trace, parse_passes(["dce,cse,fuse,dce"]))[-1].trace
    text = format_trace(final, depth=0)
    assert 'ltorch.check_size(u0, ">=", 3)' in text and "(u0,) = prims.shape(" in text, text
    compiled = compile_trace(final)
    torch.testing.assert_close(compiled(torch.ones(2, 2)), torch.ones(2, 2) * 2)
    with pytest.raises(RuntimeError, match="2 >= 3 fails here"):
        compiled(torch.tensor([[1.0, -1.0], [-1.0, 1.0]]))


def named(x):
    mask = x > 0
    idx = mask.nonzero()
    vals = x[mask]
    kept = x[:, x.sum(0) > 0]
    picked = x[x < -1]
    n = picked.shape[0]
    torch._check(n > 0)
    for k in range(2):
        idx = (x > k).nonzero()
    return idx * 2, vals.sum(), kept * 2, picked.mean(), torch.arange(n)


def test_rename_names_each_count_after_the_users_variables():
    torch.manual_seed(0)
    x = torch.randn(4, 5) * 3
    trace = trace_callable(named, (x,), name="named").trace
    final = run_pipeline(trace, parse_passes(["rename"]))[-1].trace
    text = format_trace(final, depth=0)
    # A held count by its variable; else the tensor's name and where the count is in it;
    # a later value of a variable by its version.
    assert _unbacked(final) == ["idx_rows", "vals_len", "kept_cols", "n", "idx_1_rows", "idx_2_rows"], text
    assert 'idx = ltorch.nonzero(mask)  # idx: "cpu i64[idx_rows, 2]"' in text
    assert 'vals = ltorch.getitem(x, mask)  # vals: "cpu f32[vals_len]"' in text
    assert '# kept: "cpu f32[4, kept_cols]"' in text
    assert "# idx_1_rows: the count of nonzero elements, in Tensor.nonzero  (test_unbacked_passes.py:" in text
    assert "; 0 <= idx_1_rows <= 20" in text
    assert "# fact: n > 0  (test_unbacked_passes.py:" in text and 'ltorch.check_size(n, ">", 0)' in text
    assert not re.search(r"\bu\d\b", text), text
    # Named once: a second rename changes nothing.
    again = run_pipeline(final, parse_passes(["rename"]))[-1]
    assert not again.changed
    for args in ((x,), (torch.randn(4, 5) * 3,)):
        torch.testing.assert_close(compile_trace(final)(*args), named(*args))


def test_renumber_keeps_the_counts_consecutive_after_cse_merged_one():
    def three(x):
        mask = x > 0
        a, b = mask.nonzero(), mask.nonzero()
        c = x[x < 0]
        return a * 2, b.sum(0), c * 3

    trace = trace_callable(three, (torch.randn(4, 5),), name="three").trace
    assert _unbacked(trace) == ["u0", "u1", "u2"]
    final = run_pipeline(trace, parse_passes(["cse,renumber"]))[-1].trace
    assert _unbacked(final) == ["u0", "u1"]
    text = format_trace(final, depth=0)
    assert 't3 = ltorch.getitem(x, t2)  # t3: "cpu f32[u1]"' in text and "u2" not in text, text


def test_fuse_gathers_counting_calls_into_regions_that_run():
    final = run_pipeline(_trace(router), parse_passes(["dce,cse,fuse"]))[-1].trace
    regions = [b for b in final.bsyms if is_region(b)]
    assert any(m.symbol.name == "nonzero" for r in regions for _, m in walk([r])), format_trace(final)
    _runs_like_eager(final, router)
    _runs_like_eager(final, router, "prims")


ROUTER = """
    import torch


    def route(x, w):
        top = (x @ w).argmax(-1)
        out = torch.zeros_like(x)
        for e in range(3):
            idx, = torch.where(top == e)
            out.index_add_(0, idx, x[idx] * (e + 1))
        return out


    def main():
        w = torch.randn(5, 3)
        for seed in (1, 2):
            torch.manual_seed(seed)
            route(torch.randn(8, 5), w)


    if __name__ == "__main__":
        main()
"""


@pytest.mark.parametrize("executor", ["torch", "prims"])
def test_run_with_counts_through_the_passes_matches_eager_on_each_draw(cli, tmp_path, executor):
    path = write(tmp_path, "route.py", ROUTER)
    result = cli("run", path, "-p", "dce,cse,rename,renumber,fuse", "-e", executor, "--no-timing",
                 "--color", "never", "--depth", "0")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "route: 2 calls, 1 distinct trace" in out
    assert "# idx_len: the count of nonzero elements, in torch.where" in out
    assert f"compiled ({executor} executor)" in out and "1 more call with this trace matches eager" in out


def test_a_count_is_a_dim_of_the_types_it_sizes():
    trace = run_pipeline(_trace(picked), parse_passes(["rename"]))[-1].trace
    vals = next(b.output for b in trace.bsyms if b.output is not None and getattr(b.output, "name", "") == "vals")
    assert vals.shape == (Dim.symbol("n"),)
