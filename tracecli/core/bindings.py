"""Objects a trace refers to that Python source cannot spell as literals.

An opaque call may take a module object (`nn.PairwiseDistance()`), a callable (the
branches of `torch.cond`), `torch.channels_last`, or be a call of a callable with no
dotted path at all. Such an object is printed as its dotted path under `torch` when it
has one (the ops layer, which knows torch, answers that: the core imports no torch),
and otherwise as a name that the generated code's globals bind to the object itself.

Names are handed out per trace, in a fixed order that does not depend on how deep the
printer shows subsymbols: top-level calls first, then the output, then what the calls
kept whole run (core/functions.py), then the other subsymbols. The
printed text and the executed code therefore name every object alike, and the names
never clash with the trace's values, its function or the names generated code needs.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable

from tracecli.core.dims import Dim
from tracecli.core.dtypes import DType
from tracecli.core.functions import is_function_call
from tracecli.core.names import RESERVED, NameRegistry
from tracecli.core.pytree import rebuild_call
from tracecli.core.symbol import BoundSymbol
from tracecli.core.trace import Trace
from tracecli.core.values import NumberValue, TensorValue

# Leaves the printer spells by itself (containers are walked); a Dim as its expression
# over the sizes prims.shape bound.
_ATOMS = frozenset({TensorValue, NumberValue, DType, Dim, bool, int, float, complex, str, type(None), type(Ellipsis)})

_find_path: Callable[[object], str | None] = lambda obj: None  # noqa: E731 - replaced by the ops layer


def set_path_finder(find: Callable[[object], str | None]) -> None:
    """Installed by the ops layer: an expression under `torch` for an object (a dotted
    path, or the call making a device), or None."""
    global _find_path
    _find_path = find


def path_of(obj: object) -> str | None:
    return _find_path(obj)


def is_literal_leaf(obj: object) -> bool:
    """Whether the printer spells `obj`, not a container, as a Python literal. Subclasses
    of numbers and strings print as their values (numpy's float64 is a float), but an
    enum is more than its value."""
    return type(obj) in _ATOMS or (
        isinstance(obj, (int, float, complex, str, DType, TensorValue, NumberValue)) and not isinstance(obj, enum.Enum)
    ) or obj is Ellipsis


class Held:
    """An object of the program's that a trace refers to (the dict a traced value is
    stored into), with the name the program reaches it by: printed as that name, which
    the generated code binds to the object itself."""

    __slots__ = ("obj", "name")

    def __init__(self, obj: object, name: str):
        self.obj = obj
        self.name = name

    def __repr__(self) -> str:
        return self.name


def unheld(obj: object) -> object:
    """The object itself, where a call gets it straight from a trace (not through the
    generated code, which binds it so already)."""
    return obj.obj if type(obj) is Held else obj


def hint(obj: object) -> str:
    """A readable name for an object: a callable's or class's own name, else its type's
    name in snake case (`PairwiseDistance()` -> `pairwise_distance`)."""
    if type(obj) is Held:
        return obj.name
    try:
        name = getattr(obj, "__name__", None) if callable(obj) else None
    except Exception:  # objects whose attribute lookup itself fails
        name = None
    if not isinstance(name, str) or not name.strip("<>"):
        name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", type(obj).__name__).lower()
    return name.strip("<>")


class Bindings:
    """The spellings of one trace's non-literal objects, and the globals they need."""

    def __init__(self, taken: frozenset[str] | set[str]):
        self._registry = NameRegistry(taken)
        self._spelled: dict[int, str] = {}  # id(object) -> its path or bound name
        self._held: list[object] = []  # every object spelled, so that no id is reused meanwhile
        self.bound: dict[str, object] = {}  # the generated code's extra globals: name -> object

    @classmethod
    def for_trace(cls, trace: Trace, *, codegen: bool = False) -> Bindings:
        """Names in the fixed order; `codegen` skips the subsymbols, which only the
        text shows (their objects come last, so the names before them agree)."""
        # `slice` is a builtin the printed code calls; the function's own name is bound
        # in the same globals.
        bindings = cls(trace.names | RESERVED | {"slice", trace.name})
        for bsym in trace.bsyms:
            bindings.note_call(bsym)
        bindings.note(trace.output)
        # What a call kept whole runs is code too (core/functions.py), noted alike either way.
        bindings._note_inlined(trace.bsyms)
        if not codegen:
            bindings._note_below(trace.bsyms)
        return bindings

    def _note_inlined(self, bsyms) -> None:
        for bsym in bsyms:
            if is_function_call(bsym):
                for sub in bsym.subsymbols:
                    self.note_call(sub)
                self._note_inlined(bsym.subsymbols)

    def _note_below(self, bsyms) -> None:
        """The calls inside each of `bsyms`, at every level, parents before their parts."""
        for bsym in bsyms:
            parts = bsym.parts
            if type(parts) is tuple:
                for sub in parts:
                    self.note_call(sub)
                    self._note_below((sub,))
            elif not parts.namespace:
                # Restated by one call on the parent's own arguments (noted with it): only
                # an opaque callable needs a name.
                self.spell(parts.impl)

    def note_call(self, bsym: BoundSymbol) -> None:
        if not bsym.symbol.namespace:
            self.spell(bsym.symbol.impl)
        self.note(bsym.args)
        for _, value in bsym.kwargs:
            self.note(value)

    def note(self, obj: object) -> None:
        kind = type(obj)
        if kind in _ATOMS:
            return
        if kind is tuple or kind is list:
            for item in obj:
                self.note(item)
        elif kind is dict:
            for key, value in obj.items():
                self.note(key)
                self.note(value)
        elif kind is slice:
            self.note((obj.start, obj.stop, obj.step))
        elif (call := rebuild_call(obj)) is not None:
            # A container the printer spells as the call that builds it (`Out(loss=t3)`).
            self.spell(call.callee)
            self.note(call.args)
            self.note(tuple(v for _, v in call.kwargs))
        elif not is_literal_leaf(obj):
            self.spell(obj)

    def spell(self, obj: object) -> str:
        """The object's dotted path, or the name bound to it (handed out on first sight)."""
        # A held object is spelled once however many wrappers name it.
        target = obj.obj if type(obj) is Held else obj
        spelled = self._spelled.get(id(target))
        if spelled is None:
            spelled = None if type(obj) is Held else path_of(obj)
            if spelled is None:
                spelled = self._registry.take(hint(obj))
                self.bound[spelled] = target
            self._spelled[id(target)] = spelled
            self._held.append(target)
        return spelled
