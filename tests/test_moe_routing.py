"""Mixture-of-experts routing as people write it: a top-k router, `torch.where(selected ==
e)` for each expert (how many tokens it gets is a size the data decide: u0, u1, ...), the
expert on `tokens[idx]` and `out.index_add_`. One trace serves every routing, gradients
go back through the gathers and index_add_ at those sizes, and Hugging Face Mixtral's
loop over the experts its routing hit runs in segments."""

import json
import runpy
from pathlib import Path

import pytest
import torch

from tests.test_cli import assert_user_error, python_output, write
from tracecli.core.verify import verify
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable

SAMPLE = "sample_programs/moe_routing.py"
SAMPLE_PATH = Path(__file__).resolve().parent.parent / SAMPLE


def _json(result) -> dict:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _all_match(report: dict) -> list[dict]:
    """Every compared output, written input and gradient of every call and recheck."""
    results = [call["result"] for call in report["calls"]]
    results += [check["result"] for call in report["calls"] for check in call.get("rechecks") or []]
    compared = [item for result in results for key in ("outputs", "written", "gradients")
                for item in result.get(key) or []]
    assert report["match"] and compared and all(item["match"] for item in compared), compared
    return compared


def _counts(model, x) -> tuple[int, ...]:
    """How many tokens each expert of the sample's layer gets for `x`."""
    with torch.no_grad():
        selected = torch.topk(model.router(x.reshape(-1, x.shape[-1])), model.top_k).indices
    return tuple(torch.bincount(selected.flatten(), minlength=len(model.experts)).tolist())


def _starved(model) -> torch.Tensor:
    """Tokens every one of which the router sends to experts 0 and 1: 2 and 3 get none."""
    w = model.router.weight.detach()
    return ((w[0] + w[1] - w[2] - w[3]) * 3).expand(2, 8, 16).contiguous()


def test_one_trace_of_the_sample_runs_routings_that_give_the_experts_other_counts():
    sample = runpy.run_path(str(SAMPLE_PATH))
    model = sample["model"]
    torch.manual_seed(1)
    draws = [torch.randn(2, 8, 16), torch.randn(2, 8, 16), _starved(model)]
    program = trace_callable(model, (draws[0],))
    verify(program.trace)
    assert [(info.name, info.unbacked) for info in program.trace.dims] == [(f"u{e}", True) for e in range(4)]
    compiled = compile_trace(program.trace)
    for x in draws:
        torch.testing.assert_close(compiled(*program.inputs_for((x,), {})), model(x))
    counts = [_counts(model, x) for x in draws]
    assert len(set(counts)) == 3 and counts[2][2:] == (0, 0), counts


DRIVER = """
    import runpy

    import torch

    MoE = runpy.run_path({sample!r})["MoE"]
    torch.manual_seed(0)
    layer = MoE()


    def routed(x):
        return layer(x)


    if __name__ == "__main__":
        torch.manual_seed(1)
        w = layer.router.weight.detach()
        for x in (torch.randn(2, 8, 16), ((w[0] + w[1] - w[2] - w[3]) * 3).expand(2, 8, 16).contiguous()):
            picked = torch.topk(layer.router(x.reshape(-1, 16)), 2).indices
            print(torch.bincount(picked.flatten(), minlength=4).tolist())
            routed(x)
"""


def test_the_sample_layer_called_on_two_routings_is_one_trace_serving_both(cli, tmp_path):
    path = write(tmp_path, "driver.py", DRIVER.format(sample=str(SAMPLE_PATH)))
    first, second = python_output(path)
    assert first != second and second.endswith(", 0, 0]")  # experts 2 and 3 get no token the second time
    report = _json(cli("run", f"{path}:routed", "--format", "json", "--no-timing"))
    assert report["groups"] == [{"calls": [0], "served": [0, 1]}]
    _all_match(report)


