"""Autograd's state: `.grad` set and read in the traced code, and the grad mode blocks of
it run in (training steps themselves are tested in tests/test_training.py)."""

import pytest
import torch

from tests.ops.harness import Case, T, case_adder, check_case

CASES: list[Case] = []
case = case_adder(CASES)


def _grad_set_and_read(w, g):
    w.grad = g * 2
    return w.grad + 1


case(("set_grad", "mul", "add"), "Tensor.grad = ...", _grad_set_and_read, T("f32", (3, 4)), T("f32", (3, 4)))


def _no_grad_block(x, w):
    y = x * w
    with torch.no_grad():
        z = y + 1
        with torch.enable_grad():
            u = z * 3  # enable_grad inside no_grad: the entry's own mode, restored
    return y, z, u.exp()


case(("set_grad_enabled", "restore_grad_enabled", "mul", "add", "exp"), "with torch.no_grad():", _no_grad_block,
     T("f32", (3, 4)), T("f32", (3, 4)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)
