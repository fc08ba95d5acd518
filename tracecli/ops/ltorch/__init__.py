"""ltorch: torch-level symbols that decompose into prims.

`ALL` maps each symbol's name to the symbol; every symbol is also an attribute of
this module, so printed code (`ltorch.mul(x, y)`) resolves here.
"""

# The symbols keep torch's names, builtins' names (abs, pow, sum) included.
# ruff: noqa: A004

from tracecli.ops.ltorch._base import ALL
from tracecli.ops.ltorch.conversions import to
from tracecli.ops.ltorch.elementwise import (
    abs,
    add,
    cos,
    eq,
    erf,
    exp,
    floor_divide,
    ge,
    gelu,
    gt,
    le,
    log,
    lt,
    maximum,
    minimum,
    mul,
    ne,
    neg,
    pow,
    reciprocal,
    relu,
    rsqrt,
    rsub,
    sigmoid,
    silu,
    sin,
    sqrt,
    sub,
    tanh,
    true_divide,
    where,
)
from tracecli.ops.ltorch.factories import (
    arange,
    full,
    ones,
    ones_like,
    rand,
    rand_like,
    randn,
    randn_like,
    zeros,
    zeros_like,
)
from tracecli.ops.ltorch.linalg import linear, matmul
from tracecli.ops.ltorch.reductions import amax, amin, layer_norm, log_softmax, mean, softmax, sum, var
from tracecli.ops.ltorch.shapes import cat, expand, permute, reshape, squeeze, transpose, unsqueeze

# Spelled out so that linters see the re-exports; tests check it against ALL.
__all__ = [
    "ALL", "abs", "add", "amax", "amin", "arange", "cat", "cos", "eq", "erf", "exp", "expand", "floor_divide",
    "full", "ge", "gelu", "gt", "layer_norm", "le", "linear", "log", "log_softmax", "lt", "matmul", "maximum",
    "mean", "minimum", "mul", "ne", "neg", "ones", "ones_like", "permute", "pow", "rand", "rand_like", "randn",
    "randn_like", "reciprocal", "relu", "reshape", "rsqrt", "rsub", "sigmoid", "silu", "sin", "softmax", "sqrt",
    "squeeze", "sub", "sum", "tanh", "to", "transpose", "true_divide", "unsqueeze", "var", "where", "zeros",
    "zeros_like",
]
