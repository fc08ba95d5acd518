"""torch.autocast in traces: the casts torch makes appear as ops at the user's line,
per torch's own CPU and CUDA policies, nested regions and enabled=False included."""

import importlib
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from tests.ops.harness import Case
from tests.test_cli import write
from tracecli.core.errors import TracingError
from tracecli.core.pytree import tree_leaves
from tracecli.core.verify import verify
from tracecli.executors import compile_for
from tracecli.frontend.tracer import trace_callable
from tracecli.jobs.compare import compare_outputs, working_dtypes
from tracecli.passes.lower import lower

CASE_MODULES = sorted(
    p.stem for p in (Path(__file__).parent / "ops").glob("test_*.py") if p.stem not in ("test_coverage", "test_declarations")
)


def _float_cases() -> list[Case]:
    cases = [c for name in CASE_MODULES for c in importlib.import_module(f"tests.ops.{name}").CASES]
    # Autocast touches floating point tensors only; random ops draw in another order under it.
    return [c for c in cases if not c.random and any(str(a).startswith(("f32", "f16", "bf16")) for a in c.args)]


FLOAT_CASES = _float_cases()


def _under_autocast(fn, dtype):
    def entry(*args):
        with torch.autocast("cpu", dtype=dtype):
            return fn(*args)

    return entry


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("case", FLOAT_CASES[::7], ids=lambda c: c.id)
def test_every_op_under_cpu_autocast_matches_eager(case, dtype):
    """A sample of the op matrix (every 7th floating point case; `make coverage` runs them
    all), each called inside torch.autocast("cpu"): the trace, run without autocast, must
    give eager's dtypes and values."""
    check_under_autocast(case, dtype)


