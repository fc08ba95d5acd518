"""Autocast: which ops torch.autocast runs in lower precision, in float32, or at the
widest input type, and the casts that makes of an op's arguments.

The policies are torch's own (ATen's autocast_mode lists for CPU and CUDA), attached to
each op's declaration (`@symbol(..., autocast=...)`). As in ATen, a policy applies where
the op is called while autocast is on for the device type of its tensors, and not inside
an op that already applied one: its decomposition runs as written. An op without a
policy runs as it is, and the ops it calls meet autocast on their own.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from tracecli.core import dtypes
from tracecli.core.dtypes import DType
from tracecli.core.symbol import Symbol
from tracecli.core.values import TensorValue
from tracecli.ops.promotion import ShapeError


class Policy(enum.Enum):
    LOWER = "lower_precision_fp"  # floating arguments to the autocast dtype (matmul, linear, conv, ...)
    FP32 = "fp32"  # floating arguments to float32 (losses, exp, layer_norm on CUDA, ...)
    FP32_DTYPE = "fp32_set_opt_dtype"  # no dtype given: compute and return float32 (softmax, sum on CUDA)
    PROMOTE = "promote"  # floating arguments to the widest of them (cat, stack on CPU)


@dataclass(frozen=True, slots=True)
class Autocast:
    """An op's policy per device type."""

    cpu: Policy | None = None
    cuda: Policy | None = None

    def for_device(self, device_type: str) -> Policy | None:
        return self.cuda if device_type == "cuda" else self.cpu if device_type == "cpu" else None


def everywhere(policy: Policy) -> Autocast:
    return Autocast(policy, policy)


# Filled by the ltorch declarations.
POLICIES: dict[Symbol, Autocast] = {}


def device_type(device: str) -> str:
    return device.split(":", 1)[0]


def _tensors(args, kwargs) -> list[TensorValue]:
    out = []
    for item in (*args, *kwargs.values()):
        if isinstance(item, TensorValue):
            out.append(item)
        elif isinstance(item, (tuple, list)):
            out.extend(t for t in item if isinstance(t, TensorValue))
    return out


def _eligible(x: object, device: str) -> bool:
    # ATen's rule: floating tensors of the autocast device type, never float64.
    return (
        isinstance(x, TensorValue) and x.dtype.is_float and x.dtype != dtypes.float64
        and device_type(x.device) == device
    )


def policy_for(sym: Symbol, args: tuple, kwargs: dict) -> tuple[str, Policy] | None:
    """(device type, policy) for this call of `sym`, or None when it has none; whether
    autocast is on for that device type is the caller's to ask."""
    declared = POLICIES.get(sym)
    if declared is None:
        return None
    tensors = _tensors(args, kwargs)
    if not tensors:
        return None
    device = device_type(tensors[0].device)
    policy = declared.for_device(device)
    return None if policy is None else (device, policy)


def _prioritize(fast_dtype: DType, eligible: list[TensorValue]) -> DType:
    """ATen's `prioritize`: float32 wins over the autocast dtype; any other half type
    beside them is an error."""
    target = fast_dtype
    for t in eligible:
        if target == dtypes.float32 or t.dtype == dtypes.float32:
            target = dtypes.float32
        elif t.dtype != fast_dtype:
            raise ShapeError(
                f"autocast({fast_dtype.name}) cannot combine a {t.dtype.name} tensor with others here "
                "(torch refuses it too: cast it to float32 or to the autocast dtype first)"
            )
    return target


def cast_arguments(policy: Policy, device: str, fast_dtype: DType, args: tuple, kwargs: dict,
                   convert: Callable[[TensorValue, DType], TensorValue]) -> tuple[tuple, dict]:
    """The call's arguments under `policy`; `convert` records one cast."""
    if policy is Policy.FP32_DTYPE:
        first = next(iter(_tensors(args, kwargs)), None)
        if kwargs.get("dtype") is None and _eligible(first, device):
            return args, {**kwargs, "dtype": dtypes.float32}
        return args, kwargs
    if policy is Policy.PROMOTE:
        target = _prioritize(fast_dtype, [t for t in _tensors(args, kwargs) if _eligible(t, device)])
    else:
        target = fast_dtype if policy is Policy.LOWER else dtypes.float32

    def cast(x):
        if isinstance(x, (tuple, list)):
            return type(x)(cast(item) for item in x)
        return convert(x, target) if _eligible(x, device) and x.dtype != target else x

    return tuple(cast(a) for a in args), {k: cast(v) for k, v in kwargs.items()}


__all__ = ["POLICIES", "Autocast", "Policy", "cast_arguments", "everywhere", "policy_for"]
