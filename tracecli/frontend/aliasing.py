"""Views and in-place writes, as eager has them: the trace's values follow memory.

A view (`v = x[0]`, `x.t()`, `x.view(-1)`) shares memory with its base. In the trace an
in-place op is a new value and the user's tensor is rebound to it, so a write through a
view is followed by a write into its base: `v.add_(1)` on `v = x[0]` records
`x_1 = ltorch.setitem_(x, 0, v_1)` right after it, up the chain of views to the tensor
that owns the memory (this is functionalization). Every other view of that tensor is
then out of date; the next time one is read it is taken again from the updated tensor,
by the same view ops, at the line that reads it. So the trace is right whatever order
the code writes and reads in.

Some views cannot be followed: `reshape` of a tensor that may not be contiguous may
have copied (or not), an expanded view repeats elements (torch refuses writes to it),
and some opaque views have no scatter twin to write back through. A write through such
a view, or a read of one after its base changed, is refused with the line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import torch

from tracecli.core.dims import known
from tracecli.core.symbol import BoundSymbol, Tag
from tracecli.core.values import TensorValue
from tracecli.ops import ltorch
from tracecli.ops.ltorch.indexing import expand_key, index_bounds
from tracecli.ops.opaque import opaque_symbol
from tracecli.ops.promotion import ShapeError, canonical_dim
from tracecli.ops.views import is_view


class AliasError(Exception):
    """A write or read the trace cannot follow: refused at the user's line."""


# Records a call: (symbol, args, kwargs) -> its output values, with every write it makes
# followed (the tracer's own recording, at the user's line).
Record = Callable[[object, tuple, dict], object]

# ltorch views whose result is the base's elements in a new shape: written back by a
# reshape of the new value into the base's shape.
_RESHAPES = frozenset({"reshape", "unsqueeze", "squeeze", "unflatten", "ravel"})
# Views torch has a scatter twin for, with their parameters after the input: opaque ones,
# and ltorch.diagonal, whose elements no index reaches.
_SCATTERS = {
    "torch.diagonal": (torch.diagonal_scatter, ("offset", "dim1", "dim2"), (0, 0, 1)),
    "torch.Tensor.diagonal": (torch.diagonal_scatter, ("offset", "dim1", "dim2"), (0, 0, 1)),
    "torch.select": (torch.select_scatter, ("dim", "index"), (None, None)),
    "torch.Tensor.select": (torch.select_scatter, ("dim", "index"), (None, None)),
    "ltorch.diagonal": (torch.diagonal_scatter, ("offset", "dim1", "dim2"), (0, 0, 1)),
}


@dataclass(frozen=True)
class View:
    parent: TensorValue  # the value it was taken from
    bsym: BoundSymbol  # the view op that took it
    position: int  # which of that op's outputs it is
    base: str  # the tensor owning the memory (its first value's name)
    made_at: int  # the base's version when it was taken
    follows: bool  # whether a write to the base certainly reaches it (False: reshape may have copied)


