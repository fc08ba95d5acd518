"""Where a torch object can be reached: the dotted path the generated code spells it by.

An identity index, built once on first use, maps each object reachable from torch's
namespaces to one path. The choice is deterministic (it depends only on torch) and
prefers what users write: public namespaces before private names, private names
before the `torch._C` internals that implement them, and within a namespace the name
the object calls itself. So `torch._C._special.special_expit` is `torch.special.expit`,
`torch._C._nn.log_sigmoid` is `torch.nn.functional.logsigmoid`, and only what has no
public spelling keeps an internal one (`torch._C._nn.mse_loss`). Operators of
`torch.ops` (aten overloads, custom ops, higher-order ops) are spelled by their
registration. The printer asks this module how to spell objects that are not literals.
"""

from __future__ import annotations

import functools
import sys
import types

import torch
import torch.nn.functional as F

from tracecli.core.bindings import set_path_finder

# Namespaces users call ops from, most preferred first. torch.nn.init is listed too:
# its functions are not ops, but they reach the tracer whole (they check for
# __torch_function__ themselves), so they need a spelling like any other call.
_PUBLIC = (
    ("torch", torch), ("torch.Tensor", torch.Tensor), ("torch.nn.functional", F),
    ("torch.special", torch.special), ("torch.linalg", torch.linalg), ("torch.fft", torch.fft),
    ("torch.sparse", torch.sparse), ("torch.nested", torch.nested), ("torch.masked", torch.masked),
    ("torch.nn.init", torch.nn.init),
)
# The C modules behind them, reached by libraries (and by the public functions themselves).
_INTERNAL = (
    ("torch._C._nn", torch._C._nn), ("torch._C._linalg", torch._C._linalg),
    ("torch._C._special", torch._C._special), ("torch._C._fft", torch._C._fft),
    ("torch._C._sparse", torch._C._sparse), ("torch._C._nested", torch._C._nested),
    ("torch._C._VariableFunctions", torch._C._VariableFunctions), ("torch._C", torch._C),
)
# Objects that are never worth an entry: literals have their own spelling.
_SKIPPED_TYPES = (types.ModuleType, int, float, complex, str, bytes, bool, type(None), tuple, list, dict)

# Operator namespaces registered by torch itself, noted before any user code runs: an
# operator of any other namespace is defined by the user's own code, which a file that
# only imports torch (a saved trace) cannot reach.
_TORCH_OP_NAMESPACES = frozenset(name.split("::", 1)[0] for name in torch._C._dispatch_get_all_op_names())


def _entries(namespace) -> list[tuple[bool, str, object]]:
    """(is private, name, object) for each attribute worth indexing, in preference order."""
    found = []
    for name in dir(namespace):
        try:
            obj = getattr(namespace, name)
        except Exception:  # noqa: S112 - a lazy attribute that fails to load has no path
            continue
        if isinstance(obj, _SKIPPED_TYPES):
            continue
        private = name.startswith("_") and not (name.startswith("__") and name.endswith("__"))
        try:
            own_name = getattr(obj, "__name__", None)
        except Exception:  # an object whose attribute lookup itself fails
            own_name = None
        # Aliases of one object in one namespace: the object's own name first, then alphabetical.
        found.append((private, own_name != name, name, obj))
    found.sort(key=lambda entry: entry[:3])
    return [(private, name, obj) for private, _, name, obj in found]


@functools.cache
def _index() -> dict[int, tuple[object, str]]:
    """id(object) -> (object, path). Keyed by identity: objects need not be hashable, and
    equal objects (two 0.5s, say) must not share a path. The object is kept alongside so
    its id cannot be reused."""
    index: dict[int, tuple[object, str]] = {}
    public = [(path, _entries(ns)) for path, ns in _PUBLIC]
    tiers = (
        [(path, name, obj) for path, entries in public for private, name, obj in entries if not private],
        [(path, name, obj) for path, entries in public for private, name, obj in entries if private],
        [(path, name, obj) for path, ns in _INTERNAL for _, name, obj in _entries(ns)],
    )
    for tier in tiers:
        for path, name, obj in tier:
            index.setdefault(id(obj), (obj, f"{path}.{name}"))
    return index


def index() -> None:
    """Build the index now (it is built once, on first use)."""
    _index()


def torch_path(obj: object) -> str | None:
    """A dotted path under `torch` that evaluates to `obj` itself, or None."""
    found = _index().get(id(obj))
    if found is not None:
        return found[1]
    if isinstance(obj, torch._ops.OpOverload):
        path = f"torch.ops.{obj.namespace}.{obj._opname}.{obj._overloadname}"
    elif isinstance(obj, torch._ops.OpOverloadPacket):
        path = "torch.ops." + obj._qualified_op_name.replace("::", ".")
    elif isinstance(obj, torch._ops.HigherOrderOperator):
        path = f"torch.ops.higher_order.{obj.__name__}"
    elif _is_property_getter(obj):
        # A method-wrapper is made anew on each access: equal, never identical.
        path = f"torch.Tensor.{obj.__self__.__name__}.__get__"
        return path if _resolve(path) == obj else None
    else:
        path = _defining_path(obj)
    return path if path is not None and _resolve(path) is obj else None


def _is_property_getter(obj: object) -> bool:
    """`Tensor.H.__get__` and the like: how torch reports a property read (`x.H`)."""
    owner = getattr(obj, "__self__", None)
    return (
        type(obj).__name__ == "method-wrapper" and getattr(obj, "__name__", None) == "__get__"
        and type(owner).__name__ == "getset_descriptor" and getattr(owner, "__objclass__", None) is torch._C.TensorBase
    )


def _defining_path(obj: object) -> str | None:
    """Where a torch module defines `obj` (`torch.masked._ops.sum`), for callables no
    namespace above lists."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return None
    in_torch = module == "torch" or module.startswith("torch.")
    return f"{module}.{qualname}" if in_torch and module in sys.modules else None


def _resolve(path: str) -> object:
    obj: object = torch
    for part in path.split(".")[1:]:
        try:
            obj = getattr(obj, part)
        except Exception:  # torch.ops raises for unknown operators; anything else: no path
            return None
    return obj


def user_defined_op(obj: object) -> str | None:
    """For an operator the user's own code registered (a custom op), its qualified name."""
    if isinstance(obj, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        namespace = obj._qualified_op_name.split("::", 1)[0] if isinstance(obj, torch._ops.OpOverloadPacket) \
            else obj.namespace
        if namespace not in _TORCH_OP_NAMESPACES:
            return obj.name() if isinstance(obj, torch._ops.OpOverload) else obj._qualified_op_name
    return None


def torch_spelling(obj: object) -> str | None:
    """An expression under `torch` that evaluates to `obj`: its dotted path, or for a
    device the call that makes it (`torch.device("cuda:0")`)."""
    if isinstance(obj, torch.device):
        return f'torch.device("{obj}")'
    return torch_path(obj)


set_path_finder(torch_spelling)
