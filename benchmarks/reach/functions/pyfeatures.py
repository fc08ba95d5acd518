"""The Python around ops: closures and nonlocal, decorators, functools, *args/**kwargs,
generators and comprehensions, try/except, with-blocks, string formatting, match,
classes with __call__, properties and inheritance."""

import contextlib
import enum
import functools

import torch
import torch.nn.functional as F


def case(inputs, kwargs=dict):
    """Marks a case: `inputs()` makes its positional arguments, `kwargs()` its keyword ones."""
    def mark(fn):
        fn.case_inputs = lambda: (inputs(), kwargs())
        return fn
    return mark


def randn(*shape, **options):
    return torch.randn(*shape, **options)


# -- closures ------------------------------------------------------------------------

def make_scaler(factor):
    def scale(t):
        return t * factor
    return scale


triple = make_scaler(3.0)


@case(lambda: (randn(3),))
def closure_reads_outer_number(x):
    """an inner function reading a number from the enclosing function"""
    offset = 2.5

    def shift(t):
        return t + offset
    return shift(x) * shift(-x)


@case(lambda: (randn(3), randn(3)))
def closure_over_tensor(x, y):
    """an inner function closing over a tensor computed in the function"""
    w = y.exp()

    def project(t):
        return t * w
    return project(x) + project(y)


@case(lambda: (randn(3),))
def closure_made_at_module_level(x):
    """a closure made by a factory at import time (make_scaler(3.0))"""
    return triple(x) - make_scaler(0.5)(x)


@case(lambda: (randn(2),))
def nonlocal_counter(x):
    """nonlocal int counter bumped by an inner function"""
    calls = 0

    def bump(t):
        nonlocal calls
        calls += 1
        return t * calls
    return bump(x) + bump(x) + calls


@case(lambda: (randn(2), randn(2)))
def nonlocal_tensor_accumulator(x, y):
    """nonlocal tensor reassigned by an inner function"""
    acc = torch.zeros(2)

    def add(t):
        nonlocal acc
        acc = acc + t
    add(x)
    add(y)
    add(x * y)
    return acc


@case(lambda: (randn(3),))
def recursive_inner_function(x):
    """a recursive inner function on Python ints"""
    def fact(n):
        return 1 if n <= 1 else n * fact(n - 1)
    return x * fact(4)


@case(lambda: (randn(3), randn(3)))
def lambdas_in_a_list(x, y):
    """a list of lambdas applied in turn"""
    steps = [lambda t: t + 1, lambda t: t * y, torch.tanh]
    for step in steps:
        x = step(x)
    return x


# -- decorators and functools -------------------------------------------------------

def doubled(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs) * 2
    return wrapper


@doubled
def affine(t, weight, bias=0.0):
    return t * weight + bias


@case(lambda: (randn(3),))
def decorated_helper(x):
    """calling a helper wrapped by a functools.wraps decorator"""
    return affine(x, 3.0, bias=1.0)


@case(lambda: (randn(3),))
@doubled
def decorated_entry(x):
    """the function itself wrapped by a decorator"""
    return x.sigmoid()


clip01 = functools.partial(torch.clamp, min=0.0, max=1.0)


@case(lambda: (randn(4),))
def partial_of_torch_function(x):
    """functools.partial of torch.clamp made at module level"""
    return clip01(x * 2)


@case(lambda: (randn(4),))
def partial_of_own_function(x):
    """functools.partial of a script function, made inside"""
    half = functools.partial(affine, weight=0.5)
    return half(x, bias=-1.0)


@case(lambda: (randn(3), randn(3), randn(3)))
def reduce_over_tensors(x, y, z):
    """functools.reduce(torch.add, ...) and with a lambda"""
    return functools.reduce(torch.add, [x, y, z]), functools.reduce(lambda a, b: a * b, (x, y, z), 1.0)


@functools.lru_cache(maxsize=16)
def window_sizes(n):
    return tuple(2**i for i in range(n))


@case(lambda: (randn(8),))
def lru_cached_helper(x):
    """a functools.lru_cache helper on ints"""
    return torch.stack([x[:s].sum() for s in window_sizes(4)])


