"""The inductor executor: regions compiled by torch's inductor, checked against eager.
Few and small: each compilation costs seconds on a CPU."""

import io

import torch
from rich.console import Console

from tests.test_cli import write
from tracecli.core.regions import is_region, region_symbol, region_trace
from tracecli.core.symbol import BoundSymbol
from tracecli.executors import uncompiled
from tracecli.executors.inductor import compile_inductor, compile_region, makes_sizes
from tracecli.frontend.tracer import trace_callable
from tracecli.jobs.compare import check_against_eager
from tracecli.passes import REGISTRY
from tracecli.render.text import print_report

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


def positives(x):
    vals = x[x > 0]
    return (vals * 2).exp(), vals.sum()


def test_a_region_that_counts_compiles_as_one_graph_and_serves_every_count():
    # The region holds the mask's nonzero: with the count captured, dynamo makes one graph
    # (without, it cuts the graph at nonzero and runs the rest piecewise).
    torch.manual_seed(0)
    x = torch.randn(5, 4)
    fused = REGISTRY["fuse"].run(trace_callable(positives, (x,), name="positives").trace).trace
    (region,) = [b for b in fused.bsyms if is_region(b)]
    assert [m.symbol.name for m in region.subsymbols][:2] == ["gt", "getitem"]
    compiled = compile_region(region_trace(region))
    assert makes_sizes(region_trace(region)) and compile_region(region_trace(region)) is compiled
    counters = torch._dynamo.utils.counters
    breaks, graphs = sum(counters["graph_break"].values()), counters["stats"]["unique_graphs"]
    run = compile_inductor(fused)
    for draw in (x, x.abs(), -x.abs()):  # other counts, 0 among them
        torch.testing.assert_close(run(draw), positives(draw))
    assert sum(counters["graph_break"].values()) == breaks
    assert counters["stats"]["unique_graphs"] == graphs + 1
    assert compiled.uncompiled is None and uncompiled(run) == []


def windows(x):
    vals = x[x > 0]
    torch._check(vals.shape[0] >= 2)
    return vals.unfold(0, 2, 1).sum(1) * 2


def test_a_region_inductor_cannot_compile_runs_as_generated_and_the_result_line_says_so():
    # fuse keeps the check between the mask and the windows; a region that holds both
    # (as a pass of one's own might make) asks inductor for windows of a count it makes,
    # which it cannot lower (it needs the count as a number).
    torch.manual_seed(0)
    x = torch.randn(5, 4)
    program = trace_callable(windows, (x,), name="windows")
    trace = program.trace
    members = tuple(b for b in trace.bsyms if b.symbol.name not in ("shape", "check_size"))
    region = BoundSymbol(region_symbol("fusion0"), trace.inputs, (), trace.output, members, source=members[0].source)
    whole = trace.replace(bsyms=(region,))
    run = compile_inductor(whole)
    for draw in (x, x.abs()):
        torch.testing.assert_close(run(draw), windows(draw))
    ((name, why),) = uncompiled(run)
    assert name == "fusion0" and why.startswith("inductor could not compile it (")
    report = check_against_eager(whole, run, windows, (x,), {}, program, seed=0, device="cpu")
    assert report.match and report.uncompiled == [(name, why)]
    console = Console(file=io.StringIO(), width=200, color_system=None)
    print_report(console, report, "inductor executor")
    out = console.file.getvalue()
    assert "compiled (inductor executor; fusion0 run by torch, uncompiled), not timed · the output matches eager" in out
    assert f"fusion0: {why}; it ran as the torch executor runs it" in out


ROUTER = """
    import torch


    def route(x, w):
        top = (x @ w).argmax(-1)
        out = torch.zeros_like(x)
        for e in range(2):
            idx, = torch.where(top == e)
            out.index_add_(0, idx, torch.tanh(x[idx]) * (e + 1))
        return out


    def main():
        w = torch.randn(5, 2)
        for seed in (1, 2):
            torch.manual_seed(seed)
            route(torch.randn(8, 5), w)


    if __name__ == "__main__":
        main()
"""


def test_run_compiles_a_router_whose_counts_the_data_decide(cli, tmp_path):
    path = write(tmp_path, "route.py", ROUTER)
    result = cli("run", path, "-p", "dce,cse,rename,fuse", "-e", "inductor", "--no-timing", "--color", "never",
                 "--depth", "1")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "= ltorch.nonzero(" in out.split("= inductor.fusion", 1)[1]  # a region holds the count
    assert "route: 2 calls, 1 distinct trace" in out and "1 more call with this trace matches eager" in out
    assert "compiled (inductor executor), not timed" in out and "uncompiled" not in out
