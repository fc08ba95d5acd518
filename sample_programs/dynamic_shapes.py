"""One trace for many input sizes: run with `--dynamic` and a few `--sizes`.

    tracecli run sample_programs/dynamic_shapes.py --dynamic --sizes s0=6,s1=4 --sizes s0=2,s1=8

Each batch row is split into pairs, scaled by the number of rows (a size used as a
value), and the shape decides between two paths (a guard: sizes on the other side of it
are traced again).
"""

import torch


def normalize(x, scale):
    rows, cols = x.shape
    # -1 is cols // 2, with a guard that cols is even
    pairs = x.reshape(rows, -1, 2)
    summed = pairs.sum(-1) * scale
    # A branch on a size: a guard, and sizes on its other side are traced again.
    if rows > 4:
        summed = summed - summed.mean(0)
    return summed / rows


def sample_inputs(device):
    return (torch.randn(3, 6, device=device), torch.randn(3, device=device))
