"""Op matrix for the bitwise and logical ops, all/any and diff."""

import pytest
import torch

from tests.ops.harness import Case, L, T, case_adder, check_case

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
    case("all", "full", torch.all, T(dtype, (3, 4)))
    case("all", "dim", lambda x: x.all(dim=1), T(dtype, (3, 4)))
    case("any", "full", lambda x: x.any(), T(dtype, (3, 4)))
    case("any", "keepdim", lambda x: torch.any(x, 0, keepdim=True), T(dtype, (3, 4)))
case("all", "u8", torch.all, T("u8", (3, 4)))
case("any", "literal", lambda x: x.any(-1), L(((0.0, 0.0), (0.0, 1.0)), "f32"))
for dtype in ("f32", "i64", "bool", "f16"):
    case("diff", "default", torch.diff, T(dtype, (3, 5)))
case("diff", "dim0-n2", lambda x: torch.diff(x, n=2, dim=0), T("f32", (5, 3)))
case("diff", "prepend-append", lambda x, p: x.diff(prepend=p, append=p), T("f32", (2, 4)), T("f32", (2, 1)))
case("diff", "promote", lambda x, p: torch.diff(x, prepend=p), T("i64", (2, 4)), T("f32", (2, 1)))
case("diff", "too-many", lambda x: torch.diff(x, n=5), T("f32", (2, 3)))


def _checked_all(x):
    torch._check_tensor_all(x.abs() >= 0)
    return x * 2


case(("check_all", "mul"), "torch._check_tensor_all", _checked_all, T("f32", (3, 4)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)
