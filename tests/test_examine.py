"""`tracecli examine`: op tables, opaque call sites, untraceable constructs, --strict."""

import json

import pytest

from tests.test_cli import write


@pytest.mark.parametrize("script", ["seed_cse.py", "seed_sincos.py", "mlp.py", "gpt_block.py", "main_block.py", "cnn.py"])
def test_samples_have_no_opaque_ops(cli, script):
    result = cli("examine", f"sample_programs/{script}", "--strict", "--color", "never")
    assert result.exit_code == 0, result.output
    assert ", 0 opaque (0 distinct)" in result.stdout


def test_opaque_ops_are_counted_and_located(cli, tmp_path):
    script = write(tmp_path, "partly.py", """
        import torch
        def f(x):
            y = torch.cumulative_trapezoid(x, dim=0)
            z = torch.cumulative_trapezoid(y, dim=0) * 2
            return torch.frexp(z).mantissa
    """)
    result = cli("examine", script, "-i", "f32[4]", "--color", "never")
    assert result.exit_code == 0
    rows = {line.split()[0]: line.split()[1:] for line in result.stdout.splitlines() if line.rstrip().endswith(("OPAQUE", "yes"))}
    assert rows["torch.cumulative_trapezoid"] == ["2", "OPAQUE"] and rows["torch.frexp"] == ["1", "OPAQUE"]
    assert rows["ltorch.mul"] == ["1", "yes"]
    assert "partly.py:4:  y = torch.cumulative_trapezoid(x, dim=0)" in result.stdout
    assert "partly.py:5:  z = torch.cumulative_trapezoid(y, dim=0) * 2" in result.stdout
    assert "4 bound symbols, 3 distinct ops, 3 opaque (2 distinct)" in result.stdout
    assert cli("examine", script, "-i", "f32[4]", "--strict").exit_code == 1


def test_untraceable_construct_is_reported_with_its_line(cli, tmp_path):
    script = write(tmp_path, "branchy.py", """
        import torch
        def f(x):
            if x.sum() > 0:
                return x
            return -x
    """)
    result = cli("examine", script, "-i", "f32[3]", "--color", "never", "--fullgraph")
    assert result.exit_code == 1
    assert result.stdout.startswith("could not trace: ") and "branchy.py:4:" in result.stdout
    assert "data-dependent" in result.stdout


def test_a_branch_on_a_value_is_a_graph_break_unless_fullgraph(cli, tmp_path):
    script = write(tmp_path, "branchy.py", """
        import torch
        def f(x):
            if x.sum() > 0:
                return x
            return -x
    """)
    result = cli("examine", script, "-i", "f32[3]", "--color", "never")
    assert result.exit_code == 0
    assert "the trace is cut 1 time" in result.stdout and "branchy.py:4:" in result.stdout
    assert cli("examine", script, "-i", "f32[3]", "--color", "never", "--strict").exit_code == 1


def test_examine_json(cli):
    result = cli("examine", "sample_programs/mlp.py", "--format", "json")
    report = json.loads(result.stdout)
    assert report["command"] == "examine" and report["opaque"] == 0 and report["untraceable"] == []
    assert {op["name"]: op["count"] for op in report["ops"]} == {"ltorch.linear": 2, "ltorch.log_softmax": 1, "ltorch.relu": 1}
    assert report["prims"]["prims.matmul"] == 2


def test_examine_bad_input_is_exit_2(cli):
    assert cli("examine", "sample_programs/nope.py").exit_code == 2
