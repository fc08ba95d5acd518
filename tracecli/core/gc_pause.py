"""Pausing the cyclic garbage collector around work that allocates many small records.

Traces are acyclic trees of immutable records, freed by reference counting; while a
large trace is built or rewritten, the collector would rescan every live record again
and again (seen: half the time of `rename` on 100 000 bound symbols). It runs again,
as usual, once the work is done.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
