"""Several scripts in one invocation, as CI runs them: each in its own process, a summary
table, the worst exit code, JSON with one element per script, and a JUnit report."""

import json
import xml.etree.ElementTree as ET

from tests.test_cli import assert_user_error, write

GOOD = """
    import sys
    import torch


    def scale(x):
        return x * int(sys.argv[1])


    def sample_inputs(device):
        return (torch.ones(3, device=device),)
"""

# Eager's second call sees what the traced call changed (the environment, which tracing
# cannot put back): the results differ.
DIFFERS = """
    import os

    import torch


    def counted(x):
        n = int(os.environ.get("COUNTED_CALLS", "0")) + 1
        os.environ["COUNTED_CALLS"] = str(n)
        return x * n


    def sample_inputs(device):
        return (torch.ones(3, device=device),)
"""

BROKEN = """
    import torch


    def broken(x):
        return x.no_such_method()


    def sample_inputs(device):
        return (torch.ones(3, device=device),)
"""


def _scripts(tmp_path):
    return [write(tmp_path, name, source) for name, source in
            (("a_good.py", GOOD), ("b_differs.py", DIFFERS), ("c_broken.py", BROKEN))]


def test_each_script_runs_on_its_own_and_the_worst_exit_code_wins(cli, tmp_path):
    good, differs, broken = _scripts(tmp_path)
    junit = tmp_path / "report.xml"
    result = cli("run", str(tmp_path / "*.py"), "--no-timing", "--depth", "0", "--color", "never", "-j", "2",
                 "--junit", str(junit), "--", "3")
    assert result.exit_code == 2, result.output
    out = result.stdout
    # each script's own output in order, under its name, then the summary
    assert out.index(f"── {good} ──") < out.index(f"── {differs} ──") < out.index(f"── {broken} ──")
    summary = out[out.index("script "):]
    assert "scale " in summary and "matches eager" in summary
    assert "counted" in summary and "DIFFERS from eager" in summary
    assert "error" in summary
    assert "3 scripts: 1 passed, 1 failed, 1 error (exit 2)" in out
    assert "no_such_method" in result.stderr  # the broken script's one-line error
    suites = ET.parse(junit).getroot()
    assert suites.attrib["tests"] == "3" and suites.attrib["failures"] == "1" and suites.attrib["errors"] == "1"
    cases = {case.attrib["name"]: [child.tag for child in case] for case in suites.iter("testcase")}
    assert cases["scale"] == ["system-out"] and cases["counted"] == ["failure"] and cases[broken] == ["error"]


def test_json_has_one_element_per_script_with_its_own_report(cli, tmp_path):
    good, differs, _ = _scripts(tmp_path)
    result = cli("examine", good, differs, "--format", "json", "--", "3")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [s["script"] for s in report["scripts"]] == [good, differs]
    assert [s["entry"] for s in report["scripts"]] == ["scale", "counted"]
    assert all(s["exit_code"] == 0 and s["report"]["command"] == "examine" for s in report["scripts"])
    assert report["exit_code"] == 0


def test_a_pattern_matching_nothing_is_bad_input(cli, tmp_path):
    assert_user_error(cli("run", str(tmp_path / "nothing-*.py")), "no script matches this pattern")
