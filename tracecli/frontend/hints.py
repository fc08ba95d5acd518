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

import opcode
from collections.abc import Callable
from types import CodeType, FrameType

from tracecli.core.pytree import values_in
from tracecli.core.values import TensorValue
from tracecli.frontend.numpy_arrays import TracedArray
from tracecli.frontend.source import user_frame

_OP = opcode.opmap
_CACHE, _EXTENDED_ARG = _OP["CACHE"], _OP["EXTENDED_ARG"]
_LOCAL_STORES = frozenset({_OP["STORE_FAST"], _OP["STORE_DEREF"]})
_NAME_STORES = frozenset({_OP["STORE_NAME"], _OP["STORE_GLOBAL"]})
_COPY, _UNPACK, _RETURN = _OP["COPY"], _OP["UNPACK_SEQUENCE"], _OP["RETURN_VALUE"]


def _next(raw: bytes, offset: int) -> tuple[int, int, int]:
    """(offset, opcode, argument) of the instruction after the one at `offset`.

    Reads the raw bytecode: a frame in a call of Python code reports the offset of the
    call's last inline-cache entry, so inline caches (CACHE, opcode 0) are skipped, and
    EXTENDED_ARG prefixes are folded into the argument. Constant time, unlike a full
    disassembly of what may be a ten-thousand-line function.
    """
    at = offset + 2
    while at < len(raw) and raw[at] == _CACHE:
        at += 2
    arg = 0
    while at < len(raw) and raw[at] == _EXTENDED_ARG:
        arg = (arg | raw[at + 1]) << 8
        at += 2
    if at >= len(raw):
        return at, -1, 0
    return at, raw[at], arg | raw[at + 1]


def _stored_name(code: CodeType, op: int, arg: int) -> str | None:
    if op in _LOCAL_STORES:
        return code._varname_from_oparg(arg)
    if op in _NAME_STORES:
        return code.co_names[arg]
    return None


def _effect_at(code: CodeType, offset: int) -> tuple | None:
    """What happens to the value produced by the instruction at `offset`."""
    raw = code.co_code
    at, op, arg = _next(raw, offset)
    name = _stored_name(code, op, arg)
    if name is not None:
        return ("store", (name,))
    if op == _COPY and arg == 1:
        # `a = b = f(x)` and `(a := f(x))`: the first store names it.
        _, op, arg = _next(raw, at)
        name = _stored_name(code, op, arg)
        return ("store", (name,)) if name is not None else None
    if op == _UNPACK:
        names = []
        for _ in range(arg):
            at, op, part = _next(raw, at)
            names.append(_stored_name(code, op, part))
        return ("store", tuple(names))
    if op == _RETURN:
        return ("return",)
    return None


# (id(code), offset) -> (code, effect): holding the code keeps its id from being reused.
_effects: dict[tuple[int, int], tuple[CodeType, tuple | None]] = {}


def store_target(frame: FrameType) -> tuple[FrameType, tuple] | None:
    """(frame, variable names) the value produced at `frame`'s current instruction is
    stored into, following returns up to the calling user frame."""
    while frame is not None:
        code, offset = frame.f_code, frame.f_lasti
        found = _effects.get((id(code), offset))
        if found is None or found[0] is not code:
            found = _effects[id(code), offset] = (code, _effect_at(code, offset))
        effect = found[1]
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
        self._pending: dict[int, tuple[FrameType, tuple[tuple[str, str], ...]]] = {}

    def note(self, frame: FrameType, output) -> tuple[tuple[str, str], ...]:
        """Note where the values of `output`, just made at `frame`'s current instruction,
        are going; return the (value name, variable) pairs now pending, which `finish`
        confirms or drops."""
        found = store_target(frame)
        if found is None:
            # The frame has moved on to a call whose result it does not store: whatever
            # its previous call stored is in its variable now.
            self._confirm(frame)
            return ()
        store_frame, names = found
        if type(output) is TensorValue:  # one tensor, as most ops make: no tree to walk
            values = [output]
        else:
            values = [v for v in values_in(output) if isinstance(v, TensorValue)]
        if len(names) != len(values):
            return ()  # e.g. a tuple kept whole in one variable: no part is named by it
        self._confirm(store_frame)
        pairs = tuple([(v.name, var) for v, var in zip(values, names, strict=True) if var is not None])
        if pairs:
            self._pending[id(store_frame)] = (store_frame, pairs)
        return pairs

    def rebound(self, frame: FrameType | None, value: TensorValue, proxy: object) -> None:
        """An in-place op made `proxy` stand for `value`: it keeps the variable that holds it."""
        if frame is None:
            return
        for var, held in frame.f_locals.items():
            if held is proxy:
                self.hints.setdefault(value.name, var)
                return

    def _confirm(self, frame: FrameType) -> None:
        pending = self._pending.pop(id(frame), None)
        if pending is None:
            return
        frame, pairs = pending
        local_vars = frame.f_locals
        for value, var in pairs:
            held = local_vars[var] if var in local_vars else frame.f_globals.get(var)
            if type(held) is TracedArray:  # a numpy array: its values are the traced tensor
                held = held.tensor
            if held is self._proxy_of(value):
                self.hints.setdefault(value, var)

    def finish(self) -> dict[str, str]:
        for frame, _ in list(self._pending.values()):
            self._confirm(frame)
        return self.hints
