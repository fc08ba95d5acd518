"""Whether a trace with symbolic sizes serves a call: a check generated from the trace's
printed `# dims:` and `# guard:` lines, as the body is generated from its printed code.

The check reads each size symbol where the dims line says (`s0 = x.shape[0]`), requires
each input's rank, dtype, device and static sizes to be the traced ones and every
symbol to be at least 2, then tests the guards in order. It answers None when the trace
serves the call, else what failed, in the words the trace prints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from tracecli.core.dims import Dim
from tracecli.core.trace import Trace
from tracecli.core.values import NumberValue, TensorValue
from tracecli.ops.torch_bridge import TO_TORCH


@dataclass(frozen=True)
class SizeCheck:
    source: str
    run: Callable[..., str | None]  # the trace's inputs -> None, or what failed

    def failure(self, inputs: list) -> str | None:
        return self.run(*inputs)


def size_check(trace: Trace) -> SizeCheck:
    params = [v.name for v in trace.inputs]
    lines = [f"def check({', '.join(params)}):"]
    constants: dict[str, object] = {"torch": torch, "_same": _same}
    for value in trace.inputs:
        if isinstance(value, TensorValue):
            _tensor_lines(value, lines, constants)
        elif isinstance(value, NumberValue) and not value.is_size:
            # A constant input: the trace specialised on its value.
            constant = f"_traced_{value.name}"
            constants[constant] = value.value
            lines.append(f"    if not _same({value.name}, {constant}):")
            lines.append(f"        return {value.name!r} + ' is ' + repr({value.name}) + "
                         f"{', traced as ' + repr(value.value)!r}")
    # A size the data decide is no input's: the trace makes it, and checks what it relies on.
    given = [info for info in trace.dims if not info.unbacked]
    for info in given:
        lines.append(f"    {info.name} = {info.origin}")
    for info in given:
        lines.append(f"    if {info.name} < 2:")
        lines.append(f"        return {info.name + ' >= 2 failed  (sizes 0 and 1 are traced apart)'!r}")
    # An axis whose size is not read from it (a dim shared with another input, or found
    # equal to one) must have the size its type says.
    origins = {info.origin for info in given}
    for value in trace.inputs:
        if isinstance(value, TensorValue):
            for axis, size in enumerate(value.shape):
                read = f"{value.name}.shape[{axis}]"
                if isinstance(size, Dim) and read not in origins:
                    lines.append(f"    if {read} != {size.text()}:")
                    lines.append(f"        return {read!r} + ' is ' + str({read}) + ', traced as {size.text()}'")
    for guard in trace.guards:
        lines.append(f"    if not ({guard.text()}):")
        # Short enough for a table cell: the guard's full line is in the printed trace.
        where = f" ({guard.file.rsplit('/', 1)[-1]}:{guard.line})" if guard.where() else ""
        lines.append(f"        return {guard.text() + ' failed' + where!r}")
    lines.append("    return None")
    source = "\n".join(lines) + "\n"
    scope = dict(constants)
    exec(compile(source, f"<size check {trace.name}>", "exec"), scope)  # noqa: S102 - our own text
    return SizeCheck(source, scope["check"])


def _same(a: object, b: object) -> bool:
    if type(a) is not type(b):
        return False
    try:
        return bool(a == b) or (a != a and b != b)  # NaN is NaN here
    except Exception:  # a value with no plain equality: the very object, or not
        return a is b


def _tensor_lines(value: TensorValue, lines: list[str], constants: dict) -> None:
    name = value.name
    dtype_name = f"_dtype_{name}"
    constants[dtype_name] = TO_TORCH[value.dtype]
    traced = f"{value.device} {value.dtype.short}[{', '.join(str(d) for d in value.shape)}]"
    lines.append(f"    if not isinstance({name}, torch.Tensor) or {name}.dim() != {value.ndim} "
                 f"or {name}.dtype != {dtype_name} or str({name}.device) != {value.device!r}:")
    lines.append(f"        return {name!r} + ' is not {traced}'")
    for axis, size in enumerate(value.shape):
        if not isinstance(size, Dim):
            lines.append(f"    if {name}.shape[{axis}] != {size}:")
            lines.append(f"        return {name!r} + '.shape[{axis}] is ' + str({name}.shape[{axis}]) + ', traced as {size}'")


__all__ = ["SizeCheck", "size_check"]
