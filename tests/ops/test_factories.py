"""The factories: zeros, ones, full, arange, linspace, tensor literals, empty tensors
without elements, the *_like forms and the random draws (rand, randn, rand_like,
randn_like), and their prims (full, iota, tensor, uniform, normal, bernoulli). Random cases run under one seed and must agree with eager bitwise. The
bernoulli prim (dropout's draw) is checked here directly, its meta rule against its
implementation.
"""

from __future__ import annotations

import pytest
import torch

from tests.ops.harness import (
    DT,
    FLOATS,
    Case,
    T,
    case_adder,
    check_case,
    check_refused,
    check_stays_torch_call,
    rows_by_id,
)
from tracecli.core import dtypes
from tracecli.core.symbol import Tag
from tracecli.core.trace import walk
from tracecli.core.values import TensorType
from tracecli.frontend.tracer import trace_callable
from tracecli.ops import prims
from tracecli.ops.promotion import ShapeError

CASES: list[Case] = []
case = case_adder(CASES)

# --- zeros, ones, full, arange, the *_like forms, random draws --------------------------------------------

case("zeros", "varargs", lambda: torch.zeros(2, 3))
case("zeros", "tuple", lambda: torch.zeros((2, 3, 4), dtype=torch.float64))
case("zeros", "list", lambda: torch.zeros([4], dtype=torch.int64))
case("zeros", "0d", lambda: torch.zeros(()))
case("zeros", "device", lambda: torch.zeros(3, device="cpu", dtype=torch.bool))
case("ones", "varargs", lambda: torch.ones(2, 3))
case("ones", "tuple", lambda: torch.ones((3,), dtype=torch.bfloat16))
case("ones", "0d", lambda: torch.ones([], dtype=torch.int32))
case(("ones", "add"), "with-input", lambda x: x + torch.ones(x.shape[-1]), T("f32", (3, 4)))
case("full", "float", lambda: torch.full((2, 3), 1.5))
case("full", "int", lambda: torch.full((2, 3), 7))
case("full", "bool", lambda: torch.full((4,), True))
case("full", "dtype", lambda: torch.full([2, 2], 3, dtype=torch.float16))
case("full", "0d", lambda: torch.full((), -2.0, dtype=torch.float64))
case("full", "inf", lambda: torch.full((3,), float("-inf")))
case("arange", "end", lambda: torch.arange(5))
case("arange", "start-end", lambda: torch.arange(2, 9))
case("arange", "step", lambda: torch.arange(1, 10, 3))
case("arange", "negative-step", lambda: torch.arange(5, -5, -2))
case("arange", "float-step", lambda: torch.arange(0, 1, 0.1))
case("arange", "float-end", lambda: torch.arange(2.5))
case("arange", "dtype", lambda: torch.arange(6, dtype=torch.float64))
case("arange", "int-dtype-float-args", lambda: torch.arange(0.5, 4.5, dtype=torch.int64))
case("arange", "empty", lambda: torch.arange(3, 3))
case("arange", "int-dtype-float-step", lambda: torch.arange(0, 5, 1.5, dtype=torch.int64))
case("arange", "i32-float-bounds", lambda: torch.arange(0.5, 5.7, 2, dtype=torch.int32))
case("arange", "big-int64", lambda: torch.arange(2**60, 2**60 + 7, 3))
case("arange", "negative-float-step", lambda: torch.arange(1, -1, -0.3, dtype=torch.float64))
case(("arange", "mul"), "with-input", lambda x: x * torch.arange(x.shape[-1]), T("f32", (3, 4)))
# linspace steps as torch's kernel does, within a rounding of it (the kernel's vector lanes
# and fused multiply-adds round differently).
case("linspace", "f32", lambda: torch.linspace(-1.5, 2.0, 7))
case("linspace", "f64-descending", lambda: torch.linspace(3, -4, 40, dtype=torch.float64))
case("linspace", "kw", lambda: torch.linspace(start=0.0, end=1.0, steps=5, requires_grad=False))
case("linspace", "one", lambda: torch.linspace(2.5, 7.0, 1), exact=True)
case("linspace", "none", lambda: torch.linspace(2.5, 7.0, 0), exact=True)
case("linspace", "tensor-bounds", lambda a, b: torch.linspace(a, b, 9), T("f64", ()), T("f32", ()))
case("linspace", "tensor-start", lambda a: torch.linspace(a, 3.5, 1, dtype=torch.float64), T("i64", ()))
case(("linspace", "mul"), "with-input", lambda x: x * torch.linspace(0, 1, x.shape[-1]), T("f32", (3, 4)))
case("empty", "no-elements", lambda: torch.empty(0), exact=True)
case("empty", "tuple", lambda: torch.empty((2, 0), dtype=torch.int64, layout=torch.strided, requires_grad=False),
     exact=True)
