"""core.pytree: one notion of a container, kept through every walk."""

import dataclasses
import textwrap
from collections import OrderedDict, defaultdict, namedtuple

import pytest
import torch

from tracecli.core import dtypes
from tracecli.core.printing import format_trace
from tracecli.core.pytree import (
    Rebuild,
    map_values,
    rebuild_call,
    register_node,
    tree_flatten,
    tree_key,
    tree_leaves,
    tree_leaves_with_path,
    tree_map,
    tree_unflatten,
    values_in,
)
from tracecli.core.values import NumberValue, TensorValue
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable
from tracecli.jobs.runner import trace_script
from tracecli.passes.pipeline import parse_passes, run_pipeline

Point = namedtuple("Point", "x y")
A = TensorValue("a", (2,), dtypes.float32, "cpu")
B = TensorValue("b", (2,), dtypes.float32, "cpu")
N = NumberValue("n", 3)


def _inc(leaf):
    return leaf + 1 if isinstance(leaf, int) else leaf


def test_tree_map_keeps_container_types():
    tree = (1, [2, {"k": 3}], Point(4, 5), OrderedDict(o=6), slice(7, 8, None))
    out = tree_map(_inc, tree)
    assert out == (2, [3, {"k": 4}], Point(5, 6), OrderedDict(o=7), slice(8, 9, None))
    assert type(out) is tuple and type(out[1]) is list and type(out[1][1]) is dict
    assert type(out[2]) is Point and type(out[3]) is OrderedDict


def test_tree_map_keeps_torch_structseqs():
    result = torch.max(torch.tensor([[1.0, 5.0], [3.0, 2.0]]), 0)
    out = tree_map(lambda t: t * 2, result)
    assert type(out) is torch.return_types.max
    assert torch.equal(out.values, torch.tensor([6.0, 10.0])) and torch.equal(out.indices, torch.tensor([2, 0]))


def test_dicts_keep_their_key_order_and_default_factory():
    out = tree_map(_inc, {"b": 1, "a": 2})
    assert list(out.items()) == [("b", 2), ("a", 3)]
    counts = defaultdict(int, {"x": 1})
    out = tree_map(_inc, counts)
    assert type(out) is defaultdict and out.default_factory is int and out == {"x": 2}


def test_is_leaf_stops_the_descent():
    tree = ([1, 2], (3, [4]))
    out = tree_map(lambda leaf: ("leaf", leaf), tree, is_leaf=lambda c: isinstance(c, list))
    assert out == (("leaf", [1, 2]), (("leaf", 3), ("leaf", [4])))
    assert tree_leaves(tree, is_leaf=lambda c: isinstance(c, list)) == [[1, 2], 3, [4]]


def test_leaves_are_depth_first_in_container_order():
    tree = {"z": (1, [2, 3]), "a": Point(4, {"q": 5}), "m": slice(6, None, 7)}
    assert tree_leaves(tree) == [1, 2, 3, 4, 5, 6, None, 7]
    paths = tree_leaves_with_path(tree)
    assert [leaf for _, leaf in paths] == tree_leaves(tree)
    assert [path for path, _ in paths][:5] == [(0, 0), (0, 1, 0), (0, 1, 1), (1, 0), (1, 1, 0)]


def test_nested_empty_containers_survive():
    tree = ((), [], {}, [[], ()], Point((), []))
    assert tree_leaves(tree) == []
    out = tree_map(_inc, tree)
    assert out == tree and type(out[4]) is Point
    leaves, spec = tree_flatten(tree)
    assert tree_unflatten(leaves, spec) == tree


def test_flatten_and_unflatten_round_trip():
    tree = (A, [1, Point(B, None)], {"k": torch.return_types.max((A, B))})
    leaves, spec = tree_flatten(tree)
    assert leaves == [A, 1, B, None, A, B]
    again = tree_unflatten(leaves, spec)
    assert again == tree and type(again[1][1]) is Point and type(again[2]["k"]) is torch.return_types.max
    assert spec == tree_flatten(tree)[1] and hash(spec) == hash(tree_flatten(tree)[1])
    assert spec.kinds() == {tuple, list, Point, dict, torch.return_types.max}
    with pytest.raises(ValueError):
        tree_unflatten([*leaves, 0], spec)


def test_value_fast_paths_agree_with_the_generic_walkers():
    tree = (A, [N, 2, Point(B, "s")], {"k": (A,)}, slice(N, None), torch.return_types.max((A, B)))
    values = [leaf for leaf in tree_leaves(tree) if isinstance(leaf, (TensorValue, NumberValue))]
    assert values_in(tree) == values == [A, N, B, A, N, A, B]

    def rename(v):
        return dataclasses.replace(v, name=v.name + "_1")

    def rename_values(leaf):
        return rename(leaf) if isinstance(leaf, (TensorValue, NumberValue)) else leaf

    mapped = map_values(rename, tree)
    assert mapped == tree_map(rename_values, tree)
    assert [type(c) for c in mapped] == [type(c) for c in tree]

    def key(tree):
        return tree_key(tree, lambda leaf: (type(leaf), leaf))

    # Equal keys: the same containers (types, dict keys in order) holding equal leaves.
    assert key(tree) == key(tree_map(lambda leaf: leaf, tree)) and hash(key(tree))
    pair = (A, {"x": 1, "y": 2})
    for other in ([A, {"x": 1, "y": 2}], Point(A, {"x": 1, "y": 2}), (A, {"y": 2, "x": 1}), (A, {"x": 1, "y": 2.0})):
        assert key(other) != key(pair)


