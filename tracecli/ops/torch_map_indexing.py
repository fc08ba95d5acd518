"""torch callables mapped to the indexing ltorch symbols (see torch_map)."""

from __future__ import annotations

from collections.abc import Callable

FUNCTIONS: dict[Callable, Callable] = {}
METHODS: dict[str, Callable] = {}
