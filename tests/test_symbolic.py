"""Symbolic shapes from the command line: one trace for many sizes, guards that retrace
when a size falls on the other side of a branch, named dims that are strict, and a
clean trace (no shape queries or comparisons left in it)."""

import json

import pytest

from tests.test_cli import assert_user_error, write

SEED = """
    import torch


    def foo(x):
        y = torch.cos(x) + torch.sin(x)
        return y


    def sample_inputs(device):
        return (torch.randn(10, 10, device=device),)
"""

BRANCH = """
    import torch


    def f(x):
        if x.shape[0] > 4:
            return x * 2
        return x - 1


    def sample_inputs(device):
        return (torch.randn(3, 4, device=device),)
"""


def test_the_seed_traces_once_for_every_size_with_no_shape_queries(cli, tmp_path):
    script = write(tmp_path, "seed.py", SEED)
    result = cli("run", script, "--dynamic", "--sizes", "s0=3,s1=4", "--sizes", "s0=128,s1=64", "--depth", "all",
                 "--no-timing")
    assert result.exit_code == 0, result.output
    assert '# x: "cpu f32[s0, s1]"' in result.stdout
    for prim in ("prims.shape", "prims.eq", "prims.ne"):
        assert prim not in result.stdout
    assert "1 trace for 3 calls; every call matches eager" in result.stdout


def test_a_branch_on_a_size_is_a_guard_and_the_other_side_traces_again(cli, tmp_path):
    script = write(tmp_path, "branch.py", BRANCH)
    result = cli("run", script, "--dynamic", "--sizes", "s0=5", "--sizes", "s0=7", "--sizes", "s0=2", "--no-timing")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "# guard: s0 <= 4  (branch.py:6  if x.shape[0] > 4:)" in out
    assert "# guard: s0 > 4  (branch.py:6  if x.shape[0] > 4:)" in out
    assert "traced again: s0 <= 4 failed (branch.py:6)" in out
    assert "2 traces for 4 calls; every call matches eager" in out


def test_json_has_one_element_per_call(cli, tmp_path):
    script = write(tmp_path, "branch.py", BRANCH)
    result = cli("run", script, "--dynamic", "--sizes", "s0=5", "--sizes", "s0=7", "--format", "json", "--no-timing")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["traces"] == 2 and report["match"] is True
    calls = report["calls"]
    assert [(c["trace_index"], c["reused"]) for c in calls] == [(1, False), (2, False), (2, True)]
    assert [c["sizes"] for c in calls] == [{"s0": 3, "s1": 4}, {"s0": 5, "s1": 4}, {"s0": 7, "s1": 4}]
    assert calls[1]["retraced_because"].startswith("s0 <= 4 failed")
    trace = calls[1]["trace"]
    assert trace["inputs"][0]["shape"] == ["s0", "s1"]
    (guard,) = trace["guards"]
    assert (guard["expr"], guard["reason"], guard["source"]) == ("s0 > 4", "a comparison in the script",
                                                                 "if x.shape[0] > 4:")
    assert guard["line"].endswith("branch.py:6")
    assert [d["name"] for d in trace["dims"]] == ["s0", "s1"]
    assert all(c["result"]["match"] for c in calls)


NAMED = """
    import torch


    def f(x, y):
        return (x * y).sum(0) + x.shape[0]
"""


def test_named_dims_shared_by_inputs_serve_every_size(cli, tmp_path):
    script = write(tmp_path, "named.py", NAMED)
    result = cli("run", script, "-i", "f32[n,4]", "-i", "f32[n,4]", "--sizes", "n=5", "--sizes", "n=7", "--no-timing")
    assert result.exit_code == 0, result.output
    assert '# y: "cpu f32[n, 4]"' in result.stdout
    assert "(n, _) = prims.shape(x)" in result.stdout  # the size used as a value, bound once
    assert "t2 = ltorch.add(t1, n)" in result.stdout
    assert "1 trace for 2 calls; every call matches eager" in result.stdout


@pytest.mark.parametrize(("specs", "sizes", "message"), [
    (["f32[n,4]", "f32[m,4]"], "n=5,m=5", "m and n were declared symbolic (-i), but this line needs m == n"),
    (["f32[n,4]", "f32[3,4]"], "n=3", "n was declared symbolic (-i), but this line needs n == 3"),
])
def test_named_dims_are_strict(cli, tmp_path, specs, sizes, message):
    script = write(tmp_path, "named.py", NAMED)
    args = [a for spec in specs for a in ("-i", spec)]
    assert_user_error(cli("run", script, *args, "--sizes", sizes), "named.py:6:", message)


@pytest.mark.parametrize(("args", "message"), [
    (["--sizes", "n=3"], "--sizes needs symbolic dims"),
    (["--dynamic", "--sizes", "k=3"], "--sizes names k, not a dim of the trace (its dims: s0, s1)"),
    (["--dynamic", "--sizes", "s0"], "bad --sizes 's0'"),
])
def test_bad_sizes(cli, tmp_path, args, message):
    script = write(tmp_path, "branch.py", BRANCH)
    assert_user_error(cli("run", script, *args), message)


MAIN = """
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 3)

        def forward(self, x):
            return torch.relu(self.fc(x)).softmax(-1)


    def main():
        torch.manual_seed(0)
        model = Net().eval()
        for rows in (4, 4, 8):
            print(rows, tuple(model(torch.randn(rows, 8)).shape))


    if __name__ == "__main__":
        main()
"""


