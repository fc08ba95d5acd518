"""The joins of several tensors into a new one: hstack, vstack (row_stack), dstack,
column_stack, block_diag, cartesian_prod, combinations and kron. They decompose into shape and
elementwise prims and have none of their own. (meshgrid, whose results are views, is
expand in disguise: tests/ops/test_shapes.py.)"""

from __future__ import annotations

import pytest
import torch

from tests.ops.harness import Case, T, case_adder, check_case, check_refused, rows_by_id

CASES: list[Case] = []
case = case_adder(CASES)

# --- hstack, vstack, dstack, column_stack ------------------------------------------------------------

for _dtype in ("f32", "i64", "bool"):
    case("hstack", "matrices", lambda a, b: torch.hstack([a, b]), T(_dtype, (2, 3)), T(_dtype, (2, 1)))
case("hstack", "vectors", lambda a, b: torch.hstack((a, b)), T("f32", (3,)), T("f32", (2,)))
case("hstack", "0d", lambda a, b: torch.hstack([a, b]), T("f32", ()), T("i64", (2,)))
case("hstack", "single", lambda a: torch.hstack([a]), T("f32", (3,)))
case("hstack", "promote", lambda a, b: torch.hstack([a, b]), T("bf16", (2, 2)), T("f16", (2, 1)))
case("vstack", "matrices", lambda a, b: torch.vstack([a, b]), T("f32", (2, 3)), T("f32", (1, 3)))
case("vstack", "vectors", lambda a, b: torch.vstack((a, b)), T("i64", (3,)), T("f32", (3,)))
case("vstack", "row_stack", lambda a, b: torch.row_stack([a, b]), T("f32", (3,)), T("f32", (2, 3)))
case("vstack", "0d", lambda a, b: torch.vstack([a, b]), T("f32", ()), T("f32", ()))
case("dstack", "matrices", lambda a, b: torch.dstack([a, b]), T("f32", (2, 3)), T("f32", (2, 3)))
case("dstack", "vectors", lambda a, b: torch.dstack((a, b)), T("bool", (3,)), T("bool", (3,)))
case("dstack", "3d", lambda a, b: torch.dstack([a, b]), T("f32", (2, 3, 1)), T("i64", (2, 3, 2)))
case("column_stack", "vectors", lambda a, b: torch.column_stack([a, b]), T("f32", (3,)), T("f32", (3,)))
case("column_stack", "mixed", lambda a, b, c: torch.column_stack((a, b, c)), T("f32", (2,)), T("i64", (2, 3)),
     T("f32", (2, 1)))
case("column_stack", "0d", lambda a, b: torch.column_stack([a, b]), T("f32", ()), T("f32", ()))

# --- block_diag, cartesian_prod, kron --------------------------------------------------------------

case("block_diag", "matrices", lambda a, b: torch.block_diag(a, b), T("f32", (2, 3)), T("f32", (1, 2)))
case("block_diag", "mixed-ranks", lambda a, b, c: torch.block_diag(a, b, c), T("f32", ()), T("i64", (3,)),
     T("f32", (2, 2)))
case("block_diag", "empty-blocks", lambda a, b, c: torch.block_diag(a, b, c), T("f32", (2, 0)), T("f32", (0, 3)),
     T("f32", (1, 1)))
case("block_diag", "single", torch.block_diag, T("bool", (2, 2)))
case("block_diag", "aten", lambda a, b: torch.ops.aten.block_diag.default([a, b]), T("f32", (2, 2)), T("f32", (1, 3)))
case("cartesian_prod", "aten", lambda a, b: torch.ops.aten.cartesian_prod.default([a, b]), T("i64", (2,)),
     T("i64", (3,)))
case("cartesian_prod", "two", lambda a, b: torch.cartesian_prod(a, b), T("f32", (3,)), T("f32", (2,)))
case("cartesian_prod", "three", lambda a, b, c: torch.cartesian_prod(a, b, c), T("i64", (2,)), T("i64", (3,)),
     T("i64", (2,)))
case("combinations", "pairs", torch.combinations, T("f32", (4,)))
case("combinations", "triples", lambda x: torch.combinations(x, 3), T("i64", (5,)))
case("combinations", "with-replacement", lambda x: torch.combinations(x, 2, with_replacement=True), T("f32", (3,)))
case("combinations", "r1", lambda x: torch.combinations(x, r=1), T("bool", (3,)))
case("combinations", "r0", lambda x: torch.combinations(x, 0), T("f32", (3,)))
case("combinations", "more-than-n", lambda x: torch.combinations(x, 4), T("f32", (3,)))
case("combinations", "more-than-n-with-replacement", lambda x: torch.combinations(x, 3, True), T("bf16", (2,)))
case("kron", "matrices", lambda a, b: torch.kron(a, b), T("f32", (2, 3)), T("f32", (3, 2)))
case("kron", "method-ranks", lambda a, b: a.kron(b), T("i64", (2,)), T("i64", (2, 3)))
case("kron", "promote", lambda a, b: torch.kron(a, b), T("f16", (2, 2)), T("f32", ()))
case("kron", "bool", lambda a, b: torch.kron(a, b), T("bool", (2,)), T("bool", (3,)))
case("kron", "0d", lambda a, b: torch.kron(a, b), T("f32", ()), T("i64", ()))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


def test_a_single_vector_is_its_own_cartesian_product():
    x = torch.arange(3.0)
    assert torch.cartesian_prod(x) is x  # so the trace has no op for it either


def test_a_joined_single_tensor_is_a_copy():
    # torch.hstack([x]) is new memory: a write to it must not reach x.
    def f(x):
        y = torch.hstack([x])
        y.add_(1)
        return x, y

    check_case(Case("hstack-single-write", f, (T("f32", (3,)),), ("hstack",)))


REFUSED = (
    ("hstack-empty", lambda x: torch.hstack([]), T("f32", (3,))),
    ("vstack-widths", lambda x: torch.vstack([x, x[:, :1]]), T("f32", (2, 3))),
    ("block_diag-3d", lambda x: torch.block_diag(x, x), T("f32", (2, 2, 2))),
    ("cartesian_prod-matrix", lambda x: torch.cartesian_prod(x, x), T("f32", (2, 2))),
    ("cartesian_prod-dtypes", lambda x: torch.cartesian_prod(x, x.long()), T("f32", (2,))),
    ("combinations-matrix", torch.combinations, T("f32", (2, 2))),
    ("combinations-negative", lambda x: torch.combinations(x, -1), T("f32", (3,))),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(REFUSED))
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)
