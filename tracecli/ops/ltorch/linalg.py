"""Matrix products: matmul, linear, addmm, baddbmm, outer, the matrix-vector and vector
products (mv, dot, vdot), their scaled sums (addmv, addr, addbmm), and einsum.

The scaled sums follow torch's kernels: the product (in float32 for half precision, as
torch accumulates) plus `beta * input`, where `input` is not read at all when beta is 0;
addr computes `beta * input + (alpha * vec1) * vec2` in the promoted dtype, with logical
and/or for bool tensors.

einsum of one or two operands becomes sums, permutes, reshapes and one matrix product:
torch's own strategy (sum the labels only one operand has, then one batched matrix
product over the shared ones), so results and dtypes agree with eager. The forms it does
not cover (three or more operands, diagonals such as "ii->i", integer operands that need
a sum before the product) stay opaque torch calls: see `einsum_is_modelled`.
"""

# Parameters keep torch's names (`input`, ...) so that calls by keyword mean the same.
# ruff: noqa: A001, A002

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from tracecli.core import dtypes
from tracecli.core.dims import same_shape
from tracecli.core.symbol import Tag
from tracecli.core.values import TensorValue
from tracecli.ops import prims
from tracecli.ops.autocast import Autocast, Policy, device_type, everywhere
from tracecli.ops.forms import OPAQUE
from tracecli.ops.ltorch._base import broadcast_to, compute_dtype, convert, expect_tensor, is_tensor, symbol, torch_form
from tracecli.ops.ltorch.inplace import written_in_place
from tracecli.ops.promotion import ShapeError, broadcast_shapes, result_type
from tracecli.ops.torch_bridge import TO_TORCH


def autocast_reaches(x: TensorValue, *device_types: str) -> bool:
    """Whether torch.autocast is on for x's device (of these types) and would cast x: for
    the ops whose torch kernels meet autocast inside, which tracing refuses there."""
    device = device_type(x.device)
    return (device in device_types and x.dtype in (dtypes.float32, dtypes.float16, dtypes.bfloat16)
            and torch.is_autocast_enabled(device))


def _same_dtype(a, b, op):
    if a.dtype != b.dtype:
        raise ShapeError(f"{op} expects both operands to have the same dtype, got {a.dtype.name} and {b.dtype.name}")


@symbol(torch.matmul, methods=("matmul", "__matmul__"), autocast=everywhere(Policy.LOWER))
def matmul(input, other):
    """matrix product with torch's broadcasting rules for batches and vectors"""
    input, other = expect_tensor(input, "matmul"), expect_tensor(other, "matmul")
    _same_dtype(input, other, "matmul")
    return prims.matmul(input, other)


@symbol(F.linear, autocast=everywhere(Policy.LOWER))
def linear(input, weight, bias=None):
    """input @ weight.T + bias"""
    input, weight = expect_tensor(input, "linear"), expect_tensor(weight, "linear")
    _same_dtype(input, weight, "linear")
    if weight.ndim == 2:
        weight = prims.transpose(weight, (1, 0))
    elif weight.ndim != 1:
        raise ShapeError(f"linear expects a 1-D or 2-D weight, got {list(weight.shape)}")
    if bias is None:
        return prims.matmul(input, weight)
    _same_dtype(input, expect_tensor(bias, "linear"), "linear")
    # torch adds the bias inside the product (addmm), accumulating half precision in
    # float32 and rounding once; rounding the product before the add is several ulps off.
    wide = compute_dtype(input.dtype)
    out = prims.matmul(convert(input, wide), convert(weight, wide))
    out = prims.add(out, broadcast_to(convert(bias, wide), out.shape))
    return convert(out, input.dtype)


def _scaled_sum(op: str, input, product, beta, alpha, dtype):
    """beta * input + alpha * product in `product`'s (wide) dtype, rounded once to `dtype`.
    With beta 0 input is not read at all, as in torch (its NaNs do not spread)."""
    shape = product.shape
    if broadcast_shapes(input.shape, shape) != shape:
        raise ShapeError(f"{op}: input {list(input.shape)} does not broadcast to the product's shape {list(shape)}")
    out = product if alpha == 1 else prims.mul(product, convert(alpha, dtype))
    if beta != 0:
        addend = broadcast_to(convert(input, product.dtype), shape)
        if beta != 1:
            addend = prims.mul(addend, convert(beta, dtype))
        out = prims.add(out, addend)
    return convert(out, dtype)


