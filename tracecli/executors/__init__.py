"""Trace -> Python source (+ globals) -> callable, and the registry of executors that
decide how each symbol runs (torch, prims, and users' own)."""

from tracecli.executors import builtin
from tracecli.executors.registry import (
    EXECUTORS,
    CompiledRunError,
    Executor,
    claimed,
    compile_for,
    register_executor,
    uncompiled,
)

BUILTIN = builtin.BUILTIN

__all__ = ["EXECUTORS", "BUILTIN", "CompiledRunError", "Executor", "claimed", "compile_for", "register_executor",
           "uncompiled"]