@functools.cache
def activation(name):
    return getattr(F, name)


@case(lambda: (randn(4),))
def cached_lookup_of_function(x):
    """functools.cache over a lookup of F.<name>"""
    return activation("gelu")(x) + activation("silu")(x)


# -- arguments -----------------------------------------------------------------------

@case(lambda: (randn(2), randn(2), randn(2)))
def varargs_entry(*xs):
    """*args in the entry's signature"""
    return sum(xs) / len(xs)


def scaled_sum(*tensors, scale=1.0, **extra):
    out = sum(tensors) * scale
    for value in extra.values():
        out = out + value
    return out


@case(lambda: (randn(3), randn(3)))
def kwargs_forwarded(x, y):
    """**kwargs built as a dict and forwarded, *args unpacked"""
    options = {"scale": 2.0, "bias": torch.ones(3)}
    return scaled_sum(*(x, y), **options)


@case(lambda: (randn(3),), lambda: {"scale": 0.5, "shift": randn(3)})
def keyword_arguments_entry(x, *, scale=1.0, shift=None):
    """keyword-only arguments given to the entry"""
    out = x * scale
    if shift is not None:
        out = out + shift
    return out


@case(lambda: (randn(3),))
def default_arguments(x, y=None, power=2):
    """parameters left at their defaults: None and an int"""
    if y is None:
        y = torch.ones_like(x)
    return x**power + y


# -- generators and comprehensions ---------------------------------------------------

def powers(t, n):
    for i in range(1, n + 1):
        yield t**i


@case(lambda: (randn(3),))
def generator_function(x):
    """a generator function consumed by torch.stack(list(...))"""
    return torch.stack(list(powers(x, 3)))


def chained(t):
    yield from powers(t, 2)
    yield t.neg()


@case(lambda: (randn(3),))
def yield_from(x):
    """a generator delegating with yield from"""
    return sum(chained(x))


@case(lambda: (randn(3), randn(3)))
def generator_expression_in_sum(x, y):
    """sum() of a generator expression over tensors"""
    return sum(t * t for t in (x, y) if t.dim() == 1)


@case(lambda: (randn(2), randn(2)))
def nested_list_comprehension(x, y):
    """a nested list comprehension, flattened"""
    grid = [[a * b for b in (x, y)] for a in (x, y)]
    return torch.stack([t for row in grid for t in row])


@case(lambda: (randn(3), randn(3)))
def iter_and_next(x, y):
    """iter() and next() with a default"""
    it = iter([x, y])
    a = next(it)
    b = next(it)
    c = next(it, None)
    return a + b if c is None else c


# -- exceptions and with-blocks ------------------------------------------------------

def needs_square(t):
    if t.shape[-1] != t.shape[-2]:
        raise ValueError(f"not square: {tuple(t.shape)}")
    return t @ t


@case(lambda: (randn(2, 3),))
def try_except_fallback(x):
    """try a helper that raises ValueError, fall back in except"""
    try:
        out = needs_square(x)
    except ValueError:
        out = x @ x.T
    return out


@case(lambda: (randn(3),))
def try_except_else_finally(x):
    """try/except/else/finally all reached in order"""
    steps = []
    try:
        y = x * 2
    except RuntimeError:
        y = x
    else:
        y = y + 1
        steps.append("else")
    finally:
        steps.append("finally")
    return y * len(steps)


class ShapeError(Exception):
    pass


@case(lambda: (randn(3),))
def raise_and_catch_own_exception(x):
    """raising and catching an exception class of the script"""
    try:
        if x.dim() == 1:
            raise ShapeError("one-dimensional")
        out = x
    except ShapeError as err:
        out = x.unsqueeze(0) * len(str(err))
    return out


@case(lambda: (randn(3),))
def keyerror_on_missing_key(x):
    """catching KeyError from a dict lookup"""
    d = {"a": x}
    try:
        return d["b"]
    except KeyError:
        return d["a"] * 2


@case(lambda: (randn(3),))
def suppress_context(x):
    """contextlib.suppress around a lookup that fails"""
    out = x
    with contextlib.suppress(IndexError):
        out = [x][3]
    return out + 1


