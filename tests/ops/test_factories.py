"""The factories: zeros, ones, full, arange, eye, the *_like forms, empty (cases fill it:
its values are unspecified), tensor from Python numbers, linspace and logspace, the
random draws (rand, randn, randint, randperm, normal and their *_like forms) and
manual_seed, get/set_rng_state, and their prims (full, iota, empty, tensor, linspace, logspace, uniform,
normal, bernoulli, randint, randperm, manual_seed). Random cases run under one seed and
must agree with eager bitwise. The
bernoulli prim (dropout's draw) is checked here directly, its meta rule against its
implementation.
"""

from __future__ import annotations

import numpy
import pytest
import torch
import torch.nn.functional as F

from tests.ops.harness import (
    DT,
    FLOATS,
    Case,
    T,
    case_adder,
    check_case,
    check_refused,
    rows_by_id,
)
from tracecli.core import dtypes
from tracecli.core.errors import TracingError
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
# linspace is torch's own kernel (prims.linspace): bit for bit whatever the CPU's vector width.
case("linspace", "f32", lambda: torch.linspace(-1.5, 2.0, 7), exact=True)
case("linspace", "f64-descending", lambda: torch.linspace(3, -4, 40, dtype=torch.float64), exact=True)
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


# --- empty (filled: its values are unspecified), full_like, scalar_tensor, eye ---------------------

case(("empty", "fill_"), "varargs", lambda: torch.empty(2, 3).fill_(1.5))
case(("empty", "zero_"), "tuple-dtype", lambda: torch.empty((2, 3), dtype=torch.int32).zero_())
case("empty", "no-elements-2d", lambda: torch.empty(0, 3))
case(("empty", "copy_"), "size-kw", lambda x: torch.empty(size=x.shape).copy_(x), T("f64", (3, 4)))
case(("empty", "fill_"), "new_empty", lambda x: x.new_empty((2,)).fill_(7), T("i64", (4,)))
case(("empty_like", "fill_"), "fn", lambda x: torch.empty_like(x).fill_(2), T("i32", (2, 3)))
case(("empty_like", "copy_"), "dtype", lambda x: torch.empty_like(x, dtype=torch.float64).copy_(x), T("f32", (3, 4)))
case(("empty_like", "zero_"), "0d", lambda x: torch.empty_like(x).zero_(), T("bf16", ()))
for _src in ("f32", "i64", "bool"):
    case("full_like", "fn", lambda x: torch.full_like(x, 2.5), T(_src, (2, 3)))
case("full_like", "int-value", lambda x: torch.full_like(x, 7), T("f16", (4,)))
case("full_like", "dtype", lambda x: torch.full_like(x, -1, dtype=torch.uint8), T("f32", (3,)))
case(("full_like", "add"), "0d", lambda x: x + torch.full_like(x, float("inf")), T("f64", ()))
case("scalar_tensor", "int", lambda: torch.scalar_tensor(3))
case("scalar_tensor", "float", lambda: torch.scalar_tensor(-2.5))
case("scalar_tensor", "bool-dtype", lambda: torch.scalar_tensor(True, dtype=torch.bool))
case(("scalar_tensor", "mul"), "int-dtype", lambda x: x * torch.scalar_tensor(-1, dtype=torch.int8), T("i8", (3,)))
case("eye", "n", lambda: torch.eye(3))
case("eye", "n-m", lambda: torch.eye(2, 4, dtype=torch.int64))
case("eye", "bool", lambda: torch.eye(3, 2, dtype=torch.bool))
case("eye", "empty", lambda: torch.eye(0, 3))
case(("eye", "matmul"), "sized-by-input", lambda x: torch.eye(x.shape[0], dtype=x.dtype) @ x, T("f64", (3, 4)))

# --- tensor: Python numbers and sequences of them ---------------------------------------------------

case("tensor", "float", lambda: torch.tensor(2.5))
case("tensor", "int", lambda: torch.tensor(-3))
case("tensor", "bool", lambda: torch.tensor(True))
case("tensor", "int-and-complex", lambda: torch.tensor([1, 2j]))
case("tensor", "nested", lambda: torch.tensor([[1, 2], [3, 4]]))
case("tensor", "tuples", lambda: torch.tensor(((1.5, 2), (3, 4))))
case("tensor", "empty-list", lambda: torch.tensor([]))
case("tensor", "dtype-truncates", lambda: torch.tensor([1.7, -2.2], dtype=torch.int64))
case("tensor", "dtype-wraps", lambda: torch.tensor([-1, 255], dtype=torch.uint8))
case("tensor", "overflow-to-inf", lambda: torch.tensor([1e40, float("nan")]))
case("tensor", "sizes", lambda x: torch.tensor([x.shape, x.shape[::-1]]), T("i64", (3, 2)))
# A numpy scalar keeps its dtype (np.float64(0.1) is not float32's 0.1).
case("tensor", "numpy-float64", lambda: torch.tensor(numpy.float64(0.1)), exact=True)
case("tensor", "numpy-float32", lambda: torch.tensor(numpy.float32(0.1)), exact=True)
case("tensor", "numpy-int16-dtype", lambda: torch.tensor(numpy.int16(-3), dtype=torch.float32), exact=True)
case(("tensor", "add"), "numpy-uint8", lambda x: x + torch.tensor(numpy.uint8(200)), T("u8", (3,)), exact=True)
case(("tensor", "mul"), "a-size", lambda x: x * torch.tensor(x.shape[-1]), T("f32", (2, 3)))

# --- linspace, logspace: torch's own kernels, their shapes and dtypes written down ----------------------