case("empty", "size-kw", lambda: torch.empty(size=[0, 3], dtype=torch.float64), exact=True)
case("tensor", "floats", lambda: torch.tensor([0.5, -1.25, 3.0]), exact=True)
case("tensor", "nested-ints", lambda: torch.tensor([[1, 2], [3, 4], [5, 6]]), exact=True)
case("tensor", "bools", lambda: torch.tensor((True, False)), exact=True)
case("tensor", "mixed", lambda: torch.tensor([True, 2, 3.5]), exact=True)
case("tensor", "0d-dtype", lambda: torch.tensor(2.75, dtype=torch.float64), exact=True)
case("tensor", "truncated", lambda: torch.tensor([1.7, -2.5], dtype=torch.int32), exact=True)
case("tensor", "complex", lambda: torch.tensor([1 + 2j, 3.0]), exact=True)
case("tensor", "empty", lambda: torch.tensor([[], []]), exact=True)
case("tensor", "special", lambda: torch.tensor([float("inf"), -float("inf"), 1e-30], dtype=torch.float16), exact=True)
case(("tensor", "mul"), "with-input", lambda x: x * torch.tensor([1.0, -2.0, 0.5, 4.0], requires_grad=False),
     T("f32", (3, 4)), exact=True)
for _src in ("f32", "i64", "bool", "bf16"):
    case("zeros_like", "fn", torch.zeros_like, T(_src, (3, 4)))
    case("ones_like", "fn", torch.ones_like, T(_src, (2, 3, 4)))
case("zeros_like", "dtype", lambda x: torch.zeros_like(x, dtype=torch.int64), T("f32", (3, 4)))
case("ones_like", "dtype", lambda x: torch.ones_like(x, dtype=torch.float16), T("bool", ()))

for _dtype in FLOATS:
    _torch_dtype = DT[_dtype]
    case("rand", _dtype, lambda d=_torch_dtype: torch.rand(3, 4, dtype=d), random=True)
    case("randn", _dtype, lambda d=_torch_dtype: torch.randn((2, 3, 4), dtype=d), random=True)
    case("rand_like", "fn", torch.rand_like, T(_dtype, (3, 4)), random=True)
    case("randn_like", "fn", torch.randn_like, T(_dtype, (5,)), random=True)
case("rand", "0d", lambda: torch.rand(()), random=True)
case("randn", "list", lambda: torch.randn([7]), random=True)
case("rand_like", "dtype", lambda x: torch.rand_like(x, dtype=torch.float64), T("f32", (3, 4)), random=True)
case("randn_like", "dtype", lambda x: torch.randn_like(x, dtype=torch.float32), T("i64", (2, 3)), random=True)
case(("randn", "rand", "add"), "two-draws", lambda: torch.randn(3) + torch.rand(3), random=True)
case(("rand_like", "mul"), "with-input", lambda x: x * torch.rand_like(x), T("f32", (3, 4)), random=True)

# --- keywords and Tensor methods -----------------------------------------------------------------------

