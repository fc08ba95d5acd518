"""Executors of the user's own, from a Python file (`--executor-file`), as `--pass-file`
loads passes."""

from __future__ import annotations

from tracecli.core.errors import UserError
from tracecli.executors.builtin import BUILTIN
from tracecli.executors.registry import EXECUTORS, REGISTRATIONS
from tracecli.frontend.loader import load_script


def load_executor_file(path: str) -> list[str]:
    """Run a user's Python file whose `@register_executor(...)` calls add executors; return
    their names."""
    before = dict(EXECUTORS)
    start = len(REGISTRATIONS)
    load_script(path)
    added = sorted(set(REGISTRATIONS[start:]))
    clashes = [name for name in added if name in BUILTIN]
    if clashes:
        EXECUTORS.update({name: before[name] for name in clashes})
        raise UserError(f"{path}: registers {', '.join(clashes)}, a built-in executor name; choose another name")
    if not added:
        raise UserError(f"{path}: registers no executor (decorate a function with "
                        "tracecli.executors.register_executor)")
    return added
