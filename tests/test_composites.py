"""Torch functions written in Python that hand themselves whole to __torch_function__
(F.multi_head_attention_forward above all) are traced through into modelled ops: every
form of nn.MultiheadAttention and the Transformer layers built on it, in inference, in
training, under autocast and with symbolic shapes, agreeing with eager (whose fast paths
in eval take other kernels)."""

from __future__ import annotations

import sys
import types

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.overrides import handle_torch_function, has_torch_function_unary

from tests.ops.harness import assert_matches
from tests.test_cli import write
from tracecli.core.trace import walk
from tracecli.core.verify import verify
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable

E, H, B, L, S = 16, 4, 2, 5, 7


def randn(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(len(shape) * 7 + shape[-1]))


def opaque_calls(trace) -> list[str]:
    return sorted({b.symbol.qualname for _, b in walk(trace.bsyms) if b.symbol.namespace in ("torch", "")})


def check_traced_through(fn, *args) -> str:
    """Trace `fn`, with no opaque call anywhere, and run it against eager (dropout draws
    the same numbers in both from the same seed)."""
    program = trace_callable(fn, args, name="fn")
    verify(program.trace)
    assert opaque_calls(program.trace) == []
    torch.manual_seed(5)
    expected = fn(*(a.clone() for a in args))
    torch.manual_seed(5)
    actual = compile_trace(program.trace)(*(a.clone() if isinstance(a, torch.Tensor) else a for a in program.inputs))
    assert_matches("torch", program.trace, expected, actual, exact=False)
    return "\n".join(str(b.symbol.qualname) for b in program.trace.bsyms)


def scaled_softplus(x, beta=2.0):
    """A library's function written as torch writes its own."""
    if has_torch_function_unary(x):
        return handle_torch_function(scaled_softplus, (x,), x, beta=beta)
    return F.softplus(x * beta) / beta


def test_a_library_function_written_as_torchs_are_is_traced_through_too():
    recorded = check_traced_through(lambda x: scaled_softplus(x, beta=3.0), randn(3, 4))
    assert recorded.split() == ["ltorch.mul", "ltorch.softplus", "ltorch.true_divide"]


def _mha(**kwargs) -> nn.MultiheadAttention:
    torch.manual_seed(0)
    return nn.MultiheadAttention(E, H, **kwargs)


def _padding() -> torch.Tensor:
    mask = torch.zeros(B, S, dtype=torch.bool)
    mask[1, -3:] = True
    return mask


FLOAT_MASK = randn(B * H, L, S)  # captured by the traced calls: an input of their traces

MHA_CASES = {
    "self-attention, averaged weights": (lambda m, x: m(x, x, x), dict(batch_first=True), "self"),
    "weights per head": (lambda m, x: m(x, x, x, average_attn_weights=False), dict(batch_first=True), "self"),
    "no weights": (lambda m, x: m(x, x, x, need_weights=False)[0], dict(batch_first=True), "self"),
    "sequence first": (lambda m, q, k, v: m(q, k, v), {}, "cross-seq-first"),
    "cross-attention": (lambda m, q, k, v: m(q, k, v), dict(batch_first=True), "cross"),
    "key padding mask": (lambda m, q, k, v: m(q, k, v, key_padding_mask=_padding()), dict(batch_first=True), "cross"),
    "key padding mask, no weights": (lambda m, q, k, v: m(q, k, v, key_padding_mask=_padding(), need_weights=False)[0],
                                     dict(batch_first=True), "cross"),
    "bool attn_mask": (lambda m, q, k, v: m(q, k, v, attn_mask=torch.ones(L, S, dtype=torch.bool).triu(1)),
                       dict(batch_first=True), "cross"),
    "float attn_mask per head": (lambda m, q, k, v: m(q, k, v, attn_mask=FLOAT_MASK, need_weights=False)[0],
                                 dict(batch_first=True), "cross"),
    "is_causal": (lambda m, x: m(x, x, x, attn_mask=nn.Transformer.generate_square_subsequent_mask(L), is_causal=True,
                                 need_weights=False)[0], dict(batch_first=True), "self"),
    "kdim and vdim": (lambda m, q, k, v: m(q, k, v), dict(batch_first=True, kdim=12, vdim=10), "kdim"),
    "bias_kv and zero_attn": (lambda m, q, k, v: m(q, k, v, key_padding_mask=_padding()),
                              dict(add_bias_kv=True, add_zero_attn=True), "cross-seq-first"),
    "unbatched": (lambda m, x: m(x, x, x), {}, "unbatched"),
    "dropout in training": (lambda m, x: m(x, x, x), dict(batch_first=True, dropout=0.3), "self"),
}

