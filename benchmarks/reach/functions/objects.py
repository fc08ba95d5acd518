"""Python objects holding tensors: namedtuples (made at module level and inside the
function), typing.NamedTuple, dict subclasses, OrderedDict, defaultdict, dataclasses and
instances of the script's own classes, passed in, built and returned."""

import collections
import dataclasses
import typing

import torch


def case(inputs, kwargs=dict):
    """Marks a case: `inputs()` makes its positional arguments, `kwargs()` its keyword ones."""
    def mark(fn):
        fn.case_inputs = lambda: (inputs(), kwargs())
        return fn
    return mark


def randn(*shape, **options):
    return torch.randn(*shape, **options)


Pair = collections.namedtuple("Pair", ["first", "second"])


class Stats(typing.NamedTuple):
    mean: torch.Tensor
    std: torch.Tensor
    count: int = 0


class Bag(dict):
    """A dict subclass, as ModelOutput-like containers are."""


class Outputs(collections.OrderedDict):
    def total(self):
        return sum(self.values())


@dataclasses.dataclass
class Batch:
    images: torch.Tensor
    labels: torch.Tensor
    scale: float = 1.0


@dataclasses.dataclass(frozen=True)
class Config:
    hidden: int = 4
    dropout: float = 0.0
    eps: float = 1e-5


CONFIG = Config()


class Running:
    __slots__ = ("total", "steps")

    def __init__(self):
        self.total = 0.0
        self.steps = 0


# -- namedtuples ---------------------------------------------------------------------

@case(lambda: (randn(3), randn(3)))
def namedtuple_returned(x, y):
    """a module-level namedtuple returned"""
    return Pair(x + y, x - y)


@case(lambda: (randn(3), randn(3)))
def namedtuple_made_inside(x, y):
    """a namedtuple class created inside the function and returned"""
    MinMax = collections.namedtuple("MinMax", "low high")
    return MinMax(torch.minimum(x, y), torch.maximum(x, y))


@case(lambda: (randn(3), randn(3)))
def namedtuple_fields_and_index(x, y):
    """attribute access, indexing, unpacking and _fields of a namedtuple"""
    p = Pair(x, y)
    a, b = p
    return p.first * p[1] + a - b, p._fields


@case(lambda: (randn(3), randn(3)))
def namedtuple_replace_and_asdict(x, y):
    """_replace and _asdict of a namedtuple"""
    p = Pair(x, y)._replace(second=y * 10)
    d = p._asdict()
    return d["first"] + d["second"]


@case(lambda: (Pair(randn(2), randn(2)),))
def namedtuple_argument(pair):
    """a namedtuple as the argument"""
    return pair.first @ pair.second


@case(lambda: (randn(4, 3),))
def typing_namedtuple_returned(x):
    """a typing.NamedTuple with a default field, returned"""
    return Stats(x.mean(0), x.std(0), count=x.shape[0])


# -- dicts of other types -------------------------------------------------------------

@case(lambda: (randn(3),))
def ordereddict_returned(x):
    """an OrderedDict returned keeps its type and order"""
    out = collections.OrderedDict()
    out["z"] = x * 3
    out["a"] = x + 1
    out.move_to_end("z")
    return out


@case(lambda: (randn(3),))
def dict_subclass_returned(x):
    """a subclass of dict returned keeps its type"""
    return Bag(logits=x * 2, loss=x.sum())


@case(lambda: (randn(3), randn(3)))
def ordereddict_subclass_with_method(x, y):
    """an OrderedDict subclass with a method, built and returned"""
    out = Outputs(a=x, b=y)
    out["total"] = out.total()
    return out


@case(lambda: (randn(3), randn(3)))
def defaultdict_of_lists(x, y):
    """collections.defaultdict(list) grouping tensors"""
    groups = collections.defaultdict(list)
    for name, t in (("even", x), ("odd", y), ("even", x * y)):
        groups[name].append(t)
    return torch.stack(groups["even"]).sum(0) - torch.stack(groups["odd"]).sum(0)


@case(lambda: (randn(3),))
def counter_of_names(x):
    """collections.Counter of strings scaling a tensor"""
    counts = collections.Counter(["relu", "relu", "gelu"])
    return x * counts["relu"] + counts.most_common(1)[0][1]


@case(lambda: (randn(3),))
def chainmap_lookup(x):
    """collections.ChainMap of overrides and defaults"""
    settings = collections.ChainMap({"scale": 3.0}, {"scale": 1.0, "shift": 0.5})
    return x * settings["scale"] + settings["shift"]


# -- dataclasses and instances --------------------------------------------------------

@case(lambda: (randn(2, 3), randn(2)))
def dataclass_returned(x, y):
    """a dataclass instance built and returned"""
    return Batch(images=x * 2, labels=y.round(), scale=0.5)


@case(lambda: (Batch(randn(2, 3), randn(2), 2.0),))
def dataclass_argument(batch):
    """a dataclass instance as the argument"""
    return batch.images.sum(1) * batch.scale + batch.labels


@case(lambda: (randn(2, 3), randn(2)))
def dataclass_replace_and_fields(x, y):
    """dataclasses.replace, fields() and asdict()"""
    batch = dataclasses.replace(Batch(x, y), scale=3.0)
    names = [f.name for f in dataclasses.fields(batch)]
    return dataclasses.asdict(batch)["images"] * batch.scale, names


@case(lambda: (randn(2, 4),))
def frozen_dataclass_config(x):
    """a frozen dataclass global read as configuration"""
    return torch.nn.functional.layer_norm(x, (CONFIG.hidden,), eps=CONFIG.eps)


@case(lambda: (randn(3), randn(3)))
def slots_instance_updated(x, y):
    """an instance of a __slots__ class updated inside the function"""
    state = Running()
    for t in (x, y):
        state.total = state.total + t
        state.steps += 1
    return state.total / state.steps


@case(lambda: (randn(3),))
def dataclass_made_inside(x):
    """a dataclass class defined inside the function"""
    @dataclasses.dataclass
    class Scaled:
        value: torch.Tensor
        factor: float

        def apply(self):
            return self.value * self.factor
    return Scaled(x, 4.0).apply()
