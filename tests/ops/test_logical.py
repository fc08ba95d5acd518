"""The bitwise and logical ops, the shifts, and their prims (bitwise_and, bitwise_or,
bitwise_xor, bitwise_not, logical_not, bitwise_left_shift, bitwise_right_shift)."""

import pytest
import torch

from tests.ops.harness import (
    PRIM_DTYPES,
    Case,
    L,
    T,
    case_adder,
    check_case,
    check_elementwise_prim_meta_matches_impl,
    check_refused,
    float32_operands,
    rows_by_id,
)
from tracecli.ops import prims
from tracecli.ops.promotion import ShapeError

CASES: list[Case] = []
case = case_adder(CASES)

for dtype in ("bool", "i64", "i32", "u8"):
    case("bitwise_and", "op", lambda a, b: a & b, T(dtype, (3, 4)), T(dtype, (4,)))
    case("bitwise_or", "op", lambda a, b: a | b, T(dtype, (3, 4)), T(dtype, (3, 4)))
    case("bitwise_xor", "op", lambda a, b: a ^ b, T(dtype, (2, 3, 4)), T(dtype, (3, 1)))
    case("bitwise_not", "op", lambda a: ~a, T(dtype, (3, 4)))
    case("bitwise_and", "fn", torch.bitwise_and, T(dtype, (5,)), T(dtype, (5,)))
case("bitwise_and", "masks", lambda a, b: (a > 0) & (b < 0), T("f32", (3, 4)), T("f32", (3, 4)))
case("bitwise_or", "scalar", lambda a: a | 4, T("i64", (5,)))
case("bitwise_and", "rscalar", lambda a: True & a, T("bool", (5,)))
case("bitwise_not", "method", lambda a: a.bitwise_not(), T("i64", (5,)))
case("bitwise_xor", "method", lambda a, b: a.bitwise_xor(b), T("bool", (5,)), T("bool", (5,)))
for dtype in ("f32", "i64", "bool"):
    case("logical_and", "fn", torch.logical_and, T(dtype, (3, 4)), T(dtype, (4,)))
    case("logical_or", "method", lambda a, b: a.logical_or(b), T(dtype, (3, 4)), T(dtype, (3, 4)))
    case("logical_not", "fn", torch.logical_not, T(dtype, (3, 4)))
    case("logical_xor", "fn", torch.logical_xor, T(dtype, (3, 4)), T(dtype, (4,)))
case("logical_xor", "method", lambda a, b: a.logical_xor(b), T("i64", (2, 3)), T("f32", ()))
case("logical_xor", "inplace", lambda a, b: a.logical_xor_(b), T("bool", (2, 3)), T("bool", (3,)))

# Shifts: counts past the width give 0 (or the sign, shifting right), as in torch.
_COUNTS = L((0, 1, 7, 8, 31, 63, 64, 70), "i64")
for dtype in ("i64", "i32", "i16", "u8"):
    case("bitwise_left_shift", "op", lambda a, b: a << b, T(dtype, (3, 8)), T(dtype, (8,), "small"))
    case("bitwise_right_shift", "op", lambda a, b: a >> b, T(dtype, (3, 8)), T(dtype, (8,), "small"))
case("bitwise_left_shift", "counts", lambda a, b: a << b, L((1, -1, 3, -8, 5, 1, 2, -3), "i64"), _COUNTS)
case("bitwise_right_shift", "counts", torch.bitwise_right_shift, L((1, -1, 3, -8, 5, 1, 2, -3), "i64"), _COUNTS)
case("bitwise_left_shift", "number", lambda a: a << 3, T("i32", (3, 4)))
case("bitwise_left_shift", "number-left", lambda a: 3 << a, T("i64", (3, 4), "small"))
case("bitwise_right_shift", "number-left", lambda a: 1000 >> a, T("i64", (3, 4), "small"))
case("bitwise_left_shift", "bool-by-number", lambda a: a << 2, T("bool", (3, 4)))
case("bitwise_left_shift", "u8-by-big-number", lambda a: a << 300, T("u8", (3, 4)))
case("bitwise_right_shift", "method", lambda a, b: a.bitwise_right_shift(b), T("i64", (3, 4)), T("i32", (4,), "small"))
case("bitwise_left_shift", "inplace", lambda a: a.__ilshift__(2), T("i64", (3, 4)))
case("bitwise_right_shift", "inplace", lambda a, b: a.bitwise_right_shift_(b), T("i16", (3, 4)),
     T("i16", (4,), "small"))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


LOGICAL_PRIMS = ("logical_not", "bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                 "bitwise_right_shift")


@pytest.mark.parametrize("dtype", PRIM_DTYPES)
@pytest.mark.parametrize("name", LOGICAL_PRIMS)
def test_prim_meta_matches_impl(name, dtype):
    check_elementwise_prim_meta_matches_impl(name, dtype)


@pytest.mark.parametrize("name", LOGICAL_PRIMS)
def test_only_bitwise_prims_refuse_float32(name):
    meta = prims.ALL[name].meta
    if name.startswith("bitwise"):  # the shifts too
        with pytest.raises(ShapeError):
            meta(*float32_operands(name))
    else:
        meta(*float32_operands(name))


REFUSED = (
    ("shift-float", lambda x: x << 1, T("f32", (3,))),
    ("shift-bool", lambda x: torch.bitwise_left_shift(x, x), T("bool", (3,))),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(REFUSED))
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)
