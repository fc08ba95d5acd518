"""scaled_dot_product_attention: masks (bool, float, causal, both), scales, grouped
query attention, 2-D to 4-D inputs, dropout, and the projections-heads-attention-merge
pattern of a transformer block. It decomposes into other families' prims and has none
of its own."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from tests.ops.harness import FLOATS, Case, L, T, case_adder, check_case, entry, module, refusal_tests

CASES: list[Case] = []
case = case_adder(CASES)


def random_case(symbol, form: str, fn, *args) -> None:
    """A random op whose decomposition draws eager's RNG stream (the same dropout mask) but
    rounds differently around it (attention's softmax): compared within tolerance under the
    same seed, not bitwise."""
    symbols = (symbol,) if isinstance(symbol, str) else symbol
    label = ",".join(str(a) for a in args)
    CASES.append(Case(f"{symbols[0]}-{form}({label})", entry(fn), args, symbols, random=True, exact=False))


def _qkv(dtype, q=(2, 4, 6, 8), k=(2, 4, 5, 8), v=None):
    return T(dtype, q), T(dtype, k), T(dtype, v or k)


_sdpa = F.scaled_dot_product_attention
for _dtype in FLOATS:
    case("scaled_dot_product_attention", "F", _sdpa, *_qkv(_dtype))
    case("scaled_dot_product_attention", "causal", lambda q, k, v: _sdpa(q, k, v, is_causal=True),
         *_qkv(_dtype, k=(2, 4, 6, 8)))
    case("scaled_dot_product_attention", "bool-mask", lambda q, k, v, m: _sdpa(q, k, v, attn_mask=m),
         *_qkv(_dtype), T("bool", (6, 5)))
    case("scaled_dot_product_attention", "float-mask", lambda q, k, v, m: _sdpa(q, k, v, m),
         *_qkv(_dtype), T(_dtype, (2, 1, 6, 5)))
    case("scaled_dot_product_attention", "3d", _sdpa, *_qkv(_dtype, q=(3, 6, 8), k=(3, 5, 8)))
    case("scaled_dot_product_attention", "gqa", lambda q, k, v: _sdpa(q, k, v, enable_gqa=True),
         *_qkv(_dtype, q=(2, 4, 6, 8), k=(2, 2, 5, 8)))
case("scaled_dot_product_attention", "scale", lambda q, k, v: _sdpa(q, k, v, scale=0.3), *_qkv("f32"))
# The fused kernel (4-D, no dropout) applies attn_mask and the causal mask together.
for _mask in (T("bool", (6, 6)), T("f32", (2, 1, 6, 6))):
    case("scaled_dot_product_attention", "causal-and-mask", lambda q, k, v, m: _sdpa(q, k, v, m, is_causal=True),
         *_qkv("f32", k=(2, 4, 6, 8)), _mask)
case("scaled_dot_product_attention", "negative-scale", lambda q, k, v: _sdpa(q, k, v, scale=-0.5),
     *_qkv("f32", q=(3, 6, 8), k=(3, 5, 8)))
case("scaled_dot_product_attention", "causal-rectangular", lambda q, k, v: _sdpa(q, k, v, is_causal=True),
     *_qkv("f32", q=(2, 4, 3, 8), k=(2, 4, 5, 8)))
case("scaled_dot_product_attention", "causal-3d", lambda q, k, v: _sdpa(q, k, v, None, 0.0, True),
     *_qkv("f64", q=(3, 5, 8), k=(3, 5, 8)))
case("scaled_dot_product_attention", "value-dim", _sdpa, *_qkv("f16", k=(2, 4, 5, 8), v=(2, 4, 5, 3)))
case("scaled_dot_product_attention", "broadcast-batch", _sdpa, *_qkv("f32", q=(1, 4, 6, 8), k=(2, 4, 5, 8)))
case("scaled_dot_product_attention", "one-kv-head", _sdpa, *_qkv("f32", k=(2, 1, 5, 8)))
case("scaled_dot_product_attention", "2d", _sdpa, *_qkv("f32", q=(6, 8), k=(5, 8)))
case("scaled_dot_product_attention", "keywords",
     lambda q, k, v, m: _sdpa(query=q, key=k, value=v, attn_mask=m, scale=0.25), *_qkv("f32"), T("bool", (1, 4, 6, 5)))
# Rows 0 and 2 attend to nothing: both kernels give them zeros, not NaN.
_MASK = L(((False, False, False), (True, False, True), (False, False, False)), "bool")
case("scaled_dot_product_attention", "masked-rows", lambda q, k, v, m: _sdpa(q, k, v, m),
     *_qkv("f32", q=(1, 2, 3, 4), k=(1, 2, 3, 4)), _MASK)
case("scaled_dot_product_attention", "masked-rows-3d", lambda q, k, v, m: _sdpa(q, k, v, m),
     *_qkv("f32", q=(2, 3, 4), k=(2, 3, 4)), _MASK)
case("scaled_dot_product_attention", "float-mask-inf", lambda q, k, v, m: _sdpa(q, k, v, m),
     *_qkv("f32", q=(1, 1, 2, 4), k=(1, 1, 3, 4)), L(((0.0, -math.inf, 0.5), (-math.inf, -math.inf, -math.inf)), "f32"))
case("scaled_dot_product_attention", "gqa-dropout-free-3d", lambda q, k, v: _sdpa(q, k, v, enable_gqa=True),
     *_qkv("bf16", q=(6, 5, 8), k=(3, 5, 8)))
for _dtype in FLOATS:
    random_case("scaled_dot_product_attention", "dropout", lambda q, k, v: _sdpa(q, k, v, dropout_p=0.3),
                *_qkv(_dtype))
random_case("scaled_dot_product_attention", "dropout-causal",
            lambda q, k, v: _sdpa(q, k, v, dropout_p=0.5, is_causal=True), *_qkv("f32", k=(2, 4, 6, 8)))
random_case("scaled_dot_product_attention", "dropout-mask-gqa",
            lambda q, k, v, m: _sdpa(q, k, v, m, 0.2, enable_gqa=True), *_qkv("f32", k=(2, 2, 5, 8)),
            T("bool", (6, 5)))


class _SelfAttention(nn.Module):
    """The projections-heads-sdpa-merge pattern of transformer blocks."""

    def __init__(self, dim=8, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, t, d))


case("scaled_dot_product_attention", "module", module(_SelfAttention), T("f32", (2, 5, 8)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


REFUSED_CLEARLY = (
    ("sdpa-causal-and-mask", lambda q, m: F.scaled_dot_product_attention(q, q, q, m, is_causal=True),
     (torch.rand(2, 3, 4), torch.ones(3, 3, dtype=torch.bool)), "is_causal"),
    ("sdpa-dtypes", lambda q, k: F.scaled_dot_product_attention(q, k, k), (torch.rand(2, 3, 4), torch.rand(2, 3, 4).double()),
     "dtype"),
    ("sdpa-gqa-heads", lambda q, k: F.scaled_dot_product_attention(q, k, k, enable_gqa=True),
     (torch.rand(1, 3, 2, 4), torch.rand(1, 2, 2, 4)), "heads"),
)


test_refused_with_a_clear_error, test_eager_refuses_them_too = refusal_tests(REFUSED_CLEARLY)
