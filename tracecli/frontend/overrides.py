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

from collections.abc import Iterator
from contextlib import contextmanager

import torch

from tracecli.frontend.proxy import TensorProxy
from tracecli.ops import ltorch


def _is_compiling() -> bool:
    return True


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
    try:
        yield
    finally:
        (torch.compiler.is_compiling, torch.compiler.is_dynamo_compiling, torch._check_tensor_all,
         amp_common.amp_definitely_not_available, torch.cuda.is_bf16_supported) = saved
