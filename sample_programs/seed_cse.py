"""The first seed's function in plain torch: repeated products, a reassigned name, a random op."""

import torch


def func(x, y, device):
    a = x * y
    b = y / x
    c = x * y
    d = y / x
    z = a * b
    w = c * d
    m = w * 1
    a = torch.rand(w.shape, device=device, dtype=torch.float16)
    return z, w, m, a


def sample_inputs(device):
    x = torch.randn(3, 4, device=device)
    y = torch.randn(3, 4, device=device)
    return x, y, device
