"""Variable-name hints: which local variable of the user's code each new proxy was
stored into. A line-level trace hook, installed only on user-code frames, scans the
frame's locals before each line runs (so it sees what the previous line assigned)."""

from __future__ import annotations

import sys
from types import FrameType

from tracecli.frontend.proxy import TensorProxy
from tracecli.frontend.source import is_user_code


class HintCollector:
    def __init__(self):
        self.hints: dict[str, str] = {}  # value name -> first user variable it was stored in
        self._previous = None

    def _scan(self, frame: FrameType) -> None:
        hints = self.hints
        for var, obj in frame.f_locals.items():
            if type(obj) is TensorProxy and not obj.named_by_user:
                obj.named_by_user = True
                hints.setdefault(obj.value.name, var)

    def _local(self, frame: FrameType, event: str, arg):
        if event == "line" or event == "return":
            self._scan(frame)
        return self._local

    def _global(self, frame: FrameType, event: str, arg):
        if event == "call" and is_user_code(frame.f_code):
            return self._local
        return None

    def __enter__(self) -> HintCollector:
        self._previous = sys.gettrace()
        sys.settrace(self._global)
        return self

    def __exit__(self, *exc) -> None:
        sys.settrace(self._previous)
