"""The main job: load a script, trace its entry, compile the trace and check it
against eager PyTorch. The CLI is a thin layer over `trace_script`."""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from tracecli.core.errors import UserError
from tracecli.core.pytree import tree_key
from tracecli.core.trace import Trace, TraceInfo
from tracecli.core.verify import VerificationError, verify
from tracecli.executors.codegen import compile_trace
from tracecli.executors.compare import RunReport, check_against_eager
from tracecli.frontend.inputs import call_sample_inputs, check_device, device_available, inputs_from_specs
from tracecli.frontend.loader import Script, choose_entry, exception_at_user_line, load_script, run_main_blocks
from tracecli.frontend.tracer import TracedProgram, trace_callable
from tracecli.passes.lower import lower
from tracecli.passes.pipeline import Stage, Step, run_pipeline

_ENTRY_SUFFIX = re.compile(r"^(?P<path>.+?):(?P<entry>[A-Za-z_][A-Za-z0-9_]*)$")


class CompiledRunError(Exception):
    """The compiled trace failed to run although eager ran: a fault of the trace."""


@dataclass
class TracedCall:
    program: TracedProgram
    stages: list[Stage] = field(default_factory=list)  # the initial trace, then one per pass
    report: RunReport | None = None

    @property
    def final(self) -> Trace:
        return self.stages[-1].trace if self.stages else self.program.trace


@dataclass
class JobResult:
    script: Script
    entry: str
    entry_reason: str
    device: str
    calls: list[TracedCall] = field(default_factory=list)
    executor: str = "torch"

    @property
    def match(self) -> bool:
        return all(c.report is None or c.report.match for c in self.calls)


def split_target(target: str) -> tuple[str, str | None]:
    """`path/script.py:ENTRY` -> (path, ENTRY); a bare path has no entry."""
    m = _ENTRY_SUFFIX.match(target)
    if m and m.group("path").endswith(".py"):
        return m.group("path"), m.group("entry")
    return target, None


def require_device(device: str, command: str) -> None:
    if not device_available(device):
        raise UserError(
            f"device {device} is not available on this machine"
            + (" (torch.cuda.is_available() is False)" if device.startswith("cuda") else "")
            + f"; `tracecli {command}` needs it to execute. Use `tracecli trace` to see the trace without running it"
        )


EXECUTORS = ("torch", "prims")


def compile_for(trace: Trace, executor: str) -> Callable:
    """The callable an executor runs: torch runs the trace as printed; prims runs it
    lowered all the way, through the prims' own implementations (checking every
    decomposition against eager). `trace_script` has checked the name."""
    return compile_trace(lower(trace).trace if executor == "prims" else trace)


def _trace_entry(script: Script, entry: str, fn: Callable, args: tuple, kwargs: dict, device: str,
                 stamp: bool) -> TracedProgram:
    info = TraceInfo(script=script.display, entry=entry, device=device)
    try:
        program = trace_callable(fn, args, kwargs, device=device if stamp else None, info=info, name=entry)
    except UserError:
        raise
    except Exception as exc:
        raise exception_at_user_line(exc, script.module.__file__, prefix=f"{entry} raised while tracing: ") from exc
    try:
        verify(program.trace)
    except VerificationError as exc:
        raise VerificationError(f"the traced program is invalid: {exc.problem}", exc.context) from exc
    return program


def _execute(call: TracedCall, compiled: Callable, fn: Callable, args: tuple, kwargs: dict, seed: int,
             device: str, script: Script) -> RunReport:
    try:
        return check_against_eager(
            call.final, compiled, fn, args, kwargs, call.program.inputs, seed=seed, device=device
        )
    except Exception as exc:
        source = getattr(compiled, "__tracecli_source__", "")
        if any(f.filename.startswith("<trace ") for f in _frames(exc)):
            raise CompiledRunError(f"the compiled trace failed: {type(exc).__name__}: {exc}\n{source}") from exc
        raise exception_at_user_line(exc, script.module.__file__, prefix="eager execution failed: ") from exc


def _frames(exc: BaseException):
    return traceback.extract_tb(exc.__traceback__)


