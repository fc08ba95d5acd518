"""Movement prims: repeat_index, the positions of a tensor's elements each repeated as
often as the data say (what repeat_interleave with a tensor of repeats takes)."""

from __future__ import annotations

import torch

from tracecli.core.dims import Dim, unbacked
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import prim
from tracecli.ops.promotion import ShapeError

_REPEAT_DTYPES = ("int32", "int64")


def _repeat_index_meta(repeats: TensorValue, output_size: int | Dim | None) -> TensorType:
    if repeats.ndim != 1 or repeats.dtype.name not in _REPEAT_DTYPES:
        raise ShapeError(f"prims.repeat_index takes a vector of int32 or int64 repeats, got "
                         f"{repeats.dtype.name}{list(repeats.shape)}")
    if output_size is None:
        # The sum of the repeats, which nothing bounds but int64 itself: no bound.
        output_size = unbacked("the sum of the repeats", None)
    elif isinstance(output_size, bool) or not isinstance(output_size, (int, Dim)) or output_size < 0:
        raise ShapeError(f"prims.repeat_index needs a non-negative int output_size, got {output_size!r}")
    return TensorType((output_size,), repeats.dtype, repeats.device)


# The output_size given is the program's promise, which torch's kernel checks as it runs.
repeat_index = prim(
    "repeat_index", _repeat_index_meta,
    lambda repeats, output_size: torch.repeat_interleave(repeats, output_size=output_size),
    doc="i repeated repeats[i] times, for each i in order (in repeats' dtype): as many as their sum, which the "
        "data decide unless output_size says it",
)