@case(lambda: (randn(3, requires_grad=True),))
def no_grad_block(x):
    """a torch.no_grad() block inside the function"""
    with torch.no_grad():
        scale = x.abs().max()
    return x / scale


@contextlib.contextmanager
def recording(log, name):
    log.append(f"enter {name}")
    yield
    log.append(f"exit {name}")


@case(lambda: (randn(3),))
def own_context_manager(x):
    """a contextlib.contextmanager of the script"""
    log = []
    with recording(log, "block"):
        y = x.cos()
    return y * len(log)


# -- strings -------------------------------------------------------------------------

SCALES = {"3x4": 2.0, "4x3": 0.5}


@case(lambda: (randn(3, 4),))
def fstring_shape_key(x):
    """an f-string of the shape used as a dict key"""
    key = f"{x.shape[0]}x{x.shape[1]}"
    return x * SCALES[key]


@case(lambda: (randn(3, 4),))
def str_of_shape(x):
    """str(x.shape) and str(x.dtype) in Python string logic"""
    text = str(x.shape)
    if "float32" in str(x.dtype) and text.startswith("torch.Size"):
        return x * len(text)
    return x


@case(lambda: (randn(2, 5),))
def percent_format_and_split(x):
    """%-formatting of sizes, then split and int() back"""
    spec = "%d,%d" % tuple(x.shape)
    rows, cols = (int(part) for part in spec.split(","))
    return x.reshape(cols, rows)


@case(lambda: (randn(4),))
def ops_named_by_strings(x):
    """getattr(torch, name) for names split from a string"""
    for name in "relu,sigmoid,neg".split(","):
        x = getattr(torch, name)(x)
    return x


@case(lambda: (randn(2, 3),))
def assert_with_formatted_message(x):
    """assert on the shape with an f-string message"""
    assert x.dim() == 2, f"expected 2-d input, got {x.shape}"
    assert x.shape[-1] % 3 == 0, "width must be a multiple of 3"
    return x.view(-1, 3)


# -- control flow --------------------------------------------------------------------

@case(lambda: (randn(5, 2),))
def walrus_on_size(x):
    """an assignment expression on a size"""
    if (n := x.shape[0]) > 4:
        return x[: n // 2]
    return x


@case(lambda: (randn(2, 3),))
def match_on_dim(x):
    """a match statement on x.dim()"""
    match x.dim():
        case 1:
            return x
        case 2:
            return x.sum(-1)
        case _:
            return x.flatten()


@case(lambda: (randn(16),))
def while_loop_on_size(x):
    """a while loop halving the tensor until it is short"""
    while x.shape[0] > 2:
        x = x[0::2] + x[1::2]
    return x


# -- classes -------------------------------------------------------------------------

class Affine:
    def __init__(self, scale, shift):
        self.scale = scale
        self.shift = shift

    def __call__(self, t):
        return t * self.scale + self.shift

    @property
    def gain(self):
        return self.scale * 2

    @staticmethod
    def clip(t):
        return t.clamp(-1, 1)

    @classmethod
    def identity(cls):
        return cls(1.0, 0.0)


class ShiftedAffine(Affine):
    def __call__(self, t):
        return super().__call__(t) - 1


AFFINE = Affine(2.0, 0.5)


@case(lambda: (randn(3),))
def callable_instance(x):
    """an instance with __call__, a property, a staticmethod and a classmethod"""
    return AFFINE(x) * AFFINE.gain + Affine.clip(x) + Affine.identity()(x)


@case(lambda: (randn(3),))
def subclass_with_super(x):
    """a subclass calling super().__call__, made inside the function"""
    return ShiftedAffine(3.0, 1.0)(x)


class Reduction(enum.Enum):
    SUM = "sum"
    MEAN = "mean"


@case(lambda: (randn(3, 4),))
def enum_branch(x):
    """branching on an Enum member"""
    mode = Reduction("mean")
    if mode is Reduction.SUM:
        return x.sum()
    return x.mean(), mode.value
