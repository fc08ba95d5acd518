"""Python state a traced call writes: a tensor the program keeps in a dict, a list, an
attribute of a module or object, a global or a closure's variable.

The trace stores the value where the program kept it, on every call it runs: a cache an
attention layer fills on its first call (`self.bias_cache[key] = ...`), a list a loop
appends its losses to. Each prim takes the object written (bound in the generated code
under the name the program reaches it by), where in it, and the value, a tensor or a
container of them.
"""

from __future__ import annotations

from tracecli.core.bindings import unheld
from tracecli.core.symbol import Tag
from tracecli.ops.prims.base import prim


def _store_meta(holder, where, value) -> None:
    return None


def _extend_meta(holder, values) -> None:
    if not isinstance(values, (list, tuple)):
        raise TypeError("prims.store_extend appends a sequence of values")
    return None


def _store_item(holder, key, value) -> None:
    unheld(holder)[key] = value


def _store_attr(holder, name: str, value) -> None:
    setattr(unheld(holder), name, value)


def _store_cell(holder, value) -> None:
    unheld(holder).cell_contents = value


def _store_extend(holder, values) -> None:
    unheld(holder).extend(values)


def _delete_item(holder, key) -> None:
    del unheld(holder)[key]


def _delete_attr(holder, name: str) -> None:
    delattr(unheld(holder), name)


store_item = prim("store_item", _store_meta, _store_item, tags=(Tag.SIDE_EFFECT,),
                  doc="holder[key] = value: a dict entry or list element the program set")
store_attr = prim("store_attr", _store_meta, _store_attr, tags=(Tag.SIDE_EFFECT,),
                  doc="setattr(holder, name, value): an attribute of a module or object the program set")
store_cell = prim("store_cell", lambda holder, value: None, _store_cell, tags=(Tag.SIDE_EFFECT,),
                  doc="a closure's variable the program set (`nonlocal`)")
store_extend = prim("store_extend", _extend_meta, _store_extend, tags=(Tag.SIDE_EFFECT,),
                    doc="holder.extend(values): what the program appended to a list")
delete_item = prim("delete_item", lambda holder, key: None, _delete_item, tags=(Tag.SIDE_EFFECT,),
                   doc="del holder[key]: a dict entry the program removed")
delete_attr = prim("delete_attr", lambda holder, name: None, _delete_attr, tags=(Tag.SIDE_EFFECT,),
                   doc="delattr(holder, name): an attribute the program removed")