class Aliasing:
    def __init__(self):
        self.views: dict[str, View] = {}
        self.base_of: dict[str, str] = {}  # a value -> its base, for views and written values
        self.current: dict[str, TensorValue] = {}  # base -> the value its memory holds now
        self.version: dict[str, int] = {}  # base -> how many writes it has seen
        self.contiguous: dict[str, bool] = {}  # value -> known to be C-contiguous in eager
        self.overwritten: set[str] = set()  # values an in-place op replaced

    def input(self, value: TensorValue, contiguous: bool) -> None:
        self.contiguous[value.name] = contiguous

    def _base(self, value: TensorValue) -> str:
        base = self.base_of.get(value.name)
        if base is None:
            base = self.base_of[value.name] = value.name
            self.current[base] = value
        return base

    # -- each new top-level bound symbol, in order ----------------------------------------

    def note(self, bsym: BoundSymbol) -> tuple[TensorValue, TensorValue] | None:
        """Follow one recorded bound symbol; for an in-place one return (the overwritten
        value, the value that now stands for the tensor)."""
        if not bsym.symbol.tags:
            # Most ops neither view nor write their arguments: only contiguity to follow
            # (asked first, before the tag tests below). Their result is contiguous when
            # every tensor they read is.
            known = self.contiguous
            contiguous = True
            for arg in bsym.arg_values():
                if isinstance(arg, TensorValue) and not known.get(arg.name, False):
                    contiguous = False
                    break
            output = bsym.output
            if type(output) is TensorValue:
                known[output.name] = contiguous
            else:
                for out in bsym.output_values():
                    if isinstance(out, TensorValue):
                        known[out.name] = contiguous
            return None
        tensors = [a for a in bsym.arg_values() if isinstance(a, TensorValue)]
        outputs = [o for o in bsym.output_values() if isinstance(o, TensorValue)]
        if is_view(bsym) and tensors and self._copies(bsym, tensors[0]):
            # x.contiguous() of a tensor that is not: a fresh tensor, no view of x.
            for out in outputs:
                self.contiguous[out.name] = True
            return None
        if is_view(bsym) and tensors:
            parent = tensors[0]
            base = self._base(parent)
            follows = self._follows(bsym, parent)
            for position, out in enumerate(bsym.output_values()):
                self.views[out.name] = View(parent, bsym, position, base, self.version.get(base, 0), follows)
                self.base_of[out.name] = base
                self.contiguous[out.name] = follows and self._stays_contiguous(bsym, parent, out)
            return None
        for out in outputs:
            self.contiguous[out.name] = all(self.contiguous.get(t.name, False) for t in tensors)
        if Tag.INPLACE not in bsym.symbol.tags or not tensors or len(outputs) != 1:
            return None
        written = tensors[0]
        base = self._base(written)
        for other in tensors[1:]:
            if other.name != written.name and self.base_of.get(other.name) == base:
                raise AliasError("this in-place op reads a view of the tensor it writes; torch refuses such "
                                 "partly overlapping writes (clone the view first)")
        self.overwritten.add(written.name)
        self.contiguous[outputs[0].name] = self.contiguous.get(written.name, False)
        return written, outputs[0]

    def _follows(self, bsym: BoundSymbol, parent: TensorValue) -> bool:
        # torch.reshape (and view, flatten) of a tensor that is not contiguous may copy.
        return not (bsym.symbol.namespace == "ltorch" and bsym.symbol.name in _RESHAPES
                    and not self.contiguous.get(parent.name, False))

    def _copies(self, bsym: BoundSymbol, parent: TensorValue) -> bool:
        """Whether this is `contiguous` of a tensor not known to be: torch copies it."""
        return (bsym.symbol.namespace == "ltorch" and bsym.symbol.name == "contiguous"
                and not self.contiguous.get(parent.name, False))

    def _stays_contiguous(self, bsym: BoundSymbol, parent: TensorValue, out: TensorValue) -> bool:
        if not self.contiguous.get(parent.name, False):
            return False
        name = bsym.symbol.name if bsym.symbol.namespace == "ltorch" else ""
        if name in _RESHAPES or name in ("contiguous", "detach"):
            return True
        if name == "getitem":
            return _contiguous_region(parent, bsym.args[1])
        if name in ("split", "chunk", "unbind", "narrow"):
            dim = canonical_dim(_arg(bsym, 1 if name in ("unbind", "narrow") else 2, "dim", 0), parent.ndim)
            return all(size == 1 for size in parent.shape[:dim])
        return False  # transposes, expansions, opaque views

    # -- writes ---------------------------------------------------------------------------

    def written(self, old: TensorValue, new: TensorValue, record: Record) -> None:
        """`new` replaced `old`: if `old` is a view, write `new` into what it views, and so
        on up to the base; then every other view of the base is out of date."""
        view = self.views.get(old.name)
        base = self._base(old)
        if view is None:
            self.base_of[new.name] = base
            self.current[base] = new
            self.version[base] = self.version.get(base, 0) + 1
            return
        if not view.follows:
            raise AliasError(
                "this writes through a reshape of a tensor that may not be contiguous, which torch may have "
                "copied; write the tensor itself, or make it contiguous first (.contiguous())"
            )
        new_parent = self._write_into(view, new, record)
        # The new value is the same view of the parent's new value, up to date.
        self.base_of[new.name] = base
        self.views[new.name] = replace(view, parent=new_parent, made_at=self.version.get(base, 0))

    def _write_into(self, view: View, new: TensorValue, record: Record) -> TensorValue:
        """Record the write of a view's new value into its parent; the parent's new value."""
        parent, bsym = view.parent, view.bsym
        name, args = bsym.symbol.name, bsym.args
        if bsym.symbol.namespace == "ltorch":
            if name == "getitem":
                return record(ltorch.setitem_, (parent, args[1], new), {})
            if name in ("narrow", "split", "chunk", "unbind", "select"):
                return record(ltorch.setitem_, (parent, _piece_key(bsym, view.position, parent), new), {})
            if name in _RESHAPES:
                return record(ltorch.copy_, (parent, record(ltorch.reshape, (new, parent.shape), {})), {})
            if name == "contiguous":  # of a contiguous tensor: the tensor itself
                return record(ltorch.copy_, (parent, new), {})
            if name == "detach":  # the tensor itself, written where autograd does not look
                return record(ltorch.set_data_, (parent, new), {})
            if name in ("permute", "transpose"):
                order = _permutation(bsym, parent)
                inverse = tuple(order.index(d) for d in range(len(order)))
                return record(ltorch.copy_, (parent, record(ltorch.permute, (new, inverse), {})), {})
        if bsym.symbol.namespace == "ltorch" and bsym.symbol.qualname not in _SCATTERS:
            raise AliasError(f"this writes through the result of {name}, which repeats or mixes elements of its "
                             "input; torch refuses it, or tracing cannot follow it (clone it first)")
        scatter = _SCATTERS.get(bsym.symbol.qualname)
        if scatter is None:
            raise AliasError(f"this writes through a view made by {bsym.symbol.qualname}, which tracing cannot "
                             "write back into its base; clone it first, or write the base itself")
        func, params, defaults = scatter
        scattered = record(opaque_symbol(func), (parent, new, *_bind(bsym, params, defaults)), {})
        return record(ltorch.copy_, (parent, scattered), {})

    def same_place(self, target: TensorValue, key, value: TensorValue) -> bool:
        """Whether `target[key] = value` puts a view back where it already is: the last step
        of `t[k] += 1` once the write through `t[k]` has reached `t`."""
        view = self.views.get(value.name)
        return (
            view is not None and not self.stale(value) and view.parent.name == target.name
            and view.bsym.symbol.qualname == "ltorch.getitem" and _same_key(view.bsym.args[1], key)
        )

    # -- reads ---------------------------------------------------------------------------

    def stale(self, value: TensorValue) -> bool:
        view = self.views.get(value.name)
        if view is None:
            return value.name in self.overwritten
        return view.made_at != self.version.get(view.base, 0) or self.stale(view.parent)

    def refreshed(self, value: TensorValue, record: Record) -> TensorValue:
        """The value a view holds now: taken again, by the same view ops, from the current
        value of its base."""
        if not self.stale(value):
            return value
        view = self.views.get(value.name)
        if view is None:
            raise AliasError("this reads a tensor's value from before an in-place write to it")
        if not view.follows:
            raise AliasError(
                "this reads a reshape of a tensor written in place since, which torch may have copied when it "
                "was taken (the tensor may not be contiguous); take it after the write, or clone it"
            )
        parent = view.parent
        parent = self.refreshed(parent, record) if parent.name in self.views else self.current[view.base]
        out = record(view.bsym.symbol, (parent, *view.bsym.args[1:]), dict(view.bsym.kwargs))
        return out[view.position] if isinstance(out, (tuple, list)) else out


