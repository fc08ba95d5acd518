"""How prims are declared."""

from __future__ import annotations

import torch

from tracecli.core.dtypes import DType
from tracecli.core.symbol import Symbol
from tracecli.ops.torch_bridge import TO_TORCH

ALL: dict[str, Symbol] = {}


def _prim(name: str, meta, impl, tags=(), doc: str = "") -> Symbol:
    sym = Symbol(name, "prims", impl=impl, meta=meta, tags=frozenset(tags), doc=doc)
    ALL[name] = sym
    return sym


def _tdt(dtype: DType | torch.dtype) -> torch.dtype:
    return TO_TORCH[dtype] if isinstance(dtype, DType) else dtype