def _product_operands(op: str, input, a, b, ndim: int):
    input, a, b = (expect_tensor(t, op) for t in (input, a, b))
    if a.ndim != ndim or b.ndim != ndim:
        raise ShapeError(f"{op} expects {ndim}-D operands, got {list(a.shape)} and {list(b.shape)}")
    _same_dtype(a, b, op)
    _same_dtype(a, input, op)
    if a.dtype.kind == "bool":
        raise ShapeError(f"{op} is not implemented for bool tensors")
    return input, a, b


@symbol(torch.addmm, methods=("addmm",), autocast=everywhere(Policy.LOWER))
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2)"""
    input, mat1, mat2 = _product_operands("addmm", input, mat1, mat2, 2)
    # Half precision accumulates in float32 and rounds once, as torch's kernel does.
    wide = compute_dtype(mat1.dtype)
    product = prims.matmul(convert(mat1, wide), convert(mat2, wide))
    return _scaled_sum("addmm", input, product, beta, alpha, mat1.dtype)


@symbol(torch.baddbmm, methods=("baddbmm",), autocast=everywhere(Policy.LOWER))
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (batch1 @ batch2), batch by batch"""
    input, batch1, batch2 = _product_operands("baddbmm", input, batch1, batch2, 3)
    if batch1.shape[0] != batch2.shape[0]:
        raise ShapeError(f"baddbmm: batch sizes differ, {batch1.shape[0]} and {batch2.shape[0]}")
    wide = compute_dtype(batch1.dtype)
    product = prims.matmul(convert(batch1, wide), convert(batch2, wide))
    return _scaled_sum("baddbmm", input, product, beta, alpha, batch1.dtype)


@symbol(torch.outer, aliases=(torch.ger,), methods=("outer", "ger"))
def outer(input, vec2):
    """the outer product input[i] * vec2[j], promoting dtypes"""
    input, vec2 = expect_tensor(input, "outer"), expect_tensor(vec2, "outer")
    if input.ndim != 1 or vec2.ndim != 1:
        raise ShapeError(f"outer expects 1-D operands, got {list(input.shape)} and {list(vec2.shape)}")
    dtype = result_type(input, vec2)
    shape = (input.shape[0], vec2.shape[0])
    rows = prims.broadcast_in_dim(convert(input, dtype), shape, (0,))
    cols = prims.broadcast_in_dim(convert(vec2, dtype), shape, (1,))
    return prims.mul(rows, cols)


def _vectors(op: str, *operands):
    """Operands of one dtype, bool refused (torch has no bool matrix product)."""
    operands = [expect_tensor(t, op) for t in operands]
    for t in operands[1:]:
        _same_dtype(operands[0], t, op)
    if operands[0].dtype == dtypes.bool8:
        raise ShapeError(f"{op} is not implemented for bool tensors")
    return operands


@symbol(torch.mv, methods=("mv",), autocast=Autocast(cuda=Policy.LOWER))
def mv(input, vec):
    """the matrix-vector product input @ vec"""
    input, vec = _vectors("mv", input, vec)
    if input.ndim != 2 or vec.ndim != 1:
        raise ShapeError(f"mv expects a matrix and a vector, got {list(input.shape)} and {list(vec.shape)}")
    return prims.matmul(input, vec)


def _dot_operands(op: str, input, other):
    input, other = _vectors(op, input, other)
    if input.ndim != 1 or other.ndim != 1:
        raise ShapeError(f"{op} expects 1-D tensors, got {list(input.shape)} and {list(other.shape)}")
    return input, other


@symbol(torch.dot, methods=("dot",), autocast=Autocast(cuda=Policy.PROMOTE))
def dot(input, tensor):
    """the inner product of two vectors"""
    return prims.matmul(*_dot_operands("dot", input, tensor))


def _vdot(input, other):
    # The complex form conjugates its first operand: no prim here conjugates.
    if is_tensor(input) and input.dtype.is_complex:
        return OPAQUE
    return vdot(input, other)


@symbol(torch.vdot, methods=("vdot",), adapter=_vdot, autocast=Autocast(cuda=Policy.PROMOTE))
def vdot(input, other):
    """the inner product of two vectors, the first conjugated (real vectors here: their dot)"""
    input, other = _dot_operands("vdot", input, other)
    if input.dtype.is_complex:
        raise ShapeError("vdot of complex vectors is not modelled")
    return prims.matmul(input, other)


