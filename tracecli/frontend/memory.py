"""Whether an input can be made here: its size against the memory its device has free.

An `--input` that cannot be allocated is refused before torch tries: its allocation
would fail deep in the allocator (or, on an overcommitting system, the process would be
killed while drawing its values), neither of which says which input was too big.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch

from tracecli.core.dtypes import DType
from tracecli.core.errors import UserError

_MEMINFO = Path("/proc/meminfo")
_CGROUP = Path("/sys/fs/cgroup")


def nbytes(shape: tuple[int, ...], dtype: DType) -> int:
    return math.prod(shape) * max(dtype.bits // 8, 1)


def shown_bytes(count: float) -> str:
    """`40.0 GB`: decimal units, as `f32[100000,100000]` is 4 * 10**10 bytes."""
    for unit in ("bytes", "kB", "MB", "GB"):
        if count < 1000:
            return f"{count:.0f} {unit}" if unit == "bytes" else f"{count:.1f} {unit}"
        count /= 1000
    return f"{count:.1f} TB"


def available_bytes(device: str) -> int | None:
    """Memory free for new tensors on `device` now (None: unknown here)."""
    kind = torch.device(device).type
    if kind == "cuda":
        return torch.cuda.mem_get_info(torch.device(device))[0]
    if kind != "cpu":
        return None
    free = _meminfo_available()
    # A container's own limit may be lower than the machine's free memory.
    limit = _cgroup_room()
    return limit if free is None else free if limit is None else min(free, limit)


def _meminfo_available() -> int | None:
    try:
        for line in _MEMINFO.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_room() -> int | None:
    try:
        limit = (_CGROUP / "memory.max").read_text().strip()
        if limit == "max":
            return None
        return max(int(limit) - int((_CGROUP / "memory.current").read_text()), 0)
    except (OSError, ValueError):
        return None


class NoRoom(UserError):
    """An input too big for its device. `shortage` says which and by how much."""

    def __init__(self, shortage: str):
        super().__init__(f"{shortage}: `tracecli run` needs its values. `tracecli trace`, `examine` and `diff` "
                         "trace it without allocating it")
        self.shortage = shortage


def too_big(what: str, size: int, device: str, free: int | None) -> NoRoom:
    room = f"the {shown_bytes(free)} free on {device}" if free is not None else f"what {device} can allocate"
    return NoRoom(f"{what} needs {shown_bytes(size)}, more than {room}")


def require_room(what: str, shape: tuple[int, ...], dtype: DType, device: str) -> None:
    """Refuse a tensor that cannot be allocated on `device`, before allocating it. Its
    values are drawn on the CPU first, so the CPU must hold it too."""
    size = nbytes(shape, dtype)
    for where in dict.fromkeys(("cpu", device)):
        free = available_bytes(where)
        if free is not None and size > free:
            raise too_big(what, size, where, free)


def out_of_memory(exc: BaseException) -> bool:
    """Whether `exc` is an allocator's refusal (torch raises a RuntimeError on the CPU)."""
    return isinstance(exc, torch.OutOfMemoryError) or (
        isinstance(exc, RuntimeError) and "can't allocate memory" in str(exc))


__all__ = ["NoRoom", "available_bytes", "nbytes", "out_of_memory", "require_room", "shown_bytes", "too_big"]
