"""The built-in passes on real traces, and the two seeds' bugs."""

import runpy

import pytest
import torch

from tracecli.core.errors import UserError
from tracecli.core.printing import format_trace
from tracecli.core.symbol import Tag
from tracecli.core.verify import verify
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable
from tracecli.passes import PassResult, register
from tracecli.passes.pipeline import PassBrokeTrace, Stage, parse_passes, run_pipeline


def seed_cse_trace(device="cpu"):
    func = runpy.run_path("sample_programs/seed_cse.py")["func"]
    return trace_callable(func, (torch.randn(3, 4), torch.randn(3, 4), device)).trace


def final(trace, spec):
    return run_pipeline(trace, parse_passes([spec]))[-1].trace


def test_rename_gives_the_first_seed_its_users_names():
    renamed = final(seed_cse_trace(), "rename")
    names = [o.name for b in renamed.bsyms for o in b.iter_outputs()]
    assert names == ["a", "b", "c", "d", "z", "w", "m", "a_1"]
    assert format_trace(renamed).count("return (z, w, m, a_1)") == 1


def test_cse_merges_recomputations_but_never_the_random_op():
    trace = seed_cse_trace()
    merged = final(trace, "cse")
    symbols = [b.symbol.qualname for b in merged.bsyms]
    assert symbols == ["ltorch.mul", "ltorch.true_divide", "ltorch.mul", "ltorch.mul", "ltorch.rand"]
    # The random op survives even when it is duplicated.
    def twice(x):
        return torch.rand(3) + torch.rand(3) + x

    doubled = final(trace_callable(twice, (torch.zeros(3),)).trace, "cse,dce")
    assert sum(Tag.RANDOM in b.symbol.tags for b in doubled.bsyms) == 2


def test_cse_survivor_keeps_the_users_name():
    renamed = final(seed_cse_trace(), "cse,rename")
    assert [o.name for b in renamed.bsyms for o in b.iter_outputs()] == ["a", "b", "z", "m", "a_1"]


def test_dce_drops_unused_values_but_keeps_random_ones():
    def f(x):
        unused = torch.sin(x)  # noqa: F841
        noise = torch.rand(3)  # noqa: F841 - random: kept, it advances the RNG
        return torch.cos(x)

    trace = trace_callable(f, (torch.randn(3),)).trace
    cleaned = final(trace, "dce")
    assert [b.symbol.qualname for b in cleaned.bsyms] == ["ltorch.rand", "ltorch.cos"]


def test_seed_sincos_after_dce_has_no_dead_subsymbol_and_no_collision():
    foo = runpy.run_path("sample_programs/seed_sincos.py")["foo"]
    cleaned = final(trace_callable(foo, (torch.randn(10, 10),)).trace, "dce")
    verify(cleaned)
    for bsym in cleaned.bsyms:
        reads = {a.name for a in bsym.iter_args()}
        assert not reads & {o.name for o in bsym.iter_outputs()}
        assert [o.name for o in bsym.subsymbols[-1].iter_outputs()] == [o.name for o in bsym.iter_outputs()]
        assert len(bsym.subsymbols) == 1


def test_saved_trace_traced_again_keeps_its_own_names(tmp_path, cli):
    # The first seed: a trace stored as a script plays the user's program; its t-names are the user's.
    result = cli("diff", "sample_programs/mlp.py", "-p", "dce", "--save", str(tmp_path))
    assert result.exit_code == 0
    retraced = cli("trace", str(tmp_path / "00-initial.py"), "-p", "rename", "--depth", "0", "--color", "never")
    assert retraced.exit_code == 0, retraced.output
    code = [line.strip() for line in retraced.stdout.splitlines() if line.startswith("  t")]
    assert [line.split(" = ")[0] for line in code] == ["t3", "t4", "t8", "t16"]
    assert retraced.stdout.rstrip().endswith("return t16")


def test_renumber_makes_generated_names_consecutive():
    func = runpy.run_path("sample_programs/mlp.py")["model"]
    trace = trace_callable(func, (torch.randn(8, 16),)).trace
    renumbered = final(trace, "renumber")
    top = [o.name for b in renumbered.bsyms for o in b.iter_outputs()]
    assert top == ["t0", "t1", "t2", "t3"]  # top-level values first, intermediates after them
    intermediates = [o.name for b in renumbered.bsyms[0].subsymbols[:-1] for o in b.iter_outputs()]
    assert intermediates == ["t4", "t5", "t6"]
    lowered = final(trace, "lower,renumber")
    assert [o.name for b in lowered.bsyms for o in b.iter_outputs()] == [f"t{i}" for i in range(len(lowered.bsyms))]


@pytest.mark.parametrize("spec", ["dce", "cse", "rename", "renumber", "lower", "lower:1", "dce,cse,rename,renumber", "lower,cse,dce,rename,renumber",
                                  "fuse", "dce,cse,fuse,rename,renumber"])
def test_every_pipeline_keeps_results_equal_to_eager(spec):
    block = runpy.run_path("sample_programs/gpt_block.py")["block"]
    x = torch.randn(2, 8, 32)
    program = trace_callable(block, (x,))
    stages = run_pipeline(program.trace, parse_passes([spec]))
    expected = block(x)
    torch.testing.assert_close(compile_trace(stages[-1].trace)(*program.inputs), expected)
    again = run_pipeline(stages[-1].trace, parse_passes([spec]))
    assert not any(stage.changed for stage in again[1:]), "a pipeline run twice changes nothing the second time"


def test_unknown_pass_lists_the_known_ones():
    with pytest.raises(UserError, match=r"unknown pass 'dse' \(known passes: cse, dce, fuse, lower, rename, renumber"):
        parse_passes(["dce,dse"])


def test_a_pass_that_breaks_the_trace_is_named():
    @register("test-breaker", "drops the first bound symbol without care")
    def breaker(trace):
        return PassResult(trace.replace(bsyms=trace.bsyms[1:]), True)

    with pytest.raises(PassBrokeTrace, match="pass test-breaker broke the trace"):
        run_pipeline(seed_cse_trace(), parse_passes(["test-breaker"]))
    stages = run_pipeline(seed_cse_trace(), parse_passes(["test-breaker"]), check=False)
    assert isinstance(stages[-1], Stage)


def test_passes_never_mutate_their_input():
    trace = seed_cse_trace()
    before = format_trace(trace, float("inf"))
    run_pipeline(trace, parse_passes(["lower,dce,cse,rename,renumber"]))
    assert format_trace(trace, float("inf")) == before
