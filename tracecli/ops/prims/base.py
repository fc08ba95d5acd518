"""How prims are declared, and the dtype rules their meta functions share."""

from __future__ import annotations

import sys

import torch

from tracecli.core.dtypes import DType
from tracecli.core.symbol import Symbol, Tag
from tracecli.core.values import TensorValue
from tracecli.ops.promotion import ShapeError
from tracecli.ops.torch_bridge import TO_TORCH

ALL: dict[str, Symbol] = {}


def prim(name: str, meta, impl, tags: tuple[Tag, ...] = (), doc: str = "") -> Symbol:
    """Declare prims.<name>: a meta rule (argument values -> output TensorTypes) and the
    torch implementation executors run. Its family is the declaring module's name."""
    if name in ALL:
        raise ValueError(f"prims.{name} is declared twice")
    family = sys._getframe(1).f_globals["__name__"].rsplit(".", 1)[-1]
    sym = Symbol(name, "prims", impl=impl, meta=meta, tags=frozenset(tags), doc=doc, family=family)
    ALL[name] = sym
    return sym


def torch_dtype(dtype: DType | torch.dtype) -> torch.dtype:
    return TO_TORCH[dtype] if isinstance(dtype, DType) else dtype


# The dtype kinds a prim accepts: exactly those its torch implementation computes in the
# operands' own dtype (or, for predicates, in bool). A prim refuses the rest at trace time
# instead of returning a dtype its meta rule did not promise (torch.exp of an int tensor
# is float32; ltorch converts first).
NUMBER = frozenset({"int", "float", "complex"})
ANY = NUMBER | {"bool"}
INEXACT = frozenset({"float", "complex"})
REAL = frozenset({"int", "float"})
INTEGRAL = frozenset({"bool", "int"})


def check_kinds(name: str, dtype: DType, kinds: frozenset) -> None:
    if dtype.kind not in kinds:
        raise ShapeError(f"prims.{name} does not accept {dtype.name} operands ({', '.join(sorted(kinds))} only)")


def check_dim(name: str, x: TensorValue, dim: int) -> None:
    # Prims take canonical dims; a zero-dim tensor has the one dimension 0, as in torch.
    if not 0 <= dim < max(x.ndim, 1):
        raise ShapeError(f"prims.{name}: dimension {dim} is out of range for {list(x.shape)}")