_INPUTS = {
    "self": lambda: (randn(B, L, E),),
    "cross": lambda: (randn(B, L, E), randn(B, S, E), randn(B, S, E)),
    "cross-seq-first": lambda: (randn(L, B, E), randn(S, B, E), randn(S, B, E)),
    "kdim": lambda: (randn(B, L, E), randn(B, S, 12), randn(B, S, 10)),
    "unbatched": lambda: (randn(L, E),),
}


@pytest.mark.parametrize("case", MHA_CASES)
def test_multihead_attention_is_traced_into_modelled_ops(case):
    call, options, inputs = MHA_CASES[case]
    module = _mha(**options)
    recorded = check_traced_through(lambda *args: call(module, *args), *_INPUTS[inputs]())
    assert "ltorch.linear" in recorded
    assert "ltorch.dropout" in recorded or "dropout" not in case


def _layers(kind: str) -> nn.Module:
    torch.manual_seed(0)
    return {
        "encoder layer": lambda: nn.TransformerEncoderLayer(E, H, 32, batch_first=True),
        "pre-norm gelu encoder layer": lambda: nn.TransformerEncoderLayer(E, H, 32, activation="gelu", norm_first=True),
        "decoder layer": lambda: nn.TransformerDecoderLayer(E, H, 32, batch_first=True),
        "transformer": lambda: nn.Transformer(E, H, 1, 1, 32, batch_first=True),
        "encoder": lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(E, H, 32, batch_first=True), 2,
                                                 norm=nn.LayerNorm(E)),
    }[kind]()


def _run_layers(kind: str, module: nn.Module, src, tgt):
    causal = nn.Transformer.generate_square_subsequent_mask(L)
    if kind == "decoder layer":
        return module(tgt, src, tgt_mask=causal, tgt_is_causal=True, memory_key_padding_mask=_padding())
    if kind == "transformer":  # without tgt_is_causal, torch compares the mask with a causal one
        return module(src, tgt, tgt_mask=causal, src_key_padding_mask=_padding())
    if kind == "encoder":
        # In eval under no_grad, eager runs the layers on a nested tensor when the padding
        # ends each row, and pads the result with zeros; where it does not, it runs them padded.
        at_start = _padding().flip(1)
        return module(src, src_key_padding_mask=_padding()), module(src, src_key_padding_mask=at_start)
    return module(src, src_key_padding_mask=_padding() if kind == "encoder layer" else None)


@pytest.mark.parametrize("mode", ["train", "eval, no_grad"])
@pytest.mark.parametrize("kind", ["encoder layer", "pre-norm gelu encoder layer", "decoder layer", "transformer",
                                  "encoder"])
def test_transformer_layers_are_traced_into_modelled_ops(kind, mode):
    # In eval under no_grad, eager takes torch's fused kernels (_native_multi_head_attention,
    # _transformer_encoder_layer_fwd); the trace shows the ops they fuse, with eager's values.
    module = _layers(kind).train(mode == "train")
    with torch.set_grad_enabled(mode == "train"):
        check_traced_through(lambda src, tgt: _run_layers(kind, module, src, tgt), randn(B, S, E), randn(B, L, E))