@symbol(torch.addmv, methods=("addmv",), autocast=Autocast(cuda=Policy.LOWER))
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec)"""
    input, mat, vec = _vectors("addmv", input, mat, vec)
    if mat.ndim != 2 or vec.ndim != 1 or input.ndim > 1:
        raise ShapeError(f"addmv expects a vector, a matrix and a vector, got {list(input.shape)}, "
                         f"{list(mat.shape)} and {list(vec.shape)}")
    wide = compute_dtype(mat.dtype)
    product = prims.matmul(convert(mat, wide), convert(vec, wide))
    return _scaled_sum("addmv", input, product, beta, alpha, mat.dtype)


def _batch(x, i: int):
    """x[i] of a 3-D tensor."""
    part = prims.slice(x, (i, 0, 0), (i + 1,) + x.shape[1:])
    return prims.reshape(part, x.shape[1:])


@symbol(torch.addbmm, methods=("addbmm",), autocast=everywhere(Policy.LOWER))
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * the sum over the batch of batch1[i] @ batch2[i]"""
    input, batch1, batch2 = _product_operands("addbmm", input, batch1, batch2, 3)
    if batch1.shape[0] != batch2.shape[0]:
        raise ShapeError(f"addbmm: batch sizes differ, {batch1.shape[0]} and {batch2.shape[0]}")
    dtype, wide = batch1.dtype, compute_dtype(batch1.dtype)
    batches = batch1.shape[0]
    if batches == 0:
        # No products at all: torch scales input alone (alpha meets no term).
        shape = (batch1.shape[1], batch2.shape[2])
        product = prims.full(shape, convert(0, wide), device=batch1.device, dtype=wide)
        return _scaled_sum("addbmm", input, product, beta, 1, dtype)
    if wide != dtype:
        # torch's kernel adds one batch's product at a time (an addmm each), rounding each
        # sum to half precision (a symbolic batch size is pinned: the steps are unrolled).
        out = input
        for i in range(batches):
            product = prims.matmul(convert(_batch(batch1, i), wide), convert(_batch(batch2, i), wide))
            out = _scaled_sum("addbmm", out, product, beta if i == 0 else 1, alpha, dtype)
        return out
    # In single or double precision the sum of the batches' products as one product over
    # the batch and inner dimensions together: it agrees with torch's batch-by-batch sums
    # within rounding, and keeps a symbolic batch size symbolic.
    n, m, p = batch1.shape[1], batch1.shape[2], batch2.shape[2]
    rows = prims.reshape(prims.transpose(convert(batch1, wide), (1, 0, 2)), (n, batches * m))
    cols = prims.reshape(convert(batch2, wide), (batches * m, p))
    return _scaled_sum("addbmm", input, prims.matmul(rows, cols), beta, alpha, dtype)


def _addr_scalar(value, dtype, name: str):
    """torch's rules for addr's beta and alpha: a bool only for bool results, an integer
    for integer results; the value as the kernel holds it, in the result's dtype (a
    half-precision result rounds it first)."""
    if isinstance(value, bool) and dtype != dtypes.bool8:
        raise ShapeError(f"addr: a bool {name} is only taken for bool results")
    if dtype.kind in ("bool", "int") and not isinstance(value, int):
        raise ShapeError(f"addr: for integer tensors, {name} must not be a floating point number, got {value!r}")
    if isinstance(value, complex) and not dtype.is_complex:
        raise ShapeError(f"addr: a complex {name} needs a complex result, got {dtype.name}")
    if dtype in (dtypes.float16, dtypes.bfloat16):
        return torch.tensor(value, dtype=TO_TORCH[dtype]).item()
    return convert(value, dtype)


