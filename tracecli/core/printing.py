"""The trace text: what users read, diff and store, and the source the executors run.

Deterministic by construction: no timings, addresses or absolute paths. With
`codegen=True` the same functions emit the executable body (no comments, no
subsymbols, and a `del` after each tensor's last use), so what is printed is what
runs. Objects with no literal spelling print as their torch path or as a name the
generated code binds (core/bindings.py).
"""

from __future__ import annotations

import enum
import math

from tracecli.core.bindings import Bindings, hint, path_of
from tracecli.core.dims import Dim
from tracecli.core.dtypes import DType
from tracecli.core.functions import internal_tensors, is_function_call
from tracecli.core.pytree import rebuild_call, values_in
from tracecli.core.regions import backward_regions, is_backward, region_trace
from tracecli.core.symbol import BoundSymbol
from tracecli.core.trace import Trace
from tracecli.core.values import NumberValue, TensorValue

INDENT = "  "


def type_comment(value: TensorValue | NumberValue) -> str:
    if isinstance(value, TensorValue):
        dims = ", ".join(map(str, value.shape))
        return f'"{value.device} {value.dtype.short}[{dims}]"'
    shown = str(value.value) if not isinstance(value.value, str) else repr(value.value)
    if "\n" in shown or len(shown) > _LONGEST_SHOWN:
        # A module or an optimizer given as an argument: its repr spans many lines.
        return f'"{value.python_type}"'
    return f'"{value.python_type} {shown}"'


_LONGEST_SHOWN = 80


def format_constant(obj: object, bindings: Bindings | None = None) -> str:
    """A Python expression that evaluates to `obj` in the generated code's globals.
    Without `bindings` (a lone line in an error message), an object that needs a bound
    name is shown by its readable hint."""
    # Each container has its own syntax here (a 1-tuple's comma, a dict's keys), so this
    # walks them itself rather than through core.pytree. Other containers (named tuples,
    # dataclasses, torch.return_types.*) print as the call that builds them.
    if isinstance(obj, (TensorValue, NumberValue)):
        return obj.name
    if isinstance(obj, DType):
        return f"torch.{obj.name}"
    if isinstance(obj, Dim):  # a size symbol's expression, bound earlier by prims.shape
        return obj.text()
    if isinstance(obj, enum.Enum):  # before the numbers and strings an enum may also be
        return _spell(obj, bindings)
    if isinstance(obj, bool) or obj is None:
        return repr(obj)
    if isinstance(obj, float):  # numpy's float64 too: it is a float
        if math.isnan(obj):
            return "nan"
        if math.isinf(obj):
            return "inf" if obj > 0 else "-inf"
        return repr(float(obj))
    if isinstance(obj, int):
        return repr(int(obj))
    if isinstance(obj, str):
        return '"' + obj.replace("\\", "\\\\").replace('"', '\\"') + '"'
    kind = type(obj)
    if kind is tuple:
        inner = ", ".join(format_constant(x, bindings) for x in obj)
        return f"({inner},)" if len(obj) == 1 else f"({inner})"
    if kind is list:
        return "[" + ", ".join(format_constant(x, bindings) for x in obj) + "]"
    if kind is dict:
        items = (f"{format_constant(k, bindings)}: {format_constant(v, bindings)}" for k, v in obj.items())
        return "{" + ", ".join(items) + "}"
    call = rebuild_call(obj)
    if call is not None:
        parts = [format_constant(a, bindings) for a in call.args]
        parts += [f"{k}={format_constant(v, bindings)}" for k, v in call.kwargs]
        return f"{_spell(call.callee, bindings)}({', '.join(parts)})"
    if isinstance(obj, slice):
        parts = (format_constant(p, bindings) for p in (obj.start, obj.stop, obj.step))
        return f"slice({', '.join(parts)})"
    if obj is Ellipsis:
        return "..."
    if isinstance(obj, complex):
        if math.isfinite(obj.real) and math.isfinite(obj.imag):
            return repr(complex(obj))
        return f"complex({format_constant(obj.real)}, {format_constant(obj.imag)})"
    return _spell(obj, bindings)


def _spell(obj: object, bindings: Bindings | None) -> str:
    if bindings is not None:
        return bindings.spell(obj)
    return path_of(obj) or hint(obj)


def format_call(bsym: BoundSymbol, bindings: Bindings | None = None) -> str:
    return f"{_callee(bsym, bindings)}({_format_arguments(bsym, bindings)})"


