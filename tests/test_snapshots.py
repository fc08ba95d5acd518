"""Golden traces: `tracecli snapshot` and `tracecli check`, and the comparison under them."""

import json
import textwrap

from tests.test_cli import assert_user_error
from tracecli.core.equivalence import compare_traces
from tracecli.jobs.runner import trace_script
from tracecli.passes.pipeline import parse_passes

SCRIPT = """
import torch


def f(x, w):
    h = x @ w
    g = torch.relu(h)
    return g.sum(dim=0) * 2


def sample_inputs(device):
    return torch.randn(4, 3, device=device), torch.randn(3, 5, device=device)
"""

# The same program: other variable names, two comment lines above the function.
RENAMED = """
import torch

# a comment
# and another

def f(x, w):
    hidden = x @ w
    act = torch.relu(hidden)
    return act.sum(dim=0) * 2


def sample_inputs(device):
    return torch.randn(4, 3, device=device), torch.randn(3, 5, device=device)
"""


def write(tmp_path, source: str):
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(source))
    return str(path)


def test_snapshot_then_check_is_equal(cli, tmp_path):
    script, folder = write(tmp_path, SCRIPT), str(tmp_path / "golden")
    result = cli("snapshot", script, "--dir", folder, "-p", "dce,rename", "--color", "never")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "golden" / "model.f.trace").read_text().startswith("# ")
    sidecar = json.loads((tmp_path / "golden" / "model.f.json").read_text())
    assert sidecar["settings"]["passes"] == ["dce", "rename"] and sidecar["torch"]
    result = cli("check", script, "--dir", folder, "--color", "never")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "1 equal"


def test_renamed_variables_and_moved_lines_are_equal_unless_lines_are_strict(cli, tmp_path):
    script, folder = write(tmp_path, SCRIPT), str(tmp_path / "golden")
    assert cli("snapshot", script, "--dir", folder, "-p", "rename").exit_code == 0
    write(tmp_path, RENAMED)
    assert cli("check", script, "--dir", folder).exit_code == 0
    strict = cli("check", script, "--dir", folder, "--strict-lines", "--color", "never")
    assert strict.exit_code == 1
    assert "ltorch.matmul moved from line 6 to 8" in strict.stdout


def test_a_changed_op_is_a_difference_shown_first(cli, tmp_path):
    script, folder = write(tmp_path, SCRIPT), str(tmp_path / "golden")
    assert cli("snapshot", script, "--dir", folder).exit_code == 0
    write(tmp_path, RENAMED.replace("torch.relu(hidden)", "torch.sigmoid(hidden)"))
    result = cli("check", script, "--dir", folder, "--color", "never")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("DIFFERENT  ") and lines[0].endswith("model.py:f: 1 change")
    assert lines[1] == "  changed ltorch.relu -> ltorch.sigmoid (line 9)"
    # Only the op itself (and its decomposition) shows: what reads it is matched through it.
    changed = [line.split("  #")[0] for line in lines if line.startswith(("-   t", "+   t"))]
    assert changed == ["-   t1 = ltorch.relu(t0)", "+   t4 = ltorch.sigmoid(t0)"]
    # JSON says the same.
    data = json.loads(cli("check", script, "--dir", folder, "--format", "json").stdout)
    assert data["equal"] is False
    assert data["results"][0]["traces"][0]["changes"][0]["what"] == "ltorch.relu -> ltorch.sigmoid"


def test_missing_snapshot_hints_and_update_writes_it(cli, tmp_path):
    script, folder = write(tmp_path, SCRIPT), str(tmp_path / "golden")
    (tmp_path / "golden").mkdir()
    result = cli("check", script, "--dir", folder, "--color", "never")
    assert result.exit_code == 1
    assert "no snapshot in" in result.stdout and "tracecli snapshot" in result.stdout
    assert cli("check", script, "--dir", folder, "--update").exit_code == 0
    write(tmp_path, SCRIPT.replace("* 2", "* 3"))
    assert cli("check", script, "--dir", folder).exit_code == 1
    assert cli("check", script, "--dir", folder, "--update").exit_code == 0
    assert cli("check", script, "--dir", folder).exit_code == 0


def test_bad_input_exits_2_and_writes_nothing(cli, tmp_path):
    good, folder = write(tmp_path, SCRIPT), tmp_path / "golden"
    bad = tmp_path / "broken.py"
    bad.write_text("def f(x:\n")
    result = cli("snapshot", good, str(bad), "--dir", str(folder))
    assert_user_error(result, "broken.py")
    assert not folder.exists()
    assert_user_error(cli("snapshot", str(tmp_path / "none*.py"), "--dir", str(folder)), "no script matches")


def test_compare_traces_from_python():
    plain = trace_script("sample_programs/seed_cse.py", execute=False).calls[0].final
    renamed = trace_script("sample_programs/seed_cse.py", execute=False, steps=parse_passes(["rename"])).calls[0].final
    merged = trace_script("sample_programs/seed_cse.py", execute=False, steps=parse_passes(["cse"])).calls[0].final
    same = compare_traces(plain, renamed)
    assert same.equal and same.value_map["t0"] == "a"
    different = compare_traces(plain, merged)
    assert not different.equal
    assert [c.kind for c in different.changes].count("removed") == 3
