"""The second seed's function: its dead and duplicated subsymbols must never show."""

import torch


def foo(x):
    y = torch.cos(x) + torch.sin(x)
    return y


def sample_inputs(device):
    return (torch.randn(10, 10, device=device),)
