"""`tracecli bisect`: the first pass, and the bound symbol inside it, that breaks the result."""

import json
import textwrap

from tests.test_cli import assert_user_error

# A deliberately wrong pass: `a - b` rewritten as `b - a`.
SUB_FLIP = """
from tracecli.ops import ltorch
from tracecli.passes import PassResult, register


@register("sub-flip", "a wrong rewrite: a - b as b - a")
def sub_flip(trace):
    bsyms = tuple(b.replace(args=(b.args[1], b.args[0])) if b.symbol is ltorch.sub else b for b in trace.bsyms)
    return PassResult(trace.replace(bsyms=bsyms), any(b.symbol is ltorch.sub for b in trace.bsyms))
"""

SCRIPT = """
import torch


def f(x, y):
    a = x * 2
    b = a + y
    c = b - x
    d = c - y
    return torch.relu(d)


def sample_inputs(device):
    return torch.randn(4, 3, device=device), torch.randn(4, 3, device=device)
"""


def files(tmp_path):
    (tmp_path / "passes.py").write_text(textwrap.dedent(SUB_FLIP))
    (tmp_path / "model.py").write_text(textwrap.dedent(SCRIPT))
    return str(tmp_path / "model.py"), str(tmp_path / "passes.py")


def test_bisect_names_the_broken_pass_and_its_first_bad_change(cli, tmp_path):
    script, passes = files(tmp_path)
    result = cli("bisect", script, "--pass-file", passes, "-p", "dce,rename,sub-flip,cse", "--color", "never")
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[:4] == [
        "initial trace                matches eager",
        "after dce                    matches eager",
        "after rename                 matches eager",
        "after sub-flip               DIFFERS from eager",
    ]
    assert lines[4].startswith("sub-flip breaks the result at bound symbol 3 of 5")
    assert lines[5] == "  # model.py:8:  c = b - x"
    assert "-   c = ltorch.sub(b, x)" in result.stdout and "+   c = ltorch.sub(x, b)" in result.stdout
    assert "d = ltorch.sub" not in "".join(line for line in lines if line.startswith(("-", "+")))
    data = json.loads(cli("bisect", script, "--pass-file", passes, "-p", "rename,sub-flip", "--format", "json").stdout)
    assert data["culprit"] == "sub-flip" and data["bound_symbol"]["index"] == 2
    assert [o["match"] for o in data["outputs"]] == [False]


def test_nothing_breaks_exits_0(cli, tmp_path):
    script, _ = files(tmp_path)
    result = cli("bisect", script, "-p", "dce,cse,rename", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "nothing breaks" in result.stdout


def test_bisect_needs_passes(cli, tmp_path):
    script, _ = files(tmp_path)
    assert_user_error(cli("bisect", script), "bisect needs the passes")
