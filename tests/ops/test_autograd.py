"""Autograd's state on tensors: `.grad` set and read in the traced code (training steps
themselves are tested in tests/test_training.py)."""

import pytest

from tests.ops.harness import Case, T, case_adder, check_case

CASES: list[Case] = []
case = case_adder(CASES)


def _grad_set_and_read(w, g):
    w.grad = g * 2
    return w.grad + 1


case(("set_grad", "mul", "add"), "Tensor.grad = ...", _grad_set_and_read, T("f32", (3, 4)), T("f32", (3, 4)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)