def test_map_values_keeps_a_tuple_nothing_changed_in_but_never_shares_a_list():
    tree = ((8, "cpu"), A, (N, (1, 2)))
    assert map_values(lambda v: v, tree) is tree
    renamed = map_values(lambda v: B if v is A else v, tree)
    assert renamed == ((8, "cpu"), B, (N, (1, 2)))
    assert renamed[0] is tree[0] and renamed[2] is tree[2]
    # A list is mutable: the result never holds the input's own, so neither the tuple.
    holding_list = ((8,), [N])
    mapped = map_values(lambda v: v, holding_list)
    assert mapped == holding_list and mapped is not holding_list and mapped[1] is not holding_list[1]


def test_other_dict_and_list_subclasses_are_walked_as_their_base_and_built_as_themselves():
    class Tags(list):
        pass

    class Config(dict):
        pass

    class Named(dict):  # a constructor taking other arguments: filled in without it
        def __init__(self, name):
            super().__init__()
            self.name = name

    class Counts(defaultdict):
        pass

    named = Named("n")
    named["k"] = 4
    out = tree_map(_inc, (Tags([1]), Config(k=2), named, Counts(int, k=5)))
    assert out == ([2], {"k": 3}, {"k": 5}, {"k": 6})
    assert [type(o) for o in out] == [Tags, Config, Named, Counts] and out[3].default_factory is int
    assert rebuild_call(out[1]) == Rebuild(Config, ({"k": 3},))
    assert rebuild_call(out[2]).callee.__name__ == "filled_Named"


def test_register_node_adds_a_container_once():
    class Box:
        def __init__(self, items):
            self.items = items

    register_node(Box, lambda box: (box.items, None), lambda children, _: Box(children))
    out = tree_map(_inc, [Box([1, (2,)])])
    assert type(out[0]) is Box and out[0].items == [2, (3,)]
    assert tree_leaves(Box([1, Box([2])])) == [1, 2]
    with pytest.raises(ValueError, match="already"):
        register_node(Box, lambda box: (box.items, None), lambda children, _: Box(children))


# -- the walkers' users agree: named tuples keep their type, dicts and slices are walked ---


def test_a_named_tuple_argument_keeps_its_type_while_tracing():
    def fn(p, x):
        return p.x * x + p.y

    args = (Point(torch.ones(3), torch.zeros(3)), torch.arange(3.0))
    program = trace_callable(fn, args)
    assert [v.name for v in program.trace.inputs] == ["p_x", "p_y", "x"]  # named after the fields
    assert torch.equal(compile_trace(program.trace)(*program.inputs_for(args, {})), fn(*args))


def test_named_tuple_and_structseq_outputs_keep_their_types_through_passes_and_compiled_traces():
    def fn(x):
        return Point(x + 1, x.max(0)), {"k": x.sort()}

    x = torch.tensor([[3.0, 1.0], [2.0, 4.0]])
    program = trace_callable(fn, (x,))
    final = run_pipeline(program.trace, parse_passes(["dce,cse,rename,renumber"]))[-1].trace
    output = final.output
    assert type(output[0]) is Point and type(output[0].y) is torch.return_types.max
    assert type(output[1]["k"]) is torch.return_types.sort
    # The printed return statement builds them: the text is the code that runs.
    assert 'return (Point(x=t0, y=torch.return_types.max((t1, t2))), {"k": torch.return_types.sort((t3, t4))})' \
        in format_trace(final)

    out = compile_trace(final)(*program.inputs)
    eager = fn(x)
    assert type(out[0]) is Point and type(out[0].y) is torch.return_types.max
    assert type(out[1]["k"]) is torch.return_types.sort
    assert torch.equal(out[0].y.indices, eager[0].y.indices) and torch.equal(out[1]["k"].values, eager[1]["k"].values)


def _script(tmp_path, source: str) -> str:
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(source))
    return str(path)


def test_run_clones_named_tuple_arguments_for_eager_and_the_trace(tmp_path):
    script = _script(tmp_path, """
        import collections
        import torch

        Pair = collections.namedtuple("Pair", "a b")

        def fn(p):
            return p.a - p.b

        def sample_inputs(device):
            return (Pair(torch.ones(3), torch.arange(3.0)),)
    """)
    job = trace_script(script)
    assert job.match and [v.name for v in job.calls[0].final.inputs] == ["p_a", "p_b"]


def test_main_block_traces_again_for_a_dict_in_another_key_order(tmp_path):
    # The trace follows the dict's order: sharing one trace between orders gives wrong results.
    script = _script(tmp_path, """
        import torch

        def fn(x, steps):
            for op, v in steps.items():
                x = x * v if op == "scale" else x + v
            return x

        if __name__ == "__main__":
            x = torch.ones(2)
            assert fn(x, {"scale": 2.0, "shift": 1.0}).tolist() == [3.0, 3.0]
            assert fn(x, {"shift": 1.0, "scale": 2.0}).tolist() == [4.0, 4.0]
    """)
    job = trace_script(script)
    assert len(job.calls) == 2 and job.match


def test_main_block_shares_one_trace_between_equal_slices(tmp_path):
    script = _script(tmp_path, """
        import torch

        def fn(x, s):
            return x[s]

        if __name__ == "__main__":
            for stop in (2, 2, 3):
                fn(torch.arange(4.0), slice(0, stop))
    """)
    job = trace_script(script)
    assert len(job.calls) == 2 and job.match