def check_under_autocast(case: Case, dtype) -> None:
    args = case.make_args()
    entry = _under_autocast(case.fn, dtype)
    try:
        with torch.no_grad():
            expected = entry(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
    except RuntimeError:
        # torch refuses some mixes under autocast (a float16 beside bfloat16 in cat): so do we.
        with pytest.raises(TracingError, match="autocast"):
            trace_callable(entry, args, name="fn")
        return
    program = trace_callable(entry, args, name="fn")
    verify(program.trace)
    for executor, trace in (("torch", program.trace), ("prims", lower(program.trace).trace)):
        actual = compile_for(trace, executor)(*[a.clone() if isinstance(a, torch.Tensor) else a for a in program.inputs])
        names = [getattr(leaf, "name", repr(leaf)) for leaf in tree_leaves(program.trace.output)]
        problems = [f"{c.name}: {c.problem}" for c in compare_outputs(names, expected, actual, working_dtypes(trace)) if not c.match]
        assert not problems, f"{executor}: " + "; ".join(problems)


def _ops(trace) -> list[str]:
    return [b.symbol.qualname + ("(" + str(dict(b.kwargs).get("dtype")) + ")" if b.symbol.name == "to" else "")
            for b in trace.bsyms]


def test_casts_are_ops_at_the_users_line_and_regions_nest():
    def f(x, w, t):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = x @ w
            with torch.autocast("cpu", enabled=False):
                q = y.float() @ w
            loss = F.cross_entropy(q, t)
        return y, q, loss

    x, w, t = torch.randn(4, 4), torch.randn(4, 4), torch.tensor([0, 1, 2, 3])
    trace = trace_callable(f, (x, w, t)).trace
    assert _ops(trace) == [
        "ltorch.to(torch.bfloat16)", "ltorch.to(torch.bfloat16)", "ltorch.matmul",  # lower precision
        "ltorch.to(torch.float32)", "ltorch.matmul",  # y.float() by the user; no cast in the disabled region
        "ltorch.cross_entropy",  # float32 policy on CPU: q is float32 already
    ]
    assert [b.source.text for b in trace.bsyms[:3]] == ["y = x @ w"] * 3
    expected = f(x, w, t)
    actual = compile_for(trace, "torch")(x, w, t)
    assert [a.dtype for a in actual] == [e.dtype for e in expected] == [torch.bfloat16, torch.float32, torch.float32]


def test_autocast_as_a_decorator():
    @torch.autocast("cpu")
    def f(x, w):
        return torch.relu(x @ w)

    x, w = torch.randn(3, 4), torch.randn(4, 5)
    trace = trace_callable(f, (x, w)).trace
    assert _ops(trace) == ["ltorch.to(torch.bfloat16)", "ltorch.to(torch.bfloat16)", "ltorch.matmul", "ltorch.relu"]
    assert trace.output.dtype.name == "bfloat16"


def test_cuda_traces_use_the_cuda_policy_without_a_gpu():
    # On CUDA, softmax returns float32, exp computes in float32, and cross_entropy runs as the
    # log_softmax and nll_loss it is made of, each with its own policy.
    def f(x, w, t):
        with torch.autocast(device_type=x.device.type):
            y = x @ w
            return y, torch.softmax(y, -1), torch.exp(y), F.cross_entropy(y, t)

    args = (torch.randn(4, 4), torch.randn(4, 4), torch.tensor([0, 1, 2, 3]))
    trace = trace_callable(f, args, device="cuda:0").trace
    assert _ops(trace) == [
        "ltorch.to(torch.float16)", "ltorch.to(torch.float16)", "ltorch.matmul",
        "ltorch.softmax",
        "ltorch.to(torch.float32)", "ltorch.exp",
        "ltorch.log_softmax", "ltorch.to(torch.float32)", "ltorch.nll_loss",
    ]
    assert dict(trace.bsyms[3].kwargs) == {"dtype": torch.float32} or str(dict(trace.bsyms[3].kwargs)["dtype"]) == "torch.float32"
    assert [v.dtype.name for v in trace.output] == ["float16", "float32", "float32", "float32"]
    verify(trace)


def test_cpu_autocast_leaves_cuda_tensors_alone():
    def f(x, w):
        with torch.autocast("cpu"):
            return x @ w

    trace = trace_callable(f, (torch.randn(2, 2), torch.randn(2, 2)), device="cuda:0").trace
    assert _ops(trace) == ["ltorch.matmul"]


def test_one_signature_inside_and_outside_autocast_gives_two_traces(cli, tmp_path):
    script = tmp_path / "amp.py"
    script.write_text(
        "import torch\n\n\ndef step(x, w):\n    return torch.softmax(x @ w, dim=-1)\n\n\n"
        "if __name__ == '__main__':\n    x, w = torch.randn(4, 8), torch.randn(8, 8)\n    a = step(x, w)\n"
        "    with torch.autocast('cpu'):\n        b = step(x, w)\n    print(a.dtype, b.dtype)\n"
    )
    result = cli("run", str(script), "--depth", "0")
    assert result.exit_code == 0, result.output
    assert "torch.float32 torch.bfloat16" in result.stdout
    assert result.stdout.count("def step(x, w):") == 2
    assert "ltorch.to(x, dtype=torch.bfloat16)" in result.stdout


AMP_OPAQUE = """
    import torch


    def f(x, w, b):
        with torch.autocast("{device}", dtype=torch.bfloat16):
            # conv_tbc is not modelled; autocast runs it in bfloat16 on CPU, cdist in float32.
            d = torch.conv_tbc(x.unsqueeze(0), w.unsqueeze(0), b[0])
            e = torch.cdist(x, w) + d.float().sum()
        return d, e


    def sample_inputs(device):
        return torch.randn(4, 4, device=device), torch.randn(4, 4, device=device), torch.randn(4, 4, device=device)
"""


def test_an_unmodelled_call_under_autocast_runs_under_it(cli, tmp_path):
    script = write(tmp_path, "amp_opaque.py", AMP_OPAQUE.format(device="cpu"))
    for executor in ("torch", "prims", "inductor"):
        result = cli("run", script, "--executor", executor, "--depth", "0", "--no-timing")
        assert result.exit_code == 0, result.output
        assert 't4 = conv_tbc_autocast_bf16(t0, t1, t3)  # t4: "cpu bf16[1, 4, 4]"' in result.stdout
        assert "all 2 outputs match eager" in result.stdout
    # A saved stage builds the call again and runs as it is, and traced again.
    saved = tmp_path / "saved"
    result = cli("diff", script, "-p", "dce", "--save", str(saved))
    assert result.exit_code == 0, result.output
    assert "conv_tbc_autocast_bf16 = under_autocast(torch.conv_tbc, 'cpu', torch.bfloat16)" in (
        saved / "01-dce.py").read_text()
    result = cli("run", str(saved / "01-dce.py"), "--no-timing")
    assert result.exit_code == 0 and "all 2 outputs match eager" in result.stdout, result.output
    # Outside autocast the same call is the plain torch one.
    trace = trace_callable(lambda x, w, b: torch.conv_tbc(x, w, b), (torch.randn(1, 4, 4),) * 2 + (torch.randn(4),)).trace
    assert trace.bsyms[0].symbol.qualname == "torch.conv_tbc"


@pytest.mark.skipif(torch.cuda.is_available(), reason="the refusal is for machines without CUDA")
def test_an_unmodelled_call_under_cuda_autocast_without_cuda_is_refused(cli, tmp_path):
    script = write(tmp_path, "amp_opaque.py", AMP_OPAQUE.format(device="cuda"))
    result = cli("trace", script, "--device", "cuda:0")
    assert result.exit_code == 2
    assert "amp_opaque.py:8: torch.conv_tbc is not modelled and runs under torch.autocast('cuda')" in result.output


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_a_half_precision_result_that_cancels_is_judged_at_its_own_scale(dtype):
    # `x + gelu(x @ w)` at bf16: near zero, a fused kernel and eager's op-by-op rounding
    # differ by a step of the dtype at the operands' size, not by 1e-4.
    torch.manual_seed(0)
    x = torch.randn(64, 64, dtype=dtype)
    w = torch.randn(64, 64, dtype=dtype) / 8
    eager = x + torch.nn.functional.gelu(x @ w)
    fused = (x.float() + torch.nn.functional.gelu(x.float() @ w.float())).to(dtype)
    (check,) = compare_outputs(["out"], [eager], [fused], fused=True)
    assert check.match, check
    assert check.max_rel_error < 1.0  # relative to values above the absolute tolerance
    # A real difference is still one.
    (wrong,) = compare_outputs(["out"], [eager], [fused + 0.25], fused=True)
    assert not wrong.match
