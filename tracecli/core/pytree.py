"""One walker for the nested containers that hold values in args and outputs, as torch's
pytree and JAX's tree_util: `tree_map` with a leaf test, `tree_leaves`, `tree_flatten`
and `tree_unflatten`, and fast paths over the same nodes for the passes.

Container nodes are tuples, lists, dicts (OrderedDict and defaultdict too), named
tuples and torch's structseqs (`torch.return_types.max`, ...), dataclasses (Hugging
Face's model outputs among them), subclasses of dict and list, each rebuilt as its own
type, and slices (a key's bounds). Everything else is a leaf. A higher layer adds container types with
`register_node`, or a rule for whole families of them with `add_node_resolver`.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

from tracecli.core.dims import Dim, substitute
from tracecli.core.values import NumberValue, TensorValue

_VALUE_SET = frozenset((TensorValue, NumberValue))
# Leaves no value map can change, met in every shape: passed over without a call each.
_SCALARS = frozenset((int, float, bool, str, complex, type(None)))


class Node(NamedTuple):
    """How to take one kind of container apart and build it again."""

    flatten: Callable[[Any], tuple[Iterable, Any]]  # container -> (children, context)
    unflatten: Callable[[list, Any], Any]  # (children: a new list it may keep, context) -> container


_REGISTERED: dict[type, Node] = {}
# Registered types that printed code builds by a call of their own, not by their unflatten.
_REBUILDS: dict[type, Callable[[Any], Rebuild]] = {}
# Tuple subclasses that stand in for another type while tracing: what builds that type.
_BUILT_BY: dict[type, object] = {}
# Rules a higher layer adds: type -> Node, or None when the rule does not know the type.
_RESOLVERS: list[Callable[[type], Node | None]] = []


class _NodeTable(dict):
    """type -> its Node, or None for a leaf; resolved on first sight, so that every later
    lookup is one dict access (the walkers look up every object they meet)."""

    def __missing__(self, kind: type) -> Node | None:
        node = self[kind] = _resolve(kind)
        return node


_NODES = _NodeTable()


def register_node(kind: type, flatten: Callable, unflatten: Callable,
                  rebuild: Callable[[Any], Rebuild] | None = None) -> None:
    """Make `kind` a container: `flatten(obj) -> (children, context)` and
    `unflatten(children, context) -> obj`. The context must be hashable: it is part of
    specs and keys (`tree_key`: CSE, the main block's cache of compiled traces).
    `rebuild(obj)`: the call printed code builds `obj` with, where that is not its
    unflatten (a record standing for what eager returns)."""
    if kind in _REGISTERED:
        raise ValueError(f"{kind.__qualname__} is already a container node")
    _REGISTERED[kind] = Node(flatten, unflatten)
    if rebuild is not None:
        _REBUILDS[kind] = rebuild
    _NODES.clear()  # types seen before may have been resolved without it


def build_as(kind: type, callee: object) -> None:
    """Printed code builds a `kind` (a tuple subclass standing in for a type that cannot
    hold the IR's values, such as a torch.Size of size symbols) by calling `callee`."""
    _BUILT_BY[kind] = callee


def add_node_resolver(resolve: Callable[[type], Node | None]) -> None:
    """Containers known by a rule rather than one by one (the types registered with
    torch.utils._pytree): asked about a type no registration or built-in rule covers."""
    _RESOLVERS.append(resolve)
    _NODES.clear()


def _resolve(kind: type) -> Node | None:
    node = _REGISTERED.get(kind)
    if node is not None:
        return node
    if dataclasses.is_dataclass(kind) and not kind.__module__.startswith("tracecli."):
        # Before dict: a Hugging Face ModelOutput is both, and is built from its fields.
        # The IR's own records (values, types, dtypes) are dataclasses too, and leaves.
        names = tuple(f.name for f in dataclasses.fields(kind) if f.init)
        return Node(lambda obj: ([getattr(obj, n) for n in names], names),
                    lambda children, _: kind(**dict(zip(names, children, strict=True))))
    for resolve in _RESOLVERS:
        node = resolve(kind)
        if node is not None:
            return node
    if issubclass(kind, tuple):
        if hasattr(kind, "_fields"):  # a named tuple: positional fields
            return Node(_as_sequence, lambda children, _: kind._make(children))
        # torch's structseqs (torch.return_types.*) and torch.Size take one sequence.
        # Known by that shape rather than by name, so that core need not import torch.
        return Node(_as_sequence, lambda children, _: kind(children))
    # Other dict and list subclasses (a config's AttrDict, an OrderedDict of the user's):
    # walked as their base, built again as themselves.
    for base in (defaultdict, OrderedDict, dict, list):
        if issubclass(kind, base):
            return _subclass_node(kind, base)
    return None


def _subclass_node(kind: type, base: type) -> Node:
    if base is list:
        return Node(_as_sequence, lambda children, _: subclass_builder(kind, base, children)(children))
    if base is defaultdict:
        return Node(lambda d: (list(d.values()), (d.default_factory, tuple(d))),
                    lambda children, context: _defaultdict_of(kind, context[0], dict(zip(context[1], children,
                                                                                           strict=True))))
    return Node(_dict_items, lambda children, keys: _mapping_of(kind, base, dict(zip(keys, children, strict=True))))


def _mapping_of(kind: type, base: type, items: dict) -> dict:
    return subclass_builder(kind, base, items)(items)


def _defaultdict_of(kind: type, factory: object, items: dict) -> dict:
    return subclass_builder(kind, defaultdict, (factory, items))(factory, items)


# A dict or list subclass -> what builds one from its base's contents: the class itself
# when its constructor takes them as its base's does, else a builder that fills one in.
_SUBCLASS_BUILDERS: dict[type, Callable] = {}


def subclass_builder(kind: type, base: type, sample: object) -> Callable:
    """What builds a `kind` (a subclass of `base`) from `sample`, its contents as `base`'s
    constructor takes them; decided on first sight of the class."""
    build = _SUBCLASS_BUILDERS.get(kind)
    if build is None:
        build = _SUBCLASS_BUILDERS[kind] = kind if _constructs(kind, base, sample) else _filler(kind, base)
    return build


def _constructs(kind: type, base: type, sample: object) -> bool:
    """Whether `kind(*sample)` (a defaultdict's factory and items) or `kind(sample)` builds
    one holding exactly what it was given."""
    try:
        made = kind(*sample) if base is defaultdict else kind(sample)
    except Exception:  # a constructor of its own that takes other arguments
        return False
    expected = sample[1] if base is defaultdict else sample
    if base is list:
        return type(made) is kind and len(made) == len(expected) and all(
            a is b for a, b in zip(list.__iter__(made), expected, strict=True))
    return type(made) is kind and list(dict.keys(made)) == list(expected) and all(
        dict.__getitem__(made, k) is v for k, v in expected.items())


def _filler(kind: type, base: type) -> Callable:
    """A builder that makes a bare `kind` and fills it as its base (its own __init__,
    which takes other arguments, is not run)."""

    def build(*given):
        made = kind.__new__(kind)
        if base is defaultdict:
            made.default_factory, given = given[0], given[1:]
        if base is list:
            list.extend(made, given[0])
        else:
            (OrderedDict if base is OrderedDict else dict).update(made, given[0])
        return made

    # Printed as what it does: `filled_Config({"lr": t0})`, not a call of the class.
    build.__name__ = build.__qualname__ = f"filled_{kind.__name__}"
    return build


def _as_sequence(obj) -> tuple[Iterable, None]:
    return obj, None


def _dict_items(d: dict) -> tuple[list, tuple]:
    return list(d.values()), tuple(d)


register_node(tuple, _as_sequence, lambda children, _: tuple(children))
register_node(list, _as_sequence, lambda children, _: children)
register_node(dict, _dict_items, lambda children, keys: dict(zip(keys, children, strict=True)))
register_node(OrderedDict, _dict_items, lambda children, keys: OrderedDict(zip(keys, children, strict=True)))
register_node(
    defaultdict,
    lambda d: (list(d.values()), (d.default_factory, tuple(d))),
    lambda children, context: defaultdict(context[0], zip(context[1], children, strict=True)),
)
register_node(slice, lambda s: ((s.start, s.stop, s.step), None), lambda children, _: slice(*children))


# -- the generic walkers ---------------------------------------------------------------
# `is_leaf` is asked about containers only: anything else is a leaf whatever it says.


def tree_map(fn: Callable, tree: object, is_leaf: Callable[[Any], bool] | None = None) -> object:
    """`tree` rebuilt with `fn(leaf)` for every leaf; containers keep their type."""
    kind = type(tree)
    node = _NODES[kind]
    if node is None or (is_leaf is not None and is_leaf(tree)):
        return fn(tree)
    # The tracer maps the arguments and results of every torch call: plain tuples, lists
    # and dicts are rebuilt here, and their leaves mapped without a call of tree_map each.
    if kind is tuple or kind is list:
        items = [fn(c) if _NODES[type(c)] is None else tree_map(fn, c, is_leaf) for c in tree]
        return tuple(items) if kind is tuple else items
    if kind is dict:
        return {k: fn(c) if _NODES[type(c)] is None else tree_map(fn, c, is_leaf) for k, c in tree.items()}
    children, context = node.flatten(tree)
    return node.unflatten([tree_map(fn, child, is_leaf) for child in children], context)


def tree_leaves_with_path(tree: object, is_leaf: Callable[[Any], bool] | None = None, *,
                          labels: bool = False) -> list[tuple[tuple, Any]]:
    """(path, leaf) for every leaf in `tree_leaves` order; a path is the leaf's child
    positions, from the root down, or with `labels` a dict's keys and a dataclass's or
    named tuple's field names where the container has them."""
    pairs: list = []
    _append_paths(tree, is_leaf, (), pairs, labels)
    return pairs


def _append_paths(tree: object, is_leaf, path: tuple, pairs: list, labels: bool) -> None:
    node = _NODES[type(tree)]
    if node is None or (is_leaf is not None and is_leaf(tree)):
        pairs.append((path, tree))
        return
    children, context = node.flatten(tree)
    children = list(children)
    names = getattr(type(tree), "_fields", context) if labels else None
    if not (isinstance(names, tuple) and len(names) == len(children) and all(isinstance(n, str) for n in names)):
        names = range(len(children))
    for name, child in zip(names, children, strict=True):
        _append_paths(child, is_leaf, (*path, name), pairs, labels)


class TreeSpec(NamedTuple):
    """A tree's containers without its leaves. Hashable: equal specs, same structure."""

    kind: type | None  # None: a leaf
    context: Any = None
    children: tuple[TreeSpec, ...] = ()

    def kinds(self) -> set[type]:
        """The container types in the tree."""
        found = {self.kind} if self.kind is not None else set()
        for child in self.children:
            found |= child.kinds()
        return found


LEAF = TreeSpec(None)


def same_structure(a: TreeSpec, b: TreeSpec) -> bool:
    """Whether two specs hold the same containers, a class made anew on each call (a named
    tuple class defined inside a function) counting as the same when its name, module
    and fields are, and a function in a context (a defaultdict's factory) when its code is."""
    if a.kind is not b.kind and not _alike(a.kind, b.kind):
        return False
    return (len(a.children) == len(b.children) and _same_context(a.context, b.context)
            and all(same_structure(x, y) for x, y in zip(a.children, b.children, strict=True)))


def _alike(a: object, b: object) -> bool:
    if not isinstance(a, type) or not isinstance(b, type):
        return False
    return ((a.__module__, a.__qualname__, getattr(a, "_fields", None))
            == (b.__module__, b.__qualname__, getattr(b, "_fields", None)))


def _same_context(a: object, b: object) -> bool:
    if a is b or (type(a) is type(b) and isinstance(a, (str, int, float, bool)) and a == b):
        return True
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same_context(x, y) for x, y in zip(a, b, strict=True))
    code_a, code_b = getattr(a, "__code__", None), getattr(b, "__code__", None)
    if code_a is not None and code_a is code_b:
        return True  # one lambda or local function, made again on each call
    if isinstance(a, type) and isinstance(b, type):
        return a is b or _alike(a, b)
    try:
        return bool(a == b)
    except Exception:
        return False
_END = object()


def tree_flatten(tree: object, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, TreeSpec]:
    """(leaves, spec): `tree_unflatten(leaves, spec)` builds `tree` again."""
    leaves: list = []
    return leaves, _flatten(tree, is_leaf, leaves)


def _flatten(tree: object, is_leaf, leaves: list) -> TreeSpec:
    kind = type(tree)
    node = _NODES[kind]
    if node is None or (is_leaf is not None and is_leaf(tree)):
        leaves.append(tree)
        return LEAF
    children, context = node.flatten(tree)
    return TreeSpec(kind, context, tuple([_flatten(child, is_leaf, leaves) for child in children]))


def tree_leaves(tree: object, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves, depth first, in each container's order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_unflatten(leaves: Iterable, spec: TreeSpec) -> object:
    leaves = iter(leaves)
    tree = _unflatten(leaves, spec)
    if next(leaves, _END) is not _END:
        raise ValueError("more leaves than the spec has places for")
    return tree


def _unflatten(leaves: Iterator, spec: TreeSpec) -> object:
    if spec.kind is None:
        return next(leaves)
    children = [_unflatten(leaves, child) for child in spec.children]
    return _NODES[spec.kind].unflatten(children, spec.context)


@dataclasses.dataclass(frozen=True)
class Rebuild:
    """How printed code builds a container other than a plain tuple, list or dict: a call
    of `callee` (a class, or a function that builds it) with these arguments."""

    callee: object
    args: tuple = ()
    kwargs: tuple[tuple[str, object], ...] = ()


def rebuild_call(obj: object) -> Rebuild | None:
    """The call that builds `obj` again from its children, for containers the printer
    has no literal syntax for; None for plain tuples, lists, dicts, slices and leaves."""
    kind = type(obj)
    node = _NODES[kind]
    if node is None or kind in (tuple, list, dict, slice):
        return None
    if kind in _REBUILDS:
        return _REBUILDS[kind](obj)
    if dataclasses.is_dataclass(kind) and node is not None:
        children, names = node.flatten(obj)
        return Rebuild(kind, (), tuple(zip(names, children, strict=True)))
    if issubclass(kind, tuple):
        if hasattr(kind, "_fields"):  # a named tuple, by its field names
            return Rebuild(kind, (), tuple(zip(kind._fields, obj, strict=True)))
        return Rebuild(_BUILT_BY.get(kind, kind), (tuple(obj),))  # a structseq or torch.Size: one sequence
    if kind is defaultdict:
        return Rebuild(kind, (obj.default_factory, dict(obj)))
    if kind is OrderedDict:
        return Rebuild(kind, (dict(obj),))
    if kind not in _REGISTERED:
        # A dict or list subclass: its contents as its base holds them, given to what builds it.
        if isinstance(obj, defaultdict):
            contents = (obj.default_factory, dict(obj))
            return Rebuild(subclass_builder(kind, defaultdict, contents), contents)
        for base in (OrderedDict, dict, list):
            if isinstance(obj, base):
                contents = list(obj) if base is list else dict(obj)
                return Rebuild(subclass_builder(kind, base, contents), (contents,))
    # A type registered by a higher layer: its own unflatten builds it.
    children, context = node.flatten(obj)
    return Rebuild(node.unflatten, (list(children), context))


def built_as(kind: type) -> object:
    """What builds a `kind` in printed code: the type itself, or what a stand-in tuple
    subclass was declared to be built by (`build_as`)."""
    return _BUILT_BY.get(kind, kind)


def rebuild_tuple(like: tuple, items: Iterable) -> tuple:
    """A tuple of `like`'s type (plain, named tuple or structseq) holding `items`
    (ops/opaque.py's meta-tensor walkers use it)."""
    return _NODES[type(like)].unflatten(list(items), None)


def rebuild_mapping(like: dict, items: dict) -> dict:
    """A mapping of `like`'s type (an OrderedDict, a defaultdict with its factory, a dict
    subclass) holding `items`, which has `like`'s keys."""
    node = _NODES[type(like)]
    return node.unflatten(list(items.values()), node.flatten(like)[1])


# -- fast paths ---------------------------------------------------------------------------
# Passes read, rewrite and key the arguments and outputs of every bound symbol, and the
# tracer reads those of every call. Built on the generic walkers (a call per leaf, a spec
# per container) each of these took 1.5-2 times as long per call, so they walk the same
# nodes directly, plain tuples and lists first. test_pytree checks that they agree.


def values_in(obj: object) -> list[TensorValue | NumberValue]:
    """Every value inside `obj` (not constants), depth first, in order."""
    if type(obj) in _VALUE_SET:
        return [obj]
    out: list = []
    _collect(obj, out)
    return out


def _collect(obj: object, out: list) -> None:
    kind = type(obj)
    if kind in _VALUE_SET:
        out.append(obj)
    elif kind is tuple or kind is list:
        for item in obj:
            _collect(item, out)
    elif kind is dict:
        for item in obj.values():
            _collect(item, out)
    elif kind is Dim:
        # A size expression reads its symbols, bound earlier by prims.shape.
        out.extend(size_values(obj))
    else:
        node = _NODES[kind]
        if node is not None:
            for item in node.flatten(obj)[0]:
                _collect(item, out)


def size_values(dim: Dim) -> list[NumberValue]:
    return [NumberValue(name, Dim.symbol(name)) for name in sorted(dim.symbols())]


def _map_dim(fn: Callable, dim: Dim) -> object:
    mapping = {}
    for value in size_values(dim):
        new = fn(value)
        if new is value:
            continue
        # A size renamed (its value the new symbol), or replaced by what it was found equal to.
        if isinstance(new.value, (Dim, int)) and not isinstance(new.value, bool):
            if not (isinstance(new.value, Dim) and new.value.same(value.value)):
                mapping[value.name] = new.value
        elif new.name != value.name:
            mapping[value.name] = Dim.symbol(new.name)
    return substitute(dim, mapping) if mapping else dim


def iter_values(obj: object) -> Iterator[TensorValue | NumberValue]:
    return iter(values_in(obj))


def map_values(fn: Callable, obj: object) -> object:
    """`obj` with every value replaced by `fn(value)`: `tree_map` that leaves constants be."""
    kind = type(obj)
    if kind in _VALUE_SET:
        return fn(obj)
    if kind is tuple:
        # A tuple in which nothing changed is itself (tuples are immutable): passes then
        # see that a bound symbol holding only constants there needs no new record. Most
        # are shapes, (8, 512): their numbers are passed over without a call each.
        for i, item in enumerate(obj):
            if type(item) in _SCALARS:
                continue
            new = map_values(fn, item)
            if new is not item:
                return (*obj[:i], new, *[map_values(fn, rest) for rest in obj[i + 1:]])
        return obj
    if kind is list:
        return [map_values(fn, item) for item in obj]
    if kind is Dim:
        return _map_dim(fn, obj)
    node = _NODES[kind]
    if node is None:
        return obj
    children, context = node.flatten(obj)
    return node.unflatten([map_values(fn, child) for child in children], context)


def tree_key(tree: object, leaf_key: Callable[[Any], Any]) -> object:
    """A hashable key: equal keys, same containers (types, dict keys) and equal leaf keys."""
    kind = type(tree)
    if kind is tuple or kind is list:
        return (kind, *[tree_key(child, leaf_key) for child in tree])
    node = _NODES[kind]
    if node is None:
        return leaf_key(tree)
    children, context = node.flatten(tree)
    return (kind, context, *[tree_key(child, leaf_key) for child in children])
