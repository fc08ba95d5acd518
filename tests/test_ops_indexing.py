"""The op matrix for indexing, data movement, selection and contractions, and for the
building blocks real models make of them (rotary embeddings, causal masks, attention
reshapes). Each case is checked eager vs traced at the ltorch level and lowered to
prims (see tests/ops/harness.py); forms eager refuses must be refused while tracing,
and forms ltorch leaves to torch must stay opaque calls that still agree with eager.
"""

from __future__ import annotations

import math

import pytest
import torch

from tests.ops.harness import DT, FLOATS, SEED, Case, L, T, assert_matches, case_adder, check_case, check_refused
from tracecli.core.errors import TracingError
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable

CASES: list[Case] = []
case = case_adder(CASES)

NAN, INF = math.nan, math.inf
X3 = T("f32", (2, 3, 4))

# --- getitem: ints, slices, None, Ellipsis ------------------------------------------------

BASIC = {
    "int": lambda x: x[1],
    "negative-int": lambda x: x[-1],
    "ints": lambda x: x[1, -2],
    "all-ints": lambda x: x[1, 2, 3],
    "slice": lambda x: x[:, 1:],
    "slice-step": lambda x: x[:, ::2],
    "slice-negative-bounds": lambda x: x[..., -3:-1],
    "slice-step-offset": lambda x: x[1:, :, 1::2],
    "slice-past-end": lambda x: x[:, 2:10],
    "slice-before-start": lambda x: x[-10:1],
    "slice-empty": lambda x: x[:, 3:1],
    "none": lambda x: x[None],
    "nones": lambda x: x[:, None, :, None],
    "ellipsis-int": lambda x: x[..., 0],
    "ellipsis-none": lambda x: x[..., None],
    "int-ellipsis-int": lambda x: x[0, ..., 1],
    "int-none-slice": lambda x: x[1, None, 1:3],
    "half": lambda x: x[..., : x.shape[-1] // 2],
    "second-half": lambda x: x[..., x.shape[-1] // 2 :],
    "last-token": lambda x: x[:, -1, :],
    "mask-window": lambda x: x[None, None, :, :3],
}
for _form, _fn in BASIC.items():
    case("getitem", _form, _fn, X3)
for _dtype in ("i64", "bool", "bf16", "f16", "f64"):
    case("getitem", "slice-int", lambda x: x[1:, 0], T(_dtype, (3, 4)))
case("getitem", "0d-none", lambda x: x[None], T("f32", ()))
case("getitem", "0d-nones-ellipsis", lambda x: x[None, ..., None], T("i64", ()))
case("getitem", "1d-step", lambda x: x[1::3], T("f32", (10,)))
case("getitem", "empty-dim", lambda x: x[:, 1], T("f32", (0, 3)))

# --- getitem: integer index tensors and lists (advanced indexing) ----------------------------

ADVANCED = (
    ("tensor", lambda x, i: x[i], T("f32", (4, 3)), T("i64", (3,), "small")),
    ("tensor-2d", lambda x, i: x[i], T("f32", (5, 3)), T("i64", (2, 2), "small")),
    ("tensor-negative", lambda x, i: x[i], T("f32", (5,)), L((-1, 0, -5, 4, -2), "i64")),
    ("tensor-i32", lambda x, i: x[i], T("f32", (4, 3)), L((3, 0, -1), "i32")),
    ("tensor-0d", lambda x, i: x[i], T("f32", (4, 3)), L(2, "i64")),
    ("after-slice", lambda x, i: x[:, i], T("f32", (2, 4, 5)), T("i64", (3,), "small")),
    ("last-dim", lambda x, i: x[..., i], T("bf16", (2, 3, 4)), T("i64", (2, 2), "small")),
    ("tensor-int", lambda x, i: x[i, 1], T("i64", (4, 3)), T("i64", (2,), "small")),
    ("int-slice-tensor", lambda x, i: x[0, :, i], T("f32", (3, 4, 4)), T("i64", (2,), "small")),
    ("tensor-none", lambda x, i: x[i, None], T("f32", (4, 3)), T("i64", (2,), "small")),
    ("tensor-step", lambda x, i: x[i, ::2], T("f32", (4, 5)), T("i64", (3,), "small")),
    ("bool-data", lambda x, i: x[i], T("bool", (4, 3)), T("i64", (5,), "small")),
)
for _form, _fn, _x, _i in ADVANCED:
    case("getitem", _form, _fn, _x, _i)
TWO_INDICES = (
    ("adjacent", lambda x, i, j: x[i, j], T("f32", (4, 4, 3)), T("i64", (2,), "small"), T("i64", (2,), "small")),
    ("broadcast", lambda x, i, j: x[:, i, j], T("f32", (2, 4, 4)), T("i64", (3, 1), "small"), T("i64", (2,), "small")),
    ("apart", lambda x, i, j: x[i, :, j], T("f32", (4, 3, 4)), T("i64", (2,), "small"), T("i64", (2,), "small")),
    ("apart-by-none", lambda x, i, j: x[i, None, j], T("f32", (4, 4, 3)), T("i64", (2,), "small"),
     L((-1, 0), "i64")),
    ("mixed-dtypes", lambda x, i, j: x[i, j], T("f64", (4, 5)), L((0, -1, 3), "i32"), L((4, -5, 0), "i64")),
)
for _form, _fn, _x, _i, _j in TWO_INDICES:
    case("getitem", _form, _fn, _x, _i, _j)
case("getitem", "three", lambda x, i: x[i, i, i], T("f32", (4, 4, 4)), T("i64", (3,), "small"))
case("getitem", "list", lambda x: x[[0, 2]], T("f32", (3, 4)))
case("getitem", "list-negative", lambda x: x[:, [-1, 0, -1]], T("i64", (3, 4)))
case("getitem", "list-2d", lambda x: x[[[0], [1]], [0, 2]], T("f32", (2, 3)))
case("getitem", "list-empty", lambda x: x[[]], T("f32", (3, 4)))

# --- index_select, gather, take_along_dim ---------------------------------------------------------

for _dtype in ("f32", "i64", "bool", "bf16"):
    case("index_select", "fn", lambda x, i: torch.index_select(x, 0, i), T(_dtype, (4, 3)), T("i64", (5,), "small"))
case("index_select", "method-negative-dim", lambda x, i: x.index_select(-1, i), X3, T("i64", (2,), "small"))
case("index_select", "0d-index", lambda x, i: x.index_select(1, i), X3, L(2, "i64"))
case("index_select", "i32", lambda x, i: torch.index_select(x, dim=1, index=i), X3, L((1, 0), "i32"))
case("index_select", "0d-input", lambda x, i: x.index_select(0, i), T("f32", ()), L((0,), "i64"))
for _dtype in ("f32", "i64", "f16"):
    case("gather", "fn", lambda x, i: torch.gather(x, 1, i), T(_dtype, (3, 4)), T("i64", (3, 5), "small"))
case("gather", "method-dim0", lambda x, i: x.gather(0, i), T("f32", (4, 3)), T("i64", (2, 3), "small"))
case("gather", "smaller-index", lambda x, i: torch.gather(x, -1, i), X3, T("i64", (1, 2, 2), "small"))
case("gather", "kw", lambda x, i: torch.gather(x, dim=1, index=i), T("f32", (2, 4)), L(((3, 0), (1, 1)), "i32"))
case("gather", "0d", lambda x, i: torch.gather(x, 0, i), T("f32", ()), L(0, "i64"))
case("take_along_dim", "fn", lambda x, i: torch.take_along_dim(x, i, dim=1), T("f32", (3, 4)),
     T("i64", (3, 2), "small"))
case("take_along_dim", "broadcast", lambda x, i: torch.take_along_dim(x, i, 1), T("f32", (1, 4)),
     T("i64", (3, 2), "small"))
case("take_along_dim", "flat", lambda x, i: torch.take_along_dim(x, i), T("f32", (2, 3)), T("i64", (5,), "small"))
case("take_along_dim", "method", lambda x, i: x.take_along_dim(i, dim=-1), T("i64", (2, 4)),
     T("i64", (2, 4), "small"))
case(("argsort", "take_along_dim"), "sorted", lambda x: x.take_along_dim(x.argsort(dim=1), dim=1), T("f32", (3, 5)))

# --- masked_fill ------------------------------------------------------------------------------------

case("masked_fill", "method-neg-inf", lambda x, m: x.masked_fill(m, -INF), T("f32", (3, 4)), T("bool", (3, 4)))
case("masked_fill", "fn", lambda x, m: torch.masked_fill(x, m, 0.0), T("f32", (3, 4)), T("bool", (3, 4)))
case("masked_fill", "broadcast-mask", lambda x, m: x.masked_fill(m, 1.5), X3, T("bool", (3, 1)))
case("masked_fill", "mask-wider", lambda x, m: x.masked_fill(m, 2.0), T("f32", (3, 4)), T("bool", (2, 3, 4)))
case("masked_fill", "0d-value", lambda x, m, v: x.masked_fill(m, v), T("f32", (3, 4)), T("bool", (4,)), T("f32", ()))
case("masked_fill", "0d-value-f64", lambda x, m, v: x.masked_fill(m, v), T("f16", (3, 4)), T("bool", (3, 4)),
     T("f64", ()))
case("masked_fill", "0d-value-int", lambda x, m, v: x.masked_fill(m, v), T("f32", (3, 4)), T("bool", (3, 4)),
     T("i64", ()))
case("masked_fill", "int-float-value", lambda x, m: x.masked_fill(m, 2.7), T("i64", (3, 4)), T("bool", (3, 4)))
case("masked_fill", "bool", lambda x, m: x.masked_fill(m, True), T("bool", (3, 4)), T("bool", (3, 4)))
case("masked_fill", "int-into-float", lambda x, m: x.masked_fill(m, 3), T("f32", (3, 4)), T("bool", (3, 4)))
for _dtype in ("f16", "bf16", "f64"):
    _min = torch.finfo(DT[_dtype]).min
    case("masked_fill", "finfo-min", lambda x, m, v=_min: x.masked_fill(m, v), T(_dtype, (3, 4)), T("bool", (3, 4)))
case("masked_fill", "nan-input", lambda x, m: x.masked_fill(m, 0.0), L((NAN, 1.0, NAN, INF), "f32"),
     L((True, False, False, True), "bool"))

# --- triu, tril -------------------------------------------------------------------------------------

for _name, _fn in (("triu", torch.triu), ("tril", torch.tril)):
    case(_name, "fn", _fn, T("f32", (4, 4)))
    case(_name, "method", lambda x, n=_name: getattr(x, n)(1), T("f32", (3, 5)))
    case(_name, "negative-diagonal", lambda x, f=_fn: f(x, -1), T("i64", (5, 3)))
    case(_name, "diagonal-kw", lambda x, f=_fn: f(x, diagonal=2), T("f32", (4, 4)))
    case(_name, "past-the-end", lambda x, f=_fn: f(x, 7), T("f32", (3, 4)))
    case(_name, "batched", lambda x, f=_fn: f(x, -2), T("bf16", (2, 3, 4, 4)))
    case(_name, "bool", _fn, T("bool", (4, 4)))
    case(_name, "empty", _fn, T("f32", (0, 3)))
case(("triu", "full"), "causal-mask", lambda: torch.full((4, 4), -INF).triu(1))
case(("tril", "ones"), "causal-ones", lambda: torch.tril(torch.ones(5, 5, dtype=torch.bool)))

# --- split, chunk, unbind, stack, unflatten, narrow ------------------------------------------------------

case("split", "fn", lambda x: torch.split(x, 2), T("f32", (5, 3)))
case("split", "method-dim", lambda x: x.split(2, dim=1), T("f32", (3, 5)))
case("split", "sizes", lambda x: x.split([1, 3], -1), X3)
case("split", "sizes-with-zero", lambda x: torch.split(x, [2, 0, 3]), T("i64", (5,)))
case("split", "kw", lambda x: torch.split(x, split_size_or_sections=2, dim=1), T("f32", (2, 4)))
case("split", "method-kw", lambda x: x.split(split_size=3), T("bool", (7,)))
case("split", "gpt2-qkv", lambda x: x.split(4, dim=2), T("f32", (2, 3, 12)))
case("split", "tuple-sizes", lambda x: x.split((2, 2), 0), T("bf16", (4, 2)))
case("chunk", "method", lambda x: x.chunk(2, -1), X3)
case("chunk", "fn-uneven", lambda x: torch.chunk(x, 3), T("f32", (5, 3)))
case("chunk", "fewer-pieces", lambda x: x.chunk(4), T("i64", (6,)))
case("chunk", "dim-kw", lambda x: torch.chunk(x, 2, dim=1), T("f16", (3, 4)))
case("unbind", "fn", torch.unbind, T("f32", (3, 4)))
case("unbind", "method-dim", lambda x: x.unbind(1), X3)
case("unbind", "size-1", lambda x: x.unbind(-1), T("i64", (3, 1)))
case("unbind", "kw", lambda x: torch.unbind(x, dim=0), T("bool", (2, 2)))
case("stack", "fn", lambda a, b: torch.stack([a, b]), T("f32", (3, 4)), T("f32", (3, 4)))
case("stack", "last-dim", lambda a, b: torch.stack((a, b), dim=-1), T("f32", (3, 4)), T("f32", (3, 4)))
case("stack", "middle", lambda a, b, c: torch.stack([a, b, c], 1), T("i64", (2, 3)), T("i64", (2, 3)),
     T("i64", (2, 3)))
case("stack", "promote", lambda a, b: torch.stack([a, b]), T("f32", (2,)), T("f64", (2,)))
case("stack", "promote-int-half", lambda a, b: torch.stack([a, b]), T("i64", (2,)), T("f16", (2,)))
case("stack", "0d", lambda a, b: torch.stack([a, b]), T("f32", ()), T("i64", ()))
case("stack", "single", lambda a: torch.stack([a]), T("f32", (3,)))
case("unflatten", "method", lambda x: x.unflatten(1, (3, 4)), T("f32", (2, 12)))
case("unflatten", "fn-minus-one", lambda x: torch.unflatten(x, -1, (2, -1)), T("f32", (2, 12)))
case("unflatten", "heads", lambda x: x.unflatten(-1, (2, 2, 3)), T("bf16", (2, 12)))
case("narrow", "method", lambda x: x.narrow(0, 1, 2), T("f32", (4, 3)))
case("narrow", "fn-negative", lambda x: torch.narrow(x, -1, -3, 2), X3)
case("narrow", "empty", lambda x: x.narrow(1, 2, 0), T("i64", (2, 3)))

# --- repeat, repeat_interleave ---------------------------------------------------------------------------

case("repeat", "method", lambda x: x.repeat(2, 1), T("f32", (3, 4)))
case("repeat", "new-dims", lambda x: x.repeat(2, 1, 3), T("f32", (3, 4)))
case("repeat", "tuple", lambda x: x.repeat((2, 2)), T("i64", (2, 3)))
case("repeat", "0d", lambda x: x.repeat(3), T("f32", ()))
case("repeat", "bool", lambda x: x.repeat(1, 2, 1), T("bool", (2, 3)))
case("repeat", "zero", lambda x: x.repeat(0, 2), T("f32", (3, 4)))
case("repeat", "ones", lambda x: x.repeat(1, 1), T("f32", (3, 4)))
case("repeat_interleave", "once", lambda x: torch.repeat_interleave(x, 1, dim=0), T("f32", (3, 4)))
case("repeat_interleave", "flat", lambda x: x.repeat_interleave(2), T("f32", (2, 3)))
case("repeat_interleave", "fn-dim", lambda x: torch.repeat_interleave(x, 3, dim=1), T("f32", (2, 3)))
case("repeat_interleave", "negative-dim", lambda x: x.repeat_interleave(2, -1), T("i64", (2, 3, 2)))
case("repeat_interleave", "kv-heads", lambda x: x.repeat_interleave(2, dim=1), T("bf16", (2, 2, 3, 4)))
case("repeat_interleave", "output-size", lambda x: x.repeat_interleave(2, dim=0, output_size=6), T("f32", (3,)))

# --- cumsum ---------------------------------------------------------------------------------------------------

for _dtype in FLOATS + ("i64", "i32", "u8", "bool"):
    case("cumsum", "fn", lambda x: torch.cumsum(x, 0), T(_dtype, (5, 3)))
case("cumsum", "method", lambda x: x.cumsum(-1), X3)
case("cumsum", "dim-kw", lambda x: x.cumsum(dim=1), T("i64", (3, 4)))
case("cumsum", "dtype", lambda x: torch.cumsum(x, 1, dtype=torch.float64), T("f32", (3, 4)))
case("cumsum", "dtype-half", lambda x: x.cumsum(0, dtype=torch.float16), T("i32", (6,)))
case("cumsum", "0d", lambda x: x.cumsum(0), T("f32", ()))
case("cumsum", "long-half", lambda x: x.cumsum(0), L((0.1,) * 300, "bf16"))
case(("cumsum", "sub"), "position-ids", lambda m: m.long().cumsum(-1) - 1, T("bool", (2, 6)))

# --- max/min along a dim, argmax/argmin, sort, argsort, topk ---------------------------------------------

for _name in ("max", "min"):
    _fn = getattr(torch, _name)
    case(_name, "fn", lambda x, f=_fn: f(x, 1), T("f32", (3, 4)))
    case(_name, "method-keepdim", lambda x, n=_name: getattr(x, n)(dim=-1, keepdim=True), X3)
    case(_name, "values", lambda x, n=_name: getattr(x, n)(0).values, T("f32", (3, 4)))
    case(_name, "indices", lambda x, n=_name: getattr(x, n)(0).indices, T("f32", (3, 4)))
    case(_name, "unpacked", lambda x, n=_name: getattr(x, n)(1)[1] * 2, T("i64", (3, 4)))
    for _dtype in ("i64", "bool", "f16", "bf16"):
        case(_name, "fn", lambda x, f=_fn: f(x, 0), T(_dtype, (4, 3)))
    case(_name, "0d", lambda x, f=_fn: f(x, 0), T("f32", ()))
    case(_name, "ties", lambda x, f=_fn: f(x, 0), L((3.0, 1.0, 3.0, 1.0), "f32"))
    case(_name, "nan", lambda x, f=_fn: f(x, -1), L(((1.0, NAN, 3.0, NAN), (2.0, 1.0, 0.0, 1.0)), "f32"))
    case(_name, "empty-kept", lambda x, f=_fn: f(x, 1), T("f32", (0, 3)))
for _name in ("argmax", "argmin"):
    _fn = getattr(torch, _name)
    case(_name, "fn-all", _fn, T("f32", (3, 4)))
    case(_name, "method-dim", lambda x, n=_name: getattr(x, n)(dim=1), X3)
    case(_name, "keepdim", lambda x, f=_fn: f(x, -1, keepdim=True), T("f32", (3, 4)))
    case(_name, "all-keepdim", lambda x, f=_fn: f(x, keepdim=True), T("f32", (3, 4)))
    for _dtype in ("i64", "f16", "bf16", "u8"):
        case(_name, "fn", lambda x, f=_fn: f(x, 0), T(_dtype, (4, 3)))
    case(_name, "0d", _fn, T("f32", ()))
    case(_name, "ties", _fn, L((1, 3, 3, 0, 0), "i64"))
    case(_name, "nan", _fn, L((1.0, NAN, 3.0), "f32"))
case("sort", "fn", torch.sort, T("f32", (3, 4)))
case("sort", "method-descending", lambda x: x.sort(dim=0, descending=True), X3)
case("sort", "positional", lambda x: torch.sort(x, 0, True), T("f32", (4, 3)))
case("sort", "stable", lambda x: torch.sort(x, stable=True), L((2, 1, 2, 1, 0, 2), "i64"))
case("sort", "stable-descending", lambda x: x.sort(stable=True, descending=True, dim=-1), L((2, 1, 2, 1, 0), "i64"))
case("sort", "values", lambda x: x.sort().values, T("bf16", (2, 5)))
case("sort", "bool", lambda x: torch.sort(x, stable=True), T("bool", (6,)))
case("sort", "0d", torch.sort, T("f32", ()))
case("argsort", "fn", torch.argsort, T("f32", (3, 4)))
case("argsort", "method", lambda x: x.argsort(dim=0, descending=True), T("f64", (4, 3)))
case("argsort", "stable", lambda x: torch.argsort(x, stable=True), L((3, 1, 3, 1), "i64"))
case("topk", "fn", lambda x: torch.topk(x, 2), T("f32", (3, 5)))
case("topk", "method-dim", lambda x: x.topk(1, dim=0), X3)
case("topk", "smallest", lambda x: x.topk(3, largest=False), T("f32", (2, 6)))
case("topk", "unsorted-values", lambda x: torch.topk(x, 2, sorted=False).values.sort().values, T("f32", (3, 5)))
case("topk", "indices", lambda x: x.topk(2, -1).indices, T("i64", (3, 5)))
case("topk", "all", lambda x: x.topk(4), T("f16", (2, 4)))
case("topk", "none", lambda x: x.topk(0), T("bf16", (2, 4)))
case("topk", "0d", lambda x: torch.topk(x, 1), T("f32", ()))

# --- clamp ----------------------------------------------------------------------------------------------------

CLAMP = {
    "fn": lambda x: torch.clamp(x, -1, 1),
    "method-min": lambda x: x.clamp(min=0),
    "method-max": lambda x: x.clamp(max=0.5),
    "clip": lambda x: torch.clip(x, -0.5, 2),
    "clip-method": lambda x: x.clip(max=1),
    "clamp_min": lambda x: torch.clamp_min(x, 0.25),
    "clamp_min-method": lambda x: x.clamp_min(0),
    "clamp_max": lambda x: torch.clamp_max(x, 1),
    "clamp_max-method": lambda x: x.clamp_max(-1.5),
    "min-above-max": lambda x: x.clamp(2, 1),
}
for _form, _fn in CLAMP.items():
    case("clamp", _form, _fn, T("f32", (3, 4)))
for _dtype in ("i64", "f16", "bf16", "f64", "i32"):
    case("clamp", "fn", lambda x: torch.clamp(x, -1, 1), T(_dtype, (3, 4)))
case("clamp", "int-float-bound", lambda x: x.clamp(min=1.5), T("i64", (3, 4)))
case("clamp", "tensors", lambda x, lo, hi: torch.clamp(x, lo, hi), T("f32", (3, 4)), T("f32", (4,)), T("f32", (3, 1)))
case("clamp", "tensor-wider", lambda x, lo: x.clamp(min=lo), T("f32", (4,)), T("f32", (2, 4)))
case("clamp", "tensor-promote", lambda x, lo: x.clamp(lo), T("f16", (3, 4)), T("f32", (3, 4)))
case("clamp", "0d-bounds", lambda x, lo, hi: x.clamp(lo, hi), T("f32", (3, 4)), T("f64", ()), T("f64", ()))
case("clamp", "int-0d-float", lambda x, lo: torch.clamp(x, lo), T("i64", (3, 4)), L(0.5, "f32"))
case("clamp", "clamp_min-tensor", lambda x, lo: torch.clamp_min(x, lo), T("f32", (3,)), T("f32", (2, 3)))
case("clamp", "nan", lambda x: x.clamp(-1, 1), L((NAN, -INF, INF, 0.5), "f32"))
case("clamp", "nan-bound", lambda x, lo: x.clamp(min=lo), L((0.0, 1.0), "f32"), L((NAN, 0.0), "f32"))

# --- addmm, baddbmm, outer -------------------------------------------------------------------------------------

for _dtype in ("f32", "f64", "f16", "bf16", "i64"):
    case("addmm", "fn", torch.addmm, T(_dtype, (3,)), T(_dtype, (2, 4)), T(_dtype, (4, 3)))
    case("baddbmm", "fn", torch.baddbmm, T(_dtype, (2, 3, 5)), T(_dtype, (2, 3, 4)), T(_dtype, (2, 4, 5)))
case("addmm", "2d-input", lambda b, m1, m2: b.addmm(m1, m2), T("f32", (2, 3)), T("f32", (2, 4)), T("f32", (4, 3)))
case("addmm", "beta-alpha", lambda b, m1, m2: torch.addmm(b, m1, m2, beta=0.5, alpha=2.0), T("f32", (2, 1)),
     T("f32", (2, 4)), T("f32", (4, 3)))
case("addmm", "int-alpha", lambda b, m1, m2: torch.addmm(b, m1, m2, alpha=2, beta=3), T("i64", (3,)),
     T("i64", (2, 4)), T("i64", (4, 3)))
case("addmm", "beta-zero", lambda b, m1, m2: torch.addmm(b, m1, m2, beta=0), L((NAN, 1.0, INF), "f32"),
     T("f32", (2, 4)), T("f32", (4, 3)))
case("addmm", "0d-input", torch.addmm, T("f32", ()), T("f32", (2, 4)), T("f32", (4, 3)))
case("baddbmm", "broadcast-input", lambda b, b1, b2: torch.baddbmm(b, b1, b2, alpha=0.125), T("f32", (1, 5)),
     T("f32", (2, 3, 4)), T("f32", (2, 4, 5)))
case("baddbmm", "method", lambda b, b1, b2: b.baddbmm(b1, b2, beta=0.0, alpha=0.5), T("f32", (2, 3, 5)),
     T("f32", (2, 3, 4)), T("f32", (2, 4, 5)))
for _a, _b in (("f32", "f32"), ("i64", "f32"), ("bool", "bool"), ("f16", "f16"), ("i64", "i64")):
    case("outer", "fn", torch.outer, T(_a, (3,)), T(_b, (4,)))
case("outer", "method", lambda a, b: a.outer(b), T("f32", (3,)), T("f64", (2,)))
case("outer", "ger", torch.ger, T("f32", (3,)), T("f32", (2,)))

# --- einsum ----------------------------------------------------------------------------------------------------

EINSUM = (
    ("ij,jk->ik", ((2, 3), (3, 4))),
    ("bij,bjk->bik", ((2, 3, 4), (2, 4, 5))),
    ("bhqd,bhkd->bhqk", ((2, 2, 3, 4), (2, 2, 5, 4))),
    ("ij,kj->ik", ((2, 3), (4, 3))),
    ("i,j->ij", ((3,), (4,))),
    ("bi,bj->bij", ((2, 3), (2, 4))),
    ("ij,ij->ij", ((2, 3), (2, 3))),
    ("ij,ij->i", ((2, 3), (2, 3))),
    ("i,i->", ((5,), (5,))),
    ("ij,jk->", ((2, 3), (3, 4))),
    ("ijk,jl->il", ((2, 3, 4), (3, 5))),
    ("ij,j->i", ((2, 3), (3,))),
    ("j,jk->k", ((3,), (3, 4))),
    ("bij,bjk->bki", ((2, 3, 4), (2, 4, 5))),
    ("...ij,...jk->...ik", ((2, 1, 2, 3), (4, 3, 5))),
    ("bij,bjk->bik", ((1, 3, 4), (2, 4, 5))),
    ("ij,jk", ((2, 3), (3, 4))),
    ("ba,ca", ((2, 3), (4, 3))),
    ("ij->ji", ((2, 3),)),
    ("ij->i", ((2, 3),)),
    ("ij->", ((2, 3),)),
    ("bij->bj", ((2, 3, 4),)),
    ("...i->...", ((2, 3, 4),)),
    ("ba", ((2, 3),)),
)
for _equation, _shapes in EINSUM:
    case("einsum", _equation,
         lambda *ops, e=_equation: torch.einsum(e, *ops), *(T("f32", s) for s in _shapes))
for _dtype in ("f64", "f16", "bf16", "i64"):
    case("einsum", "ij,jk->ik", lambda a, b: torch.einsum("ij,jk->ik", a, b), T(_dtype, (2, 3)), T(_dtype, (3, 4)))
for _dtype in ("i32", "bool", "u8"):
    case("einsum", "int-ij->i", lambda a: torch.einsum("ij->i", a), T(_dtype, (2, 3)))
    case("einsum", "int-i,j->ij", lambda a, b: torch.einsum("i,j->ij", a, b), T(_dtype, (2,)), T(_dtype, (3,)))
case("einsum", "list", lambda a, b: torch.einsum("ij,jk->ik", [a, b]), T("f32", (2, 3)), T("f32", (3, 4)))
case("einsum", "spaces", lambda a, b: torch.einsum("b i d, b j d -> b i j", a, b), T("f32", (2, 3, 4)),
     T("f32", (2, 5, 4)))
# torch turns the sublist form into an equation before dispatching.
case("einsum", "sublists", lambda a, b: torch.einsum(a, [0, 1], b, [1, 2], [0, 2]), T("f32", (2, 3)),
     T("f32", (3, 4)))
case("einsum", "upper-case", lambda a, b: torch.einsum("iJ,Jk->ik", a, b), T("f32", (2, 3)), T("f32", (3, 4)))

# --- what real models build from these ----------------------------------------------------------------------------


def _rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def _rotary_tables(position_ids):
    # Llama's rotary embedding: inverse frequencies, outer product with positions, cos/sin.
    dim = 8
    inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    inv_freq_expanded = inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
    position_ids_expanded = position_ids[:, None, :].float()
    freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def _apply_rotary(q, k, position_ids):
    cos, sin = _rotary_tables(position_ids)
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    return q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin


def _gpt2_rotary_tables():
    t = torch.arange(6, dtype=torch.float32)
    inv_freq = 1.0 / (10000 ** (torch.arange(0, 8, 2).float() / 8))
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos()[None, None, :, :], emb.sin()[None, None, :, :]


def _causal_attention(q, k, v):
    n = q.shape[-2]
    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(q.shape[-1])
    mask = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    scores = scores.masked_fill(mask[None, None, :, :], float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def _gpt2_heads(x):
    q, k, v = x.split(8, dim=2)
    heads = [t.view(t.shape[0], t.shape[1], 2, 4).transpose(1, 2) for t in (q, k, v)]
    return heads[0] @ heads[1].transpose(-1, -2), heads[2]


case(("getitem", "neg", "cat"), "rotate-half", _rotate_half, T("f32", (2, 2, 3, 8)))
case(("getitem", "expand", "matmul", "transpose", "cat", "cos", "sin"), "llama-rotary-tables", _rotary_tables,
     T("i64", (2, 5), "small"))
case(("getitem", "cat", "mul", "add"), "llama-apply-rotary", _apply_rotary, T("f32", (2, 2, 5, 8)),
     T("f32", (2, 2, 5, 8)), T("i64", (2, 5), "small"))
case(("arange", "outer", "cat", "cos", "getitem"), "gpt-neox-rotary-tables", _gpt2_rotary_tables)
case(("einsum", "triu", "getitem", "masked_fill", "softmax"), "causal-attention", _causal_attention,
     T("f32", (1, 2, 4, 3)), T("f32", (1, 2, 4, 3)), T("f32", (1, 2, 4, 3)))
case(("split", "reshape", "transpose", "matmul"), "gpt2-heads", _gpt2_heads, T("f32", (2, 3, 24)))
case(("getitem", "to", "rsub", "mul"), "extended-attention-mask",
     lambda m: (1.0 - m[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min, T("i64", (2, 5), "small"))
case(("getitem", "argmax"), "last-token-logits",
     lambda logits, ids: logits[torch.arange(logits.shape[0]), ids.argmax(-1)], T("f32", (2, 5, 7)),
     T("i64", (2, 5)))


# --- the tests ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


def test_named_tuples_reach_user_code():
    """`.values` / `.indices` work on traced results because they have torch's types."""
    seen = {}

    def fn(x):
        for name, result in (("max", x.max(1)), ("min", torch.min(x, 0)), ("sort", x.sort()), ("topk", x.topk(2))):
            seen[name] = type(result)
        return x

    trace_callable(fn, (torch.zeros(3, 4),))
    assert seen == {
        "max": torch.return_types.max, "min": torch.return_types.min, "sort": torch.return_types.sort,
        "topk": torch.return_types.topk,
    }


def test_whole_slices_record_nothing():
    program = trace_callable(lambda x: (x[:], x[...], x[:, ...], x.split(9), x.narrow(0, 0, 3)), (torch.zeros(3, 4),))
    assert program.trace.bsyms == ()
    assert [v.name for v in program.trace.iter_outputs()] == ["x"] * 5


# --- calls eager torch refuses are refused while tracing ------------------------------------------------------------

REFUSED = (
    ("int-out-of-range", lambda x: x[3], T("f32", (3, 4))),
    ("negative-out-of-range", lambda x: x[:, -5], T("f32", (3, 4))),
    ("negative-step", lambda x: x[::-1], T("f32", (3, 4))),
    ("too-many-indices", lambda x: x[0, 0, 0], T("f32", (3, 4))),
    ("float-index", lambda x: x[torch.zeros(2)], T("f32", (3, 4))),
    ("0d-int-index", lambda x: x[0], T("f32", ())),
    ("ragged-list", lambda x: x[[[0, 1], [0]], 0], T("f32", (3, 4))),
    ("index_select-float-index", lambda x: x.index_select(0, torch.zeros(1)), T("f32", (3, 4))),
    ("index_select-2d-index", lambda x: x.index_select(0, torch.zeros(1, 1, dtype=torch.int64)), T("f32", (3, 4))),
    ("gather-rank", lambda x: x.gather(0, torch.zeros(2, dtype=torch.int64)), T("f32", (3, 4))),
    ("gather-index-larger", lambda x: x.gather(0, torch.zeros(2, 5, dtype=torch.int64)), T("f32", (3, 4))),
    ("take_along_dim-i32", lambda x: x.take_along_dim(torch.zeros(1, 1, dtype=torch.int32), 1), T("f32", (3, 4))),
    ("take_along_dim-rank", lambda x: x.take_along_dim(torch.zeros(1, dtype=torch.int64), 1), T("f32", (3, 4))),
    ("masked_fill-int-mask", lambda x: x.masked_fill(torch.ones(4, dtype=torch.int64), 0.0), T("f32", (3, 4))),
    ("masked_fill-value-dims", lambda x: x.masked_fill(x > 0, torch.zeros(1)), T("f32", (3, 4))),
    ("masked_fill-inf-into-int", lambda x: x.masked_fill(x > 0, -INF), T("i64", (3, 4))),
    ("masked_fill-complex-into-float", lambda x: x.masked_fill(x > 0, 1j), T("f32", (3, 4))),
    ("triu-1d", torch.triu, T("f32", (3,))),
    ("tril-0d", lambda x: x.tril(), T("f32", ())),
    ("split-bad-sizes", lambda x: x.split([1, 1]), T("f32", (3, 4))),
    ("split-negative", lambda x: x.split(-1), T("f32", (3, 4))),
    ("chunk-zero", lambda x: x.chunk(0), T("f32", (3, 4))),
    ("chunk-0d", lambda x: x.chunk(1), T("f32", ())),
    ("unbind-0d", torch.unbind, T("f32", ())),
    ("stack-shapes", lambda x: torch.stack([x, x[0]]), T("f32", (3, 4))),
    ("stack-empty", lambda x: x + torch.stack([]), T("f32", (3, 4))),
    ("unflatten-sizes", lambda x: x.unflatten(1, (3, 3)), T("f32", (3, 4))),
    ("narrow-past-end", lambda x: x.narrow(0, 2, 2), T("f32", (3, 4))),
    ("narrow-0d", lambda x: x.narrow(0, 0, 1), T("f32", ())),
    ("repeat-fewer", lambda x: x.repeat(2), T("f32", (3, 4))),
    ("repeat-negative", lambda x: x.repeat(-1, 1), T("f32", (3, 4))),
    ("cumsum-dim", lambda x: x.cumsum(2), T("f32", (3, 4))),
    ("max-dim", lambda x: x.max(2), T("f32", (3, 4))),
    ("max-empty", lambda x: x.max(0), T("f32", (0, 4))),
    ("argmax-bool", lambda x: x.argmax(), T("bool", (3,))),
    ("argmin-empty", lambda x: x.argmin(), T("f32", (0,))),
    ("topk-k", lambda x: x.topk(5), T("f32", (3, 4))),
    ("topk-bool", lambda x: x.topk(1), T("bool", (3, 4))),
    ("sort-complex", lambda x: x.sort(), T("c64", (3,))),
    ("clamp-no-bounds", lambda x: torch.clamp(x), T("f32", (3, 4))),
    ("clamp-bool", lambda x: x.clamp(min=False), T("bool", (3, 4))),
    ("addmm-dtypes", lambda x: torch.addmm(x, torch.ones(2, 4), torch.ones(4, 3)), T("f64", (3,))),
    ("addmm-shapes", lambda x: torch.addmm(x, torch.ones(2, 4), torch.ones(3, 3)), T("f32", (3,))),
    ("addmm-input-shape", lambda x: torch.addmm(x, torch.ones(2, 4), torch.ones(4, 3)), T("f32", (2,))),
    ("addmm-bool", lambda x: torch.addmm(x, x, x), T("bool", (2, 2))),
    ("baddbmm-batch", lambda x: torch.baddbmm(x, torch.ones(2, 3, 4), torch.ones(3, 4, 5)), T("f32", (5,))),
    ("outer-2d", lambda x: torch.outer(x, x), T("f32", (3, 4))),
    ("einsum-sizes", lambda x: torch.einsum("ij,jk->ik", x, x), T("f32", (3, 4))),
    ("einsum-dtypes", lambda x: torch.einsum("ij,jk->ik", x, x.T.double()), T("f32", (3, 4))),
    ("einsum-bool-contraction", lambda x: torch.einsum("ij,jk->ik", x, x.T), T("bool", (3, 4))),
    ("einsum-operand-count", lambda x: torch.einsum("ij,jk->ik", x), T("f32", (3, 4))),
    ("einsum-rank", lambda x: torch.einsum("ijk->i", x), T("f32", (3, 4))),
    ("einsum-output-label", lambda x: torch.einsum("ij->k", x), T("f32", (3, 4))),
    ("einsum-subscript", lambda x: torch.einsum("i1->i", x), T("f32", (3, 4))),
)


@pytest.mark.parametrize(("fn", "arg"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_refused_like_eager(fn, arg):
    check_refused(fn, arg)


MASKS = (
    ("bool-tensor", lambda x, m: x[m]),
    ("bool-tensor-after-slice", lambda x, m: x[:, m[0]]),
    ("uint8-tensor", lambda x, m: x[m.to(torch.uint8)]),
    ("bool-list", lambda x, m: x[[True, False, True]]),
)


@pytest.mark.parametrize("fn", [m[1] for m in MASKS], ids=[m[0] for m in MASKS])
def test_mask_indexing_is_refused_with_one_clear_error(fn):
    """Eager accepts it, but the result's shape is the mask's count of True: no trace can
    know it. The error says so, names the user's line and suggests the shape-keeping forms."""
    x, mask = torch.randn(3, 3), torch.rand(3, 3) > 0.5
    fn(x, mask)  # eager is fine with it
    with pytest.raises(TracingError) as info:
        trace_callable(fn, (x, mask), name="fn")
    error = info.value
    assert "mask" in error.message and "depends on" in error.message and "torch.where" in error.message
    assert error.file and error.file.endswith("test_ops_indexing.py") and error.line


def test_tensor_repeats_without_output_size_are_refused_clearly():
    with pytest.raises(TracingError, match="depends on their values"):
        trace_callable(lambda x, r: x.repeat_interleave(r), (torch.zeros(3), torch.tensor([1, 0, 2])), name="fn")


def test_tensor_slice_bound_is_refused_clearly():
    with pytest.raises(TracingError, match="slice bound is a tensor"):
        trace_callable(lambda x, n: x[:n], (torch.zeros(4), torch.tensor(2)), name="fn")


# --- forms the adapters leave to torch ------------------------------------------------------------------------------

OPAQUE_FORMS = (
    ("einsum-three-operands", lambda a: torch.einsum("ij,jk,kl->il", a, a.T, a), T("f32", (3, 3)), "torch.einsum"),
    ("einsum-diagonal", lambda a: torch.einsum("ii->i", a), T("f32", (3, 3)), "torch.einsum"),
    ("einsum-int-one-sided-sum", lambda a: torch.einsum("ij,ik->i", a, a), T("i32", (3, 3)), "torch.einsum"),
    ("repeat_interleave-tensor", lambda a: a.repeat_interleave(a.long().abs(), output_size=4),
     L((1.0, -3.0, 0.0), "f32"), "torch.Tensor.repeat_interleave"),
    ("max-all", lambda a: torch.max(a), T("f32", (3, 4)), "torch.max"),
    ("getitem-python-bool", lambda a: a[True], T("f32", (3, 4)), "torch.Tensor.__getitem__"),
    ("getitem-two-ellipses", lambda a: a[..., 0, ...], T("f32", (2, 3, 4)), "torch.Tensor.__getitem__"),
    ("getitem-list-of-lists", lambda a: a[[[0], [1]]], T("f32", (2, 3, 4)), "torch.Tensor.__getitem__"),
)


@pytest.mark.parametrize(("fn", "arg", "name"), [f[1:] for f in OPAQUE_FORMS], ids=[f[0] for f in OPAQUE_FORMS])
def test_unmodelled_forms_stay_torch_calls(fn, arg, name):
    args = (arg.make(torch.Generator().manual_seed(SEED)),)
    program = trace_callable(fn, args, name="fn")
    assert name in [b.symbol.qualname for b in program.trace.bsyms]
    assert_matches("torch", program.trace, fn(*args), compile_trace(program.trace)(*program.inputs), exact=True)
