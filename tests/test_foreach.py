"""`torch._foreach_*` (the multi-tensor ops torch's optimizers use on a GPU): traced as the
op on each tensor, checked against eager at both levels, and the optimizers that call
them (`foreach=True`, the default on CUDA) matching eager through whole training steps."""

import pytest
import torch

from tests.ops.harness import Case, T, case_adder, check_case
from tests.test_cli import assert_user_error, write
from tests.test_training import assert_matches_eager

CASES: list[Case] = []
case = case_adder(CASES)


def _cloned(*tensors):
    return [t.clone() for t in tensors]


def _add_(a, b, c):
    xs = _cloned(a, b)
    torch._foreach_add_(xs, [c, c], alpha=2)
    torch._foreach_add_(xs, 1.5)
    return xs


def _scalar_tensor(a, b, s):
    xs = _cloned(a, b)
    torch._foreach_mul_(xs, s)  # one zero-dim tensor for every item
    return xs


def _optimizer_like(p, q, m, v):
    params, avgs, squares = _cloned(p, q), _cloned(m, m), _cloned(v, v)
    torch._foreach_lerp_(avgs, params, 0.1)
    torch._foreach_mul_(squares, 0.999)
    torch._foreach_addcmul_(squares, params, params, 0.001)
    denom = torch._foreach_sqrt(squares)
    torch._foreach_add_(denom, 1e-8)
    torch._foreach_addcdiv_(params, avgs, denom, [-0.01, -0.02])  # one scalar an item
    return params


def _tensor_scalars(p, q, m, steps):
    # Adam's step sizes as one 1-d tensor (what `_stack_if_compiling` makes).
    params = _cloned(p, q)
    torch._foreach_addcdiv_(params, [m, m], [m.abs() + 1, m.abs() + 2], steps)
    return params


def _per_item_tensors(a, b, s, t):
    xs = _cloned(a, b)
    torch._foreach_div_(xs, [s, t])  # zero-dim tensors, one an item
    return xs


def _out_of_place(a, b):
    return (torch._foreach_pow(2.0, [a, b]), torch._foreach_norm([a, b]), torch._foreach_maximum([a, b], [a.flip(0), b.t()]),
            torch._foreach_neg([a, b]), torch._foreach_sub([a, b], 1))


def _clamps_and_copies(a, b):
    xs, ys = _cloned(a, b), _cloned(a, b)
    torch._foreach_clamp_max_(xs, 0.5)
    torch._foreach_maximum_(xs, [b, a])
    torch._foreach_zero_(ys)
    torch._foreach_copy_(ys, xs)
    return xs, ys


case(("add_",), "lists-and-numbers", _add_, T("f32", (3, 4)), T("f32", (3, 4)), T("f32", (3, 4)))
case(("mul_",), "zero-dim-tensor", _scalar_tensor, T("f32", (2, 3)), T("f32", (2, 3)), T("f32", ()))
case(("lerp", "mul_", "addcmul", "sqrt", "add_", "addcdiv"), "adam-update", _optimizer_like, T("f32", (4, 3)),
     T("f32", (4, 3)), T("f32", (4, 3)), T("f32", (4, 3), "pos"))
case(("getitem", "true_divide", "mul", "copy_"), "tensor-of-scalars", _tensor_scalars, T("f32", (3,)), T("f32", (3,)), T("f32", (3,)),
     T("f32", (2,)))
case(("div_",), "scalar-per-item", _per_item_tensors, T("f32", (2, 2)), T("f32", (2, 2)), T("f32", (), "pos"),
     T("f32", (), "pos"))
case(("pow", "vector_norm", "flip", "maximum", "neg", "sub"), "out-of-place", _out_of_place, T("f32", (3,)), T("f32", (2, 2)))
case(("clamp", "maximum", "zero_", "copy_"), "clamps-and-copies", _clamps_and_copies, T("f32", (3,)),
     T("f32", (3,)))


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_foreach_op_is_the_op_on_each_tensor(c):
    check_case(c)


STEPS = """
    import torch
    import torch.nn.functional as F
    from torch import nn


    def train_step(model, optimizer, x, y):
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
        optimizer.step()
        return loss.detach()


    if __name__ == "__main__":
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 2))
        optimizer = torch.optim.{optimizer}
        for _ in range(4):
            train_step(model, optimizer, torch.randn(4, 8), torch.randn(4, 2))
"""


@pytest.mark.parametrize("optimizer", [
    "Adam(model.parameters(), lr=1e-2, foreach=True)",
    "AdamW(model.parameters(), lr=1e-2, weight_decay=0.1, amsgrad=True, foreach=True)",
    "SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, foreach=True)",
    "RMSprop(model.parameters(), lr=1e-2, momentum=0.5, foreach=True)",
    "Adagrad(model.parameters(), lr=0.1, foreach=True)",
    "NAdam(model.parameters(), lr=1e-2, foreach=True)",
])
def test_a_foreach_optimizer_matches_eager_over_several_steps(cli, tmp_path, optimizer):
    # The first step makes the optimizer's state; the later ones read it as captured inputs.
    assert_matches_eager(cli, write(tmp_path, "steps.py", STEPS.replace("{optimizer}", optimizer)))


def test_lists_of_different_lengths_are_refused_at_the_users_line(cli, tmp_path):
    path = write(tmp_path, "uneven.py", """
        import torch


        def f(a, b):
            torch._foreach_add_([a, b], [a])
            return a


        def sample_inputs(device):
            return torch.randn(3), torch.randn(3)
    """)
    assert_user_error(cli("trace", path), "uneven.py:6", "lists of 2 and 1 items")