def test_a_main_block_calls_many_sizes_through_one_trace(cli, tmp_path):
    script = write(tmp_path, "main.py", MAIN)
    result = cli("run", f"{script}:Net", "--dynamic", "--no-timing")
    assert result.exit_code == 0, result.output
    assert "8 (8, 3)" in result.stdout  # the script's own prints, with its real results
    assert '# x: "cpu f32[s0, 8]"' in result.stdout
    assert "1 trace for 3 calls; every call matches eager" in result.stdout
    static = cli("run", f"{script}:Net", "--no-timing")
    assert "2 distinct traces" in static.stdout


UNPACKED = """
    import torch


    def f(x):
        rows, cols = x.shape
        if rows > 4:
            return x.mean(0)
        return x.reshape(rows, cols // 2, 2).sum(-1) / rows


    def sample_inputs(device):
        return (torch.randn(3, 6, device=device),)
"""


def test_rename_names_sizes_after_the_variables_and_sizes_may_use_those_names(cli, tmp_path):
    script = write(tmp_path, "unpacked.py", UNPACKED)
    result = cli("run", script, "--dynamic", "--passes", "dce,cse,rename", "--sizes", "rows=5,cols=6",
                 "--sizes", "s0=2,s1=10", "--no-timing")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert '# x: "cpu f32[rows, cols]"' in out
    assert "(rows, cols) = prims.shape(x)" in out
    assert "s0" not in out.split("call ")[0], out  # the traces print the variables' names
    assert "traced again: rows <= 4 failed" in out
    assert "rows=2, cols=10" in out
    assert "2 traces for 3 calls; every call matches eager" in out
    bad = cli("run", script, "--dynamic", "--sizes", "row=5")
    assert_user_error(bad, "--sizes names row, not a dim of the trace (its dims: s0 (rows), s1 (cols))")


SIZED_FACTORIES = """
    import torch
    import torch.nn.functional as F


    def f(x, labels):
        window = torch.hann_window(x.shape[-1])
        return x * window + F.one_hot(labels, x.shape[-1])


    def sample_inputs(device):
        return (torch.randn(3, 8, device=device), torch.tensor([1, 2, 7], device=device))
"""


def test_sizes_read_from_tensors_reach_factories_that_torch_checks_for_ints(cli, tmp_path):
    # torch's argument parser wants an int for window_length and num_classes: a size from
    # x.shape must still get there (as its value, pinned where the op needs it).
    script = write(tmp_path, "sized.py", SIZED_FACTORIES)
    result = cli("run", script, "--dynamic", "--sizes", "s0=5,s1=16", "--no-timing")
    assert result.exit_code == 0, result.output
    assert "every call matches eager" in result.stdout


COMPARED_WITH_A_SIZE = """
    import torch


    def f(x):
        n = x.shape[0]
        i = torch.arange(n)
        return (i >= n - 2).long() + (n - 3 < i).long() + x
"""


def test_a_tensor_compared_with_a_size_keeps_the_size_symbolic(cli, tmp_path):
    # Swin's shifted-window mask: arange(height) >= height - window, either way round.
    script = write(tmp_path, "compared.py", COMPARED_WITH_A_SIZE)
    result = cli("run", script, "-i", "f32[n]", "--sizes", "n=5", "--sizes", "n=9", "--no-timing")
    assert result.exit_code == 0, result.output
    assert "ltorch.ge(" in result.stdout and "ltorch.gt(" in result.stdout
    assert "1 trace for 2 calls; every call matches eager" in result.stdout


SPLIT_BY_A_SIZE = """
    import torch


    def f(x):
        width = x.shape[-1]
        q, k = torch.cat([x, x], -1).split(width, dim=-1)
        return q * k
"""


def test_a_split_by_a_size_read_from_a_tensor_keeps_it_symbolic(cli, tmp_path):
    # One split size that is a size of the input: two pieces at every width.
    script = write(tmp_path, "split.py", SPLIT_BY_A_SIZE)
    result = cli("run", script, "-i", "f32[b, w]", "--sizes", "b=2,w=8", "--sizes", "b=3,w=5", "--no-timing")
    assert result.exit_code == 0, result.output
    assert "ltorch.split(t0, w, dim=-1)" in result.stdout
    assert "1 trace for 2 calls; every call matches eager" in result.stdout


STEP_WITH_A_STATIC_WEIGHT = """
    import torch

    w = torch.nn.Parameter(torch.ones(4))


    def step(x):
        loss = (x * w).sum()
        loss.backward()
        return loss.detach()
"""


def test_a_training_step_whose_weight_fixes_a_size_serves_every_other_size(cli, tmp_path):
    # x * w makes x's width 4: the backward took that size as an argument, which is a
    # number once the trace is finished, not a size to bind.
    script = write(tmp_path, "step.py", STEP_WITH_A_STATIC_WEIGHT)
    result = cli("run", f"{script}:step", "-i", "f32[b, 4]", "--sizes", "b=3", "--sizes", "b=5", "--no-timing")
    assert result.exit_code == 0, result.output
    assert "1 trace for 2 calls; every call matches eager" in result.stdout
    result = cli("run", f"{script}:step", "-i", "f32[3, 4]", "--dynamic", "--no-timing")
    assert result.exit_code == 0, result.output


PADDED_TARGETS = """
    import torch
    import torch.nn.functional as F


    def loss_fn(logits, y):
        return F.cross_entropy(logits, y, ignore_index=-100)


    def sample_inputs(device):
        return torch.randn(4, 3), torch.tensor([0, 2, -100, 1])
"""


def test_integer_inputs_at_new_sizes_are_drawn_among_the_examples_values(cli, tmp_path):
    # A number between -100 and 2 is no class and no ignored target: eager refuses it.
    script = write(tmp_path, "padded.py", PADDED_TARGETS)
    result = cli("run", script, "--dynamic", "--sizes", "s0=9", "--sizes", "s0=17", "--no-timing")
    assert result.exit_code == 0, result.output
    assert "every call matches eager" in result.stdout
