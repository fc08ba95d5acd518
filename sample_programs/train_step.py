"""One training step of a small classifier: forward, loss.backward(), gradient clipping
and an AdamW update. `tracecli run` shows the step's trace, then the backward its
loss.backward() runs, and checks the loss, every parameter's .grad and every parameter
after the update against eager PyTorch."""

import torch
import torch.nn.functional as F
from torch import nn


class Classifier(nn.Module):
    def __init__(self, features=16, hidden=32, classes=4):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x):
        h = F.gelu(self.norm(self.fc1(x)))
        return self.fc2(h)


torch.manual_seed(0)
model = Classifier()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)


def train_step(x, labels):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    optimizer.step()
    return loss.detach()


def sample_inputs(device):
    return torch.randn(8, 16, device=device), torch.randint(0, 4, (8,), device=device)
