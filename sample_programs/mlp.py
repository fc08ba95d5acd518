"""A two-layer MLP as an nn.Module instance: parameters become trace inputs."""

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, features=16, hidden=64, classes=10):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        logits = self.fc2(h)
        return torch.log_softmax(logits, dim=-1)


torch.manual_seed(0)
model = MLP()


def sample_inputs(device):
    return (torch.randn(8, 16, device=device),)
