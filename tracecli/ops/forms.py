"""The torch forms of the ops: which torch callables, Tensor method names and property
getters reach which ltorch symbol, as each op's declaration says.

A form's adapter takes the call's arguments (tensors already replaced by values) in
torch's own calling convention and calls ltorch symbols; an adapter that cannot model
a particular form of a call answers OPAQUE, and the call is recorded as an opaque
`torch.*` symbol. For most ops the adapter is the ltorch symbol itself, whose Python
signature mirrors torch's.

Every key is claimed once: a second claim raises, so two declarations can never
silently compete for one torch spelling.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

# An adapter's answer for a form of a call it does not model: record the call as an
# opaque symbol.
OPAQUE = object()


class UnsupportedCall(Exception):
    """A form of a call whose semantics tracing cannot keep (an in-place update it does
    not model, say): the tracer reports it at the user's line."""


@dataclass(frozen=True, slots=True)
class Form:
    adapter: Callable
    declared_by: str  # where to read it: "ltorch.add", "ltorch.shapes._flatten"


class DuplicateForm(Exception):
    """Two declarations claim one torch callable, method name or property."""


def _describe(key: object) -> str:
    if isinstance(key, str):
        return f"Tensor.{key}"
    module = getattr(key, "__module__", None) or ""
    return f"{module}.{getattr(key, '__qualname__', key)}".lstrip(".")


class FormTable:
    def __init__(self):
        self.functions: dict[Callable, Form] = {}  # by object: torch.add, F.relu, torch.Tensor.repeat
        self.methods: dict[str, Form] = {}  # by name: Tensor methods and operators reach torch under several objects
        self.properties: dict[Callable, Form] = {}  # property getters: torch.Tensor.T.__get__

    def claim(self, adapter: Callable, declared_by: str, *, functions: Iterable[Callable] = (),
              methods: Iterable[str] = (), properties: Iterable[Callable] = ()) -> None:
        form = Form(adapter, declared_by)
        claims = [(table, key) for table, keys in ((self.functions, functions), (self.methods, methods),
                                                    (self.properties, properties)) for key in keys]
        # Check every key before taking any: a refused declaration leaves the table as it was.
        seen: set = set()
        for table, key in claims:
            found = table.get(key)
            if found is not None or (id(table), key) in seen:
                first = found.declared_by if found is not None else declared_by
                raise DuplicateForm(f"{_describe(key)} is declared twice: by {first} and by {declared_by}")
            seen.add((id(table), key))
        for table, key in claims:
            table[key] = form


# The forms every ltorch declaration adds to; `torch_map.resolve` reads them.
FORMS = FormTable()


__all__ = ["FORMS", "OPAQUE", "DuplicateForm", "Form", "FormTable", "UnsupportedCall"]
