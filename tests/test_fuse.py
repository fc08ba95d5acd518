"""The fuse pass on traced programs: what it gathers, what stops it, and that the other
passes, the verifier, the diff and the torch executor work on what it makes. (Random
traces: test_pass_properties.py; inductor itself: test_inductor.py.)"""

import json

import pytest
import torch

from tracecli.core.printing import format_trace
from tracecli.core.regions import is_region, region_symbol
from tracecli.core.symbol import BoundSymbol, Tag
from tracecli.core.verify import VerificationError, verify
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable
from tracecli.passes import REGISTRY
from tracecli.passes.pipeline import parse_passes, run_pipeline


def fused(fn, *args, spec="fuse"):
    trace = trace_callable(fn, args, name="f").trace
    return trace, run_pipeline(trace, parse_passes([spec]))[-1].trace


def regions(trace):
    return [b for b in trace.bsyms if is_region(b)]


def calls(bsyms):
    return [b.symbol.qualname for b in bsyms]


def around_a_random_draw(x, y):
    a = x * y
    r = torch.rand(3)
    b = a.exp()
    return r, b, b + r


def test_a_region_gathers_calls_a_random_draw_does_not_feed():
    before, after = fused(around_a_random_draw, torch.randn(3), torch.randn(3))
    (region,) = regions(after)
    assert calls(region.subsymbols) == ["ltorch.mul", "ltorch.exp"]
    # It runs where its first member did; the draw and what reads it come after.
    assert calls(after.bsyms) == ["inductor.fusion0", "ltorch.rand", "ltorch.add"]
    assert [a.name for a in region.args] == ["x", "y"]
    assert region.output is region.subsymbols[1].output  # `a` is read inside only
    text = format_trace(after)
    assert f"  {region.output.name} = inductor.fusion0(x, y)  #" in text
    assert f"    # {region.output.name} = ltorch.exp(" in text
    assert "      # " in format_trace(after, depth=2)  # the members' prims, one level further in
    torch.manual_seed(0)
    expected = compile_trace(before)(*map(torch.clone, [torch.ones(3), torch.ones(3)]))
    torch.manual_seed(0)
    got = compile_trace(after)(torch.ones(3), torch.ones(3))
    for e, g in zip(expected, got, strict=True):
        assert torch.equal(e, g)


def writes_in_place(x):
    a = x * 2
    b = a + 1
    x.add_(1)
    c = x * 3
    return b, c - 1


def test_an_in_place_write_ends_the_region():
    before, after = fused(writes_in_place, torch.randn(4))
    assert calls(after.bsyms) == ["inductor.fusion0", "ltorch.add_", "inductor.fusion1"]
    x = torch.randn(4)
    eager_x, traced_x = x.clone(), x.clone()
    expected = writes_in_place(eager_x)
    got = compile_trace(after)(traced_x)
    assert all(torch.equal(e, g) for e, g in zip(expected, got, strict=True)) and torch.equal(eager_x, traced_x)


def writes_through_a_view(x):
    flat = x.reshape(-1)
    doubled = flat * 2
    flat.mul_(3)
    return doubled + 1, x * 1


def test_views_are_not_fused_where_anything_is_written_in_place():
    _, after = fused(writes_through_a_view, torch.randn(2, 3))
    members = [m for r in regions(after) for m in r.subsymbols]
    assert not any(Tag.VIEW in m.symbol.tags for m in members)
    x = torch.randn(2, 3)
    eager_x, traced_x = x.clone(), x.clone()
    expected = writes_through_a_view(eager_x)
    got = compile_trace(after)(traced_x)
    assert all(torch.equal(e, g) for e, g in zip(expected, got, strict=True)) and torch.equal(eager_x, traced_x)


def test_a_single_fusible_call_is_left_alone():
    before, after = fused(lambda x: torch.rand(3) + x.sin(), torch.randn(3))
    assert not regions(after) or all(len(r.subsymbols) >= 2 for r in regions(after))
    assert not REGISTRY["fuse"].run(after).changed  # and fusing again changes nothing


def named(x, y):
    prod = x * y
    ratio = y / x
    return prod + ratio


def test_rename_names_values_inside_regions_and_dce_drops_an_unused_region():
    _, after = fused(named, torch.randn(3), torch.randn(3), spec="fuse,rename")
    text = format_trace(after)
    assert "# prod = ltorch.mul(x, y)" in text and "# ratio = ltorch.true_divide(y, x)" in text
    (region,) = regions(after)
    unused = after.replace(output=after.inputs[0])
    assert not regions(REGISTRY["dce"].run(unused).trace)


def test_the_verifier_refuses_a_region_holding_an_effect():
    x = trace_callable(lambda x: torch.rand(3) + x, (torch.randn(3),), name="f").trace
    draw, add = x.bsyms
    region = BoundSymbol(region_symbol("fusion0"), (x.inputs[0],), (), add.output, (draw, add))
    with pytest.raises(VerificationError, match="which has effects"):
        verify(x.replace(bsyms=(region,)))
    # and one holding a call that is not modelled
    mine = add.replace(symbol=region_symbol("other", "mine"), args=(x.inputs[0],), subsymbols=())
    opaque = BoundSymbol(region_symbol("fusion0"), (x.inputs[0],), (), add.output, (mine,))
    with pytest.raises(VerificationError, match="not a modelled operation"):
        verify(x.replace(bsyms=(opaque,)))
    # and one taking a value twice: its function would name a parameter twice
    twice = BoundSymbol(region_symbol("fusion0"), (x.inputs[0], x.inputs[0]), (), add.output, (draw, add))
    with pytest.raises(VerificationError, match="takes x twice"):
        verify(x.replace(bsyms=(twice,)))


def test_diff_and_json_show_the_regions(cli):
    result = cli("diff", "sample_programs/gpt_block.py", "-p", "dce,cse,fuse", "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    added = [line for line in result.stdout.splitlines() if line.startswith("+ ")]
    assert any(" = inductor.fusion0(x, ln_1_weight, " in line for line in added), result.stdout
    result = cli("run", "sample_programs/gpt_block.py", "-p", "fuse", "--format", "json", "--no-timing")
    report = json.loads(result.stdout)
    assert report["match"] is True and "inductor.fusion0(" in report["calls"][0]["trace"]["text"]


def test_fuse_takes_the_executor_as_its_option(cli):
    assert parse_passes(["fuse:inductor"])[0].options == {"namespace": "inductor"}
    result = cli("trace", "sample_programs/seed_cse.py", "-p", "fuse:nvfuser")
    assert result.exit_code == 2 and "bad option for fuse" in result.output


def test_a_saved_fused_trace_runs(cli, tmp_path):
    result = cli("diff", "sample_programs/seed_cse.py", "-p", "fuse", "--save", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    saved = (tmp_path / "out" / "01-fuse.py").read_text()
    assert "def fusion0(x, y):" in saved and "inductor = SimpleNamespace(fusion0=fusion0)" in saved
    result = cli("run", str(tmp_path / "out" / "01-fuse.py"), "--no-timing")
    assert result.exit_code == 0 and "match eager" in result.stdout, result.output
