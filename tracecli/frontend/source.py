"""Which frames are user code, and where in the user's source a call came from."""

from __future__ import annotations

import linecache
import os
import sys
import sysconfig
from bisect import bisect_right
from collections.abc import Iterator
from types import CodeType, FrameType

import numpy
import torch

import tracecli
from tracecli.core.symbol import SourceLocation

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
# numpy's functions run on the user's behalf: what they do is at the line that called them.
_NUMPY_DIR = os.path.dirname(numpy.__file__) + os.sep
_OWN_DIR = os.path.dirname(tracecli.__file__) + os.sep
_STDLIB_DIR = sysconfig.get_paths()["stdlib"] + os.sep
_SITE_DIRS = tuple(
    sorted({p + os.sep for p in sys.path if p.endswith(("site-packages", "dist-packages"))}, key=len, reverse=True)
)

# Keyed by file name, not code object: code objects with equal bodies compare equal
# across files, and comparing two large ones is slow.
_is_user_file: dict[str, bool] = {}


def is_user_path(path: str) -> bool:
    """User code is anything but torch, numpy, tracecli and the standard library. Code with no
    file (`<string>`: dataclass-made methods, our generated code) is not, unless
    linecache holds its source (a notebook cell, `<stdin>`)."""
    if path.startswith("<"):
        return bool(linecache.getlines(path))
    return not (
        path.startswith((_TORCH_DIR, _NUMPY_DIR, _OWN_DIR))
        or (path.startswith(_STDLIB_DIR) and not path.startswith(_SITE_DIRS))
    )


def is_program_path(path: str) -> bool:
    """The program's own files: user code that is no installed package (a library such
    as transformers is user code to source locations, not the program's own state)."""
    return is_user_path(path) and not path.startswith(_SITE_DIRS)


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
# what called tracecli, a CLI's own frames included) is not the user's program. Keyed by
# id, the code objects kept alive as the values: hashing a code object hashes its
# constants and bytecode (about 0.4 µs), and every recorded op walks several frames.
_boundaries: dict[int, CodeType] = {}


def stop_search_at(code: CodeType) -> None:
    _boundaries[id(code)] = code


def user_frame(start: FrameType | None = None) -> FrameType | None:
    frame = start or sys._getframe(1)
    while frame is not None and not is_user_code(frame.f_code):
        if id(frame.f_code) in _boundaries:
            return None
        frame = frame.f_back
    return frame


def user_frames(start: FrameType | None) -> Iterator[tuple[FrameType, bool]]:
    """Each frame of user code from `start` outward, with whether it runs inside the
    traced call (before the frames that called tracecli) or outside it (a main block's
    frames, calling the entry)."""
    frame, inside = start, True
    while frame is not None:
        if id(frame.f_code) in _boundaries:
            inside = False
        elif is_user_code(frame.f_code):
            yield frame, inside
        frame = frame.f_back


# frame.f_lineno walks the line table from the start on every read (Python 3.11), so a
# call late in a long function would cost time proportional to its offset: look lines
# up by instruction offset in the code's line ranges instead, listed once per code
# object (one entry per range, not per instruction: a line of user code is some thirty
# instructions and inline caches, and a ten-thousand-line function is traced once).
_line_tables: dict[int, tuple[CodeType, list[int], list[int], list[int | None]]] = {}


def line_of(frame: FrameType) -> int:
    code = frame.f_code
    entry = _line_tables.get(id(code))
    if entry is None or entry[0] is not code:
        starts, ends, lines = [], [], []
        for start, end, line in code.co_lines():
            if start < end:
                starts.append(start)
                ends.append(end)
                lines.append(line)
        entry = _line_tables[id(code)] = (code, starts, ends, lines)  # holding `code` keeps its id unique
    _, starts, ends, lines = entry
    offset = frame.f_lasti
    at = bisect_right(starts, offset) - 1  # co_lines' ranges come sorted by offset
    line = lines[at] if at >= 0 and offset < ends[at] else None
    return line or frame.f_lineno


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