def _callee(bsym: BoundSymbol, bindings: Bindings | None) -> str:
    sym = bsym.symbol
    if sym.namespace:
        return sym.qualname
    # A callable with no dotted path: bound in the globals.
    return bindings.spell(sym.impl) if bindings is not None else sym.name


def _format_arguments(bsym: BoundSymbol, bindings: Bindings | None) -> str:
    parts = [format_constant(a, bindings) for a in bsym.args]
    if bsym.kwargs:
        parts.extend(f"{k}={format_constant(v, bindings)}" for k, v in bsym.kwargs)
    return ", ".join(parts)


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


def _around_call(bsym: BoundSymbol) -> tuple[str, str]:
    """What a bound symbol's line has before its call (`t3 = `) and after it (its type
    comments): ('', '') for a call with no outputs."""
    output = bsym.output
    if type(output) is TensorValue:  # most calls: one tensor, no tree walk
        return f"{output.name} = ", f"  # {output.name}: {type_comment(output)}"
    outputs = values_in(output)
    if not outputs:
        return "", ""
    comments = ", ".join(f"{v.name}: {type_comment(v)}" for v in outputs)
    return f"{_format_target(output)} = ", f"  # {comments}"


def format_bsym(bsym: BoundSymbol, bindings: Bindings | None = None) -> str:
    """One line of code for a bound symbol, with its type comments."""
    head, tail = _around_call(bsym)
    return f"{head}{_callee(bsym, bindings)}({_format_arguments(bsym, bindings)}){tail}"


def _code_line(bsym: BoundSymbol, bindings: Bindings) -> str:
    """A bound symbol's line as the generated code has it: without its type comments,
    which Python would only read past (a fifth of compiling a long trace)."""
    output = bsym.output
    if type(output) is TensorValue:
        head = f"{output.name} = "
    else:
        head = f"{_format_target(output)} = " if values_in(output) else ""
    return f"{INDENT}{head}{_callee(bsym, bindings)}({_format_arguments(bsym, bindings)})"


def format_source(bsym: BoundSymbol) -> str:
    src = bsym.source
    return f"# {src.file.rsplit('/', 1)[-1]}:{src.line}:  {src.text}"


def _size_text(x) -> str:
    return x.text() if isinstance(x, Dim) else str(x)


def _where(where: tuple | None) -> str:
    """`  (file.py:12  the line)`, where a dim, guard or fact comes from; "" if unknown."""
    if not where:
        return ""
    file, line, source = where
    place = f"{file.rsplit('/', 1)[-1]}:{line}" if file and line else ""
    text = f"{place}  {source}".strip()
    return f"  ({text})" if text else ""


def dims_lines(trace: Trace) -> list[str]:
    """The size symbols, where a call's inputs give them, and the guards: the text the
    check deciding whether a call may reuse the trace is generated from."""
    if not trace.dims:
        return []
    given = [d for d in trace.dims if not d.unbacked]
    lines = ["# dims: " + ", ".join(f"{d.name} = {d.origin}" for d in given) + "; each >= 2"] if given else []
    for info in trace.dims:
        if info.unbacked:
            upper = f" <= {_size_text(info.upper)}" if info.upper is not None else ""
            lines.append(f"# {info.name}: {info.made_by}" + _where(info.where) + f"; 0 <= {info.name}{upper}")
    for guard in trace.guards:
        lines.append(f"# guard: {guard.text()}" + _where((guard.file, guard.line, guard.source)) + f"  {guard.reason}")
    for fact in trace.facts:
        lines.append(f"# fact: {fact.text()}" + _where((fact.file, fact.line, fact.source)) + f"  {fact.reason}")
    return lines


def header_line(trace: Trace) -> str:
    info = trace.info
    head = f"# {info.script}:{info.entry}" if info.script else f"# {info.entry or trace.name}"
    head += f" · device {info.device}"
    if info.passes:
        head += " · passes: " + ", ".join(info.passes)
    return head


def _append_subsymbols(lines: list[str], bsym: BoundSymbol, level: int, depth: float, bindings: Bindings) -> None:
    if level > depth or is_backward(bsym):  # a backward prints as a function of its own, after the trace
        return
    pad = INDENT * (level + 1)
    for sub in bsym.subsymbols:
        lines.append(f"{pad}# {format_bsym(sub, bindings)}")
        _append_subsymbols(lines, sub, level + 1, depth, bindings)


