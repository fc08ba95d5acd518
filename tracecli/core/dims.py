"""Symbolic dims: integer expressions over named sizes (`n`, `n*m//2`).

A shape entry is an `int` or a `Dim`. A `Dim` is a polynomial with integer
coefficients over atoms: size symbols, and floor divisions / remainders that do not
simplify. Arithmetic normalises as it goes, so two expressions that are equal as
polynomials are the same object structurally (`n*4//2` is `2*n`), and an expression
that reduces to a constant is a plain `int`: static shapes never hold a `Dim`.

Outside tracing, comparisons are structural (the IR compares and hashes dims as
data). While a `DimEnv` is active (`with env:`), a comparison that shapes alone do not
decide takes the example sizes' answer and records it as a guard: the trace is valid
only where the guard holds. Everything here is plain Python; no torch.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction

from tracecli.core.errors import TracingError

# -- atoms ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sym:
    name: str

    def text(self) -> str:
        return self.name

    def sort_key(self) -> tuple:
        return (0, self.name)


# Atoms holding expressions compare structurally: a dataclass's `==` would compare the
# expressions with Dim's `==`, which while tracing decides (and guards) sizes.
@dataclass(frozen=True, slots=True, eq=False)
class _Division:
    """`num OP den` for an integer division operator: FloorDiv (`//`) or Mod (`%`)."""

    num: Dim
    den: int | Dim
    OP = ""
    RANK = 0  # where its terms sort, after plain symbols

    def text(self) -> str:
        return f"{_operand(self.num, True)}{self.OP}{_operand(self.den, False)}"

    def sort_key(self) -> tuple:
        return (self.RANK, self.text())

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and _same(self.num, other.num) and _same(self.den, other.den)

    def __hash__(self) -> int:
        return hash((self.RANK, self.num, self.den))


class FloorDiv(_Division):
    __slots__ = ()
    OP, RANK = "//", 1


class Mod(_Division):
    __slots__ = ()
    OP, RANK = "%", 2


def _same(a: int | Dim, b: int | Dim) -> bool:
    if isinstance(a, Dim) or isinstance(b, Dim):
        return isinstance(a, Dim) and a.same(b)
    return a == b


Atom = Sym | FloorDiv | Mod
Monomial = tuple[tuple[Atom, int], ...]  # (atom, power) sorted by atom; () is the constant term
Terms = dict  # Monomial -> nonzero int coefficient


def _operand(x: int | Dim, left: bool) -> str:
    """An expression as an operand of `//` or `%`, bracketed where Python needs it: a
    product of symbols reads left to right (`m*n//2`), a sum or a division does not."""
    if isinstance(x, int):
        return str(x) if x >= 0 else f"({x})"
    if len(x.terms) == 1:
        ((mono, coeff),) = x.terms
        plain = type(coeff) is int and all(isinstance(atom, Sym) for atom, _ in mono)
        if plain and (left or (coeff == 1 and len(mono) == 1)):
            return x.text()
    return f"({x.text()})"


# -- expressions ---------------------------------------------------------------------


class Dim:
    """A symbolic integer. Build with `Dim.symbol(name)` and arithmetic; never mutate."""

    __slots__ = ("terms", "_hash")

    terms: tuple[tuple[Monomial, int], ...]

    def __init__(self, terms: tuple[tuple[Monomial, int], ...]):
        object.__setattr__(self, "terms", terms)
        object.__setattr__(self, "_hash", hash(terms))

    def __setattr__(self, name, value):
        raise AttributeError("Dim is immutable")

    @staticmethod
    def symbol(name: str) -> Dim:
        return Dim(((((Sym(name), 1),), 1),))

    # -- structure -----------------------------------------------------------------

    def same(self, other: object) -> bool:
        """Structural equality, whatever environment is active."""
        return isinstance(other, Dim) and self._hash == other._hash and self.terms == other.terms

    def __hash__(self) -> int:
        return self._hash

    def symbols(self) -> set[str]:
        return set(_atom_symbols(self))

    def as_symbol(self) -> str | None:
        """The symbol's name when this expression is one symbol, else None."""
        if len(self.terms) == 1:
            ((mono, coeff),) = self.terms
            if coeff == 1 and len(mono) == 1 and mono[0][1] == 1 and isinstance(mono[0][0], Sym):
                return mono[0][0].name
        return None

    def text(self) -> str:
        """Python source for the expression (compact: `n*m//2 + 1`)."""
        whole = [(mono, coeff) for mono, coeff in self.terms if _integral(coeff)]
        if len(whole) == len(self.terms):
            return _sum_text(whole)
        # Terms an exact division left with fractions print as one division of integers,
        # which is exact wherever the trace is valid (its guard checked the divisibility).
        fractions = [(mono, coeff) for mono, coeff in self.terms if not _integral(coeff)]
        denominator = math.lcm(*(Fraction(coeff).denominator for _, coeff in fractions))
        numerator = _make({mono: coeff * denominator for mono, coeff in fractions})
        group = f"{_operand(numerator, True)}//{denominator}"
        return f"{_sum_text(whole)} + {group}" if whole else group

    def __repr__(self) -> str:
        return self.text()

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return format(int(self), spec) if spec else self.text()

    # -- arithmetic ----------------------------------------------------------------

    def __add__(self, other):
        if not _is_int(other):
            return _foreign(self, other, "add", False)
        return _make(_add_terms(_terms(self), _terms(other), 1))

    def __radd__(self, other):
        if not _is_int(other):
            return _foreign(self, other, "add", True)
        return _make(_add_terms(_terms(other), _terms(self), 1))

    def __sub__(self, other):
        if not _is_int(other):
            return _foreign(self, other, "sub", False)
        return _make(_add_terms(_terms(self), _terms(other), -1))

    def __rsub__(self, other):
        if not _is_int(other):
            return _foreign(self, other, "sub", True)
        return _make(_add_terms(_terms(other), _terms(self), -1))

    def __mul__(self, other):
        if not _is_int(other):
            return _foreign(self, other, "mul", False)
        return _make(_mul_terms(_terms(self), _terms(other)))

    def __rmul__(self, other):
        if not _is_int(other):
            return _foreign(self, other, "mul", True)
        return _make(_mul_terms(_terms(other), _terms(self)))

    def __floordiv__(self, other):
        if not _is_int(other):
            return _foreign(self, other, "floordiv", False)
        return floordiv(self, other)

    def __rfloordiv__(self, other):
        if not _is_int(other):
            return _foreign(self, other, "floordiv", True)
        return floordiv(other, self)

    def __mod__(self, other):
        if not _is_int(other):
            return _foreign(self, other, "mod", False)
        return mod(self, other)

    def __rmod__(self, other):
        if not _is_int(other):
            return _foreign(self, other, "mod", True)
        return mod(other, self)

    def __pow__(self, other):
        if isinstance(other, int) and not isinstance(other, bool) and other >= 0:
            result: int | Dim = 1
            for _ in range(other):
                result = result * self
            return result
        return _foreign(self, other, "pow", False)

    def __rpow__(self, other):
        return _foreign(self, other, "pow", True)

    def __truediv__(self, other):
        return _foreign(self, other, "truediv", False)

    def __rtruediv__(self, other):
        return _foreign(self, other, "truediv", True)

    def __neg__(self):
        return _make({mono: -coeff for mono, coeff in self.terms})

    def __pos__(self):
        return self

    def __abs__(self):
        return self if self >= 0 else -self

    def __trunc__(self):
        return self

    __floor__ = __ceil__ = __round__ = __trunc__

    # -- comparisons: structural outside tracing, decided (or guarded) inside ------

    def __eq__(self, other):
        if not _is_int(other):
            return NotImplemented
        if self.same(other):
            return True
        env = active()
        return env.decide_or_open("==", self, other) if env is not None else False

    def __ne__(self, other):
        result = self.__eq__(other)
        if result is NotImplemented:
            return result
        return result.negated() if isinstance(result, SymBool) else not result

    def __lt__(self, other):
        return _compare("<", self, other)

    def __le__(self, other):
        return _compare("<=", self, other)

    def __gt__(self, other):
        return _compare(">", self, other)

    def __ge__(self, other):
        return _compare(">=", self, other)

    def __bool__(self) -> bool:
        return self != 0

    # -- leaving the symbolic world ------------------------------------------------

    def __index__(self) -> int:
        env = active()
        if env is None:
            raise TypeError(f"the symbolic dim {self.text()} has no value outside tracing")
        return env.index(self)

    def __int__(self) -> int:
        return self.__index__()

    def __float__(self) -> float:
        return float(self.__index__())


