"""Passes: each a `Trace -> PassResult` function registered under a short name.

Importing this package registers the built-in passes. A user's pass file does the same:

    from tracecli.passes import PassResult, register

    @register("my-pass", "one line saying what it does")
    def my_pass(trace):
        ...
        return PassResult(new_trace, changed=True, stats={"rewritten": n})

What a pass needs to rewrite values is exported here too: `renamer` and `substituter`
make value maps, `map_bsym` and `map_trace` apply them, `NameRegistry(trace.names)`
hands out fresh names.
"""

from tracecli.core.names import NameRegistry
from tracecli.core.rewrite import map_bsym, map_trace, renamer, substituter
from tracecli.passes import cse, dce, fuse, lower, rename, renumber  # noqa: F401 - registers them
from tracecli.passes.base import REGISTRY, Pass, PassResult, register

__all__ = [
    "REGISTRY", "NameRegistry", "Pass", "PassResult", "map_bsym", "map_trace", "register", "renamer", "substituter",
]
