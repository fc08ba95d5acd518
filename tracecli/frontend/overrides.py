"""What torch's Python-level helpers answer while a trace is being made.

- `torch.compiler.is_compiling()` is True, as under torch.compile: libraries then take
  their compiler-friendly paths (transformers builds attention masks without reading
  tensor values) instead of data-dependent shortcuts a trace cannot follow.
- `torch.compiler.is_dynamo_compiling()` is True as well: torch's higher-order ops
  (`torch.cond`, `while_loop`, `flex_attention`) otherwise run eagerly by compiling
  themselves with dynamo, which cannot follow the tracer's mode; told dynamo is already
  compiling, they call their operator (`torch.ops.higher_order.cond`) directly, and that
  reaches the tracer as one opaque call.
- `torch._check_tensor_all(cond)` on a traced tensor becomes an `ltorch.check_all` in
  the trace (tagged CHECK, kept by every pass) rather than a data-dependent `bool()`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import torch

from tracecli.core.errors import TracingError
from tracecli.frontend.proxy import TensorProxy
from tracecli.frontend.source import location_of, user_frame
from tracecli.ops import ltorch


def _is_compiling() -> bool:
    return True


def _as_subclass(self, cls):
    """`x.as_subclass(cls)` of a traced tensor is the same value: torch runs it below the
    tracer's reach (it ignores __torch_function__), so it is answered here. A class that
    changes what ops do (its own __torch_function__) is refused, not silently dropped."""
    if not isinstance(self, TensorProxy):
        return _BASE_AS_SUBCLASS(self, cls)
    if getattr(cls.__torch_function__, "__func__", None) is not torch.Tensor.__torch_function__.__func__:
        frame = user_frame(sys._getframe(1))
        where = location_of(frame) if frame is not None else None
        raise TracingError(
            f"as_subclass({cls.__qualname__}): a tensor class with its own __torch_function__ changes what ops do, "
            "which the trace would not show",
            file=where.file if where else None, line=where.line if where else None, source=where.text if where else "",
        )
    return self


_BASE_AS_SUBCLASS = torch._C.TensorBase.as_subclass


def _false(*args, **kwargs) -> bool:
    return False


def _true(*args, **kwargs) -> bool:
    return True


@contextmanager
def tracing_overrides() -> Iterator[None]:
    original_check_all = torch._check_tensor_all

    def check_tensor_all(cond, message=None):
        if isinstance(cond, TensorProxy):
            ltorch.check_all(cond)
        else:
            original_check_all(cond, message)

    amp_common = torch.cuda.amp.common
    saved = (torch.compiler.is_compiling, torch.compiler.is_dynamo_compiling, original_check_all,
             amp_common.amp_definitely_not_available, torch.cuda.is_bf16_supported)
    torch.compiler.is_compiling = _is_compiling
    torch.compiler.is_dynamo_compiling = _is_compiling
    torch._check_tensor_all = check_tensor_all
    # A trace for cuda:0 is made on machines without CUDA too: torch.autocast("cuda") must
    # then stay on (not disable itself with a warning), so the trace shows CUDA's casts.
    amp_common.amp_definitely_not_available = _false
    torch.cuda.is_bf16_supported = _true
    torch.Tensor.as_subclass = _as_subclass
    try:
        yield
    finally:
        del torch.Tensor.as_subclass
        (torch.compiler.is_compiling, torch.compiler.is_dynamo_compiling, torch._check_tensor_all,
         amp_common.amp_definitely_not_available, torch.cuda.is_bf16_supported) = saved