case("zeros", "size-kw", lambda: torch.zeros(size=(2, 3)))
case("ones", "size-kw", lambda: torch.ones(size=[4], dtype=torch.int64))
case("rand", "size-kw", lambda: torch.rand(size=(2, 3)), random=True)
case("zeros", "new_zeros", lambda x: x.new_zeros(2, 3), T("f64", (4,)))
case("ones", "new_ones", lambda x: x.new_ones((2,), dtype=torch.int32), T("f32", (4,)))
case("full", "new_full", lambda x: x.new_full((2, 2), 3), T("bf16", (4,)))
case("arange", "kw", lambda: torch.arange(start=2, end=9, step=3))
case("arange", "end-kw", lambda: torch.arange(end=4))
case("arange", "start-end-kw", lambda: torch.arange(1, end=4, dtype=torch.float64))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


def test_random_draws_are_tagged_in_traces():
    program = trace_callable(lambda x: torch.rand_like(x) + torch.randn(3, 4), (torch.zeros(3, 4),))
    draws = [b for _, b in walk(program.trace.bsyms) if Tag.RANDOM in b.tags]
    assert [b.symbol.qualname for b in draws] == ["ltorch.rand_like", "prims.uniform", "ltorch.randn", "prims.normal"]


def test_bernoulli_meta_matches_impl():
    sample = prims.bernoulli.impl((40, 50), 0.25, device="cpu", dtype=dtypes.float16)
    assert prims.bernoulli.meta((40, 50), 0.25, device="cpu", dtype=dtypes.float16) == TensorType(
        (40, 50), dtypes.float16, "cpu"
    )
    assert sample.dtype == torch.float16 and set(sample.unique().tolist()) == {0.0, 1.0}
    with pytest.raises(ShapeError):
        prims.bernoulli.meta((3,), 0.5, device="cpu", dtype=dtypes.int64)


REFUSED = (
    ("linspace-negative-steps", lambda x: x + torch.linspace(0, 1, -1), T("f32", (3,))),
    ("tensor-ragged", lambda x: x + torch.tensor([[1.0], [2.0, 3.0]]), T("f32", (3,))),
    ("tensor-complex-into-float", lambda x: x + torch.tensor([1j], dtype=torch.float32), T("f32", (3,))),
    ("tensor-nan-into-int", lambda x: x + torch.tensor([float("nan")], dtype=torch.int64), T("i64", (3,))),
    ("arange-wrong-sign", lambda x: x + torch.arange(3, 0), T("f32", (3,))),
    ("arange-step-truncates-to-zero", lambda x: x + torch.arange(0, 3, 0.5, dtype=torch.int64), T("i64", (6,))),
    ("rand-int", lambda x: x + torch.rand(3, dtype=torch.int64), T("i64", (3,))),
    ("randn_like-int", torch.randn_like, T("i64", (3,))),
)


@pytest.mark.parametrize(("fn", "arg"), rows_by_id(REFUSED))
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)


LEFT_TO_TORCH = (
    # Uninitialised memory: no trace can say what torch leaves there.
    ("empty-with-elements", lambda x: x + torch.empty(3).zero_(), T("f32", (3,)), "torch.empty"),
    # torch's kernel steps integers through doubles and half precision in halves.
    # A sparse tensor is torch's to make: the prims make strided ones.
    ("zeros-sparse", lambda x: x + torch.zeros(3, layout=torch.sparse_coo), T("f32", (3,)), "torch.zeros"),
    ("linspace-int", lambda x: x + torch.linspace(0, 10, 4, dtype=torch.int64), T("i64", (4,)), "torch.linspace"),
    ("linspace-f16", lambda x: x + torch.linspace(0, 1, 5, dtype=torch.float16), T("f16", (5,)), "torch.linspace"),
)


@pytest.mark.parametrize(("fn", "arg", "opaque"), rows_by_id(LEFT_TO_TORCH))
def test_unmodelled_forms_stay_torch_calls(fn, arg, opaque):
    check_stays_torch_call(fn, (arg,), opaque)
