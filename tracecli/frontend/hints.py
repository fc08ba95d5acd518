"""Variable-name hints: which local variable of the user's code a traced value was
stored into.

When an operation is recorded, the innermost user frame is executing the call (or
operator) that produced it; the instruction right after that one says where the result
goes: `STORE_FAST a` names it `a`, `UNPACK_SEQUENCE` names the parts of a tuple, and
`RETURN_VALUE` hands it to the caller's call site, whose next instruction decides. Only
the last operation recorded at one call site can be what the call returned, so a hint
stays pending until the frame's next hinted operation (or the end of tracing) confirms
that the variable really holds the value. No trace hook is needed: user code runs at
full speed and the cost is one table lookup per operation.
"""

from __future__ import annotations

import dis
from collections.abc import Callable
from types import CodeType, FrameType

from tracecli.core.pytree import iter_values
from tracecli.core.values import TensorValue
from tracecli.frontend.source import user_frame

_STORES = frozenset({"STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF"})

# id(code) -> (code, {offset: what happens to the value produced at that offset})
_AFTER: dict[int, tuple[CodeType, dict[int, tuple]]] = {}


def _effect_after(instructions: list[dis.Instruction], i: int) -> tuple | None:
    nxt = instructions[i + 1]
    if nxt.opname in _STORES:
        return ("store", (nxt.argval,))
    if nxt.opname == "COPY" and nxt.arg == 1 and i + 2 < len(instructions):
        # `a = b = f(x)` and `(a := f(x))`: the first store names it.
        store = instructions[i + 2]
        return ("store", (store.argval,)) if store.opname in _STORES else None
    if nxt.opname == "UNPACK_SEQUENCE":
        parts = instructions[i + 2 : i + 2 + nxt.arg]
        return ("store", tuple(p.argval if p.opname in _STORES else None for p in parts))
    if nxt.opname == "RETURN_VALUE":
        return ("return",)
    return None


def _effects(code: CodeType) -> dict[int, tuple]:
    instructions = list(dis.get_instructions(code))
    effects: dict[int, tuple] = {}
    for i in range(len(instructions) - 1):
        effect = _effect_after(instructions, i)
        if effect is not None:
            # A frame executing a call of Python code reports the offset of the call's
            # last inline-cache entry, not of the call: cover the whole span.
            for offset in range(instructions[i].offset, instructions[i + 1].offset, 2):
                effects[offset] = effect
    return effects


def _effect(frame: FrameType) -> tuple | None:
    code = frame.f_code
    entry = _AFTER.get(id(code))
    if entry is None or entry[0] is not code:
        entry = _AFTER[id(code)] = (code, _effects(code))
    return entry[1].get(frame.f_lasti)


def store_target(frame: FrameType) -> tuple[FrameType, tuple] | None:
    """(frame, variable names) the value produced at `frame`'s current instruction is
    stored into, following returns up to the calling user frame."""
    while frame is not None:
        effect = _effect(frame)
        if effect is None:
            return None
        if effect[0] == "store":
            return frame, effect[1]
        frame = user_frame(frame.f_back)
    return None


class HintTracker:
    def __init__(self, proxy_of: Callable[[str], object]):
        self.hints: dict[str, str] = {}  # value name -> user variable
        self._proxy_of = proxy_of
        # id(frame) -> (frame, [(value name, variable)]): the frame's latest hinted call.
        self._pending: dict[int, tuple[FrameType, list[tuple[str, str]]]] = {}

    def note(self, frame: FrameType, output) -> None:
        found = store_target(frame)
        if found is None:
            return
        store_frame, names = found
        values = [v for v in iter_values(output) if isinstance(v, TensorValue)]
        if len(names) != len(values):
            return  # e.g. a tuple kept whole in one variable: no part is named by it
        self._confirm(store_frame)
        pairs = [(v.name, var) for v, var in zip(values, names, strict=True) if var is not None]
        if pairs:
            self._pending[id(store_frame)] = (store_frame, pairs)

    def _confirm(self, frame: FrameType) -> None:
        pending = self._pending.pop(id(frame), None)
        if pending is None:
            return
        frame, pairs = pending
        local_vars = frame.f_locals
        for value, var in pairs:
            held = local_vars[var] if var in local_vars else frame.f_globals.get(var)
            if held is self._proxy_of(value):
                self.hints.setdefault(value, var)

    def finish(self) -> dict[str, str]:
        for frame, _ in list(self._pending.values()):
            self._confirm(frame)
        return self.hints
