"""Prims of the structured products: the Vandermonde matrix and pairwise distances.

`vander` is torch's cumulative product of the columns (in int64 for integer inputs, as
torch's cumprod promotes them), a prim because its number of columns is often the input's
own size: spelled as products column by column, a symbolic size would have to be pinned.
`cdist` is torch's, whose Euclidean form switches to a matrix-product formula by size
(`compute_mode`): only its own kernel gives eager's rounding.
"""

from __future__ import annotations

import torch

from tracecli.core import dtypes
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import prim
from tracecli.ops.prims.linalg import LAPACK, check_matrix, check_operands
from tracecli.ops.promotion import ShapeError, broadcast_shapes

_INTEGERS = frozenset({dtypes.uint8, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64})


def _vander_meta(x: TensorValue, N) -> TensorType:  # noqa: N803 - torch's name
    check_operands("linalg.vander", x, allowed=LAPACK | _INTEGERS,
                   kinds="an integer dtype, float32, float64, complex64 or complex128")
    rows = x.shape or (1,)  # torch takes a 0-d x as a vector of one element
    columns = rows[-1] if N is None else N
    if columns <= 1:  # a symbolic size is at least 2: no guard
        raise ShapeError(f"linalg.vander: N must be greater than 1, got {columns}")
    dtype = dtypes.int64 if x.dtype.kind == "int" else x.dtype
    return TensorType(rows + (columns,), dtype, x.device)


vander = prim("vander", _vander_meta, lambda x, N: torch.linalg.vander(x, N=N),  # noqa: N803
              doc="the powers x**0, ..., x**(N-1) of each element, as the last dimension")

_COMPUTE_MODES = (None, "use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


def _cdist_meta(x1: TensorValue, x2: TensorValue, p: float, compute_mode) -> TensorType:
    check_operands("cdist", x1, x2, allowed=frozenset({dtypes.float32, dtypes.float64}), kinds="float32 or float64")
    check_matrix("cdist", x1, "x1")
    check_matrix("cdist", x2, "x2")
    if x1.shape[-1] != x2.shape[-1]:
        raise ShapeError(f"cdist: x1 {list(x1.shape)} and x2 {list(x2.shape)} must have rows of one size")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or p < 0:
        raise ShapeError(f"cdist takes a non-negative p, got {p!r}")
    if compute_mode not in _COMPUTE_MODES:
        raise ShapeError(f"cdist: {compute_mode!r} is not a compute_mode")
    batch = broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    return TensorType(batch + (x1.shape[-2], x2.shape[-2]), x1.dtype, x1.device)


cdist = prim("cdist", _cdist_meta, torch.cdist, doc="the p-norm distance between each row of x1 and each row of x2")
