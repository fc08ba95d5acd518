"""Prims for indexing and data movement (take, gather, scatter, ...), declared with `base._prim`."""
