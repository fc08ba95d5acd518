"""Backward rules, by op family: `RULES` maps a symbol to its rule (see base.py)."""

from tracecli.ops.grads import elementwise, indexing, linalg, nn, reductions, shapes  # noqa: F401 - they register rules
from tracecli.ops.grads.base import NO_GRADIENT, RULES, NotDifferentiable, bind, has_rule

__all__ = ["NO_GRADIENT", "RULES", "NotDifferentiable", "bind", "has_rule"]
