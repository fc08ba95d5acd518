"""Who asks a size for a plain int: the parser of a torch call, or Python going on with it.

`__index__` of a dim is asked by torch's argument parser right before the call reaches
the tracer with the dim itself (`x.new_zeros(n)`: the int is thrown away), and by
Python code that computes with the int (`range(n)`, `len(pos)`, `lst[:n]`). For an
input's symbolic size the two can be told apart afterwards (IndexWatch: the parser's ask
is followed by its call), since the example value holds for the guard it leaves. A size
the data decide has no example value to hand out: Python must get the real count at
once, so the asking instruction itself is read. It makes a call whose callee, looked up
without running anything, is torch's or is not.
"""

from __future__ import annotations

import ast
import builtins
import dis
import inspect
import linecache
from types import FrameType

_CALLS = frozenset(op for op in ("CALL", "CALL_FUNCTION_EX", "CALL_KW", "PRECALL") if op in dis.opmap)
_UNKNOWN = object()


def asked_for_a_torch_call(frame: FrameType | None) -> bool:
    """Whether the instruction `frame` executes may be a torch call whose parser asks:
    False where it is no call (`lst[:n]`) or calls what is not torch's (`range`, `len`,
    numpy); True where it is torch's or cannot be told (the caller stays careful)."""
    if frame is None:
        return True
    code, lasti = frame.f_code, frame.f_lasti
    if not 0 <= lasti < len(code.co_code):
        return True
    if dis.opname[code.co_code[lasti]] not in _CALLS:
        return False
    callee = _callee(frame, code, lasti)
    return callee is _UNKNOWN or _is_torch(callee)


def _callee(frame: FrameType, code, lasti: int):
    """The object the call at `lasti` calls, from its source: names and attributes of
    names only, each looked up statically (no property or __getattr__ runs)."""
    positions = list(code.co_positions())
    if lasti // 2 >= len(positions):
        return _UNKNOWN
    line, end_line, col, end_col = positions[lasti // 2]
    if None in (line, end_line, col, end_col):
        return _UNKNOWN
    lines = [linecache.getline(code.co_filename, n).encode() for n in range(line, end_line + 1)]
    if not all(lines):
        return _UNKNOWN
    # Column offsets count UTF-8 bytes.
    lines[-1] = lines[-1][:end_col]
    lines[0] = lines[0][col:]
    try:
        node = ast.parse("(" + b"".join(lines).decode() + ")", mode="eval").body
    except (SyntaxError, UnicodeDecodeError):
        return _UNKNOWN
    if not isinstance(node, ast.Call):
        return _UNKNOWN
    return _lookup(node.func, frame)


def _lookup(node: ast.expr, frame: FrameType):
    if isinstance(node, ast.Name):
        for scope in (frame.f_locals, frame.f_globals, vars(builtins)):
            if node.id in scope:
                return scope[node.id]
        return _UNKNOWN
    if isinstance(node, ast.Attribute):
        base = _lookup(node.value, frame)
        if base is _UNKNOWN:
            return _UNKNOWN
        try:
            return inspect.getattr_static(base, node.attr)
        except AttributeError:
            return _UNKNOWN
    return _UNKNOWN


def _is_torch(callee) -> bool:
    for obj in (callee, getattr(callee, "__func__", None), getattr(callee, "__wrapped__", None),
                getattr(callee, "__objclass__", None)):
        module = getattr(obj, "__module__", None) or ""
        if module == "torch" or module.startswith(("torch.", "tracecli.")):
            return True
    return False


__all__ = ["asked_for_a_torch_call"]
