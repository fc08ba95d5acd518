"""The grad transform: names, accumulation, dtypes, refusals, the forward/backward
contract, opaque calls, and the op matrix's gradients against torch.autograd
(tests/ops/grad_matrix.py: a sample here, every case with TRACECLI_GRAD_MATRIX=1)."""

from __future__ import annotations

import os

import pytest
import torch
import torch.nn.functional as F

from tests.ops.grad_matrix import FAMILIES, family_cases, result, sampled
from tracecli.core.grad_contract import verify_grad_contract
from tracecli.core.printing import format_trace
from tracecli.core.verify import VerificationError, verify
from tracecli.executors.grad import run_grad
from tracecli.frontend.tracer import trace_callable
from tracecli.passes.grad import GradError, grad_transform
from tracecli.passes.rename import rename

FULL = os.environ.get("TRACECLI_GRAD_MATRIX") == "1"

# Cases whose gradient differs from torch's at finite inputs, reviewed: each needs an
# ltorch rule that follows torch's masking. Never add a case here to make a test pass
# without saying why.
KNOWN: dict[str, str] = {}  # symbol or case id -> why its gradient may differ from torch's


def _grads_match(fn, *args, requires=None):
    program = trace_callable(fn, args, name="fn")
    traces = grad_transform(rename(program.trace).trace, requires)
    verify(traces.forward)
    verify(traces.backward)
    verify_grad_contract(traces.forward, traces.backward)
    _, grads = run_grad(traces, list(program.inputs))
    leaves = [a.detach().clone().requires_grad_(a.dtype.is_floating_point) for a in args]
    out = fn(*leaves)
    wanted = [leaf for leaf, v in zip(leaves, program.trace.inputs, strict=False) if v.name in traces.requires_grad]
    expected = torch.autograd.grad(out, wanted, torch.ones_like(out), allow_unused=True)
    for got, want in zip(grads, expected, strict=True):
        want = torch.zeros_like(got) if want is None else want
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want)
    return traces


def test_names_say_what_they_are():
    def mlp(x, w1, w2):
        hidden = torch.relu(x @ w1)
        return (hidden @ w2).sum()

    traces = _grads_match(mlp, torch.randn(3, 4), torch.randn(4, 5), torch.randn(5, 2))
    text = format_trace(traces.backward)
    assert "def fn_backward(" in text
    assert [g.name for g in traces.backward.output] == ["grad_x", "grad_w1", "grad_w2"]
    assert "grad_hidden = " in text  # a named forward value's cotangent
    assert {v.name for v in traces.saved} <= {v.name for v in traces.forward.inputs} | {"hidden", "t0"} | {
        v.name for b in traces.forward.bsyms for v in b.output_values()}


def test_a_value_used_twice_accumulates():
    _grads_match(lambda x: (x * x + x.sin() * x).sum(), torch.randn(4, dtype=torch.float64))


def test_what_no_grad_computed_is_a_constant_to_the_gradient():
    def f(x, w):
        with torch.no_grad():
            scale = x * 2  # no gradient flows through here
            with torch.enable_grad():
                shift = w * 3  # but through here it does
        return (x * scale + shift).sum()

    _grads_match(f, torch.randn(3, dtype=torch.float64), torch.randn(3, dtype=torch.float64))


def test_broadcasting_is_undone():
    _grads_match(lambda a, b, c: (a * b + c).sum(), torch.randn(3, 1, 4), torch.randn(5, 1), torch.randn(4))


def test_half_precision_gradients_keep_their_dtype():
    traces = _grads_match(lambda x, w: (x @ w).float().sum(), torch.randn(2, 3).half(), torch.randn(3, 2).half())
    assert [str(g.dtype.short) for g in traces.backward.output] == ["f16", "f16"]


def test_integer_inputs_get_no_gradient():
    def fn(w, index):
        return F.embedding(index, w).sum()

    program = trace_callable(fn, (torch.randn(5, 3), torch.tensor([0, 2, 2])), name="fn")
    traces = grad_transform(program.trace)
    assert traces.requires_grad == ("w",)
    with pytest.raises(GradError, match="not a floating-point tensor"):
        grad_transform(program.trace, ["index"])


def test_embedding_padding_row_gets_no_gradient():
    _grads_match(lambda w, i: F.embedding(i, w, padding_idx=1).sum(), torch.randn(4, 3), torch.tensor([[0, 1], [1, 3]]),
                 requires=["w"])


def test_refused_with_the_op_and_line():
    def fn(x):
        return torch.linalg.det(x).sum()

    program = trace_callable(fn, (torch.eye(3) + 0.1,), name="fn")
    with pytest.raises(GradError, match=r"prims.det \(tests/test_grad.py:\d+"):
        grad_transform(program.trace)


def test_random_draws_from_differentiable_arguments_are_refused():
    program = trace_callable(lambda m: torch.normal(m, 1.0).sum(), (torch.randn(3),), name="fn")
    with pytest.raises(GradError, match="random"):
        grad_transform(program.trace)


def test_dropout_is_differentiable():
    torch.manual_seed(0)
    program = trace_callable(lambda x: F.dropout(x, 0.5).sum(), (torch.randn(8),), name="fn")
    traces = grad_transform(program.trace)
    torch.manual_seed(0)
    out, (grad,) = run_grad(traces, list(program.inputs))
    mask = grad != 0
    assert torch.equal(grad[mask], torch.full_like(grad[mask], 2.0))


