"""Python state a traced call writes (prims/state.py): at the torch level as at the
primitive one, since a store is not made of anything smaller."""

from __future__ import annotations

from tracecli.core.symbol import Tag
from tracecli.ops import prims
from tracecli.ops.ltorch._base import symbol


def _store_item(holder, key, value) -> None:
    prims.store_item.impl(holder, key, value)


def _store_attr(holder, name, value) -> None:
    prims.store_attr.impl(holder, name, value)


def _store_cell(holder, value) -> None:
    prims.store_cell.impl(holder, value)


def _store_extend(holder, values) -> None:
    prims.store_extend.impl(holder, values)


@symbol(_store_item, tags=(Tag.SIDE_EFFECT,))
def store_item(holder, key, value):
    """holder[key] = value, where the program kept a traced value in a dict or list"""
    prims.store_item(holder, key, value)


@symbol(_store_attr, tags=(Tag.SIDE_EFFECT,))
def store_attr(holder, name, value):
    """setattr(holder, name, value), where the program kept a traced value in an attribute"""
    prims.store_attr(holder, name, value)


@symbol(_store_cell, tags=(Tag.SIDE_EFFECT,))
def store_cell(holder, value):
    """a closure variable the program set to a traced value (`nonlocal`)"""
    prims.store_cell(holder, value)


@symbol(_store_extend, tags=(Tag.SIDE_EFFECT,))
def store_extend(holder, values):
    """holder.extend(values): traced values the program appended to a list"""
    prims.store_extend(holder, values)


def _delete_item(holder, key) -> None:
    prims.delete_item.impl(holder, key)


def _delete_attr(holder, name) -> None:
    prims.delete_attr.impl(holder, name)


@symbol(_delete_item, tags=(Tag.SIDE_EFFECT,))
def delete_item(holder, key):
    """del holder[key], where the program removed an entry of a dict"""
    prims.delete_item(holder, key)


@symbol(_delete_attr, tags=(Tag.SIDE_EFFECT,))
def delete_attr(holder, name):
    """delattr(holder, name), where the program removed an attribute"""
    prims.delete_attr(holder, name)


STORES = frozenset({store_item, store_attr, store_cell, store_extend, delete_item, delete_attr,
                    prims.store_item, prims.store_attr, prims.store_cell, prims.store_extend, prims.delete_item,
                    prims.delete_attr})