@symbol(torch.addr, methods=("addr",), autocast=Autocast(cuda=Policy.LOWER))
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * the outer product of vec1 and vec2, in the promoted dtype"""
    input, vec1, vec2 = (expect_tensor(t, "addr") for t in (input, vec1, vec2))
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise ShapeError(f"addr expects 1-D vectors, got {list(vec1.shape)} and {list(vec2.shape)}")
    shape = (vec1.shape[0], vec2.shape[0])
    if input.ndim > 2 or broadcast_shapes(input.shape, shape) != shape:
        raise ShapeError(f"addr: input {list(input.shape)} does not broadcast to the outer product's shape {list(shape)}")
    dtype = result_type(input, vec1, vec2)
    beta, alpha = _addr_scalar(beta, dtype, "beta"), _addr_scalar(alpha, dtype, "alpha")
    rows = prims.broadcast_in_dim(convert(vec1, dtype), shape, (0,))
    cols = prims.broadcast_in_dim(convert(vec2, dtype), shape, (1,))
    if dtype == dtypes.bool8:
        # (beta and input) or (alpha and vec1 and vec2), elementwise.
        out = prims.bitwise_and(rows, cols) if alpha else prims.full(shape, False, device=rows.device, dtype=dtype)
        return prims.bitwise_or(broadcast_to(convert(input, dtype), shape), out) if beta else out
    # torch's kernel multiplies alpha into vec1's element first, then by vec2's.
    out = prims.mul(rows if alpha == 1 else prims.mul(rows, alpha), cols)
    if beta == 0:
        return out  # input is not read: its NaNs do not spread
    addend = broadcast_to(convert(input, dtype), shape)
    return prims.add(addend if beta == 1 else prims.mul(addend, beta), out)


@symbol(F.bilinear, autocast=Autocast(cuda=Policy.PROMOTE))
def bilinear(input1, input2, weight, bias=None):
    """x1^T W[o] x2 + bias[o] for each output o: two matrix products, as torch's kernel
    contracts input1's features, then input2's"""
    tensors = [expect_tensor(t, "bilinear") for t in (input1, input2, weight)]
    if bias is not None:
        tensors.append(expect_tensor(bias, "bilinear"))
    input1, input2, weight = tensors[:3]
    if any(t.dtype != input1.dtype for t in tensors):
        raise ShapeError(f"bilinear: all tensors must have the same dtype, got {', '.join(t.dtype.name for t in tensors)}")
    if input1.dtype == dtypes.bool8:
        raise ShapeError("bilinear is not implemented for bool tensors")
    if input1.ndim == 0 or input1.ndim != input2.ndim or input1.shape[:-1] != input2.shape[:-1]:
        raise ShapeError(f"bilinear: inputs {list(input1.shape)} and {list(input2.shape)} must share their batch "
                         "dimensions")
    if weight.ndim != 3 or weight.shape[1] != input1.shape[-1] or weight.shape[2] != input2.shape[-1]:
        raise ShapeError(f"bilinear: weight {list(weight.shape)} does not fit inputs {list(input1.shape)} and "
                         f"{list(input2.shape)}")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[0]):
        raise ShapeError(f"bilinear: bias {list(bias.shape)} does not fit weight {list(weight.shape)}")
    out, n1, n2 = weight.shape
    batch = input1.shape[:-1]
    rows = math.prod(batch)
    x1 = prims.reshape(input1, (rows, n1))
    x2 = prims.reshape(input2, (rows, n2, 1))
    # Contract input1's features first: t[b, o, j] = sum_i x1[b, i] W[o, i, j]. The
    # products are matmul ops, as torch's kernel makes them bmm calls: CPU autocast
    # reaches them, and the result comes back in input1's dtype as torch's does.
    w = prims.reshape(prims.transpose(weight, (1, 0, 2)), (n1, out * n2))
    t = prims.reshape(matmul(x1, w), (rows, out, n2))
    y = convert(prims.reshape(matmul(t, x2), batch + (out,)), input1.dtype)
    return y if bias is None else prims.add(y, broadcast_to(bias, y.shape))


def _in_place(op, name: str):
    """Tensor.<name>: the op's result written into the tensor. torch.autocast has no
    policy for in-place ops (its lists name the functional ones), so the result is
    computed in the tensors' own dtypes even inside an autocast region."""

    def adapter(self, *args, **kwargs):
        self = expect_tensor(self, name)
        with torch.autocast(device_type(self.device), enabled=False):
            result = op(self, *args, **kwargs)
        return written_in_place(self, result, f"Tensor.{name}")

    adapter.__name__ = f"_{name}"
    return adapter


for _op, _name in ((addmm, "addmm_"), (baddbmm, "baddbmm_"), (addmv, "addmv_"), (addr, "addr_"), (addbmm, "addbmm_")):
    torch_form(*((getattr(torch, _name),) if hasattr(torch, _name) else ()), methods=(_name,))(_in_place(_op, _name))