def _append_shown(lines: list[str], bsym: BoundSymbol, depth: float, bindings: Bindings) -> None:
    """A top-level bound symbol as the trace text shows it: its line, then its
    subsymbols as comments down to `depth`."""
    parts = bsym.parts
    if type(parts) is tuple or not parts.namespace or bsym.kwargs or not bsym.symbol.namespace or depth < 1:
        lines.append(INDENT + format_bsym(bsym, bindings))
        _append_subsymbols(lines, bsym, 1, depth, bindings)
        return
    # Restated by one primitive on its very arguments and outputs (most calls): the
    # primitive's line is the call's own under the primitive's name, written so without
    # making the record `subsymbols` would.
    head, tail = _around_call(bsym)
    arguments = _format_arguments(bsym, bindings)
    lines.append(f"{INDENT}{head}{bsym.symbol.qualname}({arguments}){tail}")
    lines.append(f"{INDENT}{INDENT}# {head}{parts.qualname}({arguments}){tail}")


def _append_inlined(lines: list[str], bsym: BoundSymbol, bindings: Bindings) -> None:
    """A call kept whole, as the code that runs: its subsymbols, then a `del` of what
    they made that it does not return."""
    for sub in bsym.subsymbols:
        if is_function_call(sub):
            _append_inlined(lines, sub, bindings)
        else:
            lines.append(_code_line(sub, bindings))
    internal = internal_tensors(bsym)
    if internal:
        lines.append(f"{INDENT}del {', '.join(internal)}")


def last_uses(trace: Trace) -> dict[int, str]:
    """For each top-level bound symbol (by index), the tensors no later one reads, as
    `del` lists them: freed right after it in the generated code, so the allocator reuses
    their memory as eager's does (a function holding every intermediate until it returns
    would hold all of a model's activations at once). Inputs stay (the caller holds them)
    and so do outputs."""
    keep = {v.name for v in trace.inputs} | {v.name for v in values_in(trace.output)}
    last: dict[str, int] = {}
    for index, bsym in enumerate(trace.bsyms):
        output = bsym.output
        if type(output) is TensorValue:  # most calls: one tensor, no tree walk
            last[output.name] = index
        else:
            for value in values_in(output):
                if type(value) is TensorValue:
                    last[value.name] = index
        for value in bsym.arg_values():
            if type(value) is TensorValue:
                last[value.name] = index
    # Text, not a list per index: strings are no work for the garbage collector, which a
    # list per bound symbol would set scanning the whole trace again.
    frees: dict[int, str] = {}
    for name, index in last.items():
        if name not in keep:
            held = frees.get(index)
            frees[index] = name if held is None else f"{held}, {name}"
    return frees


def format_backward(trace: Trace, depth: float = 1) -> str:
    """Each backward region of a training step as the function it runs, under the line
    of its backward() call ('' when there is none). The trace itself shows the region
    as a call: its members print here, not beneath it."""
    texts = []
    for bsym in backward_regions(trace):
        where = f" ({format_source(bsym).removeprefix('# ')})" if bsym.source is not None else ""
        body = format_trace(region_trace(bsym), depth).split("\n", 1)[1]
        texts.append(f"# {bsym.symbol.qualname}: the backward of {trace.name}{where}\n{body}")
    return "\n".join(texts)


def format_trace(trace: Trace, depth: float = 1, *, codegen: bool = False, bindings: Bindings | None = None) -> str:
    """The trace text. `depth` is how many subsymbol levels to show (math.inf: all).
    `bindings` (from `Bindings.for_trace` with the same `codegen`) lets the caller bind
    the names the text uses; by default the trace's own are made."""
    if bindings is None:
        bindings = Bindings.for_trace(trace, codegen=codegen)
    lines: list[str] = []
    if not codegen:
        lines.append(header_line(trace))
    params = ", ".join(v.name for v in trace.inputs)
    lines.append(f"def {trace.name}({params}):")
    if not codegen:
        captured = set(trace.info.captured)
        lines.extend(
            f"{INDENT}# {v.name}: {type_comment(v)}" + (", captured" if v.name in captured else "")
            for v in trace.inputs
        )
        lines.extend(INDENT + line for line in dims_lines(trace))
    previous_source = None
    previous_scope = ""
    frees = last_uses(trace) if codegen else {}
    for index, bsym in enumerate(trace.bsyms):
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
        if not codegen:
            _append_shown(lines, bsym, depth, bindings)
            continue
        if is_function_call(bsym):
            _append_inlined(lines, bsym, bindings)
        else:
            lines.append(_code_line(bsym, bindings))
        if index in frees:
            lines.append(f"{INDENT}del {frees[index]}")
    if not codegen:
        lines.append("")
    lines.append(f"{INDENT}return {format_constant(trace.output, bindings)}")
    return "\n".join(lines) + "\n"