case("linspace", "floats", lambda: torch.linspace(-3.3, 17.1, 101), exact=True)
case("linspace", "f64", lambda: torch.linspace(0, 1, 7, dtype=torch.float64), exact=True)
case("linspace", "int-dtype", lambda: torch.linspace(0, 10, 4, dtype=torch.int64))
case("linspace", "complex", lambda: torch.linspace(0, 1 + 1j, 4))
case("linspace", "one-step", lambda: torch.linspace(2, 5, 1))
case("linspace", "no-steps", lambda: torch.linspace(2, 5, 0))
case("linspace", "tensor-ends", lambda a, b: torch.linspace(a, b, 5), T("f64", ()), T("i64", ()))
case(("linspace", "mul"), "sized-by-input", lambda x: x * torch.linspace(0, 1, x.shape[-1]), T("f32", (2, 5)))
case("logspace", "base-10", lambda: torch.logspace(0, 2, 5))
case("logspace", "base-2", lambda: torch.logspace(0, 3, 4, base=2, dtype=torch.float64))
case("logspace", "tensor-end", lambda a: torch.logspace(a, 1.5, 3), T("f32", ()))

# --- random integers, permutations, normal samples ---------------------------------------------------

case("randint", "high", lambda: torch.randint(10, (3, 4)), random=True)
case("randint", "low-high", lambda: torch.randint(-5, 5, (6,), dtype=torch.int32), random=True)
case("randint", "keywords", lambda: torch.randint(low=2, high=9, size=(5,)), random=True)
case("randint", "size-kw", lambda: torch.randint(3, size=(2, 2)), random=True)
case("randint", "float-dtype", lambda: torch.randint(0, 3, (5,), dtype=torch.float32), random=True)
case(("randint", "add"), "sized-by-input", lambda x: x + torch.randint(0, 3, x.shape), T("i64", (2, 3)), random=True)
case("randint_like", "high", lambda x: torch.randint_like(x, 10), T("f32", (3, 4)), random=True)
case("randint_like", "low-high", lambda x: torch.randint_like(x, 3, 10, dtype=torch.int64), T("f32", (5,)),
     random=True)
case("randint_like", "int8", lambda x: torch.randint_like(x, -4, 4), T("i8", (2, 3)), random=True)
case("randperm", "n", lambda: torch.randperm(10), random=True)
case("randperm", "float-dtype", lambda: torch.randperm(5, dtype=torch.float32), random=True)
case(("randperm", "getitem"), "shuffle-rows", lambda x: x[torch.randperm(x.shape[0])], T("f32", (4, 3)), random=True)
for _dtype in ("f32", "f64"):
    case("normal", "tensors", lambda m, s: torch.normal(m, s), T(_dtype, (3, 4)), T(_dtype, (3, 4), "pos"),
         random=True)
case("normal", "broadcast", lambda m, s: torch.normal(m, s), T("f32", (3, 1)), T("f32", (4,), "pos"), random=True)
case("normal", "tensor-mean", lambda m: torch.normal(m, 2.0), T("f32", (2, 3)), random=True)
case("normal", "mean-only", lambda m: torch.normal(m), T("bf16", (5,)), random=True)
case("normal", "number-mean", lambda s: torch.normal(1.5, s), T("f64", (4,), "pos"), random=True)
case("normal", "numbers", lambda: torch.normal(0.5, 2.0, (3, 4)), random=True)
case("normal", "keywords", lambda: torch.normal(mean=-1, std=3, size=(5,), dtype=torch.float64), random=True)


def _draws_in_order(x):
    # Each draw takes the generator where the previous one left it, as in eager.
    return torch.randint(10, (3,)), torch.randn(3), torch.randperm(4), torch.normal(x, 1.0), torch.rand_like(x)


case(("randint", "randn", "randperm", "normal", "rand_like"), "in-order", _draws_in_order, T("f32", (2, 3)),
     random=True)


def _reseeded(x):
    # Seeded inside the program: the draws after each seed are eager's whatever the state before.
    torch.manual_seed(7)
    a = torch.rand_like(x)
    torch.random.manual_seed(11)
    return a, torch.randn(3), F.dropout(x, 0.5)


case(("manual_seed", "rand_like", "randn"), "reseeded", _reseeded, T("f32", (3, 4)), random=True)


def _restored(x):
    # The draw after restoring the state repeats the one after reading it.
    state = torch.get_rng_state()
    a = torch.rand_like(x)
    torch.random.set_rng_state(state)
    return a - torch.rand_like(x), torch.randn(2)


case(("get_rng_state", "set_rng_state", "rand_like"), "restored", _restored, T("f32", (3, 4)), random=True)

# --- keywords and Tensor methods -----------------------------------------------------------------------

case("zeros", "size-kw", lambda: torch.zeros(size=(2, 3)))
case("ones", "size-kw", lambda: torch.ones(size=[4], dtype=torch.int64))
case("rand", "size-kw", lambda: torch.rand(size=(2, 3)), random=True)
case("zeros", "new_zeros", lambda x: x.new_zeros(2, 3), T("f64", (4,)))
case("zeros", "new_zeros-size-kw", lambda x: x.new_zeros(size=x.shape), T("i32", (2, 3)))
case(("zeros", "add"), "torch.Size", lambda x: torch.zeros(x.shape) + x, T("f32", (2, 3)))
case(("ones", "mul"), "torch.Size-constant", lambda x: torch.ones(torch.Size([2, 1])) * x, T("f32", (3,)))
case(("ones", "sub"), "size-of-input", lambda x: torch.ones(x.size(), dtype=torch.int64) - x, T("i64", (3, 1)))
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


def test_a_sparse_layout_is_refused():
    # The prims make strided tensors, and a sparse one is no value a trace holds.
    with pytest.raises(TracingError, match="sparse tensors are not traced"):
        trace_callable(lambda x: x + torch.zeros(3, layout=torch.sparse_coo), (torch.ones(3),), name="fn")
