"""A Llama-style decoder of Llama-3-70B's shape (80 layers, hidden size 8192, 64 heads, 8
key-value heads, 70.6B parameters), built on meta: no machine here can hold its 141 GB
of bf16 weights, and `tracecli trace` needs none of them.

    tracecli trace benchmarks/meta_llama.py:forward                 # ids on the CPU
    META_LLAMA_IDS=meta tracecli trace benchmarks/meta_llama.py:forward

META_LLAMA_LAYERS makes it shallower (the shape of each layer stays)."""

import os

import torch
import torch.nn.functional as F
from torch import nn

VOCAB, HIDDEN, FFN, HEADS, KV_HEADS = 128_256, 8192, 28_672, 64, 8
LAYERS = int(os.environ.get("META_LLAMA_LAYERS", "80"))
HEAD_DIM = HIDDEN // HEADS
SEQUENCE = 512


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        variance = x.float().pow(2).mean(-1, keepdim=True)
        return self.weight * (x.float() * torch.rsqrt(variance + self.eps)).to(x.dtype)


def rotate_half(x):
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(HIDDEN, HEADS * HEAD_DIM, bias=False)
        self.k_proj = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias=False)
        self.v_proj = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias=False)
        self.o_proj = nn.Linear(HEADS * HEAD_DIM, HIDDEN, bias=False)

    def forward(self, x, cos, sin):
        batch, length, _ = x.shape
        q = self.q_proj(x).view(batch, length, HEADS, HEAD_DIM).transpose(1, 2)
        k = self.k_proj(x).view(batch, length, KV_HEADS, HEAD_DIM).transpose(1, 2)
        v = self.v_proj(x).view(batch, length, KV_HEADS, HEAD_DIM).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(HEADS // KV_HEADS, dim=1)
        v = v.repeat_interleave(HEADS // KV_HEADS, dim=1)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(out.transpose(1, 2).reshape(batch, length, HIDDEN))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(HIDDEN, FFN, bias=False)
        self.up_proj = nn.Linear(HIDDEN, FFN, bias=False)
        self.down_proj = nn.Linear(FFN, HIDDEN, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm = RMSNorm(HIDDEN)
        self.self_attn = Attention()
        self.post_attention_layernorm = RMSNorm(HIDDEN)
        self.mlp = MLP()

    def forward(self, x, cos, sin):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = RMSNorm(HIDDEN)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)
        inv_freq = 1.0 / (500_000.0 ** (torch.arange(0, HEAD_DIM, 2).float() / HEAD_DIM))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, ids):
        x = self.embed_tokens(ids)
        positions = torch.arange(ids.shape[1], device=x.device).float()
        freqs = torch.outer(positions, self.inv_freq)
        angles = torch.cat((freqs, freqs), dim=-1)
        cos, sin = angles.cos()[None, None].to(x.dtype), angles.sin()[None, None].to(x.dtype)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.lm_head(self.norm(x))


with torch.device("meta"):
    model = Decoder().to(torch.bfloat16).eval()
PARAMETERS = sum(p.numel() for p in model.parameters())


def sample_inputs(device):
    return (torch.randint(0, VOCAB, (1, SEQUENCE), device=os.environ.get("META_LLAMA_IDS", "cpu")),)


def forward(ids):
    return model(ids)
