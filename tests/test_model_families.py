"""More families of real models, each from a small config with random weights: a
state-space scan (Mamba), windowed vision attention (Swin), a segmentation decoder
that upsamples (SegFormer), weight-normed modules, and the ways of running a mixture of
experts that the Mixtral sample does not take. Each traces with no opaque op and
matches eager through both executors, or stops where it must, saying why."""

import json

import pytest

from tests.test_cli import assert_user_error, write

pytest.importorskip("transformers")

MAMBA = """
    import torch
    from transformers import MambaConfig, MambaForCausalLM

    torch.manual_seed(0)
    # Under torch.compile's path (tracing answers is_compiling), the selective scan is
    # torch's associative_scan (use_associative_scan, the default).
    config = MambaConfig(num_hidden_layers=2, hidden_size=32, state_size=8, expand=2, conv_kernel=4,
                         vocab_size=128)
    model = MambaForCausalLM(config).eval()


    def sample_inputs(device):
        return (torch.randint(0, 128, (2, 8), device=device),), {"use_cache": False}
"""

SWIN = """
    import torch
    from transformers import SwinConfig, SwinForImageClassification

    torch.manual_seed(0)
    config = SwinConfig(image_size=32, patch_size=2, embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=4,
                        num_labels=10)
    model = SwinForImageClassification(config).eval()


    def sample_inputs(device):
        return (torch.randn(2, 3, 32, 32, device=device),), {}
"""

SEGFORMER = """
    import torch
    from transformers import SegformerConfig, SegformerForSemanticSegmentation

    torch.manual_seed(0)
    config = SegformerConfig(num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32],
                             patch_sizes=[7, 3], strides=[4, 2], num_attention_heads=[1, 2], mlp_ratios=[2, 2],
                             decoder_hidden_size=32, num_labels=5)
    model = SegformerForSemanticSegmentation(config).eval()


    def sample_inputs(device):
        return (torch.randn(2, 3, 32, 32, device=device),), {}
"""

MIXTRAL = """
    import torch
    from transformers import MixtralConfig, MixtralForCausalLM

    torch.manual_seed(0)
    config = MixtralConfig(num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, hidden_size=32,
                           intermediate_size=64, num_local_experts=4, num_experts_per_tok=2, vocab_size=128,
                           bos_token_id=0, eos_token_id=0, pad_token_id=0, experts_implementation={impl!r})
    model = MixtralForCausalLM(config).eval()


    def sample_inputs(device):
        return (torch.randint(0, 128, (2, 8), device=device),), {{"use_cache": False}}
"""

WEIGHT_NORM = """
    import torch
    from torch import nn
    from torch.nn.utils.parametrizations import weight_norm

    torch.manual_seed(0)
    conv = weight_norm(nn.Conv1d(4, 6, 3, padding=1), dim=2)
    proj = weight_norm(nn.Linear(6, 5))
    whole = weight_norm(nn.Linear(5, 3), dim=None)


    def f(x):
        return whole(proj(conv(x).transpose(1, 2)))


    def sample_inputs(device):
        return (torch.randn(2, 4, 7, device=device),), {}
"""


def _no_opaque(cli, script):
    result = cli("examine", script, "--strict", "--format", "json")
    report = json.loads(result.stdout)
    opaque = {op["name"]: op["lines"] for op in report["ops"] if not op["modeled"]}
    assert result.exit_code == 0 and not opaque and report["untraceable"] == [], opaque or report["untraceable"]
    return {op["name"] for op in report["ops"]}


def _matches(cli, script, *args):
    for executor in ("torch", "prims"):
        result = cli("run", script, "--executor", executor, "--no-timing", "--format", "json", *args)
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        assert report["match"], report
    return report


@pytest.mark.parametrize(("name", "source", "op"), [
    ("mamba.py", MAMBA, "ltorch.softplus"),
    ("swin.py", SWIN, "ltorch.roll"),  # the shifted windows
    ("segformer.py", SEGFORMER, "ltorch.interpolate"),  # the decoder's upsampling
])
def test_family_traces_whole_and_matches_eager(cli, tmp_path, name, source, op):
    script = write(tmp_path, name, source)
    assert op in _no_opaque(cli, script)
    _matches(cli, script)


