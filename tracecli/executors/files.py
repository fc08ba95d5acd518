"""Executors of the user's own, from a Python file (`--executor-file`), as `--pass-file`
loads passes."""

from __future__ import annotations

from tracecli.executors.builtin import BUILTIN
from tracecli.executors.registry import EXECUTORS, REGISTRATIONS
from tracecli.frontend.loader import load_registering_file


def load_executor_file(path: str) -> list[str]:
    """Run a user's Python file whose `@register_executor(...)` calls add executors; return
    their names."""
    return load_registering_file(path, EXECUTORS, REGISTRATIONS, BUILTIN, kind="executor",
                                 decorator="tracecli.executors.register_executor")
