"""The runtime checks users write (torch._check_tensor_all, torch._check of sizes the data
decide) and the check_all and check_size prims, exercised through the cases' lowered traces."""

import pytest
import torch

from tests.ops.harness import Case, T, case_adder, check_case

CASES: list[Case] = []
case = case_adder(CASES)


def _checked_all(x):
    torch._check_tensor_all(x.abs() >= 0)
    return x * 2


case(("check_all", "mul"), "torch._check_tensor_all", _checked_all, T("f32", (3, 4)))


def _checked_size(x):
    vals = x[x > -10]  # every element, as many as the data has
    torch._check(vals.shape[0] >= 1)
    return vals * 2


case(("check_size", "getitem", "mul"), "torch._check-of-a-size-the-data-decide", _checked_size, T("f32", (3, 4)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)
