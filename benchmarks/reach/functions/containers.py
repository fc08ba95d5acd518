"""Containers around tensor ops: lists, tuples, dicts and sets, built, changed, nested,
passed in and returned."""

import torch


def case(inputs, kwargs=dict):
    """Marks a case: `inputs()` makes its positional arguments, `kwargs()` its keyword ones."""
    def mark(fn):
        fn.case_inputs = lambda: (inputs(), kwargs())
        return fn
    return mark


def randn(*shape, **options):
    return torch.randn(*shape, **options)


CONFIG = {"layers": [{"scale": 0.5}, {"scale": 2.0}], "names": ("a", "b")}


# -- lists ---------------------------------------------------------------------------

@case(lambda: (randn(4, 3),))
def list_append_stack(x):
    """list.append in a loop, then torch.stack of the list"""
    parts = []
    for i in range(3):
        parts.append(x * i)
    return torch.stack(parts)


@case(lambda: (randn(2, 3), randn(2, 3)))
def list_extend_cat(x, y):
    """list.extend with a tuple and a generator, then torch.cat"""
    parts = [x]
    parts.extend((y, x + y))
    parts.extend(t.sin() for t in (x, y))
    return torch.cat(parts, dim=0)


@case(lambda: (randn(3),))
def list_insert_pop(x):
    """list.insert at the front, pop from both ends"""
    items = [x + 1, x + 2, x + 3]
    items.insert(0, x)
    last = items.pop()
    first = items.pop(0)
    return first * last + sum(items)


@case(lambda: (randn(5),))
def list_slices_reversed(x):
    """slicing a list with steps and negative bounds, reversed()"""
    items = [x * i for i in range(6)]
    head, tail = items[:2], items[-2:]
    every_other = items[::2]
    return torch.stack(head + tail + every_other + list(reversed(items)))


@case(lambda: (randn(2, 2),))
def list_repeat_and_sum(x):
    """[x] * n and builtin sum over tensors"""
    return sum([x] * 4) + sum([x, x], torch.ones(2, 2))


@case(lambda: (randn(3), randn(3)))
def list_setitem_delitem(x, y):
    """item assignment, del and list.remove of the first item on a list of tensors"""
    items = [x, y, x * y, x - y]
    items[1] = items[1] * 10
    del items[-1]
    items.remove(items[0])  # found by identity at the front: no tensor is compared
    return torch.stack(items)


@case(lambda: (randn(3, 4), randn(5, 4), randn(2, 4)))
def list_sorted_by_shape(a, b, c):
    """sorted() of tensors with a key reading their shapes"""
    ordered = sorted([a, b, c], key=lambda t: t.shape[0])
    return torch.cat(ordered)[:, 0]


@case(lambda: (randn(4),))
def list_star_unpack(x):
    """first, *rest = a list; rest is a list again"""
    first, *middle, last = [x, x * 2, x * 3, x * 4]
    return first + last + torch.stack(middle).sum(0)


@case(lambda: ([randn(3), randn(3), randn(3)],))
def list_argument(xs):
    """a list of tensors as the argument"""
    total = xs[0]
    for t in xs[1:]:
        total = total * t
    return total, len(xs)


@case(lambda: (randn(3),))
def list_copy_is_independent(x):
    """list.copy(), then changing the copy leaves the original"""
    a = [x, x + 1]
    b = a.copy()
    b[0] = b[0] * 100
    return a[0] + b[0], list(a)


@case(lambda: (randn(4),))
def list_membership_of_numbers(x):
    """`in` on a list of Python ints and list.index/count"""
    sizes = [2, 4, 8, 4]
    if x.shape[0] in sizes:
        x = x * sizes.index(x.shape[0]) + sizes.count(4)
    return x


# -- tuples --------------------------------------------------------------------------

@case(lambda: (randn(3), randn(3)))
def tuple_swap(x, y):
    """a, b = b, a"""
    x, y = y, x
    return x - y


@case(lambda: (randn(2), randn(2)))
def tuple_concat_nested_return(x, y):
    """tuple concatenation and a nested tuple/list returned"""
    pair = (x,) + (y,)
    return pair + (x * y,), (pair[0], [x + y, (x - y,)])


