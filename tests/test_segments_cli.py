"""diff, --save, snapshot, check and bisect on a program traced in segments (a graph
break): each segment through the passes, saved and stored with its heading, compared
segment by segment; --fullgraph keeps the refusal at the read."""

import json
import subprocess
import sys

from tests.conftest import ROOT
from tests.test_cli import assert_user_error, write

STEP = """\
    import torch


    def step(x, w):
        h = torch.tanh(x @ w)
        scale = h.abs().max()
        if scale > 1:
            h = h / scale
        y = torch.sigmoid(h) * torch.sigmoid(h)
        return y


    def sample_inputs(device):
        torch.manual_seed(0)
        return torch.randn(4, 3, device=device), torch.randn(3, 2, device=device)
"""

CUT = "# ── segment 2 of 2 · cut at step.py:7:  if scale > 1:  (bool() of a tensor: a branch on its value)"


def _segments(text: str) -> list[str]:
    return text.split("# ── segment ")[1:]


def test_diff_shows_each_segments_change_under_its_heading(cli, tmp_path):
    path = write(tmp_path, "step.py", STEP)
    result = cli("diff", path, "-p", "cse,rename", "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("# ── segment 1 of 2\n- # "), out
    assert CUT in out
    assert "# Python read bool(t4) = False; it hands on h" in out
    first, second = _segments(out)
    # rename names segment 1's values; cse merges segment 2's second sigmoid into the first.
    assert '~   h = ltorch.tanh(t0)  # h: "cpu f32[4, 2]"    [t1 -> h]' in first
    assert "sigmoid" not in first
    assert 'step.py:step · device cpu · passes: cse, rename\n' in second
    assert [line for line in second.splitlines() if line.startswith("-   ")] == [
        '-   t12 = ltorch.sigmoid(h)  # t12: "cpu f32[4, 2]"']
    assert cli("diff", path, "-p", "cse,rename", "--exit-code").exit_code == 1
    assert cli("diff", path, "-p", "dce", "--exit-code").exit_code == 0  # dce changes no segment


def test_each_stat_and_text_diff_per_segment(cli, tmp_path):
    path = write(tmp_path, "step.py", STEP)
    for option in ("--each", "--stat", "--text", "--side-by-side"):
        result = cli("diff", path, "-p", "cse,rename", "--depth", "0", "--color", "never", option)
        assert result.exit_code == 0, (option, result.output)
        assert result.stdout.count("# ── segment ") == 2 and CUT in result.stdout, option
    stat = cli("diff", path, "-p", "cse,rename", "--stat", "--color", "never").stdout
    assert [line.split()[:5] for line in stat.splitlines() if line.startswith("cse ")] == [
        ["cse", "0", "0", "0", "0"], ["cse", "0", "1", "0", "1"]]


def test_diff_json_lists_each_segment_with_its_diff(cli, tmp_path):
    path = write(tmp_path, "step.py", STEP)
    result = cli("diff", path, "-p", "cse,rename", "--depth", "0", "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["command"] == "diff" and report["passes"] == ["cse", "rename"] and report["changed"]
    assert "lines" not in report  # each segment has its own
    first, second = report["segments"]
    assert first["break"] is None and second["hands_on"] == ["h"]
    assert second["break"]["line"].endswith("step.py:7")
    assert {k: v for k, v in second["break"].items() if k != "line"} == {
        "source": "if scale > 1:", "reason": "bool() of a tensor: a branch on its value", "reads": ["bool(t4) = False"]}
    assert first["value_map"] == {"t1": "h", "t3": "scale"}
    assert [line["before"] for line in second["lines"] if line["kind"] == "-" and line["before"].startswith("  ")] == [
        '  t12 = ltorch.sigmoid(h)  # t12: "cpu f32[4, 2]"']
    assert [stage["name"] for stage in second["stages"]] == ["cse", "rename"]


def test_save_writes_every_segment_in_order_and_the_file_runs(cli, tmp_path):
    path = write(tmp_path, "step.py", STEP)
    saved = tmp_path / "saved"
    result = cli("diff", path, "-p", "cse,rename", "--save", str(saved), "--color", "never")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in saved.iterdir()) == ["00-initial.py", "01-cse.py", "02-rename.py", "report.json"]
    text = (saved / "02-rename.py").read_text()
    assert text.index("# ── segment 1 of 2\n") < text.index("def step_1(x, w):") < text.index(CUT) \
        < text.index("def step_2(h):") < text.index("def step(x, w):")
    assert "# Python read bool(t4) = False; it hands on h\n" in text
    # The function after the entry runs the segments one after the other, on what each hands on.
    assert "    made.update(zip(('t1', 't3', 't4'), step_1(made['x'], made['w'])))\n" in text
    assert "    return step_2(made['t1'])\n" in text
    for name in ("00-initial.py", "02-rename.py"):
        run = cli("run", str(saved / name), "--depth", "0", "--color", "never")
        assert run.exit_code == 0, run.output
        assert "the output matches eager" in run.stdout
    assert [s["break"] is None for s in json.loads((saved / "report.json").read_text())["segments"]] == [True, False]


def test_snapshot_then_check_is_equal_and_a_cut_elsewhere_is_a_difference(cli, tmp_path):
    path = write(tmp_path, "step.py", STEP)
    golden = tmp_path / "golden"
    made = cli("snapshot", path, "--dir", str(golden), "-p", "dce,cse,rename", "--depth", "0")
    assert made.exit_code == 0, made.output
    stored = (golden / "step.step.trace").read_text()
    assert stored == cli("trace", path, "-p", "dce,cse,rename", "--depth", "0", "--color", "never").stdout
    sidecar = json.loads((golden / "step.step.json").read_text())
    assert [s["break"] for s in sidecar["traces"][0]["segments"]] == [
        None, {"file": "step.py", "line": 7, "source": "if scale > 1:",
               "reason": "bool() of a tensor: a branch on its value"}]
    checked = cli("check", path, "--dir", str(golden), "--color", "never")
    assert checked.exit_code == 0, checked.output
    assert checked.stdout.startswith("equal ")
    # A comment above moves every line, the cut's too: no difference (unless lines are strict).
    (tmp_path / "step.py").write_text("# a comment\n" + (tmp_path / "step.py").read_text())
    assert cli("check", path, "--dir", str(golden)).exit_code == 0
    assert cli("check", path, "--dir", str(golden), "--strict-lines").exit_code == 1
    # The branch now reads another value, on another line: segment 2 is cut elsewhere.
    source = (tmp_path / "step.py").read_text()
    (tmp_path / "step.py").write_text(source.replace("    if scale > 1:\n", "    h = h * 2\n    if h.mean() > 1:\n"))
    # In a process of its own, as in CI: this one holds the script's lines as they were.
    result = subprocess.run([sys.executable, "-m", "tracecli", "check", path, "--dir", str(golden)], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    assert out.startswith("DIFFERENT  ")
    assert "── segment 2 of 2 ──\n  cut at step.py:9: `if h.mean() > 1:`, was at step.py:7: `if scale > 1:` " \
           "(bool() of a tensor: a branch on its value)\n" in out
    assert "── segment 1 of 2 ──\n  added ltorch.mul (line 8)\n" in out
    report = json.loads(cli("check", path, "--dir", str(golden), "--format", "json").stdout)
    changes = report["results"][0]["traces"][0]["changes"]
    assert {(c["segment"], c["kind"]) for c in changes} >= {(1, "added"), (2, "cut")}


def test_check_says_when_the_call_is_cut_into_more_segments_or_none(cli, tmp_path):
    path = write(tmp_path, "step.py", STEP)
    golden = str(tmp_path / "golden")
    assert cli("snapshot", path, "--dir", golden, "-p", "dce,rename").exit_code == 0
    source = (tmp_path / "step.py").read_text()
    (tmp_path / "step.py").write_text(source.replace("    return y\n", "    print(y.sum().item())\n    return y\n"))
    more = cli("check", path, "--dir", golden, "--color", "never")
    assert more.exit_code == 1, more.output
    assert ("  the call is now traced in 3 segments (cut at step.py:7: `if scale > 1:` (bool() of a tensor: a branch "
            "on its value); step.py:10: `print(y.sum().item())` (Tensor.item reads its value)); the snapshot has 2 "
            "(cut at step.py:7: `if scale > 1:` (bool() of a tensor: a branch on its value))\n") in more.stdout
    assert "── segment 3 of 3 ──\n  added segment 3, cut at step.py:10: `print(y.sum().item())`" in more.stdout
    (tmp_path / "step.py").write_text(source.replace("    if scale > 1:\n        h = h / scale\n", ""))
    none = cli("check", path, "--dir", golden, "--color", "never")
    assert none.exit_code == 1, none.output
    assert ("  the call is one trace now; the snapshot has 2 segments (cut at step.py:7: `if scale > 1:` (bool() of "
            "a tensor: a branch on its value))\n") in none.stdout
    assert cli("check", path, "--dir", golden, "--update").exit_code == 0
    assert cli("check", path, "--dir", golden).exit_code == 0


def test_fullgraph_refuses_the_read_in_each_command(cli, tmp_path):
    path = write(tmp_path, "step.py", STEP)
    golden = str(tmp_path / "golden")
    saved = tmp_path / "saved"
    for args in (["diff", path, "-p", "dce", "--save", str(saved)], ["snapshot", path, "--dir", golden],
                 ["bisect", path, "-p", "dce"]):
        assert_user_error(cli(*args, "--fullgraph"), "step.py:7:", "needs the tensor's values", "if scale > 1:")
    assert not saved.exists() and not (tmp_path / "golden").exists()
    assert cli("snapshot", path, "--dir", golden).exit_code == 0
    assert_user_error(cli("check", path, "--dir", golden, "--fullgraph"), "step.py:7:", "needs the tensor's values")


def test_bisect_refuses_a_program_traced_in_segments_at_its_cut(cli, tmp_path):
    path = write(tmp_path, "step.py", STEP)
    assert_user_error(cli("bisect", path, "-p", "dce,cse"), "step.py:7:", "bisect searches one trace",
                      "step is traced in segments", "--fullgraph", "(at `if scale > 1:`)")