def trace_script(
    target: str, *, device: str = "cpu", input_specs: list[str] | None = None, seed: int = 0,
    execute: bool = True, steps: list[Step] | None = None, check: bool = True, executor: str = "torch",
) -> JobResult:
    device = check_device(device)
    if executor not in EXECUTORS:
        raise UserError(f"unknown executor {executor!r} (known: {', '.join(EXECUTORS)})")
    path, entry_name = split_target(target)
    if execute:
        require_device(device, "run")
    script = load_script(path)
    main_mode = not input_specs and script.sample_inputs is None and bool(script.main_blocks)
    entry, fn, reason = choose_entry(script, entry_name, main_mode=main_mode)
    available = device_available(device)
    if isinstance(fn, torch.nn.Module) and available:
        fn.to(device)
    result = JobResult(script, entry, reason, device, executor=executor)
    if main_mode:
        _run_through_main(script, entry, fn, result, device=device, seed=seed, execute=execute,
                          stamp=not available, steps=steps or [], check=check, executor=executor)
        return result
    args, kwargs = _entry_inputs(script, input_specs, device, seed)
    program = _trace_entry(script, entry, fn, args, kwargs, device, stamp=not available)
    call = TracedCall(program, run_pipeline(program.trace, steps or [], check=check))
    if execute:
        call.report = _execute(call, compile_for(call.final, executor), fn, args, kwargs, seed, device, script)
    result.calls.append(call)
    return result


def _entry_inputs(script: Script, specs: list[str] | None, device: str, seed: int) -> tuple[tuple, dict]:
    if specs:
        return inputs_from_specs(specs, device if device_available(device) else "cpu", seed)
    if script.sample_inputs is None:
        raise UserError(
            f"{script.path}: no inputs: define sample_inputs(device) in the script "
            "or give them with --input (e.g. --input f32[3,4])"
        )
    torch.manual_seed(seed)
    try:
        return call_sample_inputs(script.sample_inputs, device)
    except Exception as exc:
        raise exception_at_user_line(exc, script.module.__file__, prefix="sample_inputs failed: ") from exc


def _signature(args: tuple, kwargs: dict) -> tuple:
    """What a compiled trace is specialised on: the containers (dict keys in their order,
    which a loop over the dict follows), tensor shapes, dtypes and devices, and constants."""
    # Keyword arguments bind by name: their order is no part of the call.
    return tree_key((args, dict(sorted(kwargs.items()))), _leaf_signature)


def _leaf_signature(obj) -> tuple:
    if isinstance(obj, torch.Tensor):
        return ("tensor", tuple(obj.shape), obj.dtype, str(obj.device))
    return (type(obj).__name__, obj if isinstance(obj, (int, float, bool, str, type(None))) else id(obj))


class _TracingEntry:
    """Stands in for the entry while the script's main block runs: traces each new
    input signature once, then runs the compiled trace and returns its result."""

    def __init__(self, fn, on_call: Callable):
        self._fn = fn
        self._on_call = on_call

    def __call__(self, *args, **kwargs):
        return self._on_call(args, kwargs)

    def __getattr__(self, name):  # module methods (eval, to, ...) reach the real module
        return getattr(self._fn, name)


def _run_through_main(script: Script, entry: str, fn, result: JobResult, *, device: str, seed: int,
                      execute: bool, stamp: bool, steps: list[Step], check: bool, executor: str) -> None:
    compiled_by_signature: dict[tuple, tuple[Callable, TracedProgram]] = {}

    def on_call(args, kwargs):
        key = _signature(args, kwargs)
        found = compiled_by_signature.get(key)
        if found is None:
            program = _trace_entry(script, entry, fn, args, kwargs, device, stamp)
            call = TracedCall(program, run_pipeline(program.trace, steps, check=check))
            compiled = compile_for(call.final, executor)
            if execute:
                state = torch.get_rng_state()
                call.report = _execute(call, compiled, fn, args, kwargs, seed, device, script)
                torch.set_rng_state(state)
            result.calls.append(call)
            found = compiled_by_signature[key] = (compiled, program)
        compiled, program = found
        if not execute:
            return fn(*args, **kwargs)
        return compiled(*program.inputs_for(args, kwargs))

    script.namespace[entry] = _TracingEntry(fn, on_call)
    try:
        run_main_blocks(script)
    except UserError:
        raise
    except Exception as exc:
        raise exception_at_user_line(exc, script.module.__file__, prefix="the script's main block failed: ") from exc
    finally:
        script.namespace[entry] = fn
    if not result.calls:
        raise UserError(f"{script.path}: the main block never called {entry}")