def test_the_sample_traces_with_a_size_per_expert_examines_whole_and_diffs(cli):
    result = cli("trace", f"{SAMPLE}:model", "-p", "dce,cse,rename", "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    out = result.stdout
    line = SAMPLE_PATH.read_text().splitlines().index("            idx, k = torch.where(selected == e)") + 1
    # rename names each count after the tensor that has it: idx_len, idx_1_len, ...
    for count in ("idx_len", "idx_1_len", "idx_2_len", "idx_3_len"):
        assert (f"# {count}: the count of nonzero elements, in torch.where  (moe_routing.py:{line}  idx, k = "
                f"torch.where(selected == e)); 0 <= {count} <= 32") in out
    assert '# idx: "cpu i64[idx_len]", k: "cpu i64[idx_len]"' in out
    assert "ltorch.index_add(out, 0, idx, y)" in out
    report = _json(cli("examine", f"{SAMPLE}:model", "--strict", "--format", "json"))
    assert report["untraceable"] == [] and report["breaks"] == []
    assert all(op["modeled"] for op in report["ops"]) and "ltorch.nonzero" in {op["name"] for op in report["ops"]}
    result = cli("diff", f"{SAMPLE}:model", "-p", "dce,cse,rename", "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    # rename gives the counts' vectors their names, and each count the name of its vector
    assert "+   (idx, k) = ltorch.nonzero(" in result.stdout and "[u0 -> idx_len]" in result.stdout


def test_gradients_through_the_routing_match_eager_autograd(cli):
    report = _json(cli("run", f"{SAMPLE}:model", "--grad", "--format", "json", "--no-timing"))
    compared = _all_match(report)
    assert sorted(item["name"] for item in compared if item["name"].startswith("grad_")) == sorted(
        ["grad_router_weight"] + [f"grad_experts_{e}_w{i}_weight" for e in range(4) for i in (1, 2)])


TOKENS_GRAD = """
    import torch
    import torch.nn.functional as F
    from torch import nn


    class MoE(nn.Module):
        def __init__(self):
            super().__init__()
            self.router = nn.Linear(16, 4, bias=False)
            self.w1 = nn.Parameter(torch.randn(4, 32, 16) / 4)
            self.w2 = nn.Parameter(torch.randn(4, 16, 32) / 4)

        def forward(self, x):
            weights, selected = torch.topk(F.softmax(self.router(x), dim=-1), 2, dim=-1)
            out = torch.zeros_like(x)
            for e in range(4):
                idx, k = torch.where(selected == e)
                h = x.index_select(0, idx)
                out[idx] += F.linear(F.silu(F.linear(h, self.w1[e])), self.w2[e]) * weights[idx, k].unsqueeze(-1)
            return out


    torch.manual_seed(0)
    model = MoE()


    def sample_inputs(device):
        return (torch.randn(16, 16, device=device, requires_grad=True),)
"""


def test_the_tokens_gradient_goes_back_through_index_select_and_an_indexed_add(cli, tmp_path):
    # `out[idx] += y`: y has as many rows as idx, a size the data decide, taken to be no 1.
    path = write(tmp_path, "moe.py", TOKENS_GRAD)
    report = _json(cli("run", f"{path}:model", "--grad", "--format", "json", "--no-timing"))
    assert "grad_x" in {item["name"] for item in _all_match(report)}


def test_a_training_step_through_the_routing_matches_eager(cli):
    report = _json(cli("run", f"{SAMPLE}:train_step", "--format", "json", "--no-timing"))
    compared = _all_match(report)
    names = {item["name"] for item in compared}
    # Every parameter, updated in place, and its .grad.
    params = ["model_router_weight"] + [f"model_experts_{e}_w{i}_weight" for e in range(4) for i in (1, 2)]
    assert {*params, *(f"{p}.grad" for p in params)} <= names
    # Under --dynamic the batch is a symbol too: one trace for both batches and routings.
    report = _json(cli("run", f"{SAMPLE}:train_step", "--dynamic", "--sizes", "s0=3", "--format", "json",
                       "--no-timing"))
    assert report["traces"] == 1 and [c["reused"] for c in report["calls"]] == [False, True]
    _all_match(report)


EXPERTS_HIT = """
    import torch
    import torch.nn.functional as F
    from torch import nn

    torch.manual_seed(0)
    router = nn.Linear(16, 4, bias=False)
    experts = nn.Parameter(torch.randn(4, 16, 16) / 4)


    def moe(x):
        weights, selected = torch.topk(F.softmax(router(x), dim=-1), 2, dim=-1)
        out = torch.zeros_like(x)
        hit = (F.one_hot(selected, 4).sum(dim=(0, 1)) > 0).nonzero()
        for e in hit:  # only the experts some token chose
            idx, k = torch.where(selected == e[0])
            out.index_add_(0, idx, F.linear(x[idx], experts[e[0]]) * weights[idx, k, None])
        return out


    def sample_inputs(device):
        return (torch.randn(12, 16, device=device),)
"""


def test_a_loop_over_the_experts_hit_runs_the_unbind_of_their_indices_eagerly(cli, tmp_path):
    # `for e in hit` unbinds as many as nonzero() found: no trace can, so that call runs
    # on the real indices, a segment of its own, with autograd on too (no gradient goes
    # through indices); each expert after it is traced with its count a symbol.
    path = write(tmp_path, "hit.py", EXPERTS_HIT)
    report = _json(cli("run", path, "--format", "json", "--no-timing"))
    _all_match(report)
    (call,) = report["calls"]
    assert [s["break"]["reason"] for s in call["segments"][1:]] == [
        "Tensor.unbind needs u0 as a plain int, which the data decide: u0 (the count of nonzero elements, "
        "in Tensor.nonzero at hit.py:14); it runs eagerly", "after torch.Tensor.unbind, which ran eagerly"]
    assert_user_error(cli("run", path, "--fullgraph"), "hit.py:15:", "Tensor.unbind needs u0 as a plain int",
                      "run that call eagerly")


MIXTRAL = """
    import torch
    from transformers import MixtralConfig, MixtralForCausalLM

    torch.manual_seed(0)
    config = MixtralConfig(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, hidden_size=32,
                           intermediate_size=64, num_local_experts=4, num_experts_per_tok=2, vocab_size=128,
                           max_position_embeddings=64, bos_token_id=0, eos_token_id=0, pad_token_id=0,
                           experts_implementation={impl!r})
    model = MixtralForCausalLM(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)


    def logits(input_ids):
        return model(input_ids, use_cache=False).logits


    def train_step(input_ids):
        loss = model(input_ids, labels=input_ids, use_cache=False).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss


    def sample_inputs(device):
        return (torch.randint(0, 128, (2, 8), device=device),)
"""


def _mixtral(tmp_path, impl: str) -> str:
    pytest.importorskip("transformers.models.mixtral")
    return write(tmp_path, "mixtral.py", MIXTRAL.format(impl=impl))


def test_mixtral_looping_over_the_experts_its_routing_hit_runs_in_segments_and_matches_eager(cli, tmp_path):
    # `for expert_idx in expert_hit:` unbinds as many as nonzero() found: that call runs
    # eagerly (it reads only the routing's indices), each `if expert_idx == ...` is a
    # read, and each expert in between is traced with its count of tokens a symbol.
    path = _mixtral(tmp_path, "eager")
    result = cli("run", f"{path}:logits", "--no-timing", "--color", "never", "--depth", "0")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert ("cut at modeling_mixtral.py:81:  for expert_idx in expert_hit:  (Tensor.unbind needs u0 as a plain "
            "int, which the data decide: u0 (the count of nonzero elements, in Tensor.nonzero at "
            "modeling_mixtral.py:79); it runs eagerly)") in out
    assert "cut at modeling_mixtral.py:83:  if expert_idx == self.num_experts:" in out
    assert "in torch.where  (modeling_mixtral.py:85  top_k_pos, token_idx = torch.where(expert_mask[expert_idx]))" in out
    assert "the output matches eager" in out
    # Other batches, lengths and routings: each call traced again as it runs, one trace.
    report = _json(cli("run", f"{path}:logits", "--dynamic", "--sizes", "s0=3", "--sizes", "s0=2,s1=5",
                       "--format", "json", "--no-timing"))
    assert report["traces"] == 1 and [c["reused"] for c in report["calls"]] == [False, True, True]
    _all_match(report)
    assert_user_error(cli("run", f"{path}:logits", "--fullgraph"), "modeling_mixtral.py:81:", "Tensor.unbind needs",
                      "u0 as a plain int", "expert_hit")


def test_a_training_step_through_mixtrals_batched_experts_matches_eager(cli, tmp_path):
    path = _mixtral(tmp_path, "batched_mm")
    compared = _all_match(_json(cli("run", f"{path}:train_step", "--format", "json", "--no-timing")))
    assert "model_model_layers_1_mlp_experts_gate_up_proj" in {item["name"] for item in compared}


def test_a_training_step_through_mixtrals_expert_loop_is_refused_where_its_backward_would_change_a_segment(
        cli, tmp_path):
    # The router divides its top-k weights in place before the loop's first cut; the
    # backward needs them as they were, which the segment that ran has not kept.
    path = _mixtral(tmp_path, "eager")
    assert_user_error(cli("run", f"{path}:train_step"), "mixtral.py:", "backward() after the trace was cut",
                      "loss.backward()")
