"""Sizes the data decide (`torch.nonzero`, `x[mask]`, `torch.where(cond)`): unbacked size
symbols `u0, u1, ...` with the facts the op gives, one trace for every draw of the data,
facts the program states with torch._check, and branches on them (a graph break, or
refused at the line with --fullgraph)."""

import json
import re

import pytest
import torch

from tests.test_cli import assert_user_error, python_output, write
from tracecli.core.verify import verify
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable

SELECT = """
    import torch


    def select(x, w):
        mask = x > 0
        idx = mask.nonzero()
        vals = x[mask]
        rows, cols = torch.where(x > 0.5)
        return idx, vals * w[0], vals.mean(), x[rows, cols].sum(), torch.argwhere(x < -1)


    def main():
        for seed in range(3):
            torch.manual_seed(seed)
            select(torch.randn(5, 4) + seed - 1, torch.randn(3))


    if __name__ == "__main__":
        main()
"""


def test_each_data_dependent_size_is_a_symbol_with_its_op_line_and_bounds(cli, tmp_path):
    path = write(tmp_path, "select.py", SELECT)
    result = cli("trace", f"{path}:select", "-i", "f32[5,4]", "-i", "f32[3]", "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "# u0: the count of nonzero elements, in Tensor.nonzero  (select.py:7  idx = mask.nonzero()); " \
           "0 <= u0 <= 20" in out
    assert "(select.py:8  vals = x[mask]); 0 <= u1 <= 20" in out
    assert "in torch.where  (select.py:9  rows, cols = torch.where(x > 0.5))" in out
    assert 't1 = ltorch.nonzero(t0)  # t1: "cpu i64[u0, 2]"' in out
    # The mean divides by the count: bound where first read, from the value that has it.
    assert '(u1,) = prims.shape(' in out


def test_one_trace_serves_every_draw_and_each_call_matches_eager(cli, tmp_path):
    path = write(tmp_path, "select.py", SELECT)
    python_output(path)
    result = cli("run", path, "--color", "never")
    assert result.exit_code == 0, result.output
    assert "select: 3 calls, 1 distinct trace" in result.stdout
    assert "2 more calls with this trace match eager" in result.stdout


def _counts(fn, draws):
    """Trace fn on the first draw, then run that one trace on every draw against eager."""
    program = trace_callable(fn, draws[0])
    verify(program.trace)
    compiled = compile_trace(program.trace)
    counts = set()
    for args in draws:
        want, got = fn(*args), compiled(*args)
        torch.testing.assert_close(got, want)
        counts.add(tuple(t.shape[0] for t in torch.utils._pytree.tree_leaves(want) if t.ndim))
    return counts


def test_the_trace_of_the_first_draw_runs_draws_that_select_other_counts():
    def masked(x, m):
        picked = x[m]
        return picked.exp().cumsum(0), torch.masked_fill(x, m, 0)[m.nonzero(as_tuple=True)]

    torch.manual_seed(0)
    draws = [(torch.randn(6, 3), torch.rand(6, 3) > p) for p in (0.2, 0.5, 0.9, 1.0)]
    assert len(_counts(masked, draws)) == 4  # four different counts, none of them the first's


def test_a_branch_on_a_data_decided_size_is_a_graph_break_or_refused_with_fullgraph(cli, tmp_path):
    path = write(tmp_path, "branch.py", """
        import torch


        def f(x):
            idx = (x > 0).nonzero()
            if idx.shape[0] > 3:
                return x.sum() * 2
            return x.sum()


        def sample_inputs(device):
            torch.manual_seed(0)
            return (torch.randn(4, 5, device=device),)
    """)
    result = cli("run", path, "--color", "never", "--depth", "0")
    assert result.exit_code == 0, result.output
    assert "cut at branch.py:7:  if idx.shape[0] > 3:  (a branch on u0 > 3, sizes the data decide: u0 (the " \
           "count of nonzero elements, in Tensor.nonzero at branch.py:6))" in result.stdout
    assert "# Python read u0 > 3 (u0 = 12) = True" in result.stdout
    assert "the output matches eager" in result.stdout
    assert_user_error(cli("run", path, "--fullgraph"), "branch.py:7:", "whether u0 > 3", "u0 (the count of nonzero "
                      "elements, in Tensor.nonzero at branch.py:6) is decided by the data", "torch._check(u0 > 3)")


CHECKED = """
    import torch


    def f(x):
        vals = x[x > 0]
        n = vals.shape[0]
        torch._check(n > 0)
        torch._check_is_size(n)
        if n == 0:
            raise ValueError("no positive value")
        return vals.mean(), vals.new_zeros(n) + 1, torch.arange(n)


    def sample_inputs(device):
        torch.manual_seed(0)
        return (torch.randn(4, 5, device=device),)
"""


@pytest.mark.filterwarnings("ignore::FutureWarning")  # torch's own, for _check_is_size
def test_facts_stated_with_torch_check_settle_branches_print_and_are_checked_when_the_trace_runs(cli, tmp_path):
    path = write(tmp_path, "checked.py", CHECKED)
    result = cli("run", path, "--fullgraph", "--color", "never", "-p", "dce,cse")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "# fact: u0 > 0  (checked.py:8  torch._check(n > 0))  torch._check" in out
    assert "# fact: u0 >= 0  (checked.py:9  torch._check_is_size(n))  torch._check_is_size" in out
    # `if n == 0` is settled by the fact: no break, no refusal; the check stays through dce.
    assert 'ltorch.check_size(u0, ">", 0)' in out
    assert "all 3 outputs match eager" in out
    # JSON carries the sizes the data decide and the facts.
    result = cli("trace", path, "--fullgraph", "--format", "json")
    trace = json.loads(result.stdout)["calls"][0]["trace"]
    assert trace["dims"][0] == {"name": "u0", "unbacked": True, "made_by": "the count of nonzero elements, in "
                                "`indexing`", "line": trace["dims"][0]["line"], "source": "vals = x[x > 0]",
                                "upper": 20}
    assert [f["expr"] for f in trace["facts"]] == ["u0 > 0", "u0 >= 0"]


def test_the_trace_checks_a_stated_fact_when_it_runs():
    def f(x):
        vals = x[x > 0]
        torch._check(vals.shape[0] >= 2)
        return vals * 2

    program = trace_callable(f, (torch.tensor([1.0, 2.0, -1.0]),))
    compiled = compile_trace(program.trace)
    assert compiled(torch.tensor([3.0, -2.0, 5.0])).tolist() == [6.0, 10.0]
    try:
        compiled(torch.tensor([3.0, -2.0, -5.0]))
    except RuntimeError as exc:
        assert "1 >= 2 fails here, and the trace relies on it" in str(exc)
    else:
        raise AssertionError("a fact that fails must fail the run")


def test_a_stated_equality_of_two_counts_is_checked_against_each_tensor_s_own_size():
    # Solving u1 = u0 would leave the check asking u0 == u0: each keeps its own binding.
    def f(x):
        a = x[x > 0]
        b = x[x > 1]
        torch._check(a.shape[0] == b.shape[0])
        return a + b, torch.stack([a, b]).sum(0)

    program = trace_callable(f, (torch.tensor([2.0, -1.0, 3.0]),))
    verify(program.trace)
    assert [(f.lhs.text(), f.op, f.rhs.text()) for f in program.trace.facts] == [("u0", "==", "u1")]
    compiled = compile_trace(program.trace)
    first, stacked = compiled(torch.tensor([4.0, 5.0, -1.0]))
    assert first.tolist() == [8.0, 10.0] and stacked.tolist() == [8.0, 10.0]
    with pytest.raises(RuntimeError, match="1 == 0 fails here"):
        compiled(torch.tensor([0.5, -1.0, -2.0]))


def test_a_count_used_as_a_plain_int_breaks_the_graph_and_reads_the_real_count(cli, tmp_path):
    # len() must hand Python an int: the one read is the real count, on every call, and a
    # later segment that computes with the count reads it off the tensor that has it.
    path = write(tmp_path, "counted.py", """
        import torch


        def f(x):
            pos = x[x > 0.5]
            n = len(pos)
            return x + n, x * pos.shape[0]


        if __name__ == "__main__":
            for k in range(3):
                torch.manual_seed(k)
                f(torch.randn(3, 5))
    """)
    result = cli("run", path, "--color", "never", "--depth", "0")
    assert result.exit_code == 0, result.output
    assert "cut at counted.py:7:  n = len(pos)  (u0 used as a plain int" in result.stdout
    assert re.search(r"# Python read u0 = \d+; it hands on t4", result.stdout), result.stdout
    assert "(u0,) = prims.shape(t4)" in result.stdout
    # The three draws select 4, 2 and 5 elements: each call is checked against eager.
    assert "2 more calls with this trace match eager" in result.stdout
    assert "differ" not in result.stdout
    assert_user_error(cli("run", path, "--fullgraph"), "counted.py:7:", "this line needs u0 as a plain int",
                      "x.shape[0] instead of len(x)")


def test_an_unmodelled_call_whose_kernel_gives_a_size_of_its_own_is_opaque_with_an_unbacked_size():
    def f(x):
        values, inverse, counts = torch.ops.aten._unique2.default(x, True, True, True)
        return values * 2, inverse, counts

    program = trace_callable(f, (torch.tensor([1.0, 2.0, 2.0, 3.0, 3.0, 3.0]),))
    verify(program.trace)
    (info,) = program.trace.dims
    assert info.unbacked and info.made_by == "a size of the output of torch.ops.aten._unique2.default"
    values = next(b for b in program.trace.bsyms if b.symbol.namespace == "torch").output[0]
    assert [str(d) for d in values.shape] == ["u0"]
    compiled = compile_trace(program.trace)
    for data in ([5.0, 5.0, 1.0], [4.0, 3.0, 2.0, 1.0]):
        x = torch.tensor(data)
        torch.testing.assert_close(compiled(x), f(x))


def test_examine_lists_the_sizes_the_data_decide(cli, tmp_path):
    path = write(tmp_path, "select.py", SELECT)
    result = cli("examine", f"{path}:select", "-i", "f32[5,4]", "-i", "f32[3]")
    assert result.exit_code == 0, result.output
    assert "  u0: the count of nonzero elements, in Tensor.nonzero  (" in result.stdout
    assert "select.py:7  idx = mask.nonzero())" in result.stdout
    report = json.loads(cli("examine", f"{path}:select", "-i", "f32[5,4]", "-i", "f32[3]", "--format", "json").stdout)
    assert [line.split(":")[0] for line in report["unbacked"]] == ["u0", "u1", "u2", "u3"]
