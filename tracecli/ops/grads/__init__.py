"""Backward rules, by op family: `RULES` maps a symbol to its rule (see base.py)."""

from tracecli.ops.grads import elementwise, indexing, linalg, nn, reductions, shapes  # noqa: F401 - they register rules
from tracecli.ops.grads.base import (
    CARRIES_GRADIENT,
    NO_GRADIENT,
    REFUSALS,
    RESIDUALS,
    RULES,
    NotDifferentiable,
    bind,
    has_rule,
)

__all__ = ["CARRIES_GRADIENT", "NO_GRADIENT", "REFUSALS", "RESIDUALS", "RULES", "NotDifferentiable", "bind", "has_rule"]
