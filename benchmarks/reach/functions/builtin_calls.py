"""Builtins and the standard library on sizes, numbers and tensors: len, range, enumerate,
zip, min/max, isinstance, getattr/hasattr/setattr, sorted, any/all, map/filter, math,
operator and itertools."""

import itertools
import math
import operator
import types

import torch
import torch.nn as nn


def case(inputs, kwargs=dict):
    """Marks a case: `inputs()` makes its positional arguments, `kwargs()` its keyword ones."""
    def mark(fn):
        fn.case_inputs = lambda: (inputs(), kwargs())
        return fn
    return mark


def randn(*shape, **options):
    return torch.randn(*shape, **options)


torch.manual_seed(0)
LINEAR = nn.Linear(4, 4)


@case(lambda: (randn(5, 2),))
def len_of_tensor(x):
    """len() of a tensor is its first size"""
    return x[len(x) - 2 :] * len(x)


@case(lambda: (randn(3, 8),))
def range_with_step(x):
    """range(start, stop, step) over a size, slicing in the loop"""
    out = []
    for start in range(0, x.shape[1], 3):
        out.append(x[:, start : start + 2].sum(1))
    return torch.stack(out, 1)


@case(lambda: (randn(4),))
def range_reversed_and_len(x):
    """reversed(range(...)), len(range(...)) and range membership"""
    out = x
    for i in reversed(range(1, 4)):
        out = out * i + len(range(i))
    return out if 3 in range(x.shape[0]) else -out


@case(lambda: (randn(2), randn(2), randn(2)))
def enumerate_with_start(x, y, z):
    """enumerate(..., start=1) weighting each tensor by its position"""
    return sum(i * t for i, t in enumerate((x, y, z), start=1))


@case(lambda: (randn(3), randn(3)))
def zip_two_lists(x, y):
    """zip over tensors and weights, and zip(*pairs) to transpose"""
    pairs = list(zip((x, y), (0.5, 2.0)))
    tensors, weights = zip(*pairs)
    return sum(t * w for t, w in pairs) + tensors[0] * weights[1]


@case(lambda: (randn(3, 7),))
def min_max_of_sizes(x):
    """min() and max() of Python ints from shapes"""
    short, long = min(x.shape), max(x.shape)
    return x[:, : max(short, 2, 1)] * min(long, 5)


@case(lambda: (randn(2, 3), randn(4, 3)))
def max_with_key(a, b):
    """max() of tensors with a key on their length"""
    return max([a, b], key=len).sum(0) + min(a, b, key=lambda t: t.shape[0]).sum(0)


@case(lambda: (randn(3),))
def abs_round_divmod_pow(x):
    """abs, round, divmod and pow on Python numbers"""
    q, r = divmod(17, 5)
    return x * abs(-2.5) + round(2.567, 2) + q * r + pow(2, 3)


@case(lambda: (randn(3), 2))
def isinstance_dispatch(x, k):
    """isinstance on a tensor, a number and a tuple of types"""
    out = x
    if isinstance(x, torch.Tensor):
        out = out * 2
    if isinstance(k, (int, float)) and not isinstance(k, bool):
        out = out + k
    return out


@case(lambda: (randn(2, 4),))
def isinstance_of_module(x):
    """isinstance on an nn.Module from the globals"""
    if isinstance(LINEAR, nn.Linear) and not isinstance(LINEAR, nn.Conv1d):
        return LINEAR(x)
    return x


@case(lambda: (randn(3),))
def getattr_hasattr_setattr(x):
    """getattr with a default, hasattr, setattr on a namespace"""
    ns = types.SimpleNamespace(scale=2.0)
    setattr(ns, "shift", 1.0)
    shift = getattr(ns, "shift", 0.0)
    extra = getattr(ns, "missing", 3.0)
    return x * ns.scale + shift + (extra if hasattr(ns, "scale") else 0)


@case(lambda: (randn(3),))
def getattr_on_tensor(x):
    """getattr(x, method name) and hasattr(x, 'shape')"""
    out = getattr(x, "exp")()
    if hasattr(x, "shape") and not hasattr(x, "no_such_thing"):
        out = out + getattr(x, "real")
    return out


@case(lambda: (randn(6),))
def sorted_numbers_reverse(x):
    """sorted() of Python ints with reverse=True, used as indices"""
    order = sorted([4, 0, 2], reverse=True)
    return x[order]


@case(lambda: (randn(3, 2), randn(3, 2)))
def any_all_on_shapes(a, b):
    """all()/any() over generator expressions on shapes"""
    if all(t.dim() == 2 for t in (a, b)) and not any(t.shape[0] == 0 for t in (a, b)):
        return a + b
    return a - b


@case(lambda: (randn(3), randn(3), randn(3)))
def map_and_filter(x, y, z):
    """map() and filter() with lambdas"""
    doubled = list(map(lambda t: t * 2, (x, y, z)))
    kept = list(filter(lambda t: t.shape[0] == 3, doubled))
    return torch.stack(kept).sum(0)


@case(lambda: (randn(2, 16),))
def math_on_sizes(x):
    """math.sqrt, math.log, math.pi, math.ceil on sizes"""
    d = x.shape[-1]
    scale = 1.0 / math.sqrt(d)
    steps = math.ceil(math.log(d, 2))
    return x * scale * steps + math.pi


@case(lambda: (randn(3), randn(3)))
def operator_module(x, y):
    """operator.add/mul, itemgetter and attrgetter"""
    first = operator.itemgetter(0)
    ndim = operator.attrgetter("ndim")
    return operator.mul(operator.add(x, y), ndim(x)) + first([x, y])


@case(lambda: (randn(2), randn(2)))
def itertools_product_and_chain(x, y):
    """itertools.product and itertools.chain over tensors"""
    products = [a * b for a, b in itertools.product((x, y), repeat=2)]
    return torch.stack(list(itertools.chain(products, [x - y])))


@case(lambda: (randn(4),))
def itertools_accumulate(x):
    """itertools.accumulate of tensors (a running sum)"""
    parts = [x[i : i + 1] for i in range(4)]
    return torch.cat(list(itertools.accumulate(parts)))


@case(lambda: (randn(3),))
def number_conversions(x):
    """int(), float(), bool() of Python numbers from sizes"""
    n = x.shape[0]
    return x * float(n) + int(2.9) + bool(n)


@case(lambda: (randn(3),))
def type_is_checks(x):
    """type(x) is torch.Tensor and callable()"""
    out = x
    if type(x) is torch.Tensor:
        out = out * 3
    if callable(torch.sin):
        out = torch.sin(out)
    return out


@case(lambda: (randn(6),))
def chained_comparison(x):
    """0 < n <= 8 on a size"""
    if 0 < x.shape[0] <= 8:
        return x * 2
    return x


@case(lambda: (randn(5, 4),))
def slice_objects(x):
    """slice() objects and Ellipsis as indices"""
    rows = slice(1, None, 2)
    return x[rows, ...] + x[slice(None, 2), ...].sum(0)


@case(lambda: (randn(2, 3),))
def builtin_sum_of_sizes(x):
    """sum() of shape entries and of a comprehension over them"""
    return x * sum(x.shape) + sum(s * s for s in x.shape)
