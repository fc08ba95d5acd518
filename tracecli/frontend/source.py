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

# Keyed by file name, not code object: code objects with equal bodies compare equal
# across files, and comparing two large ones is slow.
_is_user_file: dict[str, bool] = {}


def is_user_path(path: str) -> bool:
    """User code is anything but torch, tracecli and the standard library. Code with no
    file (`<string>`: dataclass-made methods, our generated code) is not, unless
    linecache holds its source (a notebook cell, `<stdin>`)."""
    if path.startswith("<"):
        return bool(linecache.getlines(path))
    return not (
        path.startswith((_TORCH_DIR, _OWN_DIR))
        or (path.startswith(_STDLIB_DIR) and not path.startswith(_SITE_DIRS))
    )


def is_user_code(code: CodeType) -> bool:
    path = code.co_filename
    cached = _is_user_file.get(path)
    if cached is None:
        cached = _is_user_file[path] = is_user_path(path)
    return cached


_display: dict[str, str] = {}


def display_path(path: str) -> str:
    """Relative to the working directory, else to its site-packages root; never absolute."""
    if path.startswith("<"):
        return path
    cwd = os.getcwd() + os.sep
    if path.startswith(cwd):
        return path[len(cwd) :]
    for site in _SITE_DIRS:
        if path.startswith(site):
            return path[len(site) :]
    return os.path.relpath(path)


# Code whose frames end the search for user code: what calls the traced function (and
# what called tracecli, a CLI's own frames included) is not the user's program.
_boundaries: set[CodeType] = set()


def stop_search_at(code: CodeType) -> None:
    _boundaries.add(code)


def user_frame(start: FrameType | None = None) -> FrameType | None:
    frame = start or sys._getframe(1)
    while frame is not None and not is_user_code(frame.f_code):
        if frame.f_code in _boundaries:
            return None
        frame = frame.f_back
    return frame


# frame.f_lineno walks the line table from the start on every read (Python 3.11), so a
# call late in a long function would cost time proportional to its offset: look lines
# up by instruction offset in a table built once per code object instead.
_line_tables: dict[int, tuple[CodeType, dict[int, int]]] = {}


def line_of(frame: FrameType) -> int:
    code = frame.f_code
    entry = _line_tables.get(id(code))
    if entry is None or entry[0] is not code:
        table: dict[int, int] = {}
        for start, end, line in code.co_lines():
            if line is not None:
                for offset in range(start, end, 2):
                    table[offset] = line
        entry = _line_tables[id(code)] = (code, table)  # holding `code` keeps its id unique
    return entry[1].get(frame.f_lasti) or frame.f_lineno


_locations: dict[tuple[str, int], SourceLocation] = {}


def location_of(frame: FrameType) -> SourceLocation:
    path = frame.f_code.co_filename
    line = line_of(frame)
    key = (path, line)
    loc = _locations.get(key)
    if loc is None:
        shown = _display.get(path)
        if shown is None:
            shown = _display[path] = display_path(path)
        loc = _locations[key] = SourceLocation(shown, line, linecache.getline(path, line).strip())
    return loc

