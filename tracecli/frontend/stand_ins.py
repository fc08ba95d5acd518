"""Stand-ins: the inputs of a call that is only traced.

An input made only to be traced (`--input f32[100000,100000]` for `tracecli trace`) is a
meta tensor, which holds no memory, marked with the device the input would have been made
on: the trace reads its shape, dtype and device, and a real input would give the same
trace, whatever its size. Where tracing needs a value instead (a read that cuts the trace,
and the piece before it run), `ValuesNeeded` stops it, and the caller traces again on
real inputs.
"""

from __future__ import annotations

import torch

from tracecli.core.symbol import SourceLocation

# The attribute that marks a stand-in with the device of the tensor it stands for.
_STANDS_FOR = "_tracecli_stands_for"


def stand_in(shape: tuple[int, ...], dtype: torch.dtype, device: str, requires_grad: bool = False) -> torch.Tensor:
    """A meta tensor standing for one of this shape and dtype on `device`."""
    tensor = torch.empty(shape, dtype=dtype, device="meta", requires_grad=requires_grad)
    setattr(tensor, _STANDS_FOR, device)
    return tensor


def stands_for(tensor: object) -> str | None:
    """The device a stand-in stands for; None for any other object."""
    return getattr(tensor, _STANDS_FOR, None) if isinstance(tensor, torch.Tensor) else None


class ValuesNeeded(BaseException):  # noqa: N818 - a signal, not a failure
    """Tracing on stand-ins met a read of a value. `where`: the user's line. A
    BaseException, so that the `except Exception:` of the user's code it unwinds through
    lets it pass."""

    def __init__(self, where: SourceLocation | None):
        super().__init__(where)
        self.where = where


__all__ = ["ValuesNeeded", "stand_in", "stands_for"]
