"""The inductor executor: regions compiled by torch's inductor, checked against eager.
Few and small: each compilation costs seconds on a CPU."""

import torch

from tests.test_cli import write
from tracecli.core.regions import region_trace
from tracecli.executors.inductor import compile_inductor, compile_region
from tracecli.frontend.tracer import trace_callable
from tracecli.passes import REGISTRY

CHAIN = """
    import torch

    def chain(x, y):
        a = torch.sigmoid(x * y + 1.0)
        return a * torch.tanh(y) - x

    def sample_inputs(device):
        return (torch.randn(16, 16, device=device), torch.randn(16, 16, device=device))
"""


def test_run_compiles_the_regions_and_matches_eager(cli, tmp_path):
    script = write(tmp_path, "chain.py", CHAIN)
    result = cli("run", script, "-p", "fuse", "--executor", "inductor", "--color", "never")
    assert result.exit_code == 0, result.output
    assert " = inductor.fusion0(x, y)" in result.stdout
    assert "compiled (inductor executor)" in result.stdout and "matches eager" in result.stdout
    # Without -p fuse the executor fuses by itself; the region prints alike, so it is
    # not compiled again.
    result = cli("run", script, "--executor", "inductor", "--no-timing", "--color", "never")
    assert result.exit_code == 0 and "matches eager" in result.stdout, result.output


def test_compiled_regions_are_kept_by_their_text():
    def f(x):
        return (x * 2).exp()

    def region_of(x):
        fused = REGISTRY["fuse"].run(trace_callable(f, (x,), name="f").trace).trace
        return region_trace(fused.bsyms[0]), fused

    region, fused = region_of(torch.randn(4))
    compiled = compile_region(region)
    assert compile_region(region_of(torch.randn(4))[0]) is compiled
    assert hasattr(compiled, "_torchdynamo_orig_callable")  # torch.compile's wrapper
    assert torch.equal(compile_inductor(fused)(torch.ones(4)), f(torch.ones(4)))


def test_a_symbolic_trace_serves_other_sizes(cli, tmp_path):
    script = write(tmp_path, "chain.py", CHAIN)
    result = cli("run", script, "--dynamic", "--sizes", "s0=5,s1=7", "-p", "fuse", "-e", "inductor", "--no-timing",
                 "--color", "never")
    assert result.exit_code == 0, result.output
    assert "1 trace for 2 calls; every call matches eager" in result.stdout
