"""Executors are registered like passes: the built-in ones, and users' own from
`--executor-file`, whose implementations really run in place of torch's."""

import json
import textwrap

from tests.test_cli import assert_user_error
from tests.test_user_passes import readme_section
from tracecli.executors import EXECUTORS

PROGRAM = """
import torch


def f(a, b):
    return torch.matmul(a, b).relu()


def sample_inputs(device):
    return (torch.randn(3, 4, device=device), torch.randn(4, 5, device=device))
"""

# Runs ltorch.matmul by a kernel of its own (here torch's, called differently), and, when
# told by its name, ltorch.relu wrongly: the comparison with eager must see it.
EXECUTORS_FILE = """
import torch
from tracecli.executors import register_executor


def my_matmul(a, b):
    return (a.unsqueeze(-1) * b.unsqueeze(0)).sum(-2)


@register_executor("mymatmul", "matmul as a broadcast product")
def implement(symbol):
    return my_matmul if symbol.qualname == "ltorch.matmul" else None


@register_executor("norelu", "relu that does nothing")
def no_relu(symbol):
    return (lambda x: x) if symbol.qualname == "ltorch.relu" else None
"""


def _files(tmp_path, executors_source=EXECUTORS_FILE):
    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent(PROGRAM))
    mine = tmp_path / "mine.py"
    mine.write_text(textwrap.dedent(executors_source))
    return str(program), str(mine)


def test_executors_lists_the_builtins_and_a_files_own(cli, tmp_path):
    _, mine = _files(tmp_path)
    listing = cli("executors").stdout
    assert "torch" in listing and "prims" in listing
    result = cli("executors", "--executor-file", mine)
    assert result.exit_code == 0
    assert "mymatmul  matmul as a broadcast product" in result.stdout


def test_a_users_executor_runs_its_own_implementation_and_says_so(cli, tmp_path):
    program, mine = _files(tmp_path)
    result = cli("run", program, "--executor-file", mine, "-e", "mymatmul", "--no-timing")
    assert result.exit_code == 0, result.output
    assert "compiled (mymatmul executor running ltorch.matmul; torch the rest)" in result.stdout
    report = json.loads(cli("run", program, "--executor-file", mine, "-e", "mymatmul", "--no-timing",
                            "--format", "json").stdout)
    assert report["executor"] == "mymatmul" and report["claimed"] == ["ltorch.matmul"] and report["match"]


def test_a_wrong_implementation_is_caught_by_the_comparison(cli, tmp_path):
    program, mine = _files(tmp_path)
    result = cli("run", program, "--executor-file", mine, "-e", "norelu", "--no-timing")
    assert result.exit_code == 1
    assert "differ from eager" in result.stdout


def test_executor_files_that_clash_or_register_nothing_are_refused(cli, tmp_path):
    program, _ = _files(tmp_path)
    clash = tmp_path / "clash.py"
    clash.write_text("from tracecli.executors import register_executor\n\n"
                     "register_executor('torch', 'mine')(lambda symbol: None)\n")
    assert_user_error(cli("run", program, "--executor-file", str(clash)), "a built-in executor name")
    assert EXECUTORS["torch"].description.startswith("runs the trace as printed")
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    assert_user_error(cli("run", program, "--executor-file", str(empty)), "registers no executor")
    assert_user_error(cli("run", program, "-e", "nope"), "unknown executor 'nope'")


def test_the_readme_executor_runs_as_shown(cli, tmp_path):
    code = readme_section("Executors").split("```python\n", 1)[1].split("\n```", 1)[0]
    program, mine = _files(tmp_path, code)
    result = cli("run", program, "--executor-file", mine, "-e", "mymatmul", "--no-timing")
    assert result.exit_code == 0, result.output
    assert "compiled (mymatmul executor running ltorch.matmul; torch the rest)" in result.stdout
