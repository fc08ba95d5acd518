"""einsum of one or two operands, as sums, permutes, reshapes and one matrix product.

This is torch's own strategy (sum the labels only one operand has, then one batched
matrix product over the shared ones), so results and dtypes agree with eager. The
forms it does not cover (three or more operands, diagonals such as "ii->i", integer
operands that need a sum before the product) stay opaque torch calls: see
`einsum_is_modelled`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from tracecli.core import dtypes
from tracecli.ops import prims
from tracecli.ops.ltorch._base import convert, expect_tensor, symbol
from tracecli.ops.promotion import ShapeError

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
    if x.shape != full:
        x = prims.broadcast_in_dim(x, full, tuple(range(len(full))))
    kept = groups if groups[0] else [group for group in groups if group]
    merged = tuple(math.prod(sizes[label] for label in group) for group in kept)
    return x if merged == x.shape else prims.reshape(x, merged)


@symbol(torch.einsum)
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
            return x if x.shape == out_shape else prims.broadcast_in_dim(x, out_shape, dims)

        return prims.mul(spread(a, la), spread(b, lb))
    if a.dtype == dtypes.bool8:
        raise ShapeError("einsum sums bool operands with a matrix product, which torch does not implement for bool")
    product = prims.matmul(_arranged(a, la, [batch, left, contracted], sizes),
                           _arranged(b, lb, [batch, contracted, right], sizes))
    order = tuple(batch + left + right)
    unmerged = tuple(sizes[label] for label in order)
    if product.shape != unmerged:
        product = prims.reshape(product, unmerged)
    return _permuted(product, order, eq.output)
