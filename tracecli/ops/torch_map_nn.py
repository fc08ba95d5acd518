"""torch callables mapped to the neural-network ltorch symbols (see torch_map)."""

from __future__ import annotations

from collections.abc import Callable

FUNCTIONS: dict[Callable, Callable] = {}
METHODS: dict[str, Callable] = {}
