"""A mixture-of-experts layer routed as people write it: a router picks the top 2 of 4
SiLU experts for each token, each expert runs on the tokens sent to it (`torch.where`
finds them, so how many is up to the data: the size `u0` in the trace), and its output,
weighted by the router, is added back at those tokens (`index_add_`).

    tracecli run sample_programs/moe_routing.py:model
    tracecli run sample_programs/moe_routing.py:model --grad
    tracecli run sample_programs/moe_routing.py:train_step
    tracecli run sample_programs/moe_routing.py:train_step --dynamic --sizes s0=4

The trace is made once for every routing: each expert's count is a size symbol bound at
run time, so other data (other counts per expert) runs the same trace. `train_step` is
one AdamW step that fits the layer to a fixed linear map; its gradients go back through
the gathers and `index_add_` at the counts the routing made; under --dynamic the batch
is a symbol too, and one trace serves every batch and routing.
"""

import torch
import torch.nn.functional as F
from torch import nn


class Expert(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)))


class MoE(nn.Module):
    def __init__(self, dim=16, hidden=32, experts=4, top_k=2):
        super().__init__()
        self.router = nn.Linear(dim, experts, bias=False)
        self.experts = nn.ModuleList(Expert(dim, hidden) for _ in range(experts))
        self.top_k = top_k

    def forward(self, x):
        tokens = x.reshape(-1, x.shape[-1])
        probs = F.softmax(self.router(tokens), dim=-1, dtype=torch.float)
        weights, selected = torch.topk(probs, self.top_k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        out = torch.zeros_like(tokens)
        for e, expert in enumerate(self.experts):
            # The tokens routed to expert e, and which of their top_k choices it was.
            idx, k = torch.where(selected == e)
            y = expert(tokens[idx]) * weights[idx, k, None]
            out.index_add_(0, idx, y)
        return out.reshape(x.shape)


torch.manual_seed(0)
model = MoE()
teacher = torch.randn(16, 16) / 4
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)


def train_step(x):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), x @ teacher)
    loss.backward()
    optimizer.step()
    return loss.detach()


def sample_inputs(device):
    return (torch.randn(2, 8, 16, device=device),)


if __name__ == "__main__":
    for draw in range(2):
        x = torch.randn(2, 8, 16)
        counts = torch.bincount(torch.topk(model.router(x.reshape(-1, 16)), 2).indices.flatten(), minlength=4)
        print(f"draw {draw}: tokens per expert {counts.tolist()}, output sum {model(x).sum().item():.4f}")
    for step in range(3):
        print(f"step {step}: loss {train_step(torch.randn(2, 8, 16)).item():.4f}")