@torch_form(methods=("__rmatmul__",))
def _rmatmul(self, other):
    return matmul(other, self)


def _matrix_product(name: str, ndim: int):
    """torch.mm (ndim 2) and torch.bmm (ndim 3): matmul without broadcasting; other
    shapes are torch's error to raise."""

    def adapter(input, mat2):
        if input.ndim != ndim or mat2.ndim != ndim or input.shape[:-2] != mat2.shape[:-2]:
            return OPAQUE
        return matmul(input, mat2)

    adapter.__name__ = f"_{name}"
    return adapter


torch_form(torch.mm, methods=("mm",))(_matrix_product("mm", 2))
torch_form(torch.bmm, methods=("bmm",))(_matrix_product("bmm", 3))

# --- einsum -------------------------------------------------------------------------

# A label is a subscript letter, or an int for a dimension under "..." (counted from
# the left of the widest ellipsis, so that ellipsis dimensions align on the right).
Label = str | int


@dataclass(frozen=True)
class Equation:
    inputs: tuple[tuple[Label, ...], ...]
    output: tuple[Label, ...]


def _subscripts(term: str) -> list:
    """The letters of one term, with Ellipsis where "..." stands."""
    out: list = []
    i = 0
    while i < len(term):
        if term.startswith("...", i):
            if Ellipsis in out:
                raise ShapeError(f"einsum: more than one ellipsis in {term!r}")
            out.append(Ellipsis)
            i += 3
            continue
        if not (term[i].isascii() and term[i].isalpha()):
            raise ShapeError(f"einsum: invalid subscript {term[i]!r}; use letters a-z, A-Z and '...'")
        out.append(term[i])
        i += 1
    return out


def parse_equation(equation: str, ranks: list[int]) -> Equation:
    """Labels for every dimension of every operand and of the output."""
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    terms = [_subscripts(term) for term in lhs.split(",")]
    if len(terms) != len(ranks):
        raise ShapeError(f"einsum: the equation names {len(terms)} operands, {len(ranks)} were given")
    widths = []
    for term, rank in zip(terms, ranks, strict=True):
        letters = sum(1 for s in term if s is not Ellipsis)
        width = rank - letters if Ellipsis in term else 0
        if width < 0 or (Ellipsis not in term and letters != rank):
            raise ShapeError(f"einsum: subscripts {''.join(map(str, term))!r} do not fit an operand of rank {rank}")
        widths.append(width)
    widest = max(widths, default=0)

    def expand(term: list, width: int) -> tuple[Label, ...]:
        out: list[Label] = []
        for s in term:
            out.extend(range(widest - width, widest) if s is Ellipsis else [s])
        return tuple(out)

    inputs = tuple(expand(term, width) for term, width in zip(terms, widths, strict=True))
    if arrow:
        output = expand(_subscripts(rhs), widest)
        known = {label for labels in inputs for label in labels}
        for label in output:
            if output.count(label) > 1 or label not in known:
                raise ShapeError(f"einsum: output subscript {label!r} is repeated or names no input dimension")
    else:
        # Implicit output: the ellipsis, then the letters that appear once, in alphabetical order.
        counts: dict[Label, int] = {}
        for labels in inputs:
            for label in labels:
                counts[label] = counts.get(label, 0) + 1
        letters = sorted(label for label, n in counts.items() if isinstance(label, str) and n == 1)
        output = tuple(range(widest)) + tuple(letters)
    return Equation(inputs, output)


def einsum_is_modelled(equation: str, operands) -> bool:
    """Whether `ltorch.einsum` covers this call (parse errors are raised: they are the user's)."""
    if len(operands) not in (1, 2):
        return False
    eq = parse_equation(equation, [op.ndim for op in operands])
    if any(len(set(labels)) != len(labels) for labels in eq.inputs):
        return False  # a diagonal
    if len(operands) == 2 and not operands[0].dtype.is_inexact:
        # torch sums integer labels that one operand has in int64 before its product,
        # giving dtypes that depend on the equation: leave those to torch.
        a, b = eq.inputs
        return all(label in eq.output for label in set(a) ^ set(b))
    return True


def _sizes(eq: Equation, operands) -> dict[Label, int]:
    sizes: dict[Label, int] = {}
    for labels, op in zip(eq.inputs, operands, strict=True):
        for label, size in zip(labels, op.shape, strict=True):
            known = sizes.get(label, 1)
            if size != known and 1 not in (size, known):
                raise ShapeError(f"einsum: subscript {label!r} has sizes {known} and {size}, which do not broadcast")
            sizes[label] = size if known == 1 else known
    return sizes


