"""Which frames are user code, and where in the user's source a call came from."""

from __future__ import annotations

import linecache
import os
import sys
import sysconfig
from types import CodeType, FrameType

import torch

import tracecli
from tracecli.core.symbol import SourceLocation

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_OWN_DIR = os.path.dirname(tracecli.__file__) + os.sep
_STDLIB_DIR = sysconfig.get_paths()["stdlib"] + os.sep
_SITE_DIRS = tuple(
    sorted({p + os.sep for p in sys.path if p.endswith(("site-packages", "dist-packages"))}, key=len, reverse=True)
)

_is_user_cache: dict[CodeType, bool] = {}


def is_user_path(path: str) -> bool:
    """User code is anything but torch, tracecli and the standard library."""
    return not (
        path.startswith((_TORCH_DIR, _OWN_DIR, "<frozen"))
        or (path.startswith(_STDLIB_DIR) and not path.startswith(_SITE_DIRS))
    )


def is_user_code(code: CodeType) -> bool:
    cached = _is_user_cache.get(code)
    if cached is None:
        cached = _is_user_cache[code] = is_user_path(code.co_filename)
    return cached


def display_path(path: str) -> str:
    """Relative to the working directory, else to its site-packages root; never absolute."""
    if path.startswith("<"):
        return path
    cwd = os.getcwd() + os.sep
    if path.startswith(cwd):
        return path[len(cwd):]
    for site in _SITE_DIRS:
        if path.startswith(site):
            return path[len(site):]
    return os.path.relpath(path)


def user_frame(start: FrameType | None = None) -> FrameType | None:
    frame = start or sys._getframe(1)
    while frame is not None and not is_user_code(frame.f_code):
        frame = frame.f_back
    return frame


_location_cache: dict[tuple[str, int], SourceLocation] = {}


def location_of(frame: FrameType) -> SourceLocation:
    path, line = frame.f_code.co_filename, frame.f_lineno
    key = (path, line)
    loc = _location_cache.get(key)
    if loc is None:
        loc = SourceLocation(display_path(path), line, linecache.getline(path, line).strip())
        _location_cache[key] = loc
    return loc


def current_location() -> SourceLocation | None:
    frame = user_frame(sys._getframe(1))
    return location_of(frame) if frame is not None else None
