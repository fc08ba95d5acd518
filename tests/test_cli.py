"""The CLI as users and CI scripts use it: real exit codes, real output."""

import contextlib
import io
import json
import os
import runpy
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

from tests.conftest import ROOT

no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message for a missing CUDA device")
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="runs on a CUDA device")


def write(tmp_path, name, source):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return str(path)


def python_output(path: str) -> list[str]:
    """What the script prints run by Python itself, as `python script.py` (in this process:
    a fresh interpreter would spend seconds importing torch again)."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runpy.run_path(path, run_name="__main__")
    return printed.getvalue().splitlines()


@pytest.mark.parametrize("script", ["seed_cse.py", "seed_sincos.py", "mlp.py", "gpt_block.py", "main_block.py", "cnn.py"])
def test_run_matches_eager_on_every_sample(cli, script):
    result = cli("run", f"sample_programs/{script}", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "match eager" in result.stdout or "matches eager" in result.stdout
    assert "NO" not in result.stdout.split("return", 1)[1]


def test_run_json_is_one_documented_object(cli):
    result = cli("run", "sample_programs/seed_cse.py", "--format", "json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert report["format"] == 1 and report["command"] == "run" and report["match"] is True
    assert report["entry"] == "func" and report["device"] == "cpu"
    (call,) = report["calls"]
    assert [i["name"] for i in call["trace"]["inputs"]] == ["x", "y", "device"]
    assert call["trace"]["inputs"][0] == {"name": "x", "kind": "tensor", "shape": [3, 4], "dtype": "float32", "device": "cpu"}
    assert [o["dtype"] for o in call["result"]["outputs"]] == ["float32", "float32", "float32", "float16"]
    assert all(o["match"] and o["max_abs_error"] == 0 for o in call["result"]["outputs"])
    assert call["trace"]["text"].startswith("# sample_programs/seed_cse.py:func · device cpu\n")


def test_main_block_script_runs_as_usual_and_traces_each_signature(cli):
    result = cli("run", "sample_programs/main_block.py", "--color", "never")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    # The script's own output comes first, one line per call, then one trace per input signature.
    assert [line.split()[0] for line in lines[:3]] == ["rows=4", "rows=4", "rows=8"]
    assert result.stdout.count("def normalize_rows(x, eps):") == 2
    assert '# x: "cpu f32[4, 16]"' in result.stdout and '# x: "cpu f32[8, 16]"' in result.stdout


def test_main_block_json_keeps_stdout_pure(cli):
    result = cli("run", "sample_programs/main_block.py", "--format", "json")
    report = json.loads(result.stdout)
    assert len(report["calls"]) == 2 and report["match"]


def test_entry_choice_is_announced(cli):
    result = cli("trace", "sample_programs/mlp.py")
    assert "entry model (the only top-level nn.Module instance in the script)" in result.stderr


def test_explicit_entry_and_inputs(cli, tmp_path):
    script = write(tmp_path, "two.py", """
        import torch
        def double(x):
            return x * 2
        def shift(x, by):
            return x + by
    """)
    ambiguous = cli("trace", script, "-i", "f32[2]")
    assert ambiguous.exit_code == 2
    assert "double, shift" in ambiguous.stderr and f"{script}:ENTRY" in ambiguous.stderr
    result = cli("run", f"{script}:shift", "-i", "i64[5]", "-i", "3", "--color", "never")
    assert result.exit_code == 0, result.output
    assert '# x: "cpu i64[5]"' in result.stdout and '# by: "int 3"' in result.stdout
    assert "ltorch.add(x, 3)" in result.stdout


def test_helpers_are_not_entries(cli, tmp_path):
    script = write(tmp_path, "helper.py", """
        import torch
        def gelu_ish(x):
            return x * torch.sigmoid(1.702 * x)
        def forward(x):
            return gelu_ish(x) + 1
    """)
    result = cli("trace", script, "-i", "f32[4]")
    assert result.exit_code == 0, result.output
    assert "entry forward" in result.stderr


def test_depth_controls_subsymbols(cli):
    assert "prims." not in cli("trace", "sample_programs/seed_cse.py", "--depth", "0").stdout
    assert "# t0 = prims.mul(x, y)" in cli("trace", "sample_programs/seed_cse.py").stdout


def test_color_only_on_request(cli):
    plain = cli("trace", "sample_programs/seed_cse.py").stdout
    assert "\x1b[" not in plain
    colored = cli("trace", "sample_programs/seed_cse.py", "--color", "always").stdout
    assert "\x1b[" in colored


def test_trace_for_cuda_needs_no_cuda(cli):
    result = cli("trace", "sample_programs/seed_cse.py", "--device", "cuda:0", "--depth", "0")
    assert result.exit_code == 0
    assert 'ltorch.rand((3, 4), dtype=torch.float16, device="cuda:0")' in result.stdout
    assert '# x: "cuda:0 f32[3, 4]"' in result.stdout


# -- bad input: one clear line on stderr, exit 2, nothing on stdout ------------------------


def assert_user_error(result, *fragments):
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 or (len(lines) == 2 and lines[0].startswith("tracecli: entry")), result.stderr
    assert lines[-1].startswith("tracecli: error: ")
    for fragment in fragments:
        assert fragment in lines[-1], lines[-1]
    assert "Traceback" not in result.stderr


def test_missing_file(cli):
    assert_user_error(cli("run", "nope/missing.py"), "nope/missing.py: no such file")


def test_syntax_error_names_file_and_line(cli, tmp_path):
    script = write(tmp_path, "broken.py", """
        import torch
        def f(x):
            return x +
    """)
    assert_user_error(cli("run", script), "broken.py:4: syntax error", "return x +")


def test_unknown_entry_lists_candidates(cli):
    assert_user_error(cli("run", "sample_programs/seed_cse.py:nope"), "no entry named 'nope'", "candidates: func")


@pytest.mark.parametrize("spec", ["f32[3,x-1]", "f32[3,2x]", "q8[2]", "tensor", "f32(3)"])
def test_bad_input_spec(cli, spec):
    assert_user_error(cli("run", "sample_programs/seed_sincos.py", "-i", spec), f"bad --input {spec!r}")


def test_a_named_dim_needs_its_sizes(cli):
    assert_user_error(cli("run", "sample_programs/seed_sincos.py", "-i", "f32[3,x]"),
                      "--input names dims (x)", "--sizes (x=5")


def test_wrong_number_of_inputs(cli):
    assert_user_error(
        cli("run", "sample_programs/seed_sincos.py", "-i", "f32[2]", "-i", "f32[2]"), "wrong inputs for foo(x)", "2 given"
    )


def test_entry_that_raises_points_at_the_users_line(cli, tmp_path):
    script = write(tmp_path, "raises.py", """
        import torch
        def f(x):
            y = x + 1
            raise ValueError("bad shapes in my model")
    """)
    assert_user_error(cli("run", script, "-i", "f32[2]"), "raises.py:5:", "ValueError: bad shapes in my model")


def test_shape_error_points_at_the_users_line(cli, tmp_path):
    script = write(tmp_path, "mismatch.py", """
        import torch
        def f(x, y):
            return x @ y
    """)
    assert_user_error(cli("trace", script, "-i", "f32[2,3]", "-i", "f32[2,3]"), "mismatch.py:4:", "cannot multiply")


def test_data_dependent_control_flow(cli, tmp_path):
    script = write(tmp_path, "branchy.py", """
        import torch
        def f(x):
            if x.sum() > 0:
                return x
            return -x
    """)
    # One trace or an error: the branch on a value is refused at its line.
    assert_user_error(cli("trace", script, "-i", "f32[3]", "--fullgraph"), "branchy.py:4:", "data-dependent",
                      "if x.sum() > 0:")
    # By default the trace is cut there: the sum, then the side the value picked.
    cut = cli("run", script, "-i", "f32[3]", "--depth", "0", "--color", "never")
    assert cut.exit_code == 0, cut.output
    assert "segment 2 of 2 · cut at branchy.py:4:  if x.sum() > 0:  (bool() of a tensor: a branch on its value)" \
        in cut.stdout


def test_no_inputs_says_how_to_give_them(cli, tmp_path):
    script = write(tmp_path, "bare.py", """
        def f(x):
            return x * 2
    """)
    assert_user_error(cli("run", script), "sample_inputs(device)", "--input")


def test_bad_depth(cli):
    assert_user_error(cli("trace", "sample_programs/seed_cse.py", "--depth", "deep"), "bad --depth 'deep'")


@needs_cuda
@pytest.mark.parametrize("script", ["seed_cse.py", "gpt_block.py", "cnn.py", "hf_llama.py"])
def test_run_on_cuda_matches_eager(cli, script):
    result = cli("run", f"sample_programs/{script}", "--device", "cuda:0", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "match eager" in result.stdout or "matches eager" in result.stdout


@no_cuda
def test_run_on_absent_device_suggests_trace(cli):
    assert_user_error(cli("run", "sample_programs/seed_cse.py", "--device", "cuda:0"), "cuda:0 is not available", "tracecli trace")


def test_debug_shows_traceback(cli, tmp_path):
    script = write(tmp_path, "raises.py", """
        def f(x):
            raise ValueError("boom")
    """)
    result = cli("run", script, "-i", "f32[2]", "--debug")
    assert result.exit_code == 2 and "Traceback" in result.stderr


# -- a real process, as CI runs it ----------------------------------------------------------


def run_process(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "tracecli", *args], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_subprocess_run_and_exit_codes():
    ok = run_process("run", "sample_programs/seed_cse.py")
    assert ok.returncode == 0, ok.stderr
    assert "\x1b[" not in ok.stdout and "all 4 outputs match eager" in ok.stdout
    bad = run_process("run", "sample_programs/missing.py")
    assert bad.returncode == 2 and bad.stderr.strip() == "tracecli: error: sample_programs/missing.py: no such file"
    usage = run_process("run", "--no-such-flag", "x.py")
    assert usage.returncode == 2


def test_subprocess_no_color_env():
    result = run_process("trace", "sample_programs/seed_cse.py", "--color", "auto", env={"NO_COLOR": "1"})
    assert result.returncode == 0 and "\x1b[" not in result.stdout


def test_mismatch_exits_1(tmp_path):
    # A script whose eager result differs between calls: the compiled run cannot match it.
    script = write(tmp_path, "drift.py", """
        import os
        import torch
        def f(x):
            # Counted in the environment, which tracing cannot put back as it found it.
            n = int(os.environ.get("DRIFT_CALLS", "0")) + 1
            os.environ["DRIFT_CALLS"] = str(n)
            return x * n
        def sample_inputs(device):
            return (torch.ones(3),)
    """)
    result = run_process("run", script)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "outputs differ" in result.stdout or "output" in result.stdout


def test_a_user_pass_that_raises_is_named_with_its_line(cli, tmp_path):
    passes = tmp_path / "my_passes.py"
    passes.write_text(
        "from tracecli.passes import PassResult, register\n\n\n"
        "@register('explode', 'raises')\ndef explode(trace):\n    names = {}\n"
        "    return PassResult(trace, names['missing'])\n"
    )
    result = cli("run", "sample_programs/seed_cse.py", "--pass-file", str(passes), "-p", "explode")
    assert result.exit_code == 1
    assert "pass explode raised KeyError: 'missing' at" in result.stderr
    assert "my_passes.py:7" in result.stderr and "internal error" not in result.stderr
