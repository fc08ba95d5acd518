"""Inputs for the entry: `--input` specs, devices, and sample_inputs(device)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

import torch
from torch.overrides import TorchFunctionMode

from tracecli.core import dtypes
from tracecli.core.errors import UserError
from tracecli.frontend.memory import nbytes, out_of_memory, require_room, too_big
from tracecli.frontend.stand_ins import stand_in
from tracecli.ops.torch_bridge import TO_TORCH, sample_code, to_device

_SPEC = re.compile(r"^\s*([a-z][a-z0-9_]*)\s*\[\s*([A-Za-z0-9_,\s]*)\]\s*$")
_DIM_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class InputSpec:
    text: str
    dtype: dtypes.DType | None = None  # None: a Python number
    shape: tuple[int | str, ...] = ()  # a str is a symbolic dim's name: f32[n,4]
    number: int | float | bool | None = None
    requires_grad: bool = False  # `f32[3,4]:grad`

    @property
    def dim_names(self) -> tuple[str | None, ...]:
        return tuple(d if isinstance(d, str) else None for d in self.shape)

    def sized(self, sizes: dict[str, int]) -> tuple[int, ...]:
        return tuple(sizes[d] if isinstance(d, str) else d for d in self.shape)


def parse_spec(text: str) -> InputSpec:
    """`f32[3,4]`, `i64[8]`, `bool[2]`, `f16[]` (zero-dim), or a number: `3`, `2.5`, `True`;
    a floating tensor spec may end in `:grad` (it requires grad)."""
    stripped = text.strip()
    if stripped.endswith(":grad"):
        spec = parse_spec(stripped.removesuffix(":grad"))
        if spec.dtype is None or not spec.dtype.is_inexact:
            raise UserError(f"bad --input {text!r}: only a floating point tensor can require grad")
        return replace(spec, text=text, requires_grad=True)
    if stripped in ("True", "False"):
        return InputSpec(text, number=stripped == "True")
    for kind in (int, float):
        try:
            return InputSpec(text, number=kind(stripped))
        except ValueError:
            pass
    match = _SPEC.match(stripped)
    if not match:
        raise UserError(
            f"bad --input {text!r}: expected a tensor spec like f32[3,4], i64[8], bool[2] or a number like 3, 2.5"
        )
    dtype = dtypes.BY_SHORT.get(match.group(1)) or dtypes.BY_NAME.get(match.group(1))
    if dtype is None:
        known = ", ".join(d.short for d in dtypes.ALL)
        raise UserError(f"bad --input {text!r}: unknown dtype {match.group(1)!r} (known: {known})")
    dims = [d.strip() for d in match.group(2).split(",") if d.strip()]
    shape: list[int | str] = []
    for d in dims:
        if d.isdigit():
            shape.append(int(d))
        elif _DIM_NAME.match(d):
            shape.append(d)
        else:
            raise UserError(f"bad --input {text!r}: {d!r} is neither a size nor a dim name (f32[n,4])")
    return InputSpec(text, dtype=dtype, shape=tuple(shape))


def make_input(spec: InputSpec, device: str, generator: torch.Generator, sizes: dict[str, int] | None = None,
               *, values: bool = True):
    """The input `spec` describes, on `device`; without `values`, a stand-in that holds
    no memory (frontend/stand_ins.py): all that tracing reads of it."""
    if spec.dtype is None:
        return spec.number
    shape = spec.sized(sizes or {})
    if not values:
        return stand_in(shape, TO_TORCH[spec.dtype], device, spec.requires_grad)
    what = f"--input {spec.text}"
    require_room(what, shape, spec.dtype, device)
    # The same recipe a saved trace's sample_inputs() writes out.
    code = sample_code(spec.dtype, "shape", "device", "generator")
    try:
        tensor = eval(code, {"torch": torch, "shape": shape, "device": device, "generator": generator})  # noqa: S307
    except (RuntimeError, torch.OutOfMemoryError) as exc:
        if not out_of_memory(exc):
            raise
        raise too_big(what, nbytes(shape, spec.dtype), device, None) from None
    return tensor.requires_grad_() if spec.requires_grad else tensor


def inputs_from_specs(specs: list[str], device: str, seed: int, sizes: dict[str, int] | None = None,
                      *, values: bool = True) -> tuple[tuple, dict]:
    """The entry's inputs from `--input` specs; `sizes` gives the named dims (f32[n,4]).
    Without `values`, stand-ins: tensors that hold no memory, for tracing only."""
    generator = torch.Generator().manual_seed(seed)
    return tuple(make_input(parse_spec(s), device, generator, sizes, values=values) for s in specs), {}


def parse_sizes(texts: list[str]) -> list[dict[str, int]]:
    """`--sizes n=5,m=7` (repeatable): one dict of dim sizes per call, in order."""
    calls = []
    for text in texts:
        sizes: dict[str, int] = {}
        for item in text.split(","):
            name, eq, value = (part.strip() for part in item.partition("="))
            if not eq or not _DIM_NAME.match(name) or not value.isdigit():
                raise UserError(f"bad --sizes {text!r}: expected NAME=SIZE pairs such as n=5,m=7")
            if name in sizes:
                raise UserError(f"bad --sizes {text!r}: {name} is given twice")
            sizes[name] = int(value)
        calls.append(sizes)
    return calls


def device_available(device: str) -> bool:
    dev = torch.device(device)
    if dev.type in ("cpu", "meta"):
        return True
    if dev.type == "cuda":
        return torch.cuda.is_available() and (dev.index or 0) < torch.cuda.device_count()
    if dev.type == "mps":
        return torch.backends.mps.is_available()
    try:
        torch.empty(0, device=dev)
        return True
    except (RuntimeError, AssertionError):
        return False


def check_device(device: str) -> str:
    try:
        return to_device(device)
    except RuntimeError as exc:
        raise UserError(f"bad --device {device!r}: {exc}") from None


class _DeviceRedirect(TorchFunctionMode):
    """While making inputs for a device this machine lacks, make them on the CPU: a
    trace only needs their shapes and dtypes, and is stamped with the asked device."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if "device" in kwargs and kwargs["device"] is not None and not device_available(to_device(kwargs["device"])):
            kwargs["device"] = "cpu"
        name = getattr(func, "__name__", "")
        if name in ("cuda", "to") and args and isinstance(args[0], torch.Tensor):
            rest = [a for a in args[1:] if not _is_device(a)]
            if name == "cuda":
                return args[0]
            kwargs.pop("device", None)
            return func(args[0], *rest, **kwargs) if rest or kwargs else args[0]
        return func(*args, **kwargs)


def _is_device(obj) -> bool:
    if isinstance(obj, torch.device):
        return True
    if isinstance(obj, str):
        try:
            torch.device(obj)
            return True
        except RuntimeError:
            return False
    return False


def normalize_sample(result) -> tuple[tuple, dict]:
    """sample_inputs may return the positional args, one tensor, or (args, kwargs)."""
    if (
        isinstance(result, tuple) and len(result) == 2
        and isinstance(result[0], (tuple, list)) and isinstance(result[1], dict)
    ):
        return tuple(result[0]), dict(result[1])
    if isinstance(result, (tuple, list)):
        return tuple(result), {}
    return (result,), {}


def call_sample_inputs(fn: Callable, device: str) -> tuple[tuple, dict]:
    if device_available(device):
        return normalize_sample(fn(device))
    with _DeviceRedirect():
        return normalize_sample(fn(device))
