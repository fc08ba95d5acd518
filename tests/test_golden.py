"""Golden trace text for the sample programs: what users read, exactly."""

import re

import pytest

SAMPLES = [
    ("seed_cse.py", "1"),
    ("seed_sincos.py", "all"),
    ("mlp.py", "1"),
    ("gpt_block.py", "0"),
    ("main_block.py", "1"),
]


@pytest.mark.parametrize(("script", "depth"), SAMPLES, ids=[s for s, _ in SAMPLES])
def test_trace_text(cli, golden, script, depth):
    result = cli("trace", f"sample_programs/{script}", "--depth", depth, "--color", "never")
    assert result.exit_code == 0, result.output
    golden(script.replace(".py", ".trace.txt"), result.stdout)


def test_cuda_trace_on_a_machine_without_cuda(cli, golden):
    result = cli("trace", "sample_programs/gpt_block.py", "--device", "cuda:0", "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    assert '"cuda:0 f32[2, 8, 32]"' in result.stdout
    assert "cpu" not in result.stdout.split("\n", 1)[1]
    golden("gpt_block.cuda.trace.txt", result.stdout)


def test_depth_only_adds_subsymbol_comments(cli):
    shallow = cli("trace", "sample_programs/gpt_block.py", "--depth", "0", "--color", "never").stdout
    deep = cli("trace", "sample_programs/gpt_block.py", "--depth", "all", "--color", "never").stdout
    subsymbol_line = re.compile(r"^ {4,}# ")
    assert [line for line in deep.splitlines() if not subsymbol_line.match(line)] == shallow.splitlines()
    assert "prims.matmul" in deep and "prims.matmul" not in shallow
