"""Bitwise and logical prims."""

from __future__ import annotations

import torch

from tracecli.core import dtypes
from tracecli.ops.prims.base import ANY, INTEGRAL, prim
from tracecli.ops.prims.elementwise import binary_meta, number_as_tensor, unary_meta

_INT = frozenset({"int"})

bitwise_and = prim("bitwise_and", binary_meta("bitwise_and", INTEGRAL), number_as_tensor(torch.bitwise_and))
bitwise_or = prim("bitwise_or", binary_meta("bitwise_or", INTEGRAL), number_as_tensor(torch.bitwise_or))
bitwise_xor = prim("bitwise_xor", binary_meta("bitwise_xor", INTEGRAL), number_as_tensor(torch.bitwise_xor))
bitwise_not = prim("bitwise_not", unary_meta("bitwise_not", INTEGRAL), torch.bitwise_not)
logical_not = prim("logical_not", unary_meta("logical_not", ANY, dtypes.bool8), torch.logical_not)
# Shifts by a count at or beyond the width give 0 (left) or the sign (right), as in torch.
bitwise_left_shift = prim("bitwise_left_shift", binary_meta("bitwise_left_shift", _INT), torch.bitwise_left_shift)
bitwise_right_shift = prim("bitwise_right_shift", binary_meta("bitwise_right_shift", _INT), torch.bitwise_right_shift)
