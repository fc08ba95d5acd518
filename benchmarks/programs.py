"""The programs the benchmarks trace and run.

Chains are written to real .py files and imported, so the tracer finds source lines,
user frames and display paths exactly as it does for a user's script.
"""

from __future__ import annotations

import importlib.util
import itertools
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

# One elementwise op per line, cycling through a unary function, a scalar operator on
# each side of promotion (float, int) and an activation: the common shapes of user code.
CHAIN_LINES = (
    "x = torch.sin(x)",
    "x = x * 1.5",
    "x = x + 1",
    "x = torch.relu(x)",
)

_variants = itertools.count()


def chain_source(n_ops: int, variant: int) -> str:
    # The docstring makes every generated function unique. Identical functions in
    # different files compare (and hash) equal as code objects, and a tracer cache keyed
    # by code object would then pay an O(code size) comparison per lookup: a benchmark
    # artefact we do not want to time (see the report), since users trace distinct code.
    body = "".join(f"    {CHAIN_LINES[i % len(CHAIN_LINES)]}\n" for i in range(n_ops))
    return f'import torch\n\n\ndef chain(x):\n    """chain of {n_ops} ops, variant {variant}"""\n{body}    return x\n'


def write_chain(directory: Path, n_ops: int) -> Callable:
    """A fresh `chain(x)` of `n_ops` elementwise ops, imported from its own file.

    A new file per call keeps per-file caches (source lines, display paths) cold, as
    they are when the CLI traces a script once.
    """
    variant = next(_variants)
    path = directory / f"chain{n_ops}_{variant}.py"
    path.write_text(chain_source(n_ops, variant))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.chain


def mlp(x, w1, b1, gamma, beta, w2, b2):
    """A transformer-style feed-forward block as a plain function."""
    h = F.linear(x, w1, b1)
    h = F.gelu(h)
    h = F.layer_norm(h, (h.shape[-1],), gamma, beta)
    return F.linear(h, w2, b2)


def mlp_inputs(batch: int = 4, features: int = 16, hidden: int = 32) -> tuple:
    return (
        torch.randn(batch, features),
        torch.randn(hidden, features), torch.randn(hidden),
        torch.randn(hidden), torch.randn(hidden),
        torch.randn(features, hidden), torch.randn(features),
    )


class MLPModule(nn.Module):
    """The same block as an nn.Module: parameters become trace inputs."""

    def __init__(self, features: int = 16, hidden: int = 32):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.act = nn.GELU()
        self.norm = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, features)

    def forward(self, x):
        h = self.act(self.fc1(x))
        return self.fc2(self.norm(h))
