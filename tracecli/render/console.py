"""Consoles: colour on a terminal, plain text in pipes, `--color` and NO_COLOR obeyed."""

from __future__ import annotations

import os
import sys

from rich.console import Console


def make_console(color: str = "auto", *, stderr: bool = False) -> Console:
    file = sys.stderr if stderr else sys.stdout
    if color == "always":
        return Console(file=file, force_terminal=True, color_system="standard", soft_wrap=True)
    if color == "never" or os.environ.get("NO_COLOR"):
        return Console(file=file, no_color=True, color_system=None, highlight=False, soft_wrap=True)
    return Console(file=file, highlight=False, soft_wrap=True)