def test_opaque_calls_get_a_torch_autograd_backward():
    def fn(x):
        return torch.special.bessel_j0(x).sum() if False else torch.ops.aten.frexp.Tensor(x)[0].sum() * 0 + \
            torch.nn.functional.pairwise_distance(x, x + 1).sum()

    x = torch.randn(3, 4, dtype=torch.float64)
    program = trace_callable(fn, (x,), name="fn")
    assert any(b.symbol.namespace in ("torch", "") for b in program.trace.bsyms)
    _grads_match(fn, x)


def test_the_contract_check_finds_an_unsaved_value():
    program = trace_callable(lambda x: (x.exp() * x).sum(), (torch.randn(3),), name="fn")
    traces = grad_transform(program.trace)
    forward = traces.forward.replace(output=(traces.forward.output[0], traces.saved[:-1]))
    with pytest.raises(VerificationError):
        verify_grad_contract(forward, traces.backward)


def test_gpt_block_forward_backward():
    torch.manual_seed(0)
    block = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True).double()
    x = torch.randn(2, 5, 16, dtype=torch.float64)
    program = trace_callable(lambda x: block(x).pow(2).mean(), (x,), name="fn")
    traces = grad_transform(program.trace)
    verify_grad_contract(traces.forward, traces.backward)
    _, grads = run_grad(traces, list(program.inputs))
    params = dict(block.named_parameters())
    x_leaf = x.clone().requires_grad_()
    loss = block(x_leaf).pow(2).mean()
    expected = torch.autograd.grad(loss, [x_leaf, *params.values()])
    got = dict(zip(traces.requires_grad, grads, strict=True))
    assert torch.allclose(got["x"], expected[0], atol=1e-10)


@pytest.mark.parametrize("family", FAMILIES)
def test_op_matrix_gradients_match_torch_autograd(family):
    cases = [c for c in family_cases(family) if FULL or sampled(c)]
    wrong = [f"{c.id}: {r.kind}: {r.detail}" for c in cases for r in [result(c)]
             if r.kind in ("mismatch", "error") and c.symbols[0] not in KNOWN and c.id not in KNOWN]
    assert not wrong, "\n".join(wrong)


def test_a_reduction_over_a_size_the_data_decide_gets_its_gradient():
    # The backward broadcasts the cotangent of the sum back to u0 elements: it reads u0
    # off the positions it was handed (a binding of its own), or the number the forward bound.
    x = torch.randn(4, 5, dtype=torch.float64)
    _grads_match(lambda x: x[x > 0].sum() * 2, x)
    _grads_match(lambda x: torch.masked_select(x, x < 0.5).mean(), x)
    _grads_match(lambda x, r: x.repeat_interleave(r, dim=0).sum(), x, torch.tensor([2, 0, 1, 3]))


def test_attention_rows_the_mask_hides_entirely_get_zero_gradients():
    # The softmax of a fully masked row is 0 / 0 inside, which the result masks away; its
    # gradient must not carry the NaN (torch's _safe_softmax gives those rows zeros).
    def attend(q, k, v, mask):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask).sum()

    mask = torch.tensor([[True, True, True], [False, False, False], [True, False, True]])
    q, k, v = (torch.randn(1, 2, 3, 4, dtype=torch.float64) for _ in range(3))
    _grads_match(attend, q, k, v, mask, requires=["q", "k", "v"])


def test_a_maximum_on_indices_alone_does_not_block_a_gradient():
    # Interpolation clamps its source indices into range: no gradient flows through that
    # minimum, so the decomposition differentiates (the cotangent added at each index).
    _grads_match(lambda x: F.interpolate(x, scale_factor=2.0, mode="nearest"), torch.randn(1, 2, 3))
    _grads_match(lambda x: F.interpolate(x, size=7, mode="linear"), torch.randn(1, 2, 4))


def test_nearest_interpolation_that_keeps_the_size_is_refused():
    # torch's backward kernel passes the cotangent through as if no index repeated there,
    # which is not the derivative of its forward ([0, 0, 1, 2] reads x[0] twice).
    program = trace_callable(lambda x: F.interpolate(x, scale_factor=1.1), (torch.randn(1, 2, 4),), name="fn")
    with pytest.raises(GradError, match="keeps the size"):
        grad_transform(program.trace)


def test_cumprod_differentiates_across_zeros():
    # Before a row's first zero, after it, and at it: torch's gradient, with no division by zero.
    x = torch.tensor([[2.0, 0.0, 3.0, 0.0, 5.0], [1.0, 2.0, 3.0, 4.0, 5.0], [0.0, 1.0, 2.0, 3.0, 4.0],
                      [1.5, 2.0, 0.0, 0.0, 0.0]], dtype=torch.float64)
    program = trace_callable(lambda x: torch.cumprod(x, 1), (x,), name="fn")
    g = torch.randn(4, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    _, (grad,) = run_grad(grad_transform(program.trace), [x], [g])
    leaf = x.clone().requires_grad_()
    torch.testing.assert_close(grad, torch.autograd.grad(torch.cumprod(leaf, 1), leaf, g)[0])
