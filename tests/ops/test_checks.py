"""The runtime checks users write (torch._check_tensor_all) and the check_all prim,
exercised through the case's lowered trace."""

import pytest
import torch

from tests.ops.harness import Case, T, case_adder, check_case

CASES: list[Case] = []
case = case_adder(CASES)


def _checked_all(x):
    torch._check_tensor_all(x.abs() >= 0)
    return x * 2


case(("check_all", "mul"), "torch._check_tensor_all", _checked_all, T("f32", (3, 4)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)
