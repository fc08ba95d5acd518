"""Primitive operations: each a hand-written meta rule plus a torch implementation.

Prims are strict so that every conversion shows in a lowered trace: elementwise
tensor operands must already share shape and dtype (ltorch inserts the broadcasts
and conversions), and reductions keep their input's dtype.

`ALL` maps each prim's name to its symbol; every prim is also an attribute of this
package, so printed code (`prims.mul(x, y)`) resolves here. Each module of the
package declares its prims with `base._prim`.
"""

from tracecli.ops.prims import checks, core, indexing, nn  # noqa: F401 - each declares its prims
from tracecli.ops.prims.base import ALL

globals().update(ALL)