@case(lambda: ((randn(2), (randn(2), 3)),))
def tuple_nested_argument(packed):
    """a nested tuple of tensors and a number as the argument, unpacked in the signature's body"""
    a, (b, n) = packed
    return a * n + b


# -- dicts ---------------------------------------------------------------------------

@case(lambda: (randn(3), randn(3)))
def dict_returned(x, y):
    """a dict of tensors returned"""
    return {"sum": x + y, "diff": x - y, "n": x.numel()}


@case(lambda: (randn(2, 2),))
def dict_update_items(x):
    """dict.update, then a loop over items()"""
    d = {"a": x, "b": x * 2}
    d.update({"c": x * 3}, b=x * 4)
    out = torch.zeros_like(x)
    for key, value in d.items():
        out = out + value * len(key)
    return out


@case(lambda: (randn(3),))
def dict_get_pop_setdefault(x):
    """dict.get with a default, pop, setdefault"""
    d = {"w": x}
    w = d.get("w")
    b = d.get("b", torch.ones(3))
    d.setdefault("b", b * 2)
    d.setdefault("w", b * 100)
    popped = d.pop("w")
    return w + popped + d["b"]


@case(lambda: (randn(2),))
def dict_comprehension(x):
    """a dict comprehension keyed by f-strings"""
    layers = {f"layer{i}": x * i for i in range(4)}
    return layers["layer3"] - layers["layer1"], sorted(layers)


@case(lambda: ({"a": randn(3), "b": randn(3)},))
def dict_argument(batch):
    """a dict of tensors as the argument"""
    return batch["a"] * batch["b"] + len(batch)


@case(lambda: (randn(2), randn(2)))
def dict_merge_operators(x, y):
    """d1 | d2, {**d1, **d2} and |="""
    a = {"x": x, "y": y}
    b = {"y": y * 10, "z": x + y}
    merged = a | b
    spread = {**b, **a}
    a |= {"w": x * y}
    return merged["y"] + spread["y"] + a["w"]


@case(lambda: (randn(2, 3), randn(2, 3)))
def dict_from_zip(x, y):
    """dict(zip(names, tensors)) and keys/values views"""
    d = dict(zip(("x", "y"), (x, y)))
    keys = list(d.keys())
    return torch.stack(list(d.values())), keys


@case(lambda: (randn(3, 2),))
def dict_keyed_by_shape(x):
    """ints from shapes as dict keys, and `in` on the dict"""
    table = {3: 1.5, 4: -1.0}
    table[x.shape[1]] = 0.25
    scale = table[x.shape[0]] if x.shape[0] in table else 0.0
    return x * scale * table[2]


@case(lambda: (randn(3),))
def dict_delete_and_len(x):
    """del d[key] and len of a dict"""
    d = {"a": x, "b": x + 1, "c": x + 2}
    del d["b"]
    return d["a"] * len(d) + d["c"]


@case(lambda: (randn(4),))
def nested_config_lookup(x):
    """a nested dict/list/tuple global read by the function"""
    for layer in CONFIG["layers"]:
        x = x * layer["scale"]
    return x, CONFIG["names"][1]


@case(lambda: (randn(2), randn(2)))
def list_of_dicts_returned(x, y):
    """a list of dicts holding tensors, returned"""
    return [{"value": t, "double": t * 2} for t in (x, y)]


# -- sets ----------------------------------------------------------------------------

@case(lambda: (randn(3, 4), randn(3, 4), randn(5, 4)))
def set_of_shapes(a, b, c):
    """a set comprehension of shapes to count distinct ones"""
    distinct = {t.shape for t in (a, b, c)}
    return a * len(distinct)


@case(lambda: (randn(4),))
def set_operations(x):
    """set union, intersection, difference on ints, sorted back to a list"""
    a, b = {1, 2, 3}, {2, 3, 4}
    picked = sorted((a & b) | ({5} - a))
    return x[: len(picked)] * sum(picked)


@case(lambda: (randn(3).double(),))
def set_membership_of_dtypes(x):
    """`in` on a set of dtypes"""
    if x.dtype in {torch.float32, torch.float64}:
        return x * 2
    return x


@case(lambda: (randn(3),))
def frozenset_dict_key(x):
    """a frozenset as a dict key"""
    weights = {frozenset({"a", "b"}): 2.0, frozenset({"c"}): 3.0}
    return x * weights[frozenset(["b", "a"])]
