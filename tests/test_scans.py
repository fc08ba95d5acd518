"""torch's associative_scan traced: the generic algorithm, unrolled, with no opaque call,
agreeing with eager (which batches the combine function with vmap) through both
executors, and refusing what eager refuses."""

from __future__ import annotations

import pytest
import torch
from torch._higher_order_ops.associative_scan import associative_scan

from tests.ops.harness import assert_matches
from tracecli.core.verify import verify
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable
from tracecli.passes.lower import lower


def _add(a, b):
    return a + b


def _linear_recurrence(left, right):
    # Mamba's: h_t = a_t * h_{t-1} + b_t, composed as pairs (a, b).
    (a_left, b_left), (a_right, b_right) = left, right
    return a_left * a_right, a_right * b_left + b_right


def _matrix_product(a, b):
    # Not elementwise: each element is a matrix, as vmap hands it over.
    return a @ b


def _randn(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(0))


def check(fn, *args) -> list[str]:
    program = trace_callable(fn, args, name="fn")
    trace = program.trace
    verify(trace)
    with torch.no_grad():
        expected = fn(*args)
    lowered = lower(trace).trace
    for level, t in (("ltorch", trace), ("prims", lowered)):
        assert_matches(level, t, expected, compile_trace(t)(*program.inputs), exact=False)
    return [b.symbol.qualname for b in trace.bsyms]


@pytest.mark.parametrize("length", [1, 2, 3, 5, 8, 13])
def test_cumulative_sum_of_any_length(length):
    recorded = check(lambda x: associative_scan(_add, x, 0, combine_mode="generic"), _randn(length, 3))
    assert not [name for name in recorded if name.startswith("torch.")], recorded


@pytest.mark.parametrize("reverse", [False, True])
def test_pairs_of_tensors_along_an_inner_dim(reverse):
    def fn(a, b):
        return associative_scan(_linear_recurrence, (a, b), dim=2, reverse=reverse, combine_mode="generic")

    check(fn, _randn(2, 3, 7, 4).sigmoid(), _randn(2, 3, 7, 4))


def test_a_combine_function_that_is_not_elementwise():
    check(lambda x: associative_scan(_matrix_product, x, 1, combine_mode="generic"), _randn(2, 6, 3, 3))


def test_what_eager_refuses_is_refused():
    # On CPU, eager refuses the pointwise mode (it needs CUDA's generated code).
    with pytest.raises(ValueError, match="combine_mode=.pointwise."):
        trace_callable(lambda x: associative_scan(_add, x, 0), (_randn(4),), name="fn")


def test_real_tensors_still_reach_torch():
    x = _randn(5)
    assert torch.allclose(associative_scan(_add, x, 0, combine_mode="generic"), x.cumsum(0))
