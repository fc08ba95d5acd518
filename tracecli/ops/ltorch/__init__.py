"""ltorch: torch-level symbols that decompose into prims.

`ALL` maps each symbol's name to the symbol; every symbol is also an attribute of
this module, so printed code (`ltorch.mul(x, y)`) resolves here. Each module of the
package declares its symbols with `_base.symbol`, one op family a module, named as
its prims counterpart (`ltorch.cumsum` in reductions.py, as `prims.cumsum`).
"""

from tracecli.ops.ltorch import (  # noqa: F401 - each declares its symbols
    activations,
    attention,
    autograd,
    checks,
    conv,
    conversions,
    elementwise,
    elementwise_binary,
    elementwise_special,
    elementwise_unary,
    factories,
    fft,
    fft_windows,
    foreach,
    indexing,
    indexing_scatter,
    inplace,
    linalg,
    linalg_decompositions,
    linalg_products,
    linalg_solvers,
    logical,
    losses,
    movement,
    movement_joins,
    nn,
    pooling,
    reductions,
    reductions_norms,
    reductions_order,
    sampling,
    selection,
    shapes,
    shapes_copies,
    state,
)
from tracecli.ops.ltorch._base import ALL

globals().update(ALL)
__all__ = [*sorted(ALL), "ALL"]
