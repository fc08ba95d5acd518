"""`--save DIR`: each stage of the pipeline as a runnable, re-traceable Python file.

Each file holds the imports, the trace, a `sample_inputs(device)` that makes inputs of
the traced shapes and dtypes (so `tracecli run 01-dce.py` works), and a main block.
Files are written to a temporary folder first and moved in place at the end, so a
failure leaves nothing half-written. A trace that refers to something a file importing
only torch and tracecli cannot reach (an object the generated code binds by name, such
as a module passed to an opaque call, or a custom operator the user's code registers)
is refused before anything is written, naming what it refers to.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile

import torch

from tracecli.core.bindings import Bindings, path_of
from tracecli.core.dims import Dim, evaluate
from tracecli.core.errors import UserError
from tracecli.core.functions import function_trace, is_function_call
from tracecli.core.printing import format_constant, format_trace
from tracecli.core.regions import is_region, region_trace
from tracecli.core.trace import Trace, walk
from tracecli.core.values import TensorValue
from tracecli.executors.codegen import script_header
from tracecli.ops.torch_bridge import sample_code
from tracecli.ops.torch_paths import user_defined_op


def _make_input(value, example: object = None) -> str:
    if not isinstance(value, TensorValue):
        return format_constant(value.value)
    sizes = tuple(value.shape)
    if any(isinstance(d, Dim) for d in sizes):
        # Symbolic: the file makes inputs of the traced call's sizes (or the smallest any
        # size symbol takes, 2, without them); the trace reads its sizes from them.
        known = isinstance(example, torch.Tensor) and example.ndim == len(sizes)
        sizes = tuple(example.shape) if known else tuple(
            evaluate(d, dict.fromkeys(d.symbols(), 2)) if isinstance(d, Dim) else d for d in sizes)
    shape = format_constant(sizes)
    # (A meta tensor, a weight of a model built on meta or a traced input's stand-in, has no values to draw from.)
    if (isinstance(example, torch.Tensor) and example.dtype in _INDEX_DTYPES and example.numel()
            and not example.is_meta and tuple(example.shape) == tuple(value.shape)):
        # Indices, ids and class targets: drawn among the traced call's own values, which
        # index what they index (`table[ids]`), where any ten numbers might not.
        seen = torch.unique(example.detach().cpu()).tolist()
        if len(seen) <= _MOST_VALUES_KEPT:
            return (f"torch.tensor({seen}, dtype=torch.{value.dtype.name})"
                    f"[torch.randint(0, {len(seen)}, {shape})].to(device)")
    return sample_code(value.dtype, shape, "device")


_INDEX_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)
_MOST_VALUES_KEPT = 64  # more distinct values than this: drawn as any integer tensor is


def _region_functions(traces: list[Trace]) -> list[str]:
    """A fused trace's regions as the functions the torch executor runs for them, bound
    under their namespace (`inductor.fusion0`): the saved file runs, and traced again it
    records the members. (Several traces: the segments of one call, their regions'
    names told apart by `distinct_regions`.)"""
    regions = [b for trace in traces for b in trace.bsyms if is_region(b)]
    if not regions:
        return []
    lines = ["from types import SimpleNamespace", "", ""]
    for bsym in regions:
        lines += [format_trace(region_trace(bsym), codegen=True).rstrip("\n"), "", ""]
    for namespace in dict.fromkeys(b.symbol.namespace for b in regions):
        members = ", ".join(f"{b.symbol.name}={b.symbol.name}" for b in regions if b.symbol.namespace == namespace)
        lines.append(f"{namespace} = SimpleNamespace({members})")
    return [*lines, "", ""]


def _function_defs(traces: list[Trace]) -> list[str]:
    """Each call kept whole (a custom autograd.Function's, core/functions.py) as the
    function the trace calls it by: what it runs, its subsymbols. Traced again, the file
    records those ops in its place."""
    lines: list[str] = []
    defined: dict[str, int] = {}  # the name a function is defined by -> the id of what it runs
    for trace in traces:
        calls = [b for b in trace.bsyms if is_function_call(b)]
        bindings = Bindings.for_trace(trace) if calls else None
        for bsym in calls:
            name = bindings.spell(bsym.symbol.impl)
            if name in defined:
                _refuse_clash(name, defined[name], bsym.symbol.impl)
                continue  # a call of the same symbol runs the same ops: one function serves both
            defined[name] = id(bsym.symbol.impl)
            fn = function_trace(bsym, name, trace.names)
            lines += [format_trace(fn, codegen=True, bindings=bindings).rstrip("\n"), "", ""]
    return lines


def _refuse_clash(name: str, defined: int, obj: object) -> None:
    """Two segments of a call that name different objects alike cannot share one file."""
    if defined != id(obj):
        raise UserError(f"--save: the segments refer to two different objects as `{name}` ({_describe(obj)} is "
                        "one), which one file cannot hold; nothing was written")


def _defined_here(trace: Trace) -> set[int]:
    """The objects a saved file defines itself: the functions of calls kept whole."""
    return {id(b.symbol.impl) for _, b in walk(trace.bsyms) if is_function_call(b)}


def _rebuilt(obj: object) -> str | None:
    """The expression a saved file builds a bound object again with, or None: an
    unmodelled call made under autocast (`under_autocast(torch.conv_tbc, "cpu",
    torch.bfloat16)`), when the call itself has a path; a helper of tracecli's."""
    if getattr(obj, "tracecli_module", None) is not None:
        return obj.__name__  # a helper of tracecli's (numpy_scalar), imported from its module
    state = getattr(obj, "tracecli_autocast", None)
    if state is None:
        return None
    func, device_type, dtype = state
    path = path_of(func)
    return None if path is None else f"under_autocast({path}, {device_type!r}, {dtype})"


def _rebuilt_objects(traces: list[Trace]) -> list[str]:
    imports, lines = [], []
    seen: dict[str, int] = {}
    for name, obj in ((name, obj) for trace in traces for name, obj in Bindings.for_trace(trace).bound.items()):
        if name in seen:  # the same object bound in another segment: built once
            _refuse_clash(name, seen[name], obj)
            continue
        seen[name] = id(obj)
        module = getattr(obj, "tracecli_module", None)
        if module is not None:
            imports.append(f"from {module} import {obj.__name__}" + (f" as {name}" if name != obj.__name__ else ""))
        elif (expression := _rebuilt(obj)) is not None:
            lines.append(f"{name} = {expression}")
    if lines:
        imports.append("from tracecli.ops.opaque import under_autocast")
    if not imports:
        return []
    return [*imports, "", *lines, "", ""] if lines else [*imports, "", ""]


def helpers(traces: list[Trace]) -> list[str]:
    """What the traces' code needs defined before it: regions, rebuilt objects, functions."""
    return [*_region_functions(traces), *_rebuilt_objects(traces), *_function_defs(traces)]


def sample_inputs_lines(inputs, examples: list | None) -> list[str]:
    """`def sample_inputs(device)` making `inputs` (trace input values); `examples`: the
    traced call's objects for them, one each, when at hand."""
    lines = ["def sample_inputs(device):", "    # Inputs of the traced shapes and dtypes; constants as they were traced."]
    examples = examples if examples is not None and len(examples) == len(inputs) else [None] * len(inputs)
    args = [_make_input(v, e) for v, e in zip(inputs, examples, strict=True)]
    lines.append(f"    return ({', '.join(args)}{',' if len(args) == 1 else ''})")
    return lines


def trace_file(trace: Trace, depth: float, examples: list | None = None) -> str:
    """`examples`: the traced call's inputs, one per trace input, when they are at hand."""
    lines = [script_header(), "", *helpers([trace]), format_trace(trace, depth).rstrip("\n"), "", ""]
    lines += sample_inputs_lines(trace.inputs, examples)
    lines += ["", "", 'if __name__ == "__main__":', f"    print({trace.name}(*sample_inputs({trace.info.device!r})))", ""]
    return "\n".join(lines)


def _describe(obj: object) -> str:
    if callable(obj) and hasattr(obj, "__qualname__"):
        return f"{getattr(obj, '__module__', None) or '?'}.{obj.__qualname__}"
    kind = type(obj)
    return f"a {kind.__module__}.{kind.__qualname__} object"


def unsaveable(trace: Trace) -> list[str]:
    """What a saved file of `trace` could not reach, one phrase each (empty: it can be saved)."""
    bindings = Bindings.for_trace(trace, codegen=True)
    # Inputs that are objects rather than numbers: sample_inputs() would have to spell them.
    for value in trace.inputs:
        if not isinstance(value, TensorValue):
            bindings.note(value.value)
    defined = _defined_here(trace)
    found = [f"`{name}` ({_describe(obj)})" for name, obj in bindings.bound.items()
             if _rebuilt(obj) is None and id(obj) not in defined]
    custom_ops = {bsym.symbol.qualname: user_defined_op(bsym.symbol.impl) for bsym in trace.bsyms}
    found.extend(
        f"`{name}` (the operator {op}, registered by the script's own code)" for name, op in custom_ops.items() if op
    )
    return found


def check_saveable(stages, part: str = "") -> None:
    """Refuse, naming what is at fault, before anything is written. `part`: which part
    of the call the stages are (` of segment 2 of 3`), said in the error."""
    for stage in stages:
        found = unsaveable(stage.trace)
        if found:
            raise UserError(
                f"--save: the {stage.name} trace{part} cannot be a self-contained runnable file: it refers to "
                + ", ".join(found)
                + ", which only the script itself can provide; nothing was written"
            )


# What an earlier --save into the same folder wrote: its stage files are replaced as a
# whole, so no stage of another pipeline is left beside this one's.
_STAGE_FILE = re.compile(r"^\d\d-[\w.-]+\.py$")


def _remove_earlier_stages(directory: str, keep: set[str]) -> None:
    for name in os.listdir(directory):
        if _STAGE_FILE.match(name) and name not in keep:
            os.remove(os.path.join(directory, name))


def save_stages(directory: str, stages, depth: float, report: dict, examples: list | None = None) -> list[str]:
    """Write `00-initial.py`, `01-<pass>.py`, ... and `report.json` into `directory`.
    `examples`: the traced call's inputs, whose integer values the sample inputs keep."""
    check_saveable(stages)
    return write_stage_files(directory, [stage.name for stage in stages],
                             [trace_file(stage.trace, depth, examples) for stage in stages], report)


def write_stage_files(directory: str, stage_names: list[str], texts: list[str], report: dict) -> list[str]:
    """`00-initial.py`, ... holding `texts`, and `report.json`, all or nothing."""
    names = [f"{i:02d}-{name.replace(':', '-')}.py" for i, name in enumerate(stage_names)]
    parent = os.path.dirname(os.path.abspath(directory)) or "."
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".tracecli-save-", dir=parent)
    try:
        for name, text in zip(names, texts, strict=True):
            with open(os.path.join(staging, name), "w", encoding="utf-8") as f:
                f.write(text)
        with open(os.path.join(staging, "report.json"), "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
        os.makedirs(directory, exist_ok=True)
        _remove_earlier_stages(directory, set(names))
        for name in [*names, "report.json"]:
            os.replace(os.path.join(staging, name), os.path.join(directory, name))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [*names, "report.json"]
