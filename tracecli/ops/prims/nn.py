"""Prims for neural-network ops (convolution, ...), declared with `base._prim`."""