def is_dim(x: object) -> bool:
    return isinstance(x, Dim)


def _is_int(x: object) -> bool:
    # Fractions are coefficients of exact divisions, met while substituting.
    return isinstance(x, (Dim, int, Fraction))


def _compare(op: str, a: Dim, b) -> bool:
    if not _is_int(b):
        # `tensor >= n` lands here when torch's operator refuses the size: the tensor's
        # mirrored comparison, through the active environment (a float stays refused).
        env = active()
        if env is not None and env.foreign is not None and not isinstance(b, float):
            return env.foreign(_MIRRORED[op], a, b, True)
        return NotImplemented
    d = a - b
    if not isinstance(d, Dim):
        return _OPS[op](d, 0)
    env = active()
    if env is None:
        decided = _decide_by_range(op, d, lambda name: (2, math.inf))
        if decided is None:
            raise TypeError(f"cannot order the symbolic dims {a.text()} and {_text(b)} outside tracing")
        return decided
    return env.decide_or_open(op, a, b)


def _foreign(dim: Dim, other, op: str, reflected: bool):
    """Arithmetic with something other than an int: a float leaves the symbolic world
    (the dim takes its example value, guarded); anything else (a traced tensor) is the
    active environment's to handle."""
    if isinstance(other, float):
        value = float(dim)
        fn = _FLOAT_OPS[op]
        return fn(other, value) if reflected else fn(value, other)
    env = active()
    if env is not None and env.foreign is not None:
        return env.foreign(op, dim, other, reflected)
    return NotImplemented


_OPS: dict[str, Callable[[int, int], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}
# `n OP x` is `x MIRRORED n`, by the name of the tensor operator that computes it.
_MIRRORED = {"<": "gt", "<=": "ge", ">": "lt", ">=": "le", "==": "eq", "!=": "ne"}
_NEGATED = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
_FLOAT_OPS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "floordiv": operator.floordiv,
    "mod": operator.mod, "pow": operator.pow, "truediv": operator.truediv,
}


def _text(x: int | Dim) -> str:
    return x.text() if isinstance(x, Dim) else str(int(x))


# -- polynomial arithmetic -------------------------------------------------------------


def _terms(x: int | Dim) -> Terms:
    if isinstance(x, Dim):
        return dict(x.terms)
    x = x if type(x) is Fraction else int(x)
    return {(): x} if x else {}


def _make(terms: Terms) -> int | Dim:
    terms = {mono: (int(coeff) if type(coeff) is Fraction and coeff.denominator == 1 else coeff)
             for mono, coeff in terms.items() if coeff}
    if not terms:
        return 0
    if len(terms) == 1 and () in terms:
        return terms[()]
    return Dim(tuple(sorted(terms.items(), key=_term_key)))


def _term_key(item) -> tuple:
    mono, _ = item
    # Higher degree first, then by atoms; the constant last.
    degree = sum(power for _, power in mono)
    return (-degree, tuple((atom.sort_key(), -power) for atom, power in mono))


def _add_terms(a: Terms, b: Terms, sign: int) -> Terms:
    out = dict(a)
    for mono, coeff in b.items():
        out[mono] = out.get(mono, 0) + sign * coeff
    return out


def _mul_mono(a: Monomial, b: Monomial) -> Monomial:
    powers: dict[Atom, int] = dict(a)
    for atom, power in b:
        powers[atom] = powers.get(atom, 0) + power
    return tuple(sorted(powers.items(), key=lambda item: item[0].sort_key()))