def _permuted(x, labels: tuple, order: tuple):
    perm = tuple(labels.index(label) for label in order)
    return x if perm == tuple(range(len(perm))) else prims.transpose(x, perm)


def _sum_out(x, labels: tuple, keep: set) -> tuple:
    dims = tuple(i for i, label in enumerate(labels) if label not in keep)
    if not dims:
        return x, labels
    if x.dtype.kind in ("bool", "int"):
        x = convert(x, dtypes.int64)  # torch's sum of integers
    return prims.sum(x, dims), tuple(label for label in labels if label in keep)


def _arranged(x, labels: tuple, groups: list[list[Label]], sizes: dict):
    """x with its dimensions in the order of `groups` (batch, rows, columns), each group
    merged into one, and size-1 dimensions broadcast where the other operand is larger.

    With batch labels the result is 3-D (an empty group is a dimension of size 1); without,
    empty groups are left out, and matmul's vector forms give the right shapes."""
    order = tuple(label for group in groups for label in group)
    x = _permuted(x, labels, order)
    full = tuple(sizes[label] for label in order)
    if not same_shape(x.shape, full):
        x = prims.broadcast_in_dim(x, full, tuple(range(len(full))))
    kept = groups if groups[0] else [group for group in groups if group]
    merged = tuple(math.prod(sizes[label] for label in group) for group in kept)
    return x if same_shape(merged, x.shape) else prims.reshape(x, merged)


def _einsum(*args):
    if not args or not isinstance(args[0], str):
        return OPAQUE  # the sublist form einsum(a, [0, 1], b, [1, 2])
    equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not all(isinstance(op, TensorValue) for op in operands) or not einsum_is_modelled(equation, operands):
        return OPAQUE
    return einsum(equation, *operands)


# One operand: the result may be a permutation of it (a view), as in torch.
@symbol(torch.einsum, adapter=_einsum, tags=(Tag.VIEW,),
        autocast=Autocast(cuda=Policy.LOWER))
def einsum(equation, *operands):
    """Einstein summation of one or two operands"""
    operands = [expect_tensor(op, "einsum") for op in operands]
    eq = parse_equation(equation, [op.ndim for op in operands])
    if len(operands) == 1:
        x, labels = _sum_out(operands[0], eq.inputs[0], set(eq.output))
        return _permuted(x, labels, eq.output)
    a, b = operands
    if a.dtype != b.dtype:
        raise ShapeError(f"einsum expects operands of one dtype, got {a.dtype.name} and {b.dtype.name}")
    sizes = _sizes(eq, operands)
    la, lb = eq.inputs
    a, la = _sum_out(a, la, set(lb) | set(eq.output))
    b, lb = _sum_out(b, lb, set(la) | set(eq.output))
    batch = [label for label in eq.output if label in la and label in lb]
    left = [label for label in eq.output if label in la and label not in lb]
    right = [label for label in eq.output if label in lb and label not in la]
    contracted = [label for label in la if label in lb and label not in eq.output]
    out_shape = tuple(sizes[label] for label in eq.output)
    if not contracted:
        # Nothing to sum: an elementwise product over the output's dimensions, as in torch.
        def spread(x, labels):
            x = _permuted(x, labels, tuple(label for label in eq.output if label in labels))
            dims = tuple(i for i, label in enumerate(eq.output) if label in labels)
            return x if same_shape(x.shape, out_shape) else prims.broadcast_in_dim(x, out_shape, dims)

        return prims.mul(spread(a, la), spread(b, lb))
    if a.dtype == dtypes.bool8:
        raise ShapeError("einsum sums bool operands with a matrix product, which torch does not implement for bool")
    # The product is an op of its own, as torch's bmm: CPU autocast reaches it (after the
    # sums of labels only one operand has), not einsum.
    product = matmul(_arranged(a, la, [batch, left, contracted], sizes), _arranged(b, lb, [batch, contracted, right], sizes))
    order = tuple(batch + left + right)
    unmerged = tuple(sizes[label] for label in order)
    if not same_shape(product.shape, unmerged):
        product = prims.reshape(product, unmerged)
    return _permuted(product, order, eq.output)
