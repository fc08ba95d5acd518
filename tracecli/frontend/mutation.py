"""In-place ops and the views they would write through.

An in-place op becomes a new value in the trace and the user's tensor is rebound to
it. That is exact unless the tensor shares memory with another traced value (one is a
view of the other): a write through one changes the other at run time, which a trace
of values does not show. Rather than trace something wrong, such shared values become
stale at the write, and reading one afterwards stops tracing with a clear error.
"""

from __future__ import annotations

from tracecli.core.symbol import BoundSymbol, SourceLocation, Tag
from tracecli.core.values import TensorValue
from tracecli.ops.views import is_view


class StaleRead(Exception):
    pass


class MutationTracker:
    def __init__(self):
        self._root: dict[str, str] = {}  # view value -> the value it ultimately views
        self._views: dict[str, set[str]] = {}  # root -> its views
        self._stale: dict[str, SourceLocation | None] = {}  # value -> where it was overwritten
        # Values the caller sees after the call (inputs, captured tensors): a write through
        # a view of one changes it, which the trace (values, not memory) would not show.
        self.observable: set[str] = set()

    def check_reads(self, values) -> None:
        if not self._stale:
            return
        for value in values:
            if isinstance(value, TensorValue) and value.name in self._stale:
                where = self._stale[value.name]
                at = f" at {where.file}:{where.line}" if where is not None else ""
                raise StaleRead(
                    f"this reads a tensor that shares memory with one modified in place{at}; "
                    "tracing does not follow writes through views yet (write it out of place, or clone first)"
                )

    def after(self, bsym: BoundSymbol) -> tuple[TensorValue, TensorValue] | None:
        """Note a newly recorded top-level bound symbol; for an in-place one return
        (the overwritten value, the value that now stands for the tensor)."""
        args = bsym.arg_values()
        if not args:
            return None
        first = args[0]
        if is_view(bsym):
            root = self._root.get(first.name, first.name)
            for out in bsym.output_values():
                self._root[out.name] = root
                self._views.setdefault(root, set()).add(out.name)
            return None
        if Tag.INPLACE not in bsym.symbol.tags:
            return None
        outputs = bsym.output_values()
        if len(outputs) != 1 or not isinstance(first, TensorValue):
            return None
        root = self._root.get(first.name, first.name)
        sharing = ({root} | self._views.get(root, set())) - {first.name}
        overlapping = [a.name for a in args[1:] if isinstance(a, TensorValue) and a.name in sharing]
        if overlapping:
            raise StaleRead(
                "this in-place op reads a view of the tensor it writes; torch refuses such partly overlapping "
                "writes (clone the view first)"
            )
        if first.name != root and root in self.observable:
            raise StaleRead(
                f"this writes through a view of {root}, which the caller sees afterwards; tracing does not follow "
                f"writes through views yet (write {root} itself, or work on a clone)"
            )
        for name in sharing:
            self._stale[name] = bsym.source
        # The overwritten value itself is gone too: only the new one may be read.
        self._stale[first.name] = bsym.source
        if first.name in self.observable:
            self.observable.add(outputs[0].name)  # the same memory the caller sees
        return first, outputs[0]
