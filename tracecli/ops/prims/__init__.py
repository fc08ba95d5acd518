"""Primitive operations: each a hand-written meta rule plus a torch implementation.

Prims are strict so that every conversion shows in a lowered trace: elementwise
tensor operands must already share shape and dtype (ltorch inserts the broadcasts
and conversions), and reductions keep their input's dtype.

Each module is one op family, named as its ltorch counterpart (`prims.cumsum` is in
reductions.py, as `ltorch.cumsum`), and declares its prims with `base.prim`. `ALL` maps
each prim's name to its symbol; every prim is also an attribute of this package, so
printed code (`prims.mul(x, y)`) resolves here.
"""

from tracecli.ops.prims import (  # noqa: F401 - each declares its prims
    autograd,
    checks,
    conv,
    conversions,
    elementwise,
    elementwise_special,
    factories,
    fft,
    indexing,
    indexing_scatter,
    linalg,
    linalg_decompositions,
    linalg_products,
    linalg_solvers,
    logical,
    movement,
    reductions,
    reductions_order,
    selection,
    shapes,
    state,
)
from tracecli.ops.prims.base import ALL

globals().update(ALL)
