"""A GPT-style transformer block: causal self-attention and a GELU MLP, pre-layer-norm."""

import math

import torch
import torch.nn.functional as F
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(dim, dim)
        self.key = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        batch, seq, dim = x.shape
        head_dim = dim // self.heads
        q = self.query(x).view(batch, seq, self.heads, head_dim).transpose(1, 2)
        k = self.key(x).view(batch, seq, self.heads, head_dim).transpose(1, 2)
        v = self.value(x).view(batch, seq, self.heads, head_dim).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(head_dim)
        positions = torch.arange(seq, device=x.device)
        causal = positions.unsqueeze(1) >= positions.unsqueeze(0)
        scores = torch.where(causal, scores, float("-inf"))
        weights = F.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(batch, seq, dim)
        return self.proj(out)


class MLP(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, 4 * dim)
        self.proj = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return self.proj(F.gelu(self.fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads)
        self.ln_2 = nn.LayerNorm(dim)
        self.mlp = MLP(dim)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


torch.manual_seed(0)
block = Block()


def sample_inputs(device):
    return (torch.randn(2, 8, 32, device=device),)