def test_mamba_is_one_trace_per_length(cli, tmp_path):
    # The scan is unrolled over the sequence (as vmap runs it, element by element), so
    # the length is pinned; another batch reuses the trace, another length traces again.
    script = write(tmp_path, "mamba.py", MAMBA)
    report = _matches(cli, script, "--dynamic", "--sizes", "s0=3", "--sizes", "s0=3,s1=5")
    assert report["traces"] == 2
    assert [c["reused"] for c in report["calls"]] == [False, True, False]


@pytest.mark.parametrize(("name", "source", "sizes"), [
    ("swin.py", SWIN, ("s0=3", "s0=4,s2=48,s3=48")),  # the mask's windows follow the image
    ("segformer.py", SEGFORMER, ("s0=3,s2=40,s3=24", "s0=4,s2=64,s3=64")),
])
def test_vision_models_are_one_trace_for_every_batch_and_image_size(cli, tmp_path, name, source, sizes):
    script = write(tmp_path, name, source)
    report = _matches(cli, script, "--dynamic", *(arg for size in sizes for arg in ("--sizes", size)))
    assert report["traces"] == 1 and [c["reused"] for c in report["calls"]] == [False, True, True]


def test_mixture_of_experts_by_batched_matmuls(cli, tmp_path):
    script = write(tmp_path, "mixtral.py", MIXTRAL.format(impl="batched_mm"))
    assert "ltorch.matmul" in _no_opaque(cli, script)  # torch.bmm of the gathered expert weights
    _matches(cli, script)


def test_mixture_of_experts_grouped_by_expert_stays_transformers_own_call(cli, tmp_path):
    # transformers' default: tokens sorted by expert and offsets read back with .tolist()
    # inside its own custom op, which runs as an opaque call and matches eager.
    script = write(tmp_path, "mixtral.py", MIXTRAL.format(impl="grouped_mm"))
    report = json.loads(cli("examine", script, "--format", "json").stdout)
    assert [op["name"] for op in report["ops"] if not op["modeled"]] == ["torch.ops.transformers.grouped_mm_fallback"]
    _matches(cli, script)


def test_mixture_of_experts_looping_over_the_experts_hit_is_refused_at_its_line_with_fullgraph(cli, tmp_path):
    # Without --fullgraph the loop runs in segments (tests/test_moe_routing.py).
    script = write(tmp_path, "mixtral.py", MIXTRAL.format(impl="eager"))
    assert_user_error(cli("run", script, "--fullgraph"), "modeling_mixtral.py:", "nonzero", "expert_hit")


def test_weight_norm_computes_the_weight_in_the_trace(cli, tmp_path):
    script = write(tmp_path, "weight_norm.py", WEIGHT_NORM) + ":f"
    assert "ltorch.weight_norm" in _no_opaque(cli, script)
    text = cli("trace", script, "--depth", "1", "--color", "never").stdout
    assert ("ltorch.weight_norm(conv_parametrizations_weight_original1, conv_parametrizations_weight_original0, "
            "dim=2)") in text
    assert "ltorch.weight_norm(proj_parametrizations_weight_original1, proj_parametrizations_weight_original0)" in text
    # The direction's norm over the other dims, the magnitude divided by it, the product.
    assert ("ltorch.vector_norm(conv_parametrizations_weight_original1, dim=(0, 1), keepdim=True)") in text
    assert "prims.div(conv_parametrizations_weight_original0, " in text
    assert "prims.mul(conv_parametrizations_weight_original1, " in text
    _matches(cli, script)


HOOKED_WEIGHT_NORM = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    proj = nn.utils.weight_norm(nn.Linear(6, 5))  # the older form: a hook sets the weight


    def f(x):
        return proj(x)


    def sample_inputs(device):
        return (torch.randn(2, 6, device=device),), {}
"""


def test_the_older_weight_norm_hook_computes_the_weight_in_the_trace(cli, tmp_path):
    script = write(tmp_path, "hooked.py", HOOKED_WEIGHT_NORM) + ":f"
    _no_opaque(cli, script)
    assert "ltorch.weight_norm(proj_weight_v, proj_weight_g)" in cli("trace", script, "--color", "never").stdout
    _matches(cli, script)


def test_weight_norm_under_symbolic_shapes(cli, tmp_path):
    script = write(tmp_path, "weight_norm.py", WEIGHT_NORM) + ":f"
    report = _matches(cli, script, "-i", "f32[b,4,t]", "--sizes", "b=2,t=7", "--sizes", "b=3,t=9",
                      "--sizes", "b=5,t=2")
    assert report["traces"] == 1
