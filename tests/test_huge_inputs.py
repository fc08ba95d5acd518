"""Inputs bigger than this machine: tracing reads only their shapes, dtypes and devices, so
`trace`, `examine` and `diff` never allocate an `--input`; `run`, which needs its values,
refuses one that cannot be allocated before trying, naming it and its size."""

import json
import sys

import pytest
import torch

from benchmarks.processes import Measured, measure
from tests.test_cli import assert_user_error, write

HUGE = "f32[100000,100000]"  # 40 GB: more than the machines these tests run on have free
THREE_OPS = """
    import torch

    def f(x):
        y = x * 2 + 1
        return torch.relu(y)
"""


def tracecli_process(*args: str, cwd) -> Measured:
    """`tracecli ARGS` as a process of its own, with its own peak resident memory."""
    return measure([sys.executable, "-m", "tracecli", *args], cwd=cwd)


@pytest.fixture
def script(tmp_path):
    return write(tmp_path, "three_ops.py", THREE_OPS)


# A process that touched even a tenth of the input would hold 4 GB more.
FLAT = 256 * 2**20


def test_a_40_gb_input_traces_with_flat_memory_and_run_refuses_it_before_allocating(tmp_path, script):
    small = tracecli_process("trace", "three_ops.py", "-i", "f32[3,4]", cwd=tmp_path)
    huge = tracecli_process("trace", "three_ops.py", "-i", HUGE, cwd=tmp_path)
    assert small.exit_code == 0 and huge.exit_code == 0, huge.stderr
    assert 'x: "cpu f32[100000, 100000]"' in huge.stdout
    assert huge.stdout.replace("100000, 100000", "3, 4") == small.stdout
    assert huge.peak_rss < small.peak_rss + FLAT, (huge.peak_rss, small.peak_rss)

    run = tracecli_process("run", "three_ops.py", "-i", HUGE, cwd=tmp_path)
    assert run.exit_code == 2 and run.stdout == ""
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith(f"tracecli: error: --input {HUGE} needs 40.0 GB, more than the ")
    assert "GB free on cpu" in line and "`tracecli trace`" in line
    assert run.peak_rss < small.peak_rss + FLAT, (run.peak_rss, small.peak_rss)


def test_examine_and_diff_trace_a_huge_input_without_allocating_it(cli, script):
    examined = cli("examine", script, "-i", HUGE, "--format", "json")
    assert examined.exit_code == 0, examined.output
    assert {op["name"] for op in json.loads(examined.stdout)["ops"]} == {"ltorch.mul", "ltorch.add", "ltorch.relu"}
    diffed = cli("diff", script, "-i", HUGE, "-p", "dce,rename", "--color", "never")
    assert diffed.exit_code == 0, diffed.output
    assert '"cpu f32[100000, 100000]"' in diffed.stdout


@pytest.mark.parametrize("device", ["meta", "cuda:0"])
def test_a_huge_input_stands_for_one_on_the_device_asked(cli, script, device):
    if device == "cuda:0" and torch.cuda.is_available():
        pytest.skip("on a machine with a GPU, the input would be made there for real by `run`")
    result = cli("trace", script, "-i", HUGE, "--device", device, "--color", "never")
    assert result.exit_code == 0, result.output
    assert f'x: "{device} f32[100000, 100000]"' in result.stdout


def test_tracing_that_reads_a_value_of_a_huge_input_says_it_needs_the_values(cli, tmp_path):
    reads = write(tmp_path, "reads.py", """
        import torch

        def f(x):
            if x.sum() > 0:
                return x * 2
            return x
    """)
    assert_user_error(cli("trace", reads, "-i", HUGE), f"--input {HUGE} needs 40.0 GB",
                      "the trace is cut here to read a value", "reads.py:5")
    # A small one is made for real once the read is met, and the trace is cut there.
    result = cli("trace", reads, "-i", "f32[3,4]", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "segment 2" in result.stdout


def test_state_written_before_a_read_is_written_once_when_traced_again_on_real_inputs(cli, tmp_path):
    # The call on stand-ins stops at the read and is traced again on real inputs: what it
    # wrote before the read (a counter, a log) is put back first, so the trace stores
    # what one call writes.
    counts = write(tmp_path, "counts.py", """
        import torch

        N = 0
        SEEN = []


        def f(x):
            global N
            N += 1
            SEEN.append(N)
            if x.sum() > 0:
                return x * N
            return x - N
    """)
    result = cli("trace", counts, "-i", "f32[3,4]", "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    assert 'ltorch.store_item(globals, "N", 1)' in result.stdout
    assert "ltorch.store_extend(SEEN, [1])" in result.stdout


def test_sample_inputs_on_meta_trace_at_any_size_and_run_says_meta_has_no_values(cli, tmp_path):
    path = write(tmp_path, "meta_inputs.py", """
        import torch

        def sample_inputs(device):
            return (torch.empty(100000, 100000, device="meta"),)

        def f(x):
            return (x * 2).sum(0)
    """)
    result = cli("trace", path, "--color", "never")
    assert result.exit_code == 0, result.output
    assert 'x: "meta f32[100000, 100000]"' in result.stdout and '"meta f32[100000]"' in result.stdout
    assert_user_error(cli("run", path), "the program reads tensors on meta (x)", "meta tensors have no values",
                      "`tracecli trace`, `examine` and `diff`")


def test_tracing_a_model_copies_no_weights_unless_the_call_is_cut(tmp_path):
    # While a call is traced, the segments before a cut run on copies of what they read,
    # so nothing the script holds changes: copies made when a segment reads them, not of
    # every weight up front (a model as big as free memory would not trace otherwise).
    write(tmp_path, "weights.py", """
        import torch

        model = torch.nn.Linear(8192, 8192)  # 256 MiB of weights


        def f(x):
            return model(x)
    """)
    write(tmp_path, "no_weights.py", """
        import torch

        model = torch.nn.Linear(8, 8)


        def f(x):
            return model(x)
    """)
    small = tracecli_process("trace", "no_weights.py", "-i", "f32[2,8]", cwd=tmp_path)
    big = tracecli_process("trace", "weights.py", "-i", "f32[2,8192]", cwd=tmp_path)
    assert small.exit_code == 0 and big.exit_code == 0, big.stderr
    weights = 8192 * 8192 * 4
    assert big.peak_rss < small.peak_rss + weights * 1.5, (big.peak_rss - small.peak_rss) / weights
