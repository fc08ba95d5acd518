"""The trace text: what users read, diff and store, and the source the executors run.

Deterministic by construction: no timings, addresses or absolute paths. With
`codegen=True` the same functions emit the executable body (no source comments,
no subsymbols), so what is printed is what runs.
"""

from __future__ import annotations

import math

from tracecli.core.dtypes import DType
from tracecli.core.symbol import BoundSymbol
from tracecli.core.trace import Trace
from tracecli.core.values import NumberValue, TensorValue

INDENT = "  "


def type_comment(value: TensorValue | NumberValue) -> str:
    if isinstance(value, TensorValue):
        dims = ", ".join(str(d) for d in value.shape)
        return f'"{value.device} {value.dtype.short}[{dims}]"'
    shown = value.value if not isinstance(value.value, str) else repr(value.value)
    return f'"{value.python_type} {shown}"'


def format_constant(obj: object) -> str:
    """A Python expression that evaluates to `obj` in the generated code's globals."""
    # Each container has its own syntax here (a 1-tuple's comma, a dict's keys), so this
    # walks them itself rather than through core.pytree. Named tuples and torch's
    # structseqs print as plain tuples; compiled traces rebuild their types (codegen).
    if isinstance(obj, (TensorValue, NumberValue)):
        return obj.name
    if isinstance(obj, DType):
        return f"torch.{obj.name}"
    if isinstance(obj, bool) or obj is None:
        return repr(obj)
    if isinstance(obj, float):
        if math.isnan(obj):
            return "nan"
        if math.isinf(obj):
            return "inf" if obj > 0 else "-inf"
        return repr(obj)
    if isinstance(obj, str):
        return '"' + obj.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(obj, tuple):
        inner = ", ".join(format_constant(x) for x in obj)
        return f"({inner},)" if len(obj) == 1 else f"({inner})"
    if isinstance(obj, list):
        return "[" + ", ".join(format_constant(x) for x in obj) + "]"
    if isinstance(obj, dict):
        return "{" + ", ".join(f"{format_constant(k)}: {format_constant(v)}" for k, v in obj.items()) + "}"
    if isinstance(obj, slice):
        return f"slice({format_constant(obj.start)}, {format_constant(obj.stop)}, {format_constant(obj.step)})"
    if obj is Ellipsis:
        return "..."
    return repr(obj)


def format_call(bsym: BoundSymbol) -> str:
    parts = [format_constant(a) for a in bsym.args]
    parts.extend(f"{k}={format_constant(v)}" for k, v in bsym.kwargs)
    return f"{bsym.symbol.qualname}({', '.join(parts)})"


def _format_target(output: object) -> str:
    if isinstance(output, tuple):
        names = ", ".join(_format_target(o) for o in output)
        return f"({names},)" if len(output) == 1 else f"({names})"
    if isinstance(output, list):
        return "[" + ", ".join(_format_target(o) for o in output) + "]"
    if isinstance(output, (TensorValue, NumberValue)):
        return output.name
    # A constant in an output position (e.g. a None beside tensors) is discarded.
    return "_"


def format_bsym(bsym: BoundSymbol) -> str:
    """One line of code for a bound symbol, with its type comments."""
    call = format_call(bsym)
    outputs = list(bsym.iter_outputs())
    if not outputs:
        return call
    comments = ", ".join(f"{v.name}: {type_comment(v)}" for v in outputs)
    return f"{_format_target(bsym.output)} = {call}  # {comments}"


def format_source(bsym: BoundSymbol) -> str:
    src = bsym.source
    return f"# {src.file.rsplit('/', 1)[-1]}:{src.line}:  {src.text}"


def header_line(trace: Trace) -> str:
    info = trace.info
    head = f"# {info.script}:{info.entry}" if info.script else f"# {info.entry or trace.name}"
    head += f" · device {info.device}"
    if info.passes:
        head += " · passes: " + ", ".join(info.passes)
    return head


def _append_subsymbols(lines: list[str], bsym: BoundSymbol, level: int, depth: float) -> None:
    if level > depth:
        return
    pad = INDENT * (level + 1)
    for sub in bsym.subsymbols:
        lines.append(f"{pad}# {format_bsym(sub)}")
        _append_subsymbols(lines, sub, level + 1, depth)


def format_trace(trace: Trace, depth: float = 1, *, codegen: bool = False) -> str:
    """The trace text. `depth` is how many subsymbol levels to show (math.inf: all)."""
    lines: list[str] = []
    if not codegen:
        lines.append(header_line(trace))
    params = ", ".join(v.name for v in trace.inputs)
    lines.append(f"def {trace.name}({params}):")
    if not codegen:
        lines.extend(f"{INDENT}# {v.name}: {type_comment(v)}" for v in trace.inputs)
    previous_source = None
    previous_scope = ""
    for bsym in trace.bsyms:
        src = bsym.source
        if not codegen and bsym.scope != previous_scope:
            # Module traces say where the submodule changes; "" is the entry module itself.
            lines.append("")
            lines.append(f"{INDENT}# ── {bsym.scope or trace.name}")
            previous_scope = bsym.scope
            previous_source = None
        if not codegen and src is not None and (src.file, src.line) != previous_source:
            if lines[-1] != f"{INDENT}# ── {bsym.scope or trace.name}":
                lines.append("")
            lines.append(INDENT + format_source(bsym))
            previous_source = (src.file, src.line)
        lines.append(INDENT + format_bsym(bsym))
        if not codegen:
            _append_subsymbols(lines, bsym, 1, depth)
    if not codegen:
        lines.append("")
    lines.append(f"{INDENT}return {format_constant(trace.output)}")
    return "\n".join(lines) + "\n"
