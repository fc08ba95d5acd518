"""The op matrix for the neural-network ops: embedding, dropout, attention, the
normalisations, convolution and padding, pooling, losses.

Every case goes through `check_case` (trace, verify, no opaque calls, recorded types equal
to what the implementations return, torch level and prims level against eager). Module
forms call nn.Module instances, whose parameters and buffers become trace inputs.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from tests.ops.harness import FLOATS, SEED, Case, L, T, assert_matches, case_adder, check_case, entry
from tracecli.core import dtypes
from tracecli.core.errors import TracingError
from tracecli.core.symbol import Tag
from tracecli.core.trace import walk
from tracecli.core.values import TensorType, TensorValue
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable
from tracecli.ops import ltorch, prims
from tracecli.ops.promotion import ShapeError
from tracecli.passes.lower import lower

CASES: list[Case] = []
case = case_adder(CASES)


def random_case(symbol, form: str, fn, *args) -> None:
    """A random op whose decomposition draws eager's RNG stream (the same dropout mask) but
    rounds differently around it (attention's softmax): compared within tolerance under the
    same seed, not bitwise."""
    symbols = (symbol,) if isinstance(symbol, str) else symbol
    label = ",".join(str(a) for a in args)
    CASES.append(Case(f"{symbols[0]}-{form}({label})", entry(fn), args, symbols, random=True, exact=False))


def module(factory, *, buffers: dict | None = None):
    """An nn.Module built from a fixed seed without touching the global RNG; `buffers`
    gives running statistics values for normalisation layers."""
    with torch.random.fork_rng():
        torch.manual_seed(SEED)
        mod = factory()
        for name, make in (buffers or {}).items():
            getattr(mod, name).copy_(make())
    return mod


HALF = ("f16", "bf16")

# --- embedding ----------------------------------------------------------------------------------

for _dtype in FLOATS:
    case("embedding", "F", F.embedding, T("i64", (2, 3), "small"), T(_dtype, (4, 5)))
case("embedding", "F-i32", F.embedding, T("i32", (7,), "small"), T("f32", (4, 3)))
case("embedding", "F-0d", F.embedding, L(2, "i64"), T("f32", (4, 3)))
case("embedding", "F-3d", F.embedding, T("i64", (2, 2, 3), "small"), T("f32", (4, 6)))
case("embedding", "F-padding_idx", lambda i, w: F.embedding(i, w, padding_idx=0), T("i64", (5,), "small"),
     T("f32", (4, 3)))
case("embedding", "F-padding_idx-negative", lambda i, w: F.embedding(i, w, padding_idx=-1), T("i64", (5,), "small"),
     T("f32", (4, 3)))
case("embedding", "torch-fn", lambda i, w: torch.embedding(w, i), T("i64", (3,), "small"), T("f64", (4, 2)))
case("embedding", "int-table", F.embedding, T("i64", (3,), "small"), T("i64", (4, 2)))
case("embedding", "module", module(lambda: nn.Embedding(10, 4)), L((0, 9, 3, 3), "i64"))
case("embedding", "module-padding_idx", module(lambda: nn.Embedding(10, 4, padding_idx=1)), L(((1, 2), (9, 1)), "i64"))

# --- dropout: the same mask as eager (same RNG stream, contiguous input) -------------------------

for _dtype in FLOATS:
    case("dropout", "F", lambda x: F.dropout(x, 0.3), T(_dtype, (3, 4)), random=True)
for _p in (0.1, 0.5, 0.9):
    case("dropout", f"F-p{_p}", lambda x, p=_p: F.dropout(x, p, training=True), T("f32", (2, 3, 40)), random=True)
case("dropout", "p1", lambda x: F.dropout(x, p=1.0), T("f32", (3, 4)), random=True)
# p=1 draws nothing (eager multiplies by zero): NaN and inf become NaN, compared as such.
case("dropout", "p1-nan", lambda x: F.dropout(x, p=1.0), L((math.nan, -1.0, math.inf), "f32"))
case("dropout", "torch-fn", lambda x: torch.dropout(x, 0.2, True), T("f32", (5,)), random=True)
case("dropout", "module", module(lambda: nn.Dropout(0.25)), T("f32", (4, 6)), random=True)
case("dropout", "0d", lambda x: F.dropout(x, 0.5), T("f32", ()), random=True)
case(("dropout", "add"), "two-draws", lambda x: F.dropout(x, 0.5) + F.dropout(x, 0.5), T("f32", (3, 4)), random=True)
case(("rand_like", "dropout"), "with-rand", lambda x: F.dropout(x + torch.rand_like(x), 0.4), T("f32", (8,)),
     random=True)

# --- scaled_dot_product_attention ---------------------------------------------------------------


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

# --- rms_norm ---------------------------------------------------------------------------------

for _dtype in FLOATS:
    case("rms_norm", "F", lambda x: F.rms_norm(x, (4,)), T(_dtype, (2, 3, 4)))
    case("rms_norm", "F-weight", lambda x, w: F.rms_norm(x, (4,), w), T(_dtype, (3, 4)), T(_dtype, (4,)))
for _dtype in HALF:
    case("rms_norm", "f32-weight", lambda x, w: F.rms_norm(x, [4], weight=w), T(_dtype, (3, 4)), T("f32", (4,)))
case("rms_norm", "eps", lambda x: F.rms_norm(x, (4,), eps=1e-2), T("f32", (3, 4)))
case("rms_norm", "2d-shape", lambda x, w: F.rms_norm(x, (3, 4), w), T("f32", (2, 3, 4)), T("f32", (3, 4)))
case("rms_norm", "1d", lambda x: F.rms_norm(x, [4]), T("f64", (4,)))
case("rms_norm", "torch-fn", lambda x, w: torch.rms_norm(x, [4], w, 1e-6), T("f32", (3, 4)), T("f32", (4,)))
case("rms_norm", "module", module(lambda: nn.RMSNorm(6)), T("f32", (2, 6)))
case("rms_norm", "module-eps", module(lambda: nn.RMSNorm([2, 3], eps=1e-5)), T("f32", (4, 2, 3)))
case("rms_norm", "zeros", lambda x: F.rms_norm(x, (3,)), L((0.0, 0.0, 0.0), "f32"))

# --- batch_norm ---------------------------------------------------------------------------------

for _dtype in FLOATS:
    case("batch_norm", "eval", lambda x, m, v: F.batch_norm(x, m, v), T(_dtype, (2, 3, 4, 5)), T(_dtype, (3,)),
         T(_dtype, (3,), "pos"))
    case("batch_norm", "train-batch-stats", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
         T(_dtype, (4, 3, 5)), T(_dtype, (3,)), T(_dtype, (3,)))
for _dtype in HALF:
    case("batch_norm", "eval-f32-params", lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, eps=1e-3),
         T(_dtype, (2, 3, 4)), T("f32", (3,)), T("f32", (3,), "pos"), T("f32", (3,)), T("f32", (3,)))
case("batch_norm", "eval-affine", lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, False, 0.1, 1e-3),
     T("f32", (2, 3)), T("f32", (3,)), T("f32", (3,), "pos"), T("f32", (3,)), T("f32", (3,)))
case("batch_norm", "eval-weight-only", lambda x, m, v, w: F.batch_norm(x, m, v, weight=w),
     T("f64", (2, 3, 2, 2, 2)), T("f64", (3,)), T("f64", (3,), "pos"), T("f64", (3,)))
case("batch_norm", "torch-fn", lambda x, w, b, m, v: torch.batch_norm(x, w, b, m, v, False, 0.1, 1e-5, False),
     T("f32", (2, 3, 4)), T("f32", (3,)), T("f32", (3,)), T("f32", (3,)), T("f32", (3,), "pos"))
_STATS = {"running_mean": lambda: torch.rand(3) - 0.5, "running_var": lambda: torch.rand(3) + 0.5}
case("batch_norm", "module-2d", module(lambda: nn.BatchNorm2d(3).eval(), buffers=_STATS), T("f32", (2, 3, 4, 4)))
case("batch_norm", "module-1d", module(lambda: nn.BatchNorm1d(3).eval(), buffers=_STATS), T("f32", (5, 3)))
case("batch_norm", "module-no-running-stats", module(lambda: nn.BatchNorm2d(3, track_running_stats=False)),
     T("f32", (2, 3, 4, 4)))
case("batch_norm", "module-no-affine", module(lambda: nn.BatchNorm1d(3, affine=False).eval(), buffers=_STATS),
     T("f32", (4, 3, 6)))

# --- group_norm ---------------------------------------------------------------------------------

for _dtype in FLOATS:
    case("group_norm", "F", lambda x: F.group_norm(x, 2), T(_dtype, (2, 4, 3, 3)))
    case("group_norm", "F-affine", lambda x, w, b: F.group_norm(x, 3, w, b), T(_dtype, (2, 6, 5)), T(_dtype, (6,)),
         T(_dtype, (6,)))
for _dtype in HALF:
    case("group_norm", "f32-params", lambda x, w, b: F.group_norm(x, 2, w, b), T(_dtype, (2, 4, 5)), T("f32", (4,)),
         T("f32", (4,)))
case("group_norm", "eps", lambda x: F.group_norm(x, 1, eps=1e-2), T("f32", (3, 4)))
case("group_norm", "per-channel", lambda x, w: F.group_norm(x, 4, weight=w), T("f32", (2, 4, 2, 3)), T("f32", (4,)))
case("group_norm", "torch-fn", lambda x, w, b: torch.group_norm(x, 2, w, b, 1e-5, False), T("f32", (2, 4, 3)),
     T("f32", (4,)), T("f32", (4,)))
case("group_norm", "module", module(lambda: nn.GroupNorm(2, 6)), T("f32", (2, 6, 4, 4)))

# --- convolution ----------------------------------------------------------------------------------

for _dtype in FLOATS:
    case("conv1d", "F", F.conv1d, T(_dtype, (2, 4, 9)), T(_dtype, (3, 4, 3)))
    case("conv2d", "F-bias", F.conv2d, T(_dtype, (2, 4, 6, 6)), T(_dtype, (3, 4, 3, 3)), T(_dtype, (3,)))
case("conv1d", "stride-padding", lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1), T("f32", (2, 4, 9)),
     T("f32", (3, 4, 3)), T("f32", (3,)))
case("conv1d", "dilation-groups", lambda x, w: F.conv1d(x, w, dilation=2, groups=2), T("f32", (2, 4, 9)),
     T("f32", (6, 2, 3)))
case("conv1d", "same-odd", lambda x, w: F.conv1d(x, w, padding="same"), T("f32", (2, 4, 9)), T("f32", (3, 4, 3)))
case("conv1d", "same-even", lambda x, w: F.conv1d(x, w, padding="same"), T("f32", (2, 4, 9)), T("f32", (3, 4, 4)))
case("conv1d", "same-dilated", lambda x, w: F.conv1d(x, w, padding="same", dilation=3), T("f32", (1, 2, 11)),
     T("f32", (2, 2, 2)))
case("conv1d", "valid", lambda x, w: F.conv1d(x, w, padding="valid"), T("f64", (2, 4, 9)), T("f64", (3, 4, 3)))
case("conv1d", "unbatched", F.conv1d, T("f32", (4, 9)), T("f32", (3, 4, 3)))
case("conv1d", "tuple-args", lambda x, w: F.conv1d(x, w, None, (2,), (1,), (1,), 1), T("f32", (2, 4, 9)),
     T("f32", (3, 4, 3)))
case("conv1d", "module", module(lambda: nn.Conv1d(4, 6, 3, stride=2)), T("f32", (2, 4, 11)))
case(("pad", "conv1d"), "module-reflect", module(lambda: nn.Conv1d(4, 2, 3, padding=1, padding_mode="reflect")),
     T("f32", (2, 4, 7)))
case(("pad", "conv1d"), "module-circular", module(lambda: nn.Conv1d(4, 2, 3, padding=2, padding_mode="circular")),
     T("f32", (2, 4, 7)))
case("conv2d", "tuple-args", lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=(1, 0), dilation=(1, 2)),
     T("f32", (2, 4, 7, 7)), T("f32", (3, 4, 3, 3)))
case("conv2d", "same-even", lambda x, w: F.conv2d(x, w, padding="same"), T("f32", (1, 2, 5, 6)),
     T("f32", (3, 2, 2, 4)))
case("conv2d", "depthwise", lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=4), T("f32", (2, 4, 5, 5)),
     T("f32", (4, 1, 3, 3)), T("f32", (4,)))
case("conv2d", "unbatched", lambda x, w: F.conv2d(x, w, padding=1), T("f32", (4, 5, 5)), T("f32", (2, 4, 3, 3)))
case("conv2d", "1x1", F.conv2d, T("f32", (2, 8, 3, 3)), T("f32", (4, 8, 1, 1)))
case("conv2d", "module", module(lambda: nn.Conv2d(3, 4, 3, stride=2, padding=1)), T("f32", (2, 3, 8, 8)))
case("conv2d", "module-same", module(lambda: nn.Conv2d(3, 4, (2, 3), padding="same", bias=False)),
     T("f32", (1, 3, 5, 5)))
case(("pad", "conv2d"), "module-replicate", module(lambda: nn.Conv2d(2, 2, 3, padding=1, padding_mode="replicate")),
     T("f32", (1, 2, 4, 5)))
case("conv3d", "F", F.conv3d, T("f32", (1, 2, 4, 5, 5)), T("f32", (3, 2, 2, 3, 3)), T("f32", (3,)))
case("conv3d", "module", module(lambda: nn.Conv3d(2, 2, 3, padding=1, stride=(1, 2, 2))), T("f32", (1, 2, 3, 5, 5)))

# --- pad --------------------------------------------------------------------------------------

case("pad", "constant", lambda x: F.pad(x, (1, 2)), T("f32", (2, 3)))
case("pad", "value", lambda x: F.pad(x, (1, 1, 2, 0), value=1.5), T("f64", (2, 3)))
case("pad", "crop", lambda x: F.pad(x, (-1, 2, 0, -1)), T("f32", (3, 4)))
case("pad", "all-dims", lambda x: F.pad(x, [1, 0, 0, 1, 2, 2]), T("f32", (2, 2, 2)))
case("pad", "int", lambda x: F.pad(x, (2, 2), value=7), T("i64", (3,)))
case("pad", "bool", lambda x: F.pad(x, (1, 1), value=True), T("bool", (2, 2)))
case("pad", "half", lambda x: F.pad(x, (0, 3)), T("bf16", (2, 2)))
case("pad", "reflect", lambda x: F.pad(x, (2, 1), mode="reflect"), T("f32", (2, 3, 5)))
case("pad", "reflect-2d", lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect"), T("f32", (1, 2, 4, 4)))
case("pad", "replicate", lambda x: F.pad(x, (1, 2, 0, 3), mode="replicate"), T("f32", (2, 3, 4)))
case("pad", "circular", lambda x: F.pad(x, (2, 3), mode="circular"), T("f32", (1, 2, 5)))
case("pad", "circular-2d", lambda x: F.pad(x, (1, 1, 1, 0), mode="circular"), T("f32", (1, 1, 3, 3)))
case("pad", "constant_pad_nd", lambda x: torch.constant_pad_nd(x, (1, 1), 2.0), T("f32", (2, 2)))

# --- pooling ------------------------------------------------------------------------------------

for _dtype in FLOATS:
    case("max_pool2d", "F", lambda x: F.max_pool2d(x, 2), T(_dtype, (2, 3, 6, 6)))
    case("avg_pool2d", "F", lambda x: F.avg_pool2d(x, 2), T(_dtype, (2, 3, 6, 6)))
    case("adaptive_avg_pool2d", "F", lambda x: F.adaptive_avg_pool2d(x, (3, 4)), T(_dtype, (2, 3, 5, 7)))
    case("max_pool1d", "F", lambda x: F.max_pool1d(x, 3, 2), T(_dtype, (2, 3, 9)))
    case("avg_pool1d", "F", lambda x: F.avg_pool1d(x, 3, 2, 1), T(_dtype, (2, 3, 9)))
case("max_pool2d", "padding-stride", lambda x: F.max_pool2d(x, 3, stride=2, padding=1), T("f32", (2, 3, 7, 7)))
case("max_pool2d", "dilation", lambda x: F.max_pool2d(x, 2, 1, 0, 2), T("f32", (1, 2, 6, 6)))
case("max_pool2d", "ceil", lambda x: F.max_pool2d(x, 2, ceil_mode=True), T("f32", (1, 2, 5, 7)))
case("max_pool2d", "ceil-padding", lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), T("f32", (1, 2, 6, 6)))
case("max_pool2d", "tuple", lambda x: F.max_pool2d(x, (2, 3), (1, 2), (1, 0)), T("f32", (2, 5, 6)))
case("max_pool2d", "int64", lambda x: F.max_pool2d(x, 2, padding=1), T("i64", (1, 4, 4)))
case("max_pool2d", "nan", lambda x: F.max_pool2d(x, 2), L((((1.0, math.nan), (0.0, -1.0)),), "f32"))
case("max_pool2d", "torch-fn", lambda x: torch.max_pool2d(x, 2), T("f32", (1, 4, 4)))
case("max_pool2d", "module", module(lambda: nn.MaxPool2d(3, 2, 1)), T("f32", (2, 3, 8, 8)))
case("max_pool1d", "ceil-padding", lambda x: F.max_pool1d(x, 4, 3, 2, ceil_mode=True), T("f32", (2, 10)))
case("max_pool1d", "module", module(lambda: nn.MaxPool1d(2)), T("f32", (2, 3, 7)))
case("max_pool1d", "torch-fn", lambda x: torch.max_pool1d(x, 3, 1, 1), T("f32", (1, 2, 5)))
case("avg_pool2d", "padding", lambda x: F.avg_pool2d(x, 3, 2, 1), T("f32", (2, 3, 7, 7)))
case("avg_pool2d", "exclude-pad", lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), T("f32", (2, 3, 7, 7)))
case("avg_pool2d", "ceil", lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), T("f32", (1, 2, 6, 6)))
case("avg_pool2d", "ceil-exclude-pad", lambda x: F.avg_pool2d(x, (3, 2), 2, (1, 0), True, False),
     T("f32", (1, 2, 6, 5)))
case("avg_pool2d", "divisor", lambda x: F.avg_pool2d(x, 2, divisor_override=3), T("f32", (1, 2, 4, 4)))
case("avg_pool2d", "int64", lambda x: F.avg_pool2d(x, 2, padding=1), T("i64", (1, 5, 5)))
case("avg_pool2d", "module", module(lambda: nn.AvgPool2d(2, stride=1)), T("f32", (2, 3, 4, 4)))
case("avg_pool1d", "exclude-pad", lambda x: F.avg_pool1d(x, 4, 2, 2, count_include_pad=False), T("f32", (2, 9)))
case("avg_pool1d", "ceil", lambda x: F.avg_pool1d(x, 2, ceil_mode=True), T("f32", (2, 3, 7)))
case("avg_pool1d", "module", module(lambda: nn.AvgPool1d(3, 2, 1)), T("f32", (2, 3, 8)))
case("adaptive_avg_pool2d", "global", lambda x: F.adaptive_avg_pool2d(x, 1), T("f32", (2, 3, 5, 7)))
case("adaptive_avg_pool2d", "uniform", lambda x: F.adaptive_avg_pool2d(x, (2, 3)), T("f32", (2, 3, 6, 6)))
case("adaptive_avg_pool2d", "upsample", lambda x: F.adaptive_avg_pool2d(x, 5), T("f32", (1, 2, 3, 4)))
case("adaptive_avg_pool2d", "none", lambda x: F.adaptive_avg_pool2d(x, (2, None)), T("f32", (1, 2, 5, 3)))
case("adaptive_avg_pool2d", "unbatched", lambda x: F.adaptive_avg_pool2d(x, 3), T("f32", (2, 7, 7)))
case("adaptive_avg_pool2d", "module", module(lambda: nn.AdaptiveAvgPool2d((1, 1))), T("f32", (2, 4, 3, 3)))
case("adaptive_avg_pool1d", "F", lambda x: F.adaptive_avg_pool1d(x, 3), T("f32", (2, 3, 7)))
case("adaptive_avg_pool1d", "module", module(lambda: nn.AdaptiveAvgPool1d(4)), T("f64", (2, 8)))

# --- losses -----------------------------------------------------------------------------------

_TARGETS = L((0, 4, 2, 1), "i64")
_IGNORED = L((0, -100, 2, -100), "i64")
for _dtype in FLOATS:
    case("cross_entropy", "F", F.cross_entropy, T(_dtype, (4, 5)), _TARGETS)
    case("cross_entropy", "probabilities", F.cross_entropy, T(_dtype, (4, 5)), T(_dtype, (4, 5), "pos"))
    case("nll_loss", "F", F.nll_loss, T(_dtype, (4, 5)), _TARGETS)
    case("mse_loss", "F", F.mse_loss, T(_dtype, (3, 4)), T(_dtype, (3, 4)))
for _reduction in ("none", "sum", "mean"):
    case("cross_entropy", f"reduction-{_reduction}", lambda x, t, r=_reduction: F.cross_entropy(x, t, reduction=r),
         T("f32", (4, 5)), _IGNORED)
    case("cross_entropy", f"weight-{_reduction}", lambda x, t, w, r=_reduction: F.cross_entropy(x, t, w, reduction=r),
         T("f32", (4, 5)), _IGNORED, T("f32", (5,), "pos"))
    case("cross_entropy", f"smoothing-{_reduction}",
         lambda x, t, r=_reduction: F.cross_entropy(x, t, reduction=r, label_smoothing=0.1), T("f32", (4, 5)), _IGNORED)
    case("cross_entropy", f"smoothing-weight-{_reduction}",
         lambda x, t, w, r=_reduction: F.cross_entropy(x, t, w, reduction=r, label_smoothing=0.2), T("f64", (4, 5)),
         _IGNORED, T("f64", (5,), "pos"))
    case("cross_entropy", f"probabilities-{_reduction}",
         lambda x, t, w, r=_reduction: F.cross_entropy(x, t, w, reduction=r, label_smoothing=0.1), T("f32", (4, 5)),
         T("f32", (4, 5), "pos"), T("f32", (5,), "pos"))
    case("nll_loss", f"weight-{_reduction}", lambda x, t, w, r=_reduction: F.nll_loss(x, t, w, reduction=r),
         T("f32", (4, 5)), _IGNORED, T("f32", (5,), "pos"))
    case("mse_loss", f"reduction-{_reduction}", lambda x, t, r=_reduction: F.mse_loss(x, t, reduction=r),
         T("f32", (3, 4)), T("f32", (3, 4)))
    case("mse_loss", f"weight-{_reduction}", lambda x, t, w, r=_reduction: F.mse_loss(x, t, reduction=r, weight=w),
         T("f32", (3, 4)), T("f32", (3, 4)), T("f32", (3, 4), "pos"))
case("cross_entropy", "ignore_index", lambda x, t: F.cross_entropy(x, t, ignore_index=2), T("f32", (4, 5)), _TARGETS)
case("cross_entropy", "all-ignored", F.cross_entropy, T("f32", (2, 5)), L((-100, -100), "i64"))
case("cross_entropy", "1d", F.cross_entropy, T("f32", (5,)), L(3, "i64"))
case("cross_entropy", "k-dim", F.cross_entropy, T("f32", (2, 5, 3)), L(((0, 4, 1), (2, 2, -100)), "i64"))
case("cross_entropy", "k-dim-smoothing", lambda x, t: F.cross_entropy(x, t, label_smoothing=0.3),
     T("f32", (2, 5, 3, 2)), T("i64", (2, 3, 2), "small"))
case("cross_entropy", "u8-target", F.cross_entropy, T("f32", (4, 5)), L((0, 4, 2, 1), "u8"))
case("cross_entropy", "mixed-probabilities", F.cross_entropy, T("f32", (3, 4)), T("f64", (3, 4), "pos"))
case("cross_entropy", "legacy", lambda x, t: F.cross_entropy(x, t, size_average=False), T("f32", (4, 5)), _TARGETS)
case("cross_entropy", "large-logits", lambda x, t: F.cross_entropy(x * 100, t), T("f32", (4, 5)), _TARGETS)
case("cross_entropy", "module", module(lambda: nn.CrossEntropyLoss(label_smoothing=0.05)), T("f32", (4, 5)), _TARGETS)
case("cross_entropy", "module-weight", module(lambda: nn.CrossEntropyLoss(torch.rand(5) + 0.5, ignore_index=0)),
     T("f32", (4, 5)), _TARGETS)
case("nll_loss", "ignore_index-class", lambda x, t: F.nll_loss(x, t, ignore_index=0), L(((-math.inf, 0.0), (1.0, 2.0)),
     "f32"), L((0, 1), "i64"))
case("nll_loss", "k-dim", F.nll_loss, T("f64", (2, 4, 3)), T("i64", (2, 3), "small"))
case("nll_loss", "1d", F.nll_loss, T("f32", (4,)), L(1, "i64"))
case("nll_loss", "module", module(lambda: nn.NLLLoss(reduction="sum")), T("f32", (4, 5)), _TARGETS)
case(("log_softmax", "nll_loss"), "classifier", lambda x, t: F.nll_loss(F.log_softmax(x, -1), t), T("bf16", (4, 5)),
     _TARGETS)
case("mse_loss", "broadcast", F.mse_loss, T("f32", (3, 1)), T("f32", (4,)))
case("mse_loss", "mixed-dtypes", F.mse_loss, T("f32", (3,)), T("f64", (3,)))
case("mse_loss", "int-target", F.mse_loss, T("f32", (3, 4)), T("i64", (3, 4)))
case("mse_loss", "legacy", lambda x, t: F.mse_loss(x, t, reduce=False), T("f32", (3, 4)), T("f32", (3, 4)))
case("mse_loss", "module", module(lambda: nn.MSELoss(reduction="sum")), T("f32", (2, 3)), T("f32", (2, 3)))


# --- a small CNN: convolution, normalisation, pooling and a loss together -----------------------------


class _SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2)
        self.gn = nn.GroupNorm(4, 8)
        self.drop = nn.Dropout(0.5)
        self.fc = nn.Linear(8, 4)
        self.bn1.running_mean.uniform_(-0.5, 0.5)
        self.bn1.running_var.uniform_(0.5, 1.5)

    def forward(self, x, target):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.avg_pool2d(F.relu(self.gn(self.conv2(x))), 2, ceil_mode=True)
        x = self.drop(F.adaptive_avg_pool2d(x, 1).flatten(1))
        return F.cross_entropy(self.fc(x), target)


case(("conv2d", "batch_norm", "max_pool2d", "group_norm", "avg_pool2d", "adaptive_avg_pool2d", "cross_entropy"),
     "cnn", module(lambda: _SmallCNN().eval()), T("f32", (2, 3, 8, 8)), L((1, 3), "i64"))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


def _trace(fn, *args):
    return trace_callable(entry(fn), args, name="fn").trace


# --- dropout outside training is the identity; random draws are tagged ---------------------------------

IDENTITY_DROPOUT = (
    ("F-eval", lambda x: F.dropout(x, 0.5, training=False)),
    ("F-p0", lambda x: F.dropout(x, 0.0)),
    ("module-eval", module(lambda: nn.Dropout(0.3).eval())),
    ("module-inplace-eval", module(lambda: nn.Dropout(0.3, inplace=True).eval())),
    ("torch-fn-eval", lambda x: torch.dropout(x, 0.5, False)),
    ("dropout2d-eval", lambda x: F.dropout2d(x, 0.5, training=False)),
    ("alpha_dropout-default", lambda x: F.alpha_dropout(x, 0.5)),
    ("after-relu-eval", lambda x: F.dropout(F.relu(x), 0.1, False)),
)


@pytest.mark.parametrize("fn", [f for _, f in IDENTITY_DROPOUT], ids=[i for i, _ in IDENTITY_DROPOUT])
def test_dropout_outside_training_records_nothing(fn):
    trace = _trace(fn, torch.ones(2, 3, 4))
    assert [b.symbol.qualname for b in trace.bsyms] in ([], ["ltorch.relu"])


def test_dropout_eval_returns_the_input_itself():
    trace = _trace(lambda x: F.dropout(x, 0.5, training=False), torch.ones(3))
    assert trace.bsyms == () and trace.output is trace.inputs[0]


def test_random_draws_are_tagged_and_pinned():
    """dropout (and attention with dropout) hold a RANDOM prim, which dce and cse keep."""
    q = torch.ones(1, 2, 3, 4)
    trace = _trace(lambda x: (F.dropout(x, 0.5), F.scaled_dot_product_attention(x, x, x, dropout_p=0.5)), q)
    random = [b.symbol.qualname for _, b in walk(trace.bsyms) if Tag.RANDOM in b.tags]
    assert random == ["ltorch.dropout", "prims.bernoulli", "ltorch.dropout", "prims.bernoulli"]
    assert Tag.RANDOM in ltorch.ALL["dropout"].tags and Tag.RANDOM in prims.ALL["bernoulli"].tags
    # Attention without dropout is pure.
    assert Tag.RANDOM not in ltorch.ALL["scaled_dot_product_attention"].tags


def test_dropout_of_a_non_contiguous_input_is_a_dropout_of_it():
    """Eager draws the mask in the input's memory order; the prims level draws it in
    logical order, so for a transposed input the masks differ. Both must still be a
    dropout of the same input: every element zero or scaled by 1 / (1 - p), zeros at
    about the rate p (the torch level calls F.dropout and matches exactly)."""
    p = 0.3
    x = torch.rand(300, 200) + 1.0  # no zeros of its own

    def fn(a):
        return F.dropout(a.t(), p)

    program = trace_callable(fn, (x,), name="fn")
    lowered = compile_trace(lower(program.trace).trace)
    torch.manual_seed(SEED)
    expected = fn(x)
    torch.manual_seed(SEED)
    actual = lowered(*program.inputs)
    for out in (expected, actual):
        assert out.shape == (200, 300) and out.dtype == torch.float32
        kept = out != 0
        torch.testing.assert_close(out[kept], (x.t() / (1 - p))[kept])
        assert abs(1 - kept.float().mean().item() - p) < 0.01
    torch.manual_seed(SEED)
    assert torch.equal(compile_trace(program.trace)(*program.inputs), expected)


# --- forms left to torch, and forms refused ----------------------------------------------------------

OPAQUE_FORMS = (
    ("embedding-max_norm", lambda i, w: F.embedding(i, w, max_norm=1.0), "torch.nn.functional.embedding"),
    ("max_pool2d-indices", lambda i, w: F.max_pool2d(w.unsqueeze(0), 2, return_indices=True)[1],
     "torch.nn.functional.max_pool2d_with_indices"),
    ("dropout2d-training", lambda i, w: F.dropout2d(w.unsqueeze(0), 0.5), "torch.nn.functional.dropout2d"),
)


@pytest.mark.parametrize(("fn", "opaque"), [f[1:] for f in OPAQUE_FORMS], ids=[f[0] for f in OPAQUE_FORMS])
def test_unmodelled_forms_stay_torch_calls(fn, opaque):
    args = (torch.tensor([0, 3, 1]), torch.rand(4, 6) * 3)
    program = trace_callable(fn, args, name="fn")
    assert opaque in [b.symbol.qualname for b in program.trace.bsyms]
    torch.manual_seed(SEED)
    expected = fn(*(a.clone() for a in args))
    torch.manual_seed(SEED)
    assert_matches("torch", program.trace, expected, compile_trace(program.trace)(*program.inputs), exact=True)


REFUSED = (
    ("batch_norm-training-running-stats", module(lambda: nn.BatchNorm2d(3)), (torch.rand(2, 3, 4, 4),),
     "running_mean"),
    ("dropout-inplace-training", lambda x: F.dropout(x, 0.5, True, True), (torch.rand(3),), "inplace"),
    ("conv2d-dtypes", lambda x, w: F.conv2d(x, w), (torch.rand(1, 2, 4, 4), torch.rand(1, 2, 3, 3).double()), "dtype"),
    ("conv2d-channels", lambda x, w: F.conv2d(x, w), (torch.rand(1, 2, 4, 4), torch.rand(1, 3, 3, 3)), "channels"),
    ("conv2d-kernel-too-large", lambda x, w: F.conv2d(x, w), (torch.rand(1, 2, 2, 2), torch.rand(1, 2, 3, 3)),
     "larger"),
    ("conv1d-same-strided", lambda x, w: F.conv1d(x, w, stride=2, padding="same"),
     (torch.rand(1, 2, 5), torch.rand(1, 2, 3)), "strided"),
    ("sdpa-causal-and-mask", lambda q, m: F.scaled_dot_product_attention(q, q, q, m, is_causal=True),
     (torch.rand(2, 3, 4), torch.ones(3, 3, dtype=torch.bool)), "is_causal"),
    ("sdpa-dtypes", lambda q, k: F.scaled_dot_product_attention(q, k, k), (torch.rand(2, 3, 4), torch.rand(2, 3, 4).double()),
     "dtype"),
    ("sdpa-gqa-heads", lambda q, k: F.scaled_dot_product_attention(q, k, k, enable_gqa=True),
     (torch.rand(1, 3, 2, 4), torch.rand(1, 2, 2, 4)), "heads"),
    ("cross_entropy-i32-target", F.cross_entropy, (torch.rand(3, 4), torch.tensor([0, 1, 2], dtype=torch.int32)),
     "int64 or uint8"),
    ("cross_entropy-target-shape", F.cross_entropy, (torch.rand(3, 4), torch.tensor([0, 1])), "target"),
    ("cross_entropy-weight-dtype", lambda x, t, w: F.cross_entropy(x, t, w),
     (torch.rand(3, 4), torch.tensor([0, 1, 2]), torch.rand(4).double()), "weight"),
    ("embedding-float-indices", F.embedding, (torch.rand(3), torch.rand(4, 2)), "indices"),
    ("group_norm-groups", lambda x: F.group_norm(x, 3), (torch.rand(2, 4, 3),), "groups"),
    ("batch_norm-f64-params", lambda x, m, v: F.batch_norm(x, m, v),
     (torch.rand(2, 3), torch.rand(3).double(), torch.rand(3).double()), "parameters"),
    ("max_pool2d-padding", lambda x: F.max_pool2d(x, 2, padding=2), (torch.rand(1, 5, 5),), "half"),
    ("max_pool1d-int64", lambda x: F.max_pool1d(x, 2), (torch.ones(1, 4, dtype=torch.int64),), "floating point"),
    ("avg_pool2d-output-too-small", lambda x: F.avg_pool2d(x, 3), (torch.rand(1, 2, 2),), "too small"),
    ("rms_norm-shape", lambda x: F.rms_norm(x, (3,)), (torch.rand(2, 4),), "normalized_shape"),
    ("rms_norm-int-shape", lambda x: F.rms_norm(x, 4), (torch.rand(2, 4),), "tuple of ints"),
    ("pad-reflect-too-wide", lambda x: F.pad(x, (3, 0), mode="reflect"), (torch.rand(1, 3),), "smaller"),
    ("dropout-p", lambda x: F.dropout(x, 1.5), (torch.rand(3),), "probability"),
    ("mse_loss-ints", F.mse_loss, (torch.ones(3, dtype=torch.int64), torch.ones(3, dtype=torch.int64)), "floating"),
)


@pytest.mark.parametrize(("fn", "args", "message"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_refused_with_a_clear_error(fn, args, message):
    """What eager refuses (or what would change state the trace cannot see) stops tracing
    with an error at the user's line that says what is wrong."""
    with pytest.raises(TracingError, match=message):
        trace_callable(entry(fn), args, name="fn")


# The first two refusals are ours only (state the trace cannot see); the rest mirror eager.
EAGER_REFUSED = REFUSED[2:]


@pytest.mark.parametrize(("fn", "args"), [r[1:3] for r in EAGER_REFUSED], ids=[r[0] for r in EAGER_REFUSED])
def test_eager_refuses_them_too(fn, args):
    with pytest.raises((RuntimeError, ValueError, IndexError, TypeError, NotImplementedError)):
        fn(*args)


# --- prims: hand-written meta rules against what the implementations return ----------------------------------

CONV_GEOMETRIES = [
    # input, weight, stride, padding, dilation, groups
    ((2, 4, 9), (3, 4, 3), (1,), (0,), (1,), 1),
    ((2, 4, 9), (6, 2, 3), (2,), (2,), (3,), 2),
    ((1, 3, 7, 8), (4, 3, 3, 2), (2, 3), (1, 0), (1, 2), 1),
    ((1, 4, 5, 5), (4, 1, 5, 5), (1, 1), (2, 2), (1, 1), 4),
    ((1, 2, 3, 6, 5), (2, 2, 1, 3, 3), (1, 2, 2), (0, 1, 1), (1, 1, 2), 1),
]


@pytest.mark.parametrize(("xs", "ws", "stride", "padding", "dilation", "groups"), CONV_GEOMETRIES)
def test_convolution_meta_matches_impl(xs, ws, stride, padding, dilation, groups):
    x, w = torch.rand(xs), torch.rand(ws)
    vx, vw = (TensorValue(n, s, dtypes.float32, "cpu") for n, s in (("x", xs), ("w", ws)))
    for bias in (None, torch.rand(ws[0])):
        vb = None if bias is None else TensorValue("b", (ws[0],), dtypes.float32, "cpu")
        want = prims.convolution.meta(vx, vw, vb, stride, padding, dilation, groups)
        got = prims.convolution.impl(x, w, bias, stride, padding, dilation, groups)
        assert want == TensorType(tuple(got.shape), dtypes.float32, "cpu")


def _v(shape, dtype=dtypes.float32):
    return TensorValue("v", shape, dtype, "cpu")


def test_pad_meta_matches_impl():
    padding = ((1, 0), (2, 3))
    got = prims.pad.impl(torch.rand(2, 3), 0.0, padding)
    assert prims.pad.meta(_v((2, 3)), 0.0, padding).shape == tuple(got.shape) == (3, 8)
    with pytest.raises(ShapeError):
        prims.pad.meta(_v((2, 3)), 0.0, ((-1, 0), (0, 0)))  # cropping is prims.slice's


def test_embedding_lookup_prim_meta_matches_impl():
    table = torch.rand(2, 3)
    got = prims.take.impl(table, torch.tensor([[0, 1], [1, 1], [0, 0]]), 0)
    assert prims.take.meta(_v((2, 3)), _v((3, 2), dtypes.int64), 0).shape == tuple(got.shape) == (3, 2, 3)
    assert torch.equal(got[1, 0], table[1])
    with pytest.raises(ShapeError):
        prims.take.meta(_v((2, 3)), _v((3,)), 0)  # float indices


def test_bernoulli_meta_matches_impl():
    sample = prims.bernoulli.impl((40, 50), 0.25, device="cpu", dtype=dtypes.float16)
    assert prims.bernoulli.meta((40, 50), 0.25, device="cpu", dtype=dtypes.float16) == TensorType(
        (40, 50), dtypes.float16, "cpu"
    )
    assert sample.dtype == torch.float16 and set(sample.unique().tolist()) == {0.0, 1.0}
    with pytest.raises(ShapeError):
        prims.bernoulli.meta((3,), 0.5, device="cpu", dtype=dtypes.int64)