def _mul_terms(a: Terms, b: Terms) -> Terms:
    out: Terms = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            mono = _mul_mono(ma, mb)
            out[mono] = out.get(mono, 0) + ca * cb
    return out


def _divide_mono(a: Monomial, b: Monomial) -> Monomial | None:
    """a / b when b's atoms divide a's, else None."""
    powers = dict(a)
    for atom, power in b:
        left = powers.get(atom, 0) - power
        if left < 0:
            return None
        if left:
            powers[atom] = left
        else:
            powers.pop(atom)
    return tuple(sorted(powers.items(), key=lambda item: item[0].sort_key()))


def _exact_quotient(num: Terms, den: Terms) -> Terms | None:
    """num / den when den is one term dividing every term of num exactly."""
    if len(den) != 1:
        return None
    ((dmono, dcoeff),) = den.items()
    out: Terms = {}
    for mono, coeff in num.items():
        quotient = _divide_mono(mono, dmono)
        if quotient is None or coeff % dcoeff:
            return None
        out[quotient] = coeff // dcoeff
    return out


def floordiv(a: int | Dim, b: int | Dim) -> int | Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    if isinstance(b, int):
        if b == 0:
            raise ZeroDivisionError("integer division by zero")
        if b == 1:
            return a
        if b > 0:
            # (b*q + r) // b == q + r // b for integer q: pull the multiples of b out.
            quotient: Terms = {}
            rest: Terms = {}
            for mono, coeff in _terms(a).items():
                q, r = divmod(coeff, b)
                if q:
                    quotient[mono] = q
                if r:
                    rest[mono] = r
            if not rest:
                return _make(quotient)
            rest_dim = _make(rest)
            if isinstance(rest_dim, int):
                return _make(_add_terms(quotient, _terms(rest_dim // b), 1))
            inner = _nested_floordiv(rest_dim, b)
            return _make(_add_terms(quotient, _terms(inner), 1))
        return _atom(FloorDiv(_as_dim(a), b))
    if isinstance(a, Dim) and a.same(b):
        return 1
    exact = _exact_quotient(_terms(a), _terms(b))
    if exact is not None:
        return _make(exact)
    return _atom(FloorDiv(_as_dim(a), b))


def _nested_floordiv(a: Dim, b: int) -> Dim:
    # (x // c) // b == x // (c*b) for positive c and b.
    if len(a.terms) == 1:
        ((mono, coeff),) = a.terms
        if coeff == 1 and len(mono) == 1 and mono[0][1] == 1:
            atom = mono[0][0]
            if isinstance(atom, FloorDiv) and isinstance(atom.den, int) and atom.den > 0:
                return floordiv(atom.num, atom.den * b)
    return _atom(FloorDiv(a, b))


def exact_div(a: int | Dim, b: int | Dim) -> int | Dim:
    """a / b for a division the caller has checked is exact (a guard says `a % b == 0`):
    a polynomial, so `b * exact_div(a, b)` is `a` again (`n*m//2` times 2 is `n*m`)."""
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    if isinstance(b, int):
        return _make({mono: Fraction(coeff, b) for mono, coeff in _terms(a).items()})
    monomial = _sym_monomial(b)
    if monomial is not None:  # by c*m: each term divided by m, its coefficient by c
        mono_b, coeff_b = monomial
        out: Terms = {}
        for mono, coeff in _terms(a).items():
            quotient = _divide_mono(mono, mono_b)
            if quotient is None:
                return floordiv(a, b)
            out[quotient] = Fraction(coeff, coeff_b)
        return _make(out)
    return floordiv(a, b)


def _sym_monomial(x: int | Dim) -> tuple[Monomial, int] | None:
    """(monomial, coefficient) when x is one term of symbols with a positive coefficient:
    a quantity known to be positive (every symbol is at least 2)."""
    if not isinstance(x, Dim) or len(x.terms) != 1:
        return None
    ((mono, coeff),) = x.terms
    if type(coeff) is not int or coeff <= 0 or not all(isinstance(atom, Sym) for atom, _ in mono):
        return None
    return mono, coeff


def statically_equal(a, b) -> bool:
    """Whether two sizes are equal whatever the symbols are (never a guard)."""
    if isinstance(a, Dim) or isinstance(b, Dim):
        env = active()
        d = env.canonical(a) - env.canonical(b) if env is not None else a - b
        return not isinstance(d, Dim) and d == 0
    return a == b


def known(op: str, a, b) -> bool | None:
    """`a OP b` when the shapes settle it whatever the symbols are, else None: never a
    guard (for bookkeeping that must not narrow what the trace serves)."""
    env = active()
    if env is not None:
        a, b = env.canonical(a), env.canonical(b)
    d = a - b
    if not isinstance(d, Dim):
        return _OPS[op](d, 0)
    return _decide_by_range(op, d, env._range if env is not None else (lambda name: (2, math.inf)))


def same_shape(a, b) -> bool:
    """Whether two shapes are equal whatever the symbols are: for shortcuts such as
    `x if shape == x.shape else reshape(x, shape)`, which must not assume sizes."""
    return len(a) == len(b) and all(x is y or statically_equal(x, y) for x, y in zip(a, b, strict=True))


def mod(a: int | Dim, b: int | Dim) -> int | Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a % b
    if isinstance(b, int):
        if b == 0:
            raise ZeroDivisionError("integer modulo by zero")
        if b == 1 or b == -1:
            return 0
        if b > 0:
            rest = {mono: coeff % b for mono, coeff in _terms(a).items()}
            rest_dim = _make(rest)
            if isinstance(rest_dim, int):
                return rest_dim % b
            return _atom(Mod(rest_dim, b))
        return _atom(Mod(_as_dim(a), b))
    if isinstance(a, Dim) and a.same(b):
        return 0
    if _exact_quotient(_terms(a), _terms(b)) is not None:
        return 0
    monomial = _sym_monomial(b)
    if monomial is not None and monomial[0]:
        # (m*q) % (c*m) == m*(q % c) for a positive m: `n*k % (2*n)` is `n*(k%2)`.
        mono_b, coeff_b = monomial
        quotient = _exact_quotient(_terms(a), {mono_b: 1})
        if quotient is not None:
            return _make({mono_b: 1}) * mod(_make(quotient), coeff_b)
    return _atom(Mod(_as_dim(a), b))


def _as_dim(x: int | Dim) -> Dim:
    return x if isinstance(x, Dim) else Dim((((), int(x)),))


def _atom(atom: Atom) -> Dim:
    return Dim(((((atom, 1),), 1),))


def _integral(coeff) -> bool:
    return type(coeff) is int or coeff.denominator == 1


def _sum_text(terms) -> str:
    parts = []
    for mono, coeff in terms:
        body = _mono_text(mono, abs(coeff))
        if not parts:
            # `-(n//2)`, not `-n//2`, which Python reads as `(-n)//2`.
            bracket = coeff == -1 and any(not isinstance(atom, Sym) for atom, _ in mono)
            parts.append(body if coeff > 0 else (f"-({body})" if bracket else f"-{body}"))
        else:
            parts.append(f" + {body}" if coeff > 0 else f" - {body}")
    return "".join(parts)


def _mono_text(mono: Monomial, coeff: int) -> str:
    factors = [] if coeff == 1 and mono else [str(coeff)]
    for atom, power in mono:
        text = atom.text()
        if not isinstance(atom, Sym) and (len(mono) > 1 or power > 1 or coeff != 1):
            text = f"({text})"
        factors.append(text if power == 1 else f"{text}**{power}")
    return "*".join(factors)


def _atom_symbols(x: int | Dim) -> Iterator[str]:
    if isinstance(x, int):
        return
    for mono, _ in x.terms:
        for atom, _ in mono:
            if isinstance(atom, Sym):
                yield atom.name
            else:
                yield from _atom_symbols(atom.num)
                yield from _atom_symbols(atom.den)


# -- evaluation and substitution ---------------------------------------------------------


def evaluate(x: int | Dim, values: dict[str, int]) -> int:
    """The expression's value with each symbol given (KeyError names a missing one)."""
    if isinstance(x, int):
        return x
    total = 0
    for mono, coeff in x.terms:
        product = coeff
        for atom, power in mono:
            product *= _atom_value(atom, values) ** power
        total += product
    # An exact division's fractions sum to an integer where its guard holds; elsewhere
    # the floor is what the printed `//` computes.
    return math.floor(total) if type(total) is not int else total


def _atom_value(atom: Atom, values: dict[str, int]) -> int:
    if isinstance(atom, Sym):
        return values[atom.name]
    num, den = evaluate(atom.num, values), evaluate(atom.den, values)
    return num // den if isinstance(atom, FloorDiv) else num % den


def substitute(x, mapping: dict[str, int | Dim]):
    """`x` (a dim, or anything else, returned as it is) with symbols replaced."""
    if not isinstance(x, Dim) or not mapping:
        return x
    result: int | Dim = 0
    for mono, coeff in x.terms:
        product: int | Dim = coeff
        for atom, power in mono:
            product = product * _substitute_atom(atom, mapping) ** power
        result = result + product
    if type(result) is Fraction:  # an exact division whose symbols all became numbers
        return int(result) if result.denominator == 1 else math.floor(result)
    return result


def _substitute_atom(atom: Atom, mapping) -> int | Dim:
    if isinstance(atom, Sym):
        return mapping.get(atom.name, _atom(atom))
    num, den = substitute(atom.num, mapping), substitute(atom.den, mapping)
    return floordiv(num, den) if isinstance(atom, FloorDiv) else mod(num, den)


def shape_matches(declared: tuple, actual: tuple, values: dict[str, int]) -> bool:
    """Whether a run's `actual` shape is the `declared` one, each size symbol standing for
    the value `values` holds for it: a symbol not yet there (a size the data decide, met
    first in this shape) takes its value here, and must keep it in later shapes."""
    if len(declared) != len(actual):
        return False
    for d, a in zip(declared, actual, strict=True):
        if not isinstance(d, Dim):
            if d != a:
                return False
            continue
        name = d.as_symbol()
        if name is not None and name not in values:
            values[name] = int(a)
        elif not d.symbols() <= values.keys() or evaluate(d, values) != a:
            return False
    return True


def shape_text(shape) -> str:
    """`n, 4` for a shape of dims and ints."""
    return ", ".join(_text(d) for d in shape)


def dims_in(obj) -> Iterator[Dim]:
    """Every Dim inside nested tuples/lists/dicts/slices."""
    if isinstance(obj, Dim):
        yield obj
    elif isinstance(obj, (tuple, list)):
        for item in obj:
            yield from dims_in(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from dims_in(item)
    elif isinstance(obj, slice):
        yield from dims_in((obj.start, obj.stop, obj.step))


def symbols_in(obj) -> set[str]:
    names: set[str] = set()
    for dim in dims_in(obj):
        names.update(_atom_symbols(dim))
    return names


# -- ranges -----------------------------------------------------------------------------

Interval = tuple[float, float]


def interval(x: int | Dim, ranges: Callable[[str], Interval]) -> Interval:
    """Bounds on the expression given bounds on each symbol (possibly loose)."""
    if isinstance(x, int):
        return (x, x)
    lo = hi = 0.0
    for mono, coeff in x.terms:
        m_lo, m_hi = float(coeff), float(coeff)
        for atom, power in mono:
            a_lo, a_hi = _atom_interval(atom, ranges)
            for _ in range(power):
                m_lo, m_hi = _mul_interval((m_lo, m_hi), (a_lo, a_hi))
        lo, hi = lo + m_lo, hi + m_hi
    return (lo, hi)


def _atom_interval(atom: Atom, ranges) -> Interval:
    if isinstance(atom, Sym):
        return ranges(atom.name)
    n_lo, n_hi = interval(atom.num, ranges)
    d_lo, d_hi = interval(atom.den, ranges)
    if d_lo <= 0:
        return (-math.inf, math.inf)
    if isinstance(atom, Mod):
        return (0, d_hi - 1)
    if n_lo < 0:
        return (-math.inf, math.inf)
    return (math.floor(n_lo / d_hi) if d_hi != math.inf else 0, math.floor(n_hi / d_lo) if n_hi != math.inf else math.inf)


def _mul_interval(a: Interval, b: Interval) -> Interval:
    products = [_mul(x, y) for x in a for y in b]
    return (min(products), max(products))


def _mul(x: float, y: float) -> float:
    if x == 0 or y == 0:
        return 0.0
    return x * y


_FLIPPED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _normal_relation(op: str, d: Dim) -> tuple[str, int | Dim]:
    """`d OP 0` as an equivalent relation in a normal form: divided by the positive factor
    all its terms share (symbols are positive) and by its coefficients' gcd, its first
    term positive. `2*n*k - 4*n < 0` is `k - 2 < 0`."""
    common: Monomial | None = None
    env = active()
    for mono, _ in d.terms:
        # (a size the data decide may be 0: not a factor to divide by)
        symbols = tuple((atom, power) for atom, power in mono if isinstance(atom, Sym) and _positive(atom.name, env))
        powers = dict(symbols)
        common = symbols if common is None else tuple(
            (atom, min(power, powers[atom])) for atom, power in common if atom in powers
        )
    if common:
        d = _make(_exact_quotient(_terms(d), {common: 1}) or _terms(d))
    if not isinstance(d, Dim):
        return op, d
    coefficients = [coeff for _, coeff in d.terms]
    if all(type(c) is int for c in coefficients):
        divisor = math.gcd(*coefficients)
        if divisor > 1:
            d = _make({mono: coeff // divisor for mono, coeff in d.terms})
    if d.terms[0][1] < 0:
        d, op = -d, _FLIPPED[op]
    return op, d


def _positive(name: str, env: DimEnv | None) -> bool:
    if name.startswith(PLACEHOLDER):
        return False
    info = env.dims.get(name) if env is not None else None
    return info is None or not info.unbacked


def _sides(d: Dim) -> tuple[int | Dim, int | Dim]:
    """`d OP 0` as `lhs OP rhs` without negative terms: `s0 - 4 > 0` reads `s0 > 4`."""
    lhs = _make({mono: coeff for mono, coeff in d.terms if coeff > 0})
    rhs = _make({mono: -coeff for mono, coeff in d.terms if coeff < 0})
    return lhs, rhs


def _relaxed(d: int | Dim, lower: bool) -> int | Dim | None:
    """`d` with each floor division `n//k` standing alone in a term (k a positive number)
    replaced by the linear bound on the side that makes `d` smaller (`lower`) or larger:
    n//k lies in [(n - k + 1)/k, n/k]. None when `d` has no such term. Intervals alone
    lose the tie between `n//2` and `2*(n//4)`; this keeps it (`n//2 - 2*(n//4)` >= -1/2)."""
    if not isinstance(d, Dim):
        return None
    terms: dict = {}
    changed = False
    for mono, coeff in d.terms:
        atom = mono[0][0] if len(mono) == 1 and mono[0][1] == 1 else None
        if isinstance(atom, FloorDiv) and isinstance(atom.den, int) and atom.den > 0:
            k = atom.den
            bound = _add_terms(_terms(atom.num), {(): k - 1}, -1) if (coeff > 0) == lower else _terms(atom.num)
            for m, c in bound.items():
                terms[m] = terms.get(m, 0) + Fraction(c) * coeff / k
            changed = True
        else:
            terms[mono] = terms.get(mono, 0) + coeff
    return _make(terms) if changed else None


def _bounds(d: Dim, ranges) -> Interval:
    """Bounds on `d`: its interval, tightened by relaxing its floor divisions (nested
    ones a round at a time) and, as `d` takes integer values, rounded inwards."""
    lo, hi = interval(d, ranges)
    for lower in (True, False):
        x: int | Dim | None = d
        for _ in range(3):
            x = _relaxed(x, lower)
            if x is None:
                break
            x_lo, x_hi = interval(x, ranges) if isinstance(x, Dim) else (x, x)
            lo, hi = (max(lo, x_lo), hi) if lower else (lo, min(hi, x_hi))
    if all(_integral(coeff) for _, coeff in d.terms):
        lo = math.ceil(lo) if lo != -math.inf else lo
        hi = math.floor(hi) if hi != math.inf else hi
    return lo, hi


def _decide_by_range(op: str, d: Dim, ranges) -> bool | None:
    """`d OP 0` when the bounds settle it, else None."""
    lo, hi = _bounds(d, ranges)
    if op == "==":
        return False if (lo > 0 or hi < 0) else (True if lo == hi == 0 else None)
    if op == "!=":
        return True if (lo > 0 or hi < 0) else (False if lo == hi == 0 else None)
    if op == "<":
        return True if hi < 0 else (False if lo >= 0 else None)
    if op == "<=":
        return True if hi <= 0 else (False if lo > 0 else None)
    if op == ">":
        return True if lo > 0 else (False if hi <= 0 else None)
    return True if lo >= 0 else (False if hi < 0 else None)


# -- guards and the environment -------------------------------------------------------------


class DimError(TracingError):
    """Code needs a named dim to be something it was not declared to be."""


class UnbackedDecision(TracingError):
    """Code needs to know a relation of sizes the data decide, which no fact settles."""


class SymBool:
    """`lhs OP rhs` of sizes the data decide, left open: a branch on it (`bool()`) asks the
    environment, which cuts the trace there or refuses; `torch._check` records it as a fact."""

    __slots__ = ("env", "op", "lhs", "rhs")

    def __init__(self, env: DimEnv, op: str, lhs: int | Dim, rhs: int | Dim):
        self.env, self.op, self.lhs, self.rhs = env, op, lhs, rhs

    def text(self) -> str:
        return f"{_text(self.lhs)} {self.op} {_text(self.rhs)}"

    __repr__ = __str__ = text

    def negated(self) -> SymBool:
        return SymBool(self.env, _NEGATED[self.op], self.lhs, self.rhs)

    def __invert__(self) -> SymBool:
        return self.negated()

    def __bool__(self) -> bool:
        return self.env.settle_open(self)


@dataclass(frozen=True, eq=False)
class Guard:
    """`lhs OP rhs`, which the trace assumes; with why and where it was assumed."""

    op: str
    lhs: int | Dim
    rhs: int | Dim
    reason: str
    file: str | None = None
    line: int | None = None
    source: str = ""

    def text(self) -> str:
        return f"{_text(self.lhs)} {self.op} {_text(self.rhs)}"

    def where(self) -> str:
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return ""

    def holds(self, values: dict[str, int]) -> bool:
        return _OPS[self.op](evaluate(self.lhs, values), evaluate(self.rhs, values))

    def renamed(self, mapping: dict[str, int | Dim]) -> Guard:
        return Guard(self.op, substitute(self.lhs, mapping), substitute(self.rhs, mapping), self.reason,
                     self.file, self.line, self.source)


@dataclass(frozen=True)
class DimInfo:
    name: str
    example: int  # its size in the call that was traced
    origin: str  # where a call's inputs give it: `x.shape[0]`
    named: bool  # declared by the user (`-i f32[n,4]`): strict
    # What tracing found it equal to (in the other symbols, or a constant): it then
    # appears in no type, only in its guard.
    same_as: int | Dim | None = None
    # The user's variable that held it (`b, t = x.shape`): `rename` names it so.
    hint: str | None = None
    # A size the data decide (the rows of `torch.nonzero`): no call's inputs give it, an
    # op makes it; its example is only a stand-in, which no decision ever reads.
    unbacked: bool = False
    made_by: str = ""  # the torch call that makes it and what of its output it is
    where: tuple | None = None  # (file, line, source) of the user's line that made it
    upper: int | Dim | None = None  # what the op bounds it by (0 <= u0 <= upper)

    def describe(self) -> str:
        """What an unbacked size is, for a message: `u0 (the rows of torch.nonzero at x.py:5)`."""
        place = f" at {self.where[0].rsplit('/', 1)[-1]}:{self.where[1]}" if self.where else ""
        return f"{self.name} ({self.made_by}{place})"


# Where a guard was assumed: (file, line, source text) of the user's line, or None.
Locate = Callable[[], tuple[str, int, str] | None]


@dataclass
class DimEnv:
    """The symbols of one trace, what they were at the example, and what the trace
    assumed about them."""

    dims: dict[str, DimInfo] = field(default_factory=dict)
    guards: list[Guard] = field(default_factory=list)
    # Symbols an assumed equality eliminated: name -> what it equals (in other symbols).
    replacements: dict[str, int | Dim] = field(default_factory=dict)
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    locate: Locate | None = None
    # Arithmetic of a dim with a non-number (a traced tensor): (op, dim, other, reflected).
    foreign: Callable | None = None
    # How `__index__` on a dim is answered; by default it specialises with a guard.
    on_index: Callable[[Dim], int] | None = None
    # The torch call being traced ("" in the user's own code): what a guard is for.
    context: str = ""
    # Relations `d OP 0` (normalised) the guards already assume: asked again, answered.
    facts: set = field(default_factory=set)
    # Relations of unbacked sizes the program stated (`torch._check(n > 0)`): what the
    # trace relies on, checked when it runs rather than guarded.
    assumed: list[Guard] = field(default_factory=list)
    # A branch on a relation of unbacked sizes no fact settles: the tracer's answer (a
    # graph break gets the real sizes), or None to refuse.
    on_open: Callable[[SymBool], bool] | None = None
    # A size the data decide used as a plain int (`len(x[mask])`): the tracer's answer
    # (a graph break reads it), or None to refuse.
    on_read: Callable[[Dim], int] | None = None
    # Broadcasting and its kin ask whether a size is 1 to decide how to broadcast: an
    # unbacked size is taken to be no 1 there, as torch.compile's size-oblivious checks do.
    oblivious: int = 0

    def _why(self) -> str:
        return f"assumed by {self.context}" if self.context else "a comparison in the script"

    # -- symbols -------------------------------------------------------------------

    def new_symbol(self, name: str, example: int, origin: str, named: bool) -> Dim:
        if name in self.dims:
            raise ValueError(f"dim {name} is declared twice")
        self.dims[name] = DimInfo(name, example, origin, named)
        self.ranges[name] = (2, math.inf)
        return Dim.symbol(name)

    def new_unbacked(self, name: str, made_by: str, upper: int | Dim | None, where: tuple | None) -> Dim:
        """A size the data decide, `0 <= name <= upper` (no bound when None); its stand-in
        example is the bound."""
        if name in self.dims:
            raise ValueError(f"dim {name} is declared twice")
        example = self.example(upper) if isinstance(upper, Dim) else upper if upper is not None else 8
        self.dims[name] = DimInfo(name, example, "", False, unbacked=True, made_by=made_by, where=where, upper=upper)
        symbol = Dim.symbol(name)
        if isinstance(upper, Dim):
            self.ranges[name] = (0, math.inf)
            op, d = _normal_relation("<=", symbol - upper)
            self.facts.add((op, d))
        else:
            self.ranges[name] = (0, math.inf if upper is None else upper)
        return symbol

    def unbacked_in(self, x) -> list[DimInfo]:
        return [self.dims[name] for name in sorted(symbols_in(x)) if name in self.dims and self.dims[name].unbacked]

    def example(self, x: int | Dim) -> int:
        return evaluate(x, {name: info.example for name, info in self.dims.items()})

    def canonical(self, x):
        return substitute(x, self.replacements)

    def _range(self, name: str) -> Interval:
        if name.startswith(PLACEHOLDER):  # a size the data decide, in a rule re-run to check types
            return (2 if self.oblivious else 0, math.inf)
        lo, hi = self.ranges.get(name, (-math.inf, math.inf))
        if self.oblivious and hi >= 2 and lo < 2 and name in self.dims and self.dims[name].unbacked:
            lo = 2
        return lo, hi

    # -- decisions -----------------------------------------------------------------

    def decide(self, op: str, a: int | Dim, b: int | Dim, reason: str = "") -> bool:
        """`a OP b`: from shapes when they settle it, else from the example sizes, with a guard."""
        ca, cb = self.canonical(a), self.canonical(b)
        d = ca - cb
        if not isinstance(d, Dim):
            return _OPS[op](d, 0)
        decided = _decide_by_range(op, d, self._range)
        if decided is not None:
            return decided
        names = symbols_in(d)
        if any(name.startswith(PLACEHOLDER) for name in names):
            return op == "!="  # a rule re-run to check types: a placeholder is like nothing else
        op, d = _normal_relation(op, d)
        if (op, d) in self.facts:
            return True
        if (_NEGATED[op], d) in self.facts:
            return False
        if any(self.dims[name].unbacked for name in names if name in self.dims):
            return self.settle_open(SymBool(self, op, *_sides(d)))
        result = _OPS[op](self.example(d), 0)
        holds = op if result else _NEGATED[op]
        if holds == "==":
            self._assume_equal(*_sides(d), reason)
        else:
            self.add_guard(holds, *_sides(d), reason or self._why())
        self.facts.add((holds, d))
        return result

    def decide_or_open(self, op: str, a: int | Dim, b: int | Dim) -> bool | SymBool:
        """`a OP b` as `decide` answers it, but left open (a SymBool) where it is a relation
        of unbacked sizes no fact settles: what a comparison in the program gives, so that
        `torch._check(n > 0)` can state it."""
        d = self.canonical(a) - self.canonical(b)
        if isinstance(d, Dim) and self.unbacked_in(d) and not is_placeholder(d) and self._settled(op, d) is None:
            return SymBool(self, op, a, b)
        return self.decide(op, a, b)

    def _settled(self, op: str, d: Dim) -> bool | None:
        """`d OP 0` where its bounds or the facts settle it, else None."""
        decided = _decide_by_range(op, d, self._range)
        if decided is not None:
            return decided
        op, d = _normal_relation(op, d)
        if (op, d) in self.facts:
            return True
        if (_NEGATED[op], d) in self.facts:
            return False
        return None

    def settle_open(self, open_: SymBool) -> bool:
        """A branch on a relation of unbacked sizes: the facts, else the tracer's answer."""
        d = self.canonical(open_.lhs) - self.canonical(open_.rhs)
        if not isinstance(d, Dim):
            return _OPS[open_.op](d, 0)
        settled = self._settled(open_.op, d)
        if settled is not None:
            return settled
        if self.on_open is not None:
            return self.on_open(open_)
        raise self.open_error(open_)

    def open_error(self, open_: SymBool) -> UnbackedDecision:
        where = self.locate() if self.locate is not None else None
        file, line, source = where if where is not None else (None, None, "")
        sizes = ", ".join(info.describe() for info in self.unbacked_in((open_.lhs, open_.rhs)))
        asker = f"{self.context} needs" if self.context else "this line needs"
        return UnbackedDecision(
            f"{asker} to know whether {open_.text()}; {sizes} is decided by the data, which a trace does not "
            f"have: one trace serves every count. State what holds with torch._check({open_.text()}) (checked "
            "when the trace runs), or compute both sides and pick with torch.where",
            file=file, line=line, source=source)

    def read_error(self, size: Dim) -> UnbackedDecision:
        where = self.locate() if self.locate is not None else None
        file, line, source = where if where is not None else (None, None, "")
        sizes = ", ".join(info.describe() for info in self.unbacked_in(size))
        unknown = f"{sizes} is decided by the data, which a trace does not have: one trace serves every count"
        if self.context:  # an op's rule (unbind makes one tensor per row): nothing to rewrite
            message = (f"{self.context} needs {size.text()} as a plain int; {unknown}. Leave out --fullgraph to "
                       "run that call eagerly (a graph break)")
        else:
            message = (f"this line needs {size.text()} as a plain int (len(), int(), range()); {unknown}. Keep it "
                       "a size (x.shape[0] instead of len(x)), or leave out --fullgraph to break the graph there")
        return UnbackedDecision(message, file=file, line=line, source=source)

    def assume(self, open_: SymBool, reason: str = "torch._check") -> None:
        """`torch._check(lhs OP rhs)` of unbacked sizes: a fact from here on, printed with
        the trace and checked when it runs."""
        d = self.canonical(open_.lhs) - self.canonical(open_.rhs)
        if not isinstance(d, Dim):
            return
        op, nd = _normal_relation(open_.op, d)
        self.facts.add((op, nd))
        if op == "==":
            # Not solved for a symbol, as a guard's equality is: each size keeps its own
            # binding, so the check sees the sizes the two values really have (u1
            # replaced by u0 would check u0 == u0). Both ranges still narrow.
            self._narrow(">=", nd)
            self._narrow("<=", nd)
        else:
            self._narrow(op, nd)
        where = self.locate() if self.locate is not None else None
        file, line, source = where if where is not None else (None, None, "")
        self.assumed.append(Guard(open_.op, open_.lhs, open_.rhs, reason, file, line, source))

    def index(self, x: Dim) -> int:
        if self.on_index is not None:
            return self.on_index(x)
        return self.read(x)

    def read(self, x: Dim) -> int:
        """`x` as a plain int, now: a size the data decide is read by the tracer (or the
        use refused), since its example is no value it ever has; any other is pinned to
        its example with a guard."""
        canonical = self.canonical(x)
        if not isinstance(canonical, Dim):
            return canonical
        if self.unbacked_in(canonical) and not is_placeholder(canonical):
            if self.on_read is not None:
                return self.on_read(canonical)
            raise self.read_error(canonical)
        return self.specialize(x, "the size is used as a plain int")

    def specialize(self, x: Dim, reason: str) -> int:
        value = self.example(x)
        self.decide("==", x, value, reason)
        return value

    def _assume_equal(self, a: int | Dim, b: int | Dim, reason: str) -> None:
        d = a - b
        target = self._solvable(d)
        if target is None:
            named = sorted(name for name in symbols_in(d) if self.dims.get(name) and self.dims[name].named)
            if named:
                where = self.locate() if self.locate is not None else None
                file, line, source = where if where is not None else (None, None, "")
                raise DimError(self._pinned_message(a, b, named), file=file, line=line, source=source)
            self.add_guard("==", a, b, reason or self._why())
            return
        name, value = target
        self.add_guard("==", a, b, reason or self._why())
        self.replacements = {k: substitute(v, {name: value}) for k, v in self.replacements.items()}
        self.replacements[name] = value

    def _solvable(self, d: Dim) -> tuple[str, int | Dim] | None:
        """A symbol (the newest automatic one) that `d == 0` determines, with its value."""
        order = list(self.dims)
        candidates = []
        for mono, coeff in d.terms:
            if len(mono) == 1 and mono[0][1] == 1 and isinstance(mono[0][0], Sym) and coeff in (1, -1):
                name = mono[0][0].name
                info = self.dims.get(name)
                if info is None or info.named:
                    continue
                rest = _make({m: c for m, c in d.terms if m != mono})
                if name in symbols_in(rest):
                    continue
                candidates.append((order.index(name), name, -rest if coeff == 1 else rest))
        if not candidates:
            return None
        _, name, value = max(candidates, key=lambda c: c[0])
        return name, value

    def _pinned_message(self, a, b, named: list[str]) -> str:
        names = " and ".join(named)
        declared = "was declared symbolic" if len(named) == 1 else "were declared symbolic"
        return (f"{names} {declared} (-i), but this line needs {_text(a)} == {_text(b)}; "
                "use --dynamic, or give that dim a number")

    def add_guard(self, op: str, lhs: int | Dim, rhs: int | Dim, reason: str) -> None:
        where = self.locate() if self.locate is not None else None
        file, line, source = where if where is not None else (None, None, "")
        self.guards.append(Guard(op, lhs, rhs, reason, file, line, source))
        self._narrow(op, lhs - rhs)

    def _narrow(self, op: str, d) -> None:
        """Tighten a symbol's range from a guard `k*s + c OP 0` on one symbol, or on a
        floor division of it (`(s + 1)//4 >= 1` is `s + 1 >= 4`: s >= 3)."""
        if not isinstance(d, Dim) or op in ("==", "!="):
            return
        terms = dict(d.terms)
        constant = terms.pop((), 0)
        if len(terms) != 1:
            return
        ((mono, k),) = terms.items()
        if len(mono) != 1 or mono[0][1] != 1:
            return
        atom = mono[0][0]
        # k*a + c OP 0  ->  a OP' -c/k (flipped when k < 0), on integers.
        if k < 0:
            k, constant, op = -k, -constant, {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
        bound = -constant / k
        at_least = math.floor(bound) + 1 if op == ">" else math.ceil(bound) if op == ">=" else None
        at_most = math.ceil(bound) - 1 if op == "<" else math.floor(bound) if op == "<=" else None
        if isinstance(atom, Sym):
            lo, hi = self._range(atom.name)
            lo = lo if at_least is None else max(lo, at_least)
            hi = hi if at_most is None else min(hi, at_most)
            self.ranges[atom.name] = (lo, hi)
        elif isinstance(atom, FloorDiv) and isinstance(atom.den, int) and atom.den > 0:
            m = atom.den  # n//m >= b  is  n >= m*b;  n//m <= b  is  n <= m*b + m - 1
            if at_least is not None:
                self._narrow(">=", atom.num - m * at_least)
            else:
                self._narrow("<=", atom.num - (m * at_most + m - 1))

    # -- activation --------------------------------------------------------------------

    def __enter__(self) -> DimEnv:
        _ACTIVE.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _ACTIVE.pop()


_ACTIVE: list[DimEnv] = []


def active() -> DimEnv | None:
    return _ACTIVE[-1] if _ACTIVE else None


def oblivious_equal(a: int | Dim, b: int | Dim) -> bool:
    """`a == b` as broadcasting asks it: an unbacked size is no 1 there (a 1 it turns out
    to be broadcasts the same), so the question needs no fact."""
    if type(a) is not Dim and type(b) is not Dim:
        return a == b  # (static shapes: the common case, asked per dim of every broadcast)
    env = active()
    if env is None:
        return a == b
    env.oblivious += 1
    try:
        return bool(a == b)
    finally:
        env.oblivious -= 1


# -- sizes the data decide --------------------------------------------------------------

# How a rule makes an unbacked size: the tracer's (a new `u0`, `u1`, ... of its
# environment), or, where none is set (a rule re-run to check the types it recorded), a
# placeholder that stands for whichever unbacked size the record holds.
_UNBACKED_MAKERS: list[Callable | None] = []
_placeholders = iter(range(1 << 62))
PLACEHOLDER = "?"


def unbacked(made_by: str, upper: int | Dim | None) -> Dim:
    """A new size the data decide, `0 <= size <= upper` (None: no bound known): `made_by`
    says what it is (`the count of nonzero elements`)."""
    maker = _UNBACKED_MAKERS[-1] if _UNBACKED_MAKERS else None
    if maker is None:
        return Dim.symbol(f"{PLACEHOLDER}{next(_placeholders)}")
    return maker(made_by, upper)


def push_unbacked_maker(maker: Callable | None) -> None:
    _UNBACKED_MAKERS.append(maker)


def pop_unbacked_maker() -> None:
    _UNBACKED_MAKERS.pop()


def is_placeholder(x: object) -> bool:
    return isinstance(x, Dim) and any(name.startswith(PLACEHOLDER) for name in x.symbols())


__all__ = [
    "Dim", "DimEnv", "DimError", "DimInfo", "Guard", "SymBool", "UnbackedDecision", "is_placeholder", "oblivious_equal", "shape_matches", "unbacked", "dims_in", "evaluate", "floordiv", "is_dim", "mod",
    "shape_text", "substitute", "symbols_in",
]
