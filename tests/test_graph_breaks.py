"""Graph breaks: where the entry's Python reads a tensor's value, the trace is cut there,
the piece runs, and the Python goes on with the real value; later calls are traced again
as they run, their segments compiled once. `--fullgraph` keeps the refusal."""

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.test_cli import assert_user_error, python_output, write

KINDS = """
    import numpy as np
    import torch


    def f(x):
        y = x * 2
        print(f"mean {y.mean():.3f}")
        n = int((y > 0).sum())
        first = y[0].tolist()
        z = y[:, :n] if n > 0 else y
        b = np.tanh(y.numpy()).sum()
        while z.abs().max() > 1:
            z = z / 2
        return z + sum(first) + float(b)


    def sample_inputs(device):
        torch.manual_seed(0)
        return (torch.randn(3, 4, device=device),)
"""


def test_each_kind_of_read_cuts_the_trace_and_the_call_matches_eager(cli, tmp_path):
    path = write(tmp_path, "kinds.py", KINDS)
    result = cli("run", path, "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    out = result.stdout
    # The Python between the segments printed once, as eager's run did.
    assert [line for line in out.splitlines() if line.startswith("mean ")] == ["mean -0.524"]
    for line, reason in [(8, "formatting a tensor reads its value"), (9, "int() of a tensor reads its value"),
                         (10, "Tensor.tolist reads its values"), (13, "bool() of a tensor: a branch on its value")]:
        assert f"cut at kinds.py:{line}:" in out and reason in out, (line, reason)
    assert "# Python read int(t5) = 5; it hands on t0" in out
    assert "which an earlier segment made" in out  # float(b): read again, no new cut
    assert "the output matches eager" in out


def test_fullgraph_refuses_the_read_at_its_line(cli, tmp_path):
    path = write(tmp_path, "kinds.py", KINDS)
    assert_user_error(cli("run", path, "--fullgraph"), "kinds.py:8:", "Tensor.__format__ needs the tensor's values",
                      'print(f"mean {y.mean():.3f}")')


LOOP = """
    import torch
    from torch import nn

    model = nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    history = []


    def train_step(x, y):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        if not torch.isfinite(loss):
            return None
        loss.backward()
        opt.step()
        history.append(loss.item())
        return loss.detach()


    if __name__ == "__main__":
        torch.manual_seed(1)
        model.reset_parameters()
        for step in range(5):
            x, y = torch.randn(4, 8), torch.randn(4, 1)
            if step == 3:
                x[0, 0] = float("nan")
            train_step(x, y)
        print([round(h, 4) for h in history])
"""


def test_a_training_loop_that_skips_non_finite_losses_and_logs_them(cli, tmp_path):
    # The backward and the update land in the segment after the check, where they run;
    # every step (the skipped one too) is served by its segments and matches eager.
    path = write(tmp_path, "loop.py", LOOP)
    result = cli("run", f"{path}:train_step", "--no-timing", "--format", "json")
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[0] == python_output(path)[0]
    report = json.loads(result.stdout)
    assert report["match"] is True
    text = report["calls"][0]["trace"]["text"]
    segments = report["calls"][0]["segments"]
    assert [s["break"] and (s["break"]["source"], s["break"]["reason"]) for s in segments] == [
        None, ("if not torch.isfinite(loss):", "bool() of a tensor: a branch on its value")]
    assert segments[1]["hands_on"] == ["t4", "t7"]
    assert "autograd.backward0(" in text.split("segment 2 of 2")[1]
    assert report["calls"][0]["served"] == [0, 1, 2, 3, 4]
    assert {r["call"] for r in report["calls"][0]["rechecks"]} == {2, 3, 4, 5}


BRANCH = """
    import torch


    def f(x):
        if x.sum() > 0:
            return x * 2
        return x - 1


    if __name__ == "__main__":
        for sign in (1.0, -1.0, 1.0, -1.0):
            print(f(torch.full((3,), sign)).tolist())
"""


def test_a_call_whose_python_takes_the_other_side_gets_that_sides_segment(cli, tmp_path):
    path = write(tmp_path, "branch.py", BRANCH)
    result = cli("run", path, "--depth", "0", "--no-timing", "--color", "never")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[:4] == python_output(path)
    assert "3 more calls with this trace match eager" in result.stdout


def test_a_device_this_machine_lacks_cannot_run_a_segment(cli, tmp_path):
    path = write(tmp_path, "kinds.py", KINDS)
    result = cli("trace", path, "--device", "cuda:0")
    assert result.exit_code == 2
    assert "kinds.py:8:" in result.output


@pytest.mark.parametrize("body", [
    "return x * x.sum().item()",
    "return x[: int(x.argmax())] * 2",
    "return torch.stack([x * v for v in x.tolist()])",
])
def test_reads_in_small_functions(cli, tmp_path, body):
    path = write(tmp_path, "small.py", "import torch\n\n\ndef f(x):\n    " + body + "\n")
    result = cli("run", path, "-i", "f32[4]", "--no-timing", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "Python read" in result.stdout


def test_the_segments_are_text_a_reader_can_follow(cli, tmp_path):
    path = write(tmp_path, "loop.py", LOOP)
    text = cli("trace", f"{path}:train_step", "-p", "dce,rename", "--depth", "0", "--color", "never").stdout
    first, second = text.split("# ── segment 2 of 2")
    assert "def train_step_1(x, model_weight, model_bias, y):" in first
    # What segment 1 returns, segment 2 takes by the same names.
    assert "# Python read bool(t9) = True; it hands on t4, loss" in second
    assert "def train_step_2(" in second and "loss" in second.split("def train_step_2(")[1].split(")")[0]


def test_examine_lists_each_break_with_its_line_reason_and_count(cli, tmp_path):
    path = write(tmp_path, "loop.py", LOOP)
    result = cli("examine", f"{path}:train_step", "--format", "json")
    assert result.exit_code == 0, result.output
    breaks = json.loads(result.stdout)["breaks"]
    assert [(b["source"], b["reason"], b["count"]) for b in breaks] == [
        ("if not torch.isfinite(loss):", "bool() of a tensor: a branch on its value", 5)]
    strict = cli("examine", f"{path}:train_step", "--strict")
    assert strict.exit_code == 1
    assert strict.stderr.strip().splitlines()[-1] == "tracecli: examine --strict fails: the trace is cut 5 times " \
                                                     "(graph breaks)"
    assert cli("examine", f"{path}:train_step", "--fullgraph").exit_code == 1  # could not be traced, as before


SELECT = """
    import torch


    def select_positive(x, w):
        h = torch.relu(x @ w)
        keep = h.sum(dim=1) > 0.5
        rows = h[keep]
        idx = torch.nonzero(keep).squeeze(1)
        counts = torch.histogram(rows.sum(dim=1), bins=3).hist
        return rows.mean(dim=0) * 2, idx, counts * 2


    if __name__ == "__main__":
        torch.manual_seed(0)
        w = torch.randn(4, 3)
        for n in (6, 6, 9, 6):
            out, idx, counts = select_positive(torch.randn(n, 4), w)
            print(len(idx), counts.tolist())
"""


UNIQUE_KINDS = """
    import torch


    def select_positive(x, w):
        h = torch.relu(x @ w)
        keep = h.sum(dim=1) > 0.5
        rows = h[keep]
        idx = torch.nonzero(keep).squeeze(1)
        return rows.mean(dim=0) * 2, idx, torch.unique(idx % 3)


    if __name__ == "__main__":
        torch.manual_seed(0)
        w = torch.randn(4, 3)
        for n in (6, 6, 9, 6):
            out, idx, kinds = select_positive(torch.randn(n, 4), w)
            print(len(idx), kinds.tolist())
"""


def test_sizes_the_data_decide_cut_nothing(cli, tmp_path):
    # x[mask], nonzero and unique give sizes the data decide (u0, u1, u2): the one trace
    # serves every count, so nothing runs eagerly and --fullgraph has nothing to refuse.
    path = write(tmp_path, "select.py", UNIQUE_KINDS)
    result = cli("run", path, "--dynamic", "--no-timing", "--color", "never", "--fullgraph")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "# u2: the count of distinct values, in torch.functional.unique  (select.py:10  return rows.mean(dim=0) " \
           "* 2, idx, torch.unique(idx % 3)); 0 <= u2 <= u1" in out
    assert "runs eagerly" not in out and "segment" not in out
    assert "1 trace for 4 calls; every call matches eager" in out
    examined = cli("examine", path, "--format", "json")
    assert examined.exit_code == 0, examined.output
    assert json.loads(examined.stdout)["breaks"] == []


CLASS_MEANS = """
    import torch


    def class_means(x, y):
        means = [x[y == c].mean(0) for c in torch.unique(y)]
        return torch.stack(means)


    if __name__ == "__main__":
        torch.manual_seed(0)
        for k in (4, 4, 2):
            print(class_means(torch.randn(10, 3), torch.randint(0, k, (10,))).shape)
"""


def test_a_call_that_needs_a_count_the_data_decide_runs_eagerly(cli, tmp_path):
    # Iterating unique's u0 values unbinds u0 rows: that call runs eagerly on the real
    # values, and the loop's body is traced after it, once per class the data have.
    path = write(tmp_path, "means.py", CLASS_MEANS)
    result = cli("run", path, "--no-timing", "--color", "never")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "means.py:6:  means = [x[y == c].mean(0) for c in torch.unique(y)]  (Tensor.unbind needs u0 as a " \
           "plain int, which the data decide: u0 (the count of distinct values" in out
    assert "; it runs eagerly)" in out
    assert "u0: the count of distinct values" in out and "differ" not in out
    assert "class_means: 3 calls" in out
    refused = cli("run", path, "--fullgraph")
    assert_user_error(refused, "means.py:6:", "Tensor.unbind needs u0 as a plain int; u0 (the count of "
                                              "distinct values, in torch.functional.unique at means.py:6) is "
                                              "decided by the data")
    assert "Leave out --fullgraph to run that call eagerly" in refused.stderr


@pytest.mark.parametrize("executor", ["torch", "inductor"])
def test_a_call_tracing_cannot_follow_runs_eagerly_between_segments(cli, tmp_path, executor):
    # x[mask] and nonzero are traced, their sizes the data's (u0, u1); histogram has no
    # meta kernel: it runs eagerly, a segment of its own, and the ops after it are traced
    # with its real results.
    path = write(tmp_path, "select.py", SELECT)
    result = cli("run", path, "--no-timing", "--color", "never", "--executor", executor)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "= ltorch.getitem(" in out and "= ltorch.nonzero(" in out and '"cpu f32[u0, 3]"' in out
    assert "select.py:10:  counts = torch.histogram(rows.sum(dim=1), bins=3).hist  (torch.histogram cannot be " \
           "traced" in out
    assert "= torch.histogram(" in out and "(after torch.histogram, which ran eagerly)" in out
    assert "all 3 outputs match eager" in out and "differ" not in out


def test_a_call_run_eagerly_is_one_break_in_examine_and_refused_with_fullgraph(cli, tmp_path):
    path = write(tmp_path, "select.py", SELECT)
    result = cli("examine", path, "--format", "json")
    assert result.exit_code == 0, result.output
    breaks = json.loads(result.stdout)["breaks"]
    assert [(b["source"], b["count"]) for b in breaks] == [
        ("counts = torch.histogram(rows.sum(dim=1), bins=3).hist", 4)]
    assert all(b["reason"].endswith("; it runs eagerly") for b in breaks)
    assert_user_error(cli("run", path, "--fullgraph"), "select.py:10:", "torch.histogram cannot be traced")


RESHAPES = """
    import torch


    def f(x):
        y = torch.sin(x) * 2
        if y.sum() > 0:
            y = y + 1
        z = y.reshape(x.shape[0] * x.shape[1])
        return torch.cos(z) + torch.zeros(y.shape[0] * y.shape[1])
"""
MAIN = """

    if __name__ == "__main__":
        torch.manual_seed(0)
        for n in (4, 6, 8, 4):
            f(torch.randn(n, 3))
"""
SAMPLE = """

    def sample_inputs(device):
        return (torch.randn(4, 3, device=device),)
"""


def test_dynamic_segments_take_the_sizes_they_read_from_the_calls_inputs(cli, tmp_path):
    # Each segment is symbolic: one trace, its segments' code made once, serves every size.
    path = write(tmp_path, "reshapes.py", RESHAPES + MAIN)
    result = cli("run", path, "--dynamic", "--no-timing", "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "def f_2(t1, x):" in out and "(s0, s1) = prims.shape(x)" in out
    assert "# dims: s0 = x.shape[0], s1 = x.shape[1]" in out.split("def f_2(")[1]
    assert "1 trace for 4 calls; every call matches eager" in out
    path = write(tmp_path, "sampled.py", RESHAPES + SAMPLE)
    sized = cli("run", path, "--dynamic", "--sizes", "s0=5,s1=2", "--sizes", "s0=9,s1=7", "--no-timing",
                "--color", "never")
    assert sized.exit_code == 0, sized.output
    assert "1 trace for 3 calls; every call matches eager" in sized.stdout
    assert "s0=9, s1=7" in sized.stdout


def test_a_cut_inside_no_grad_leaves_the_grad_mode_as_eager_does(cli, tmp_path):
    # The Python between the segments runs its `with torch.no_grad():` for real; each
    # segment runs in the mode it was traced in and leaves the program's as it found it.
    path = write(tmp_path, "decode.py", """
        import torch

        NET = torch.nn.Linear(4, 1)


        def decode(x):
            with torch.no_grad():
                if x.sum() > 0:
                    x = x * 2
                return x + 1


        if __name__ == "__main__":
            x = torch.ones(2, 4)
            for _ in range(3):
                y = decode(x)
                assert torch.is_grad_enabled()
            NET(y).pow(2).mean().backward()
    """)
    result = cli("run", path, "--no-timing", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "2 more calls with this trace match eager" in result.stdout


def test_a_global_the_python_between_segments_changes_changes_once_per_call(cli, tmp_path):
    # The check runs the call's Python twice (eagerly and served): the module's numbers
    # are put back after each, so the program sees one change per call, as in eager.
    path = write(tmp_path, "counter.py", """
        import torch

        N = 0


        def f(x):
            global N
            if x.sum() > 0:
                N += 1
            print("N =", N)
            return x * N


        if __name__ == "__main__":
            for sign in [-1.0, 1.0, 1.0]:
                f(torch.ones(4, 4) * sign)
    """)
    result = cli("run", path, "--no-timing", "--color", "never")
    assert result.exit_code == 0, result.output
    assert [line for line in result.stdout.splitlines() if line.startswith("N =")] == ["N = 0", "N = 1", "N = 2"]
    assert "2 more calls with this trace match eager" in result.stdout


def test_containers_the_python_between_segments_fills_change_once_per_call(cli, tmp_path):
    # A history, a tally and a nested log written only on the side of a branch that some
    # calls take: their contents are put back after each of the check's runs too.
    path = write(tmp_path, "tally.py", """
        import collections

        import torch

        HIST = []
        COUNTS = {True: 0, False: 0}
        SEEN = collections.Counter()
        LOG = {"big": []}


        def f(x):
            positive = bool(x.sum() > 0)
            COUNTS[positive] += 1
            if positive:
                HIST.append(x.max().item())
                SEEN["positive"] += 1
                LOG["big"].append(len(HIST))
            print("state", len(HIST), COUNTS[True], SEEN["positive"], LOG["big"])
            return x * len(HIST) + COUNTS[True]


        if __name__ == "__main__":
            for sign in [-1.0, 1.0, 1.0]:
                f(torch.ones(4, 4) * sign)
    """)
    result = cli("run", path, "--no-timing", "--color", "never")
    assert result.exit_code == 0, result.output
    printed = [line for line in result.stdout.splitlines() if line.startswith("state")]
    assert printed == python_output(path) == ["state 0 0 0 []", "state 1 1 1 [1]", "state 2 2 2 [1, 2]"]


def test_a_view_written_after_a_cut_writes_its_base_in_the_next_segment(cli, tmp_path):
    path = write(tmp_path, "view.py", """
        import torch


        def f(x):
            y = (x * 2).view(16)
            s = x.sum().item()
            y.add_(s)
            return y


        def sample_inputs(device):
            return (torch.randn(4, 4),)
    """)
    result = cli("run", path, "--no-timing", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "the output matches eager" in result.stdout


def test_examine_counts_each_break_by_the_calls_that_met_it(cli, tmp_path):
    path = write(tmp_path, "sides.py", """
        import torch


        def f(x):
            if x.sum() > 0:
                return x * 2
            print(x.max().item())
            return x - 1


        if __name__ == "__main__":
            for sign in (1.0, -1.0, 1.0, -1.0, -1.0):
                f(torch.full((3,), sign))
    """)
    result = cli("examine", path, "--format", "json")
    assert result.exit_code == 0, result.output
    assert [(b["source"], b["count"]) for b in json.loads(result.stdout)["breaks"]] == [
        ("if x.sum() > 0:", 5), ("print(x.max().item())", 3)]


def test_a_dynamic_size_found_equal_to_a_number_after_a_cut_still_serves(cli, tmp_path):
    # `y - torch.ones(4, 4)` makes s0 and s1 4 after the first cut was made with them:
    # the printed segments take no size, the ones cut while serving took them.
    path = write(tmp_path, "pinned.py", """
        import torch


        def f(x):
            y = x * 2
            z = y - torch.ones(4, 4)
            a = y.sum().item()
            b = y.mean().item()
            return x


        def sample_inputs(device):
            return (torch.randn(4, 4),)
    """)
    result = cli("run", path, "--dynamic", "--no-timing", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "1 trace for 1 call; the call matches eager" in result.stdout


# Symbolic segments whose sizes the tracing learns more of after a cut: what one
# segment hands on is typed in the next as the whole trace types it.
HANDED_ON = {
    # `z + x` makes z's dims (s2, s3) x's (s0, s1) after z was cut and handed on.
    "equal.py": """
        import torch


        def f(x, a):
            s = x.max().item()
            z = a + 1.0
            t = z.min().item()
            return z + x


        def sample_inputs(device):
            return torch.randn(4, 4), torch.randn(4, 4)
    """,
    # A call run eagerly makes x's sizes numbers: x * 2 is handed to it typed so.
    "histogram.py": """
        import torch


        def f(x):
            u = torch.histogram(x * 2, torch.tensor([-9.0, 0.0, 9.0])).hist
            return u.sum()


        def sample_inputs(device):
            return (torch.randn(4, 4),)
    """,
    # The same, where the segment before the call spells x's size: as a number once it is
    # one, which is not the code that serves another size.
    "reshaped.py": """
        import torch


        def f(x):
            y = x.reshape(x.shape[0] * x.shape[1]) + 1
            u = torch.histogram(x * 2, torch.tensor([-9.0, 0.0, 9.0])).hist
            return u.sum() + y.sum()


        def sample_inputs(device):
            return (torch.randn(4, 4),)
    """,
    # x written in place, then read for its sizes by a later segment: lower hands the
    # written value on as x itself, and the later segment reads x twice over.
    "written.py": """
        import torch


        def f(x, a):
            x[0, 0] = a.sum().item()
            n = int(x.argmax())
            return x * torch.arange(n + 1).float().mean()


        def sample_inputs(device):
            return torch.randn(4, 4), torch.randn(4, 4)
    """,
}


@pytest.mark.parametrize("passes", ["dce", "lower", "cse,rename", "fuse"])
@pytest.mark.parametrize("script", sorted(HANDED_ON))
def test_dynamic_segments_through_each_pass_type_what_they_hand_on_alike(cli, tmp_path, script, passes):
    path = write(tmp_path, script, HANDED_ON[script])
    traced = cli("trace", path, "--dynamic", "-p", passes, "--depth", "0", "--color", "never")
    assert traced.exit_code == 0, traced.output
    result = cli("run", path, "--dynamic", "-p", passes, "--sizes", "s0=6,s1=3", "--no-timing", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "1 trace for 2 calls; every call matches eager" in result.stdout


def test_a_dynamic_segment_reads_a_value_handed_on_by_the_dims_the_trace_found_equal(cli, tmp_path):
    path = write(tmp_path, "equal.py", HANDED_ON["equal.py"])
    text = cli("trace", path, "--dynamic", "-p", "dce", "--depth", "0", "--color", "never").stdout
    last = text.split("# ── segment 3 of 3")[1]
    assert "def f_3(t1, x):" in last and '# t1: "cpu f32[s0, s1]"' in last
    assert "s2" not in text.split("# ── segment 2 of 3")[1]


def test_printing_after_an_opaque_op_in_a_new_process_cuts_there(tmp_path):
    # The passes at the cut verify the segment, running frexp's meta kernel the first
    # time in this process: below the tracer, not recorded as an op of the program.
    path = write(tmp_path, "frexp.py", """
        import torch


        def f(x):
            m = torch.frexp(x).mantissa
            print(x.sum())
            return m


        def sample_inputs(device):
            return (torch.randn(4, 4),)
    """)
    done = subprocess.run([sys.executable, "-m", "tracecli", "run", path, "-p", "dce", "--no-timing", "--color",
                           "never"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "(printing a tensor reads its values)" in done.stdout and "the output matches eager" in done.stdout