SCRIPT = """
    import torch
    import torch.nn.functional as F
    from torch import nn


    class SelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = nn.MultiheadAttention(16, 4, dropout=0.1, batch_first=True)

        def forward(self, x, pad):
            out, _ = self.mha(x, x, x, key_padding_mask=pad)
            return out


    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = SelfAttention()
            self.block = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.1, batch_first=True)
            self.head = nn.Linear(16, 3)

        def forward(self, x, pad):
            h = self.block(x + self.attn(x, pad), src_key_padding_mask=pad)
            return self.head(h.mean(1))


    torch.manual_seed(0)
    model = Classifier()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)


    def train_step(x, pad, labels):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x, pad), labels)
        loss.backward()
        optimizer.step()
        return loss.detach()


    def attend(x, pad, labels=None):
        return model(x, pad)


    def infer(x, pad, labels=None):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return model(x, pad)


    def sample_inputs(device):
        pad = torch.zeros(4, 6, dtype=torch.bool, device=device)
        pad[1, -2:] = True
        return torch.randn(4, 6, 16, device=device), pad, torch.randint(0, 3, (4,), device=device)
"""


def test_trace_shows_the_attention_ops_at_the_users_line_in_the_modules_scope(cli, tmp_path):
    script = write(tmp_path, "attention.py", SCRIPT)
    result = cli("trace", f"{script}:model", "-i", "f32[4,6,16]", "-i", "bool[4,6]", "--depth", "0")
    assert result.exit_code == 0, result.output
    assert "multi_head_attention_forward" not in result.stdout
    scope = result.stdout.split("# ── attn\n", 1)[1]
    assert scope.startswith("  # attention.py:13:  out, _ = self.mha(x, x, x, key_padding_mask=pad)\n")
    assert "= ltorch.softmax(" in scope.split("# ──", 1)[0]


@pytest.mark.parametrize("entry, options", [
    ("train_step", ()),
    ("infer", ()),
    ("infer", ("--dynamic",)),
])
def test_a_script_with_attention_runs_and_examines_with_no_opaque_op(cli, tmp_path, entry, options):
    script = write(tmp_path, "attention.py", SCRIPT)
    result = cli("run", f"{script}:{entry}", "--no-timing", "--color", "never", *options)
    assert result.exit_code == 0, result.output
    assert "match eager" in result.stdout or "matches eager" in result.stdout
    if "--dynamic" in options:  # the sizes the attention compares are its assumptions, not the script's
        assert "assumed by torch.nn.functional.multi_head_attention_forward" in result.stdout
    examined = cli("examine", f"{script}:{entry}", "--strict", "--color", "never")
    assert examined.exit_code == 0, examined.output
    assert " 0 opaque" in examined.stdout


def test_gradients_of_attention_match_eager_autograd(cli, tmp_path):
    script = write(tmp_path, "attention.py", SCRIPT)
    result = cli("run", f"{script}:attend", "--grad", "--no-timing", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "gradients match eager autograd" in result.stdout


VIT = """
    import torch
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4,
                                                 hidden_dim=32, mlp_dim=64, num_classes=10).eval()
    torch.nn.init.normal_(model.heads.head.weight, std=0.1)  # torchvision starts it at zero


    @torch.no_grad()
    def infer(x):
        return model(x)


    def sample_inputs(device):
        return (torch.randn(2, 3, 32, 32, device=device),)
"""


def test_torchvision_vision_transformer_traces_with_no_opaque_op(cli, tmp_path):
    # torchvision imports on a CPU torch only with its compiled-op registrations left out.
    for name in ("torchvision._meta_registrations", "torchvision._autograd_registrations"):
        sys.modules.setdefault(name, types.ModuleType(name))
    pytest.importorskip("torchvision")
    script = write(tmp_path, "vit.py", VIT)
    result = cli("run", script, "--no-timing", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "the output matches eager" in result.stdout
    examined = cli("examine", script, "--strict", "--color", "never")
    assert examined.exit_code == 0, examined.output
