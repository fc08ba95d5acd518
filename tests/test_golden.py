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


# Symbolic traces: the trace text with its dims and guards, then the calls' table.
DYNAMIC_SAMPLES = [
    ("seed_sincos.py", "all", ["--sizes", "s0=3,s1=4", "--sizes", "s0=128,s1=64"]),
    ("dynamic_shapes.py", "1", ["--sizes", "s0=6,s1=4", "--sizes", "s0=2,s1=8"]),
    ("gpt_block.py", "0", ["--sizes", "s0=3,s1=5"]),
    ("hf_gpt2.py", "0", ["--sizes", "s0=3,s1=5"]),
]


@pytest.mark.parametrize(("script", "depth", "sizes"), DYNAMIC_SAMPLES, ids=[s for s, _, _ in DYNAMIC_SAMPLES])
def test_symbolic_trace_text(cli, golden, script, depth, sizes):
    result = cli("trace", f"sample_programs/{script}", "--dynamic", *sizes, "--depth", depth, "--color", "never")
    assert result.exit_code == 0, result.output
    golden(script.replace(".py", ".dynamic.trace.txt"), result.stdout)
