"""The op library as a whole: every symbol exported, exactly the sampling ops tagged
RANDOM (ltorch and prims), and the cases that combine many families the way users and
real models do (hand-written attention and normalisation, rotary embeddings, causal
masks, attention reshapes, a small CNN with a loss). Those cases are filed here, not
under their first symbol's family, because they are about the ops working together.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from tests.ops.harness import Case, L, T, case_adder, check_case, module
from tracecli.core.symbol import Tag
from tracecli.ops import ltorch, prims

CASES: list[Case] = []
case = case_adder(CASES)

# --- composites users write --------------------------------------------------------------------------------


def _attention(q, k, v):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return torch.softmax(scores, dim=-1) @ v


case(("matmul", "transpose", "true_divide", "softmax"), "attention", _attention,
     T("f32", (2, 3, 4)), T("f32", (2, 5, 4)), T("f32", (2, 5, 6)))
case(("sub", "mean", "pow", "rsqrt", "mul", "add"), "manual-norm",
     lambda x: (x - x.mean(-1, keepdim=True)) * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6),
     T("f32", (2, 3, 4)))


# --- what real models build ----------------------------------------------------------------------------------------


def _rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def _rotary_tables(position_ids):
    # Llama's rotary embedding: inverse frequencies, outer product with positions, cos/sin.
    dim = 8
    inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    inv_freq_expanded = inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
    position_ids_expanded = position_ids[:, None, :].float()
    freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def _apply_rotary(q, k, position_ids):
    cos, sin = _rotary_tables(position_ids)
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    return q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin


def _gpt2_rotary_tables():
    t = torch.arange(6, dtype=torch.float32)
    inv_freq = 1.0 / (10000 ** (torch.arange(0, 8, 2).float() / 8))
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos()[None, None, :, :], emb.sin()[None, None, :, :]


def _causal_attention(q, k, v):
    n = q.shape[-2]
    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(q.shape[-1])
    mask = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    scores = scores.masked_fill(mask[None, None, :, :], float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def _gpt2_heads(x):
    q, k, v = x.split(8, dim=2)
    heads = [t.view(t.shape[0], t.shape[1], 2, 4).transpose(1, 2) for t in (q, k, v)]
    return heads[0] @ heads[1].transpose(-1, -2), heads[2]


case(("getitem", "neg", "cat"), "rotate-half", _rotate_half, T("f32", (2, 2, 3, 8)))
case(("getitem", "expand", "matmul", "transpose", "cat", "cos", "sin"), "llama-rotary-tables", _rotary_tables,
     T("i64", (2, 5), "small"))
case(("getitem", "cat", "mul", "add"), "llama-apply-rotary", _apply_rotary, T("f32", (2, 2, 5, 8)),
     T("f32", (2, 2, 5, 8)), T("i64", (2, 5), "small"))
case(("arange", "outer", "cat", "cos", "getitem"), "gpt-neox-rotary-tables", _gpt2_rotary_tables)
case(("einsum", "triu", "getitem", "masked_fill", "softmax"), "causal-attention", _causal_attention,
     T("f32", (1, 2, 4, 3)), T("f32", (1, 2, 4, 3)), T("f32", (1, 2, 4, 3)))
case(("split", "reshape", "transpose", "matmul"), "gpt2-heads", _gpt2_heads, T("f32", (2, 3, 24)))
case(("getitem", "to", "rsub", "mul"), "extended-attention-mask",
     lambda m: (1.0 - m[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min, T("i64", (2, 5), "small"))
case(("getitem", "argmax"), "last-token-logits",
     lambda logits, ids: logits[torch.arange(logits.shape[0]), ids.argmax(-1)], T("f32", (2, 5, 7)),
     T("i64", (2, 5)))


# --- a small CNN: convolution, normalisation, pooling and a loss together -----------------------------


class _SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2)
        self.gn = nn.GroupNorm(4, 8)
        self.drop = nn.Dropout(0.5)
        self.fc = nn.Linear(8, 4)
        self.bn1.running_mean.uniform_(-0.5, 0.5)
        self.bn1.running_var.uniform_(0.5, 1.5)

    def forward(self, x, target):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.avg_pool2d(F.relu(self.gn(self.conv2(x))), 2, ceil_mode=True)
        x = self.drop(F.adaptive_avg_pool2d(x, 1).flatten(1))
        return F.cross_entropy(self.fc(x), target)


case(("conv2d", "batch_norm", "max_pool2d", "group_norm", "avg_pool2d", "adaptive_avg_pool2d", "cross_entropy"),
     "cnn", module(lambda: _SmallCNN().eval()), T("f32", (2, 3, 8, 8)), L((1, 3), "i64"))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


def test_ltorch_exports_every_symbol():
    assert set(ltorch.__all__) == set(ltorch.ALL) | {"ALL"}
    assert all(getattr(ltorch, name) is sym for name, sym in ltorch.ALL.items())


RANDOM_SYMBOLS = {"rand", "randn", "rand_like", "randn_like", "dropout", "randint", "randint_like", "randperm", "normal"}


@pytest.mark.parametrize("name", sorted(ltorch.ALL))
def test_random_tag(name):
    """Exactly the sampling ops carry RANDOM, so dce and cse never drop or merge a draw."""
    assert (Tag.RANDOM in ltorch.ALL[name].tags) == (name in RANDOM_SYMBOLS)


@pytest.mark.parametrize("name", sorted(prims.ALL))
def test_random_tag_on_prims(name):
    assert (Tag.RANDOM in prims.ALL[name].tags) == (name in {"uniform", "normal", "bernoulli", "randint", "randperm"})
