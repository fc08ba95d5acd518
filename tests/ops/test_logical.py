"""The bitwise and logical ops, and their prims (bitwise_and, bitwise_or, bitwise_xor,
bitwise_not, logical_not)."""

import pytest
import torch

from tests.ops.harness import (
    PRIM_DTYPES,
    Case,
    T,
    case_adder,
    check_case,
    check_elementwise_prim_meta_matches_impl,
    float32_operands,
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


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


LOGICAL_PRIMS = ("logical_not", "bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor")


@pytest.mark.parametrize("dtype", PRIM_DTYPES)
@pytest.mark.parametrize("name", LOGICAL_PRIMS)
def test_prim_meta_matches_impl(name, dtype):
    check_elementwise_prim_meta_matches_impl(name, dtype)


@pytest.mark.parametrize("name", LOGICAL_PRIMS)
def test_only_bitwise_prims_refuse_float32(name):
    meta = prims.ALL[name].meta
    if name.startswith("bitwise"):
        with pytest.raises(ShapeError):
            meta(*float32_operands(name))
    else:
        meta(*float32_operands(name))