def _same_key(a, b) -> bool:
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    return len(a) == len(b) and all(type(x) is type(y) and x == y for x, y in zip(a, b, strict=True))


def _arg(bsym: BoundSymbol, position: int, keyword: str, default):
    kwargs = dict(bsym.kwargs)
    if keyword in kwargs:
        return kwargs[keyword]
    return bsym.args[position] if len(bsym.args) > position else default


def _bind(bsym: BoundSymbol, params: tuple[str, ...], defaults: tuple) -> tuple:
    """An opaque view's arguments after its input, in the scatter twin's order."""
    return tuple(_arg(bsym, i + 1, p, d) for i, (p, d) in enumerate(zip(params, defaults, strict=True)))


def _permutation(bsym: BoundSymbol, parent: TensorValue) -> tuple[int, ...]:
    if bsym.symbol.name == "permute":
        return tuple(canonical_dim(d, parent.ndim) for d in bsym.args[1])
    d0, d1 = (canonical_dim(d, parent.ndim) for d in bsym.args[1:3])
    order = list(range(parent.ndim))
    order[d0], order[d1] = order[d1], order[d0]
    return tuple(order)


def _piece_key(bsym: BoundSymbol, position: int, parent: TensorValue) -> tuple:
    """The index of one piece of a narrow, split, chunk or unbind, or of a select, in its parent."""
    name = bsym.symbol.name
    if name == "select":
        return (slice(None),) * canonical_dim(bsym.args[1], parent.ndim) + (bsym.args[2],)
    if name == "narrow":
        dim = canonical_dim(bsym.args[1], parent.ndim)
        start = bsym.args[2] + parent.shape[dim] if bsym.args[2] < 0 else bsym.args[2]
        return (slice(None),) * dim + (slice(start, start + bsym.args[3]),)
    dim = canonical_dim(_arg(bsym, 2 if name != "unbind" else 1, "dim", 0), parent.ndim)
    if name == "unbind":
        return (slice(None),) * dim + (position,)
    pieces = bsym.output_values()
    start = sum(p.shape[dim] for p in pieces[:position])
    return (slice(None),) * dim + (slice(start, start + pieces[position].shape[dim]),)


def _contiguous_region(parent: TensorValue, key) -> bool:
    """Whether basic indexing of a contiguous tensor gives a contiguous one: single
    elements first, then at most one step-1 range, then whole dimensions."""
    try:
        bounds, _, advanced = index_bounds(parent, expand_key(parent, key))
    except ShapeError:
        return False
    if advanced:
        return False
    # Symbolic sizes: what the shapes cannot settle counts as not contiguous, which only
    # ever refuses a write (never a guard: bookkeeping must not narrow what a trace serves).
    ranging = False
    for (start, stop, step), size in zip(bounds, parent.shape, strict=True):
        length = (stop - start + step - 1) // step
        single = known("<=", length, 1)
        if single is None:
            return False
        if single:
            if ranging and known("==", size, 1) is not True:
                return False
            continue
        if step != 1 or (ranging and known("==", length, size) is not True):
            return False
        ranging = True
    return True
