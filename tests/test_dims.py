"""Symbolic dims: arithmetic agrees with Python's on every value, prints as Python that
evaluates to the same number, and decides comparisons from shapes or with a guard."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracecli.core.dims import Dim, DimEnv, DimError, _bounds, evaluate, floordiv, substitute

NAMES = ("n", "m", "k")


def expressions():
    """(expression built with Dim arithmetic, the same as a Python function of the values)."""
    leaf = st.one_of(
        st.sampled_from(NAMES).map(lambda name: (Dim.symbol(name), lambda v, name=name: v[name])),
        st.integers(-5, 9).map(lambda c: (c, lambda v, c=c: c)),
    )

    def combine(children):
        binary = st.tuples(children, children, st.sampled_from(["+", "-", "*"]))
        by_constant = st.tuples(children, st.integers(1, 7), st.sampled_from(["//", "%"]))
        by_symbol = st.tuples(children, st.sampled_from(NAMES), st.sampled_from(["//", "%"]))

        def apply(parts):
            (a, fa), b, op = parts
            if isinstance(b, tuple):
                b, fb = b
            elif isinstance(b, str):
                b, fb = Dim.symbol(b), (lambda v, name=b: v[name])
            else:
                fb = lambda v, c=b: c  # noqa: E731
            ops = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
                   "//": lambda x, y: x // y, "%": lambda x, y: x % y}
            fn = ops[op]
            return fn(a, b), (lambda v: fn(fa(v), fb(v)))

        return st.one_of(binary, by_constant, by_symbol).map(apply)

    return st.recursive(leaf, combine, max_leaves=8)


values = st.fixed_dictionaries({name: st.integers(2, 40) for name in NAMES})


@settings(max_examples=300, deadline=None)
@given(expressions(), values)
def test_arithmetic_and_its_text_agree_with_python(expr_fn, v):
    expr, fn = expr_fn
    expected = fn(v)
    assert evaluate(expr, v) == expected
    text = expr.text() if isinstance(expr, Dim) else str(expr)
    assert eval(text, {}, dict(v)) == expected  # noqa: S307 - the printed trace is run as Python


@settings(max_examples=100, deadline=None)
@given(expressions(), values)
def test_substituting_values_is_evaluating(expr_fn, v):
    expr, fn = expr_fn
    assert substitute(expr, v) == fn(v)


def test_equal_polynomials_are_one_expression():
    n, m = Dim.symbol("n"), Dim.symbol("m")
    assert (n * 4 // 2).same(2 * n)
    assert (n * m // m).same(n)
    assert (n + m - n).same(m)
    assert n - n == 0 and isinstance(n - n, int)
    assert hash(n * m) == hash(m * n)
    assert (m * n // 2).text() == "m*n//2"
    assert (2 * (n // 3)).text() == "2*(n//3)"
    assert (-(n // 2)).text() == "-(n//2)"
    assert floordiv(n // 2, 3).same(n // 6)


def test_outside_tracing_comparisons_are_structural_and_never_guess():
    n, m = Dim.symbol("n"), Dim.symbol("m")
    assert n != m and n == Dim.symbol("n")
    assert n > 1 and n >= 2 and not n < 2  # every symbol is at least 2
    with pytest.raises(TypeError, match="outside tracing"):
        _ = n > m
    with pytest.raises(TypeError, match="no value outside tracing"):
        int(n)


def test_undecided_comparisons_take_the_example_and_are_guarded():
    env = DimEnv()
    s0 = env.new_symbol("s0", 5, "x.shape[0]", named=False)
    s1 = env.new_symbol("s1", 5, "y.shape[0]", named=False)
    with env:
        assert s0 != 1  # decided: every symbol is at least 2
        assert not env.guards
        assert s0 > 4
        assert s0 == s1  # equal examples: assumed, and s1 is s0 from now on
        assert s1 * 2 == s0 + s0  # decided through the replacement, no new guard
    assert [g.text() for g in env.guards] == ["s0 > 4", "s0 == s1"]
    assert env.replacements == {"s1": s0}
    assert env.ranges["s0"] == (5, float("inf"))
    assert env.guards[0].holds({"s0": 6, "s1": 6}) and not env.guards[0].holds({"s0": 4, "s1": 4})


def test_a_plain_int_of_a_dim_pins_it():
    env = DimEnv()
    n = env.new_symbol("s0", 7, "x.shape[0]", named=False)
    with env:
        assert list(range(n)) == list(range(7))
    assert [g.text() for g in env.guards] == ["s0 == 7"]
    assert env.canonical(n * 2) == 14


def test_named_dims_are_strict():
    env = DimEnv()
    n = env.new_symbol("n", 3, "x.shape[0]", named=True)
    m = env.new_symbol("m", 3, "y.shape[0]", named=True)
    s = env.new_symbol("s0", 3, "z.shape[0]", named=False)
    with env:
        assert n == s  # an automatic dim equal to a named one becomes it
        assert env.replacements == {"s0": n}
        with pytest.raises(DimError, match="n was declared symbolic"):
            _ = n == 3
        with pytest.raises(DimError, match="m and n were declared symbolic"):
            _ = n == m
        assert n < 5  # an inequality is a guard, not a pin


@settings(max_examples=500, deadline=None)
@given(expressions(), values)
def test_bounds_hold_every_value_the_symbols_can_take(expr_fn, v):
    # What decides comparisons without a guard must be sound: every symbol is >= 2.
    expr, fn = expr_fn
    if not isinstance(expr, Dim):
        return
    lo, hi = _bounds(expr, lambda name: (2, float("inf")))
    assert lo <= fn(v) <= hi, (expr.text(), lo, hi, v)


def test_floor_divisions_of_one_size_are_compared_without_guards():
    env = DimEnv()
    n = env.new_symbol("n", 32, "x.shape[2]", named=False)
    with env:
        assert (n + 1) // 2 >= 2 * ((n + 1) // 4)  # a >= 2*(a//2): always
        assert (n + 1) // 2 + 1 >= 2 * ((n + 1) // 4)
        assert not env.guards
        assert (n + 1) // 4 >= 1  # open: a guard, which narrows n to n >= 3
        assert 2 * ((n + 1) // 4) >= 1  # follows from it
    assert [g.text() for g in env.guards] == ["(n + 1)//4 >= 1"]
    assert env.ranges["n"] == (3, float("inf"))
