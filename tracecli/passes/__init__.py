"""Passes: each a `Trace -> PassResult` function registered under a short name.

Importing this package registers the built-in passes. A user's pass file does the same:

    from tracecli.passes import PassResult, register

    @register("my-pass", "one line saying what it does")
    def my_pass(trace):
        ...
        return PassResult(new_trace, changed=True, stats={"rewritten": n})
"""

from tracecli.passes import cse, dce, lower, rename, renumber  # noqa: F401 - registers them
from tracecli.passes.base import REGISTRY, Pass, PassResult, register

__all__ = ["REGISTRY", "Pass", "PassResult", "register"]
