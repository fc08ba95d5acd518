"""The main job: load a script, trace its entry, compile the trace and check it
against eager PyTorch. The CLI is a thin layer over `trace_script`."""

from __future__ import annotations

import contextlib
import itertools
import re
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import torch

from tracecli.core.errors import UserError
from tracecli.core.pytree import tree_key
from tracecli.core.regions import backward_trace
from tracecli.core.trace import Trace, TraceInfo
from tracecli.core.verify import VerificationError, verify
from tracecli.executors import EXECUTORS, CompiledRunError, compile_for
from tracecli.frontend.inputs import (
    call_sample_inputs,
    check_device,
    inputs_from_specs,
    parse_sizes,
    parse_spec,
)
from tracecli.frontend.loader import (
    Script,
    choose_entry,
    exception_at_user_line,
    is_module_class,
    load_script,
    run_main_blocks,
    script_argv,
    seed_everything,
)
from tracecli.frontend.memory import NoRoom
from tracecli.frontend.proxy import ProxyEscapedError
from tracecli.frontend.resize import dim_sizes, resized_arguments
from tracecli.frontend.source import location_of, user_frame
from tracecli.frontend.stand_ins import ValuesNeeded
from tracecli.frontend.state import DEPTH as STATE_DEPTH
from tracecli.frontend.symbolic import DimPolicy
from tracecli.frontend.tracer import TracedProgram, trace_callable
from tracecli.jobs.compare import RunReport, check_against_eager, quiet
from tracecli.jobs.devices import move_state, require_device, require_values, runs_here
from tracecli.jobs.gradients import check_gradients, differentiate
from tracecli.jobs.guards import Guard, guard_for
from tracecli.jobs.segments import SegmentRunner, check_segmented, replay
from tracecli.jobs.size_guards import SizeCheck, size_check
from tracecli.jobs.steps import trains
from tracecli.passes.grad import GradTraces
from tracecli.passes.pipeline import Stage, Step, run_pipeline

# Timed calls of eager and of the compiled trace each, by default (`--repeat`).
DEFAULT_REPEAT = 10

_ENTRY_SUFFIX = re.compile(r"^(?P<path>.+?):(?P<entry>[A-Za-z_][A-Za-z0-9_]*)$")


@dataclass
class TracedCall:
    program: TracedProgram
    stages: list[Stage] = field(default_factory=list)  # the initial trace, then one per pass
    report: RunReport | None = None
    # Which of the script's calls of the entry this trace answered (0-based, in call order):
    # a main block that calls with one signature again reuses the trace, and the views say so.
    served: list[int] = field(default_factory=lambda: [0])
    # Later calls it served that were compared with eager too (call number -> report):
    # what a guard does not look at (a number in a closure) shows there, not silently.
    rechecks: dict[int, RunReport] = field(default_factory=dict)
    # With --grad: the final trace's forward (saving what the backward reads) and backward,
    # and the backward's stages through the passes.
    grad: GradTraces | None = None
    grad_stages: list[Stage] = field(default_factory=list)
    # Traced in segments (jobs/segments.py): per segment, the break before it (None for the
    # first) and its stages through the passes.
    segments: list = field(default_factory=list)
    # Per call it served, the breaks that call met (the Python of each may go its own way).
    breaks_met: list[list] = field(default_factory=list)

    @property
    def final(self) -> Trace:
        return self.stages[-1].trace if self.stages else self.program.trace

    @property
    def backward_stages(self) -> list[Stage]:
        """The backward through the passes: --grad's, or the backward regions of a
        training step (its `loss.backward()`), each stage's as a trace of its own."""
        if self.grad_stages:
            return self.grad_stages
        views = [backward_trace(stage.trace) for stage in self.stages]
        if not views or any(view is None for view in views):
            return []
        return [replace(stage, trace=view) for stage, view in zip(self.stages, views, strict=True)]


@dataclass
class SizedCall:
    """One call of a run with symbolic sizes: the sizes, which trace served it (1-based,
    in `JobResult.calls`), whether that trace was reused, and if traced again, the guard
    of the newest trace that failed; then how it compared with eager."""

    sizes: dict[str, int]
    trace_index: int
    reused: bool
    retraced: str | None = None
    report: RunReport | None = None


@dataclass
class JobResult:
    script: Script
    entry: str
    entry_reason: str
    device: str
    calls: list[TracedCall] = field(default_factory=list)
    executor: str = "torch"
    # The symbols the executor ran itself (not as the torch executor runs them), over all calls.
    claimed: list[str] = field(default_factory=list)
    # With symbolic sizes (--dynamic, named dims, --sizes): one row per call.
    sized: list[SizedCall] = field(default_factory=list)
    symbolic: bool = False

    def compiled(self, trace: Trace) -> Callable:
        """The trace compiled for this job's executor, noting the symbols it claimed."""
        start = time.perf_counter()
        fn = compile_for(trace, self.executor)
        fn.__tracecli_compile_ms__ = (time.perf_counter() - start) * 1e3
        self.claimed.extend(name for name in fn.__tracecli_claimed__ if name not in self.claimed)
        return fn

    @property
    def executor_label(self) -> str:
        """`torch executor`; an executor that ran symbols itself says which."""
        if not self.claimed:
            return f"{self.executor} executor"
        return f"{self.executor} executor running {', '.join(self.claimed)}; torch the rest"

    @property
    def match(self) -> bool:
        return (all(c.report is None or c.report.match for c in self.calls)
                and all(r.match for c in self.calls for r in c.rechecks.values())
                and all(c.report is None or c.report.match for c in self.sized))


def split_target(target: str) -> tuple[str, str | None]:
    """`path/script.py:ENTRY` -> (path, ENTRY); a bare path has no entry."""
    m = _ENTRY_SUFFIX.match(target)
    if m and m.group("path").endswith(".py"):
        return m.group("path"), m.group("entry")
    return target, None


def autocast_state() -> tuple:
    """What a trace depends on beyond its inputs: torch.autocast's state per device type."""
    return tuple((torch.is_autocast_enabled(d), torch.get_autocast_dtype(d)) for d in ("cpu", "cuda"))


def _trace_entry(script: Script, entry: str, fn: Callable, args: tuple, kwargs: dict, device: str,
                 stamp: bool, dims: DimPolicy | None = None, found: Guard | None = None,
                 segments: SegmentRunner | None = None) -> TracedProgram:
    """`found`: the state the call found (`guard_for`), when the caller took it already.
    `segments`: where Python reads a value, the trace is cut and the piece run by it."""
    info = TraceInfo(script=script.display, entry=entry, device=device)
    found = guard_for(fn, args, kwargs) if found is None else found
    try:
        with quiet():  # the script's prints appear once, from its eager run
            program = trace_callable(fn, args, kwargs, device=device if stamp else None, info=info, name=entry,
                                     dims=dims, segments=segments)
    except UserError:
        raise
    except Exception as exc:
        raise exception_at_user_line(exc, script.module.__file__, prefix=f"{entry} raised while tracing: ") from exc
    changed = found.changes()
    if changed:
        # The trace runs the tensor ops only: the later calls it serves change none of it.
        # Said, not refused: a counter or a log the result does not depend on is common.
        program.notes.append(f"{entry} changes {', '.join(changed)} while it runs: the trace runs only the tensor "
                             "ops, so the later calls it serves change none of it, and what depends on it may differ "
                             f"from eager; keep such state out of {entry} (return the new value), or in a tensor")
    try:
        verify(program.trace)
    except VerificationError as exc:
        raise VerificationError(f"the traced program is invalid: {exc.problem}", exc.context) from exc
    return program


def escaped_state(exc: ProxyEscapedError, traces: list[Trace]) -> UserError:
    """A traced tensor left in Python state that tracing does not look into, met there
    since: said at the line that made it."""
    made = next((bsym for trace in traces for bsym in trace.bsyms
                 if any(v.name in exc.names for v in bsym.output_values())), None)
    what = ("a tensor made while tracing was kept in Python state tracecli does not look into (more than "
            f"{STATE_DEPTH} containers deep, or in an object it does not follow), and was used from there; keep such "
            "state in a module's attribute, a global, or a dict, list or object held by one")
    where = made.source if made is not None else None
    if where is None:
        return UserError(what)
    return UserError(what, file=where.file, line=where.line, source=where.text)


def _execute(call: TracedCall, compiled: Callable, fn: Callable, args: tuple, kwargs: dict, seed: int,
             device: str, script: Script, repeat: int, inputs: list | None = None) -> RunReport:
    require_values(call.program.trace)
    try:
        return check_against_eager(
            call.final, compiled, fn, args, kwargs, call.program, seed=seed, device=device, repeat=repeat,
            compile_ms=getattr(compiled, "__tracecli_compile_ms__", None),
            inputs=inputs,
        )
    except ProxyEscapedError as exc:
        raise escaped_state(exc, [call.program.trace]) from exc
    except Exception as exc:
        source = getattr(compiled, "__tracecli_source__", "")
        if any(f.filename.startswith("<trace ") for f in _frames(exc)):
            raise CompiledRunError(f"the compiled trace failed: {type(exc).__name__}: {exc}\n{source}") from exc
        raise exception_at_user_line(exc, script.module.__file__, prefix="eager execution failed: ") from exc


class _ServesAll:
    """The guard of a program traced in segments: each call is traced again as it runs."""

    @staticmethod
    def holds() -> bool:
        return True


_SERVES_ALL = _ServesAll()
_SEGMENTED = object()  # in place of a compiled trace: the call is served in segments


def _recheck_due(reuse: int) -> bool:
    """Whether the `reuse`-th later call a trace serves (1, 2, ...) is compared with eager
    too: the first four, then the 8th, 16th, 32nd, ...: a long loop costs a few."""
    return reuse <= 4 or reuse & (reuse - 1) == 0


def _frames(exc: BaseException):
    return traceback.extract_tb(exc.__traceback__)


def trace_script(
    target: str, *, device: str = "cpu", input_specs: list[str] | None = None, seed: int = 0,
    execute: bool = True, steps: list[Step] | None = None, check: bool = True, executor: str = "torch",
    script_args: list[str] | None = None, repeat: int = DEFAULT_REPEAT, dynamic: bool = False, sizes: list[str] | None = None,
    grad: bool = False, fullgraph: bool = True,
) -> JobResult:
    """`dynamic`: every dim of every tensor argument is a symbol; `sizes` (`n=5,m=7`):
    one more call at those sizes each, served by a trace whose guards hold if there is one.
    `grad`: also the backward of the outputs for every input that requires grad.
    `fullgraph`: a read of a tensor's value is refused at its line; without, the trace is
    cut there and the call runs in segments (jobs/segments.py)."""
    device = check_device(device)
    if executor not in EXECUTORS:
        raise UserError(f"unknown executor {executor!r} (known: {', '.join(sorted(EXECUTORS))}; "
                        "--executor-file loads your own)")
    path, entry_name = split_target(target)
    if execute:
        require_device(device, "run")
    # The script sees its own command line, as when run with python: argv[0] is the script.
    with script_argv(path, script_args or []):
        return _trace_script(path, entry_name, device=device, input_specs=input_specs, seed=seed,
                             execute=execute, steps=steps, check=check, executor=executor, repeat=repeat,
                             dynamic=dynamic, size_calls=parse_sizes(sizes or []), grad=grad,
                             fullgraph=fullgraph)


def _dim_policy(input_specs: list[str] | None, dynamic: bool, size_calls: list[dict[str, int]]) -> DimPolicy | None:
    specs = [parse_spec(s) for s in input_specs or []]
    named = tuple(spec.dim_names if spec.dtype is not None else None for spec in specs)
    policy = DimPolicy(dynamic=dynamic, named=named)
    if not policy.symbolic:
        if size_calls:
            raise UserError("--sizes needs symbolic dims: add --dynamic, or name dims in --input (f32[n,4])")
        return None
    names = {name for spec_names in named if spec_names for name in spec_names if name}
    if names and not size_calls:
        raise UserError(f"--input names dims ({', '.join(sorted(names))}): give their sizes with --sizes "
                        f"({','.join(f'{n}=5' for n in sorted(names))}; repeatable, one call each)")
    missing = names - set(size_calls[0]) if names else set()
    if missing:
        raise UserError(f"the first --sizes must give every named dim: {', '.join(sorted(missing))} missing")
    return policy


def _trace_script(path: str, entry_name: str | None, *, device: str, input_specs: list[str] | None, seed: int,
                  execute: bool, steps: list[Step] | None, check: bool, executor: str, repeat: int,
                  dynamic: bool = False, size_calls: list[dict[str, int]] | None = None, grad: bool = False,
                  fullgraph: bool = True) -> JobResult:
    size_calls = size_calls or []
    policy = _dim_policy(input_specs, dynamic, size_calls)
    script = load_script(path)
    main_mode = not input_specs and script.sample_inputs is None and bool(script.main_blocks)
    if grad and policy is not None:
        raise UserError("--grad works with static shapes: not yet with symbolic sizes")
    if main_mode and size_calls:
        raise UserError("--sizes makes calls from sample_inputs() or --input; this script's main block makes its "
                        "own calls (--dynamic alone makes their dims symbolic)")
    entry, fn, reason = choose_entry(script, entry_name, main_mode=main_mode)
    if is_module_class(fn, script) and not main_mode:
        fn = _instantiate(script, entry, fn)
    available = runs_here(device)
    if available and not main_mode:
        move_state(device, fn, script.namespace)
    result = JobResult(script, entry, reason, device, executor=executor, symbolic=policy is not None)
    if main_mode:
        _run_through_main(script, entry, fn, result, device=device, seed=seed, execute=execute, repeat=repeat,
                          stamp=not available, steps=steps or [], check=check, executor=executor, dims=policy,
                          grad=grad, fullgraph=fullgraph)
        return result
    if policy is not None:
        _run_sizes(script, entry, fn, result, policy, input_specs, size_calls, device=device, seed=seed,
                   execute=execute, repeat=repeat, stamp=not available, steps=steps or [], check=check,
                   executor=executor, fullgraph=fullgraph)
        return result
    # Segments run where the trace is cut: on a device this machine has.
    runner = None if fullgraph or not available else SegmentRunner(executor, steps or [], check, shadow=True)
    program = None
    if input_specs and not execute:
        args, kwargs, program = _trace_on_stand_ins(script, entry, fn, input_specs, device, seed, fullgraph,
                                                    available)
    else:
        args, kwargs = _entry_inputs(script, input_specs, device, seed)
    if program is None:
        program = _trace_entry(script, entry, fn, args, kwargs, device, stamp=not available, segments=runner)
    if program.in_segments:
        result.calls.append(_segmented(script, entry, program, runner, fn, args, kwargs, device=device, seed=seed,
                                       execute=execute, repeat=repeat, grad=grad))
        return result
    call = TracedCall(program, run_pipeline(program.trace, steps or [], check=check))
    if grad:
        _differentiate(call, entry, steps or [], check)
    compiled = result.compiled(call.final)  # `trace` too: a printed trace is runnable code
    if execute:
        call.report = _execute(call, compiled, fn, args, kwargs, seed, device, script, repeat)
        _check_gradients(call, script, fn, args, kwargs, seed, device, executor)
    result.calls.append(call)
    return result


def _trace_on_stand_ins(script: Script, entry: str, fn, input_specs: list[str], device: str, seed: int,
                        fullgraph: bool, available: bool) -> tuple[tuple, dict, TracedProgram | None]:
    """The trace of a call on its `--input`s' stand-ins (frontend/stand_ins.py): tracing
    reads only their shapes, dtypes and devices, so an input of any size costs nothing.
    A program that reads a value has its trace cut there and the piece before it run,
    which needs real inputs: then the real inputs and no program (None), and the caller
    traces the call again on them (the Python state the entry wrote before the read is
    put back first: trace_callable). `available`: whether `device` runs here."""
    args, kwargs = _entry_inputs(script, input_specs, device, seed, values=False)
    # The same runner or none as on real inputs, so that every other decision is the same.
    runner = _StandInRunner() if not fullgraph and available else None
    try:
        return args, kwargs, _trace_entry(script, entry, fn, args, kwargs, device, stamp=not available,
                                          segments=runner)
    except ValuesNeeded as needed:
        try:
            args, kwargs = _entry_inputs(script, input_specs, device, seed)
        except NoRoom as exc:
            where = needed.where
            raise UserError(f"the trace is cut here to read a value, which needs the inputs' values: {exc.shortage}",
                            file=where.file if where else None, line=where.line if where else None,
                            source=where.text if where else "") from None
        return args, kwargs, None


class _StandInRunner:
    """The segment runner of a call traced on stand-ins: it has nothing to run a segment
    on, so the first cut stops the tracing."""

    shadow = False

    def run(self, segment: Trace, inputs: list, last: bool) -> list | None:
        if last:
            return None  # the call's end, which a traced call does not run
        frame = user_frame(sys._getframe(1))
        raise ValuesNeeded(location_of(frame) if frame is not None else None)

    def ran(self, segment: Trace) -> None:
        pass


def _segmented(script: Script, entry: str, program: TracedProgram, runner: SegmentRunner, fn, args: tuple,
               kwargs: dict, *, device: str, seed: int, execute: bool, repeat: int, grad: bool,
               eager: Callable | None = None, dims: DimPolicy | None = None) -> TracedCall:
    """A call whose trace was cut where Python read a value: its segments through the
    passes, and with `execute`, served by them and compared with eager."""
    if grad:
        cut = program.segments[1].after
        where = f" at {cut.source.file}:{cut.source.line}" if cut.source is not None else ""
        raise UserError(f"--grad differentiates what one trace returns, and {entry} is traced in segments (Python "
                        f"reads a value{where}: {cut.reason}); run it without --grad, or with --fullgraph to see the "
                        "read refused")
    call = TracedCall(program, [Stage("initial", program.trace)], segments=runner.traced(program.segments))
    if execute:
        try:
            call.report = check_segmented(program, runner, fn, args, kwargs, seed=seed, device=device, repeat=repeat,
                                          options=_replay_options(entry, program, dims), eager=eager)
        except UserError:
            raise
        except ProxyEscapedError as exc:
            raise escaped_state(exc, [program.trace]) from exc
        except Exception as exc:
            raise exception_at_user_line(exc, script.module.__file__, prefix="eager execution failed: ") from exc
    return call


def _replay_options(entry: str, program: TracedProgram, dims: DimPolicy | None = None) -> dict:
    """How a call of a program traced in segments is traced again when served: with
    symbolic sizes (`dims`), so a segment's code serves every size its guards allow."""
    return {"name": entry, "info": program.trace.info, "dims": dims}


def _sample_grads(script: Script, device: str) -> list | None:
    """The cotangents the script's `sample_grads(device)` gives (a tensor or a sequence)."""
    if script.sample_grads is None:
        return None
    try:
        given = script.sample_grads(device)
    except Exception as exc:
        raise exception_at_user_line(exc, script.module.__file__, prefix="sample_grads failed: ") from exc
    return [given] if isinstance(given, torch.Tensor) else list(given)


def _instantiate(script: Script, entry: str, cls: type) -> torch.nn.Module:
    """`SCRIPT:Net` with inputs given: an instance made with no arguments, as the class
    would be in a test (its construction is not traced)."""
    try:
        return cls()
    except TypeError as exc:
        raise UserError(
            f"{script.path}: {entry} is an nn.Module class whose constructor needs arguments ({exc}); name an "
            f"instance the script makes, or let the script's main block create and call it"
        ) from None
    except Exception as exc:
        raise exception_at_user_line(exc, script.module.__file__, prefix=f"{entry}() failed: ") from exc


def _run_sizes(script: Script, entry: str, fn, result: JobResult, policy: DimPolicy, input_specs: list[str] | None,
               size_calls: list[dict[str, int]], *, device: str, seed: int, execute: bool, repeat: int, stamp: bool,
               steps: list[Step], check: bool, executor: str, fullgraph: bool = True) -> None:
    """One call per size: the example's (sample_inputs, or the first --sizes with named
    dims), then each --sizes. A call runs the newest trace whose size check passes, or is
    traced again; every call is compared with eager. A program traced in segments serves
    every call by tracing it again, its segments' code made once for every size."""
    named = policy.has_named
    given = list(size_calls) if named else [{}, *size_calls]
    example_args, example_kwargs = _entry_inputs(script, input_specs, device, seed, given[0])
    cache: list[tuple[SizeCheck, Callable, TracedCall, int]] = []
    first: Trace | None = None
    segmented: tuple[TracedProgram, TracedCall, SegmentRunner] | None = None
    for number, sizes_given in enumerate(given):
        if number == 0:
            args, kwargs, sizes = example_args, example_kwargs, {}
        else:
            assert first is not None
            sizes = dim_sizes(first, {**given[0], **sizes_given} if named else sizes_given)
            generator = torch.Generator().manual_seed(seed + number)
            args, kwargs = resized_arguments(fn, example_args, example_kwargs, first, sizes, generator)
        if number == 0 and not fullgraph and not stamp:
            runner = SegmentRunner(executor, steps, check, shadow=True)
            program = _trace_entry(script, entry, fn, args, kwargs, device, stamp, policy, segments=runner)
            if program.in_segments:
                call = _segmented(script, entry, program, runner, fn, args, kwargs, device=device, seed=seed,
                                  execute=execute, repeat=repeat, grad=False, dims=policy)
                call.served = [number]
                result.calls.append(call)
                result.sized.append(SizedCall(_sizes_of(program.trace, sizes, args, kwargs, program), 1, False,
                                              report=call.report))
                segmented = (program, call, runner)
                first = program.trace
                continue
        if segmented is not None:
            program, call, runner = segmented
            call.served.append(number)
            row = SizedCall(_sizes_of(program.trace, sizes, args, kwargs, program), 1, True)
            if execute:
                row.report = check_segmented(program, runner, fn, args, kwargs, seed=seed, device=device,
                                             options=_replay_options(entry, program, policy))
            result.sized.append(row)
            continue
        found, failed = None, None
        for check_sizes, compiled, call, index in reversed(cache):
            failure = check_sizes.failure(call.program.inputs_for(args, kwargs))
            if failure is None:
                found = (compiled, call, index)
                break
            failed = failed or failure
        if found is None:
            program = _trace_entry(script, entry, fn, args, kwargs, device, stamp, policy)
            call = TracedCall(program, run_pipeline(program.trace, steps, check=check), served=[])
            compiled = result.compiled(call.final)
            result.calls.append(call)
            found = (compiled, call, len(result.calls))
            # The check of the trace that runs, spelled as it prints (after rename: `rows`).
            cache.append((size_check(call.final), *found))
            first = first or program.trace
        compiled, call, index = found
        call.served.append(number)
        reused = call.served[0] != number  # this trace served an earlier call
        row = SizedCall(_sizes_of(call.final, sizes, args, kwargs, call.program), index, reused,
                        retraced=None if reused else failed)
        if execute:
            row.report = _execute(call, compiled, fn, args, kwargs, seed, device, script, repeat,
                                  inputs=call.program.inputs_for(args, kwargs))
            if call.report is None:
                call.report = row.report
        result.sized.append(row)


def _sizes_of(trace: Trace, sizes: dict[str, int], args: tuple, kwargs: dict, program: TracedProgram) -> dict:
    """Each size symbol's value at this call, read from its inputs where the dims say."""
    objects = dict(zip((v.name for v in trace.inputs), program.inputs_for(args, kwargs), strict=False))
    out = {}
    for info in trace.dims:
        if info.unbacked:
            continue  # the data's, not the call's
        tensor, _, axis = info.origin.partition(".shape[")
        obj = objects.get(tensor)
        out[info.name] = int(obj.shape[int(axis.rstrip("]"))]) if isinstance(obj, torch.Tensor) else sizes.get(info.name)
    return out


def _entry_inputs(script: Script, specs: list[str] | None, device: str, seed: int,
                  sizes: dict[str, int] | None = None, *, values: bool = True) -> tuple[tuple, dict]:
    """Without `values`, the `--input`s are stand-ins that hold no memory (for tracing only)."""
    if specs:
        return inputs_from_specs(specs, device if runs_here(device) else "cpu", seed, sizes, values=values)
    if script.sample_inputs is None:
        raise UserError(
            f"{script.path}: no inputs: define sample_inputs(device) in the script "
            "or give them with --input (e.g. --input f32[3,4])"
        )
    seed_everything(seed)
    try:
        return call_sample_inputs(script.sample_inputs, device)
    except Exception as exc:
        raise exception_at_user_line(exc, script.module.__file__, prefix="sample_inputs failed: ") from exc


def _signature(args: tuple, kwargs: dict, symbolic: bool = False) -> tuple:
    """What a compiled trace is specialised on: the containers (dict keys in their order,
    which a loop over the dict follows), tensor shapes, dtypes and devices, and constants.
    With symbolic sizes, tensor ranks instead of shapes: the trace's size check does the rest."""
    # Keyword arguments bind by name: their order is no part of the call.
    return tree_key((args, dict(sorted(kwargs.items()))), _leaf_rank if symbolic else _leaf_signature)


def _leaf_signature(obj) -> tuple:
    if isinstance(obj, torch.Tensor):
        # Contiguity too: whether a reshape of it is a view (which writes reach) depends on it.
        return ("tensor", tuple(obj.shape), obj.dtype, str(obj.device), obj.is_contiguous())
    return (type(obj).__name__, obj if isinstance(obj, (int, float, bool, str, type(None))) else id(obj))


def _leaf_rank(obj) -> tuple:
    if isinstance(obj, torch.Tensor):
        return ("tensor", obj.dim(), obj.dtype, str(obj.device), obj.is_contiguous())
    return _leaf_signature(obj)


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


def _differentiate(call: TracedCall, entry: str, steps: list[Step], check: bool) -> None:
    """--grad: the backward of the call's final trace, through the passes."""
    if trains(call.final):
        raise UserError(f"--grad differentiates what {entry} returns, and {entry} runs a backward of its own "
                        "(loss.backward()): run it without --grad to see its backward")
    call.grad, call.grad_stages = differentiate(call.final, call.program, entry, steps, check=check)


def _check_gradients(call: TracedCall, script: Script, fn, args: tuple, kwargs: dict, seed: int, device: str,
                     executor: str) -> None:
    if call.grad is not None and call.report is not None:
        call.report.gradients = check_gradients(call.grad, call.final, call.program, fn, args, kwargs, seed=seed,
                                                executor=executor, cotangents=_sample_grads(script, device))


def _run_through_main(script: Script, entry: str, fn, result: JobResult, *, device: str, seed: int,
                      execute: bool, repeat: int, stamp: bool, steps: list[Step], check: bool, executor: str,
                      dims: DimPolicy | None = None, grad: bool = False, fullgraph: bool = True) -> None:
    # Per signature, the traces made for it so far, each with what it took for granted
    # (and with symbolic sizes, the size check a call must pass).
    compiled_by_signature: dict[tuple, list[tuple[Guard, SizeCheck | None, Callable, TracedProgram, TracedCall]]] = {}
    busy = []  # set while tracing or checking a call: the entry's own calls then run as they are
    call_numbers = itertools.count()

    def on_call(target, run_eagerly: Callable, args, kwargs):
        number = next(call_numbers)
        # One trace per callable (each instance of a module class has its own weights) and signature.
        # The grad mode too: the calls a trace runs under the entry's own mode change with it.
        key = (id(target), _signature(args, kwargs, dims is not None), autocast_state(), torch.is_grad_enabled())
        made = compiled_by_signature.setdefault(key, [])
        found, failed = None, None
        for guard, sizes_ok, *rest in reversed(made):  # the newest trace first
            if not guard.holds() or not rest[1].writes_same_places(args, kwargs):
                continue
            failure = sizes_ok.failure(rest[1].inputs_for(args, kwargs)) if sizes_ok is not None else None
            if failure is None:
                found = rest
                break
            failed = failed or failure
        if found is None:
            # What the trace takes for granted is the state the call found: read before the
            # entry runs, since it may change it (`model.train()` at its start).
            found_state = guard_for(target, args, kwargs)
            busy.append(True)
            runner = None if fullgraph or stamp else SegmentRunner(executor, steps, check, True)
            try:
                program = _trace_entry(script, entry, target, args, kwargs, device, stamp, dims, found_state, runner)
                if program.in_segments:
                    # Cut where Python read a value: every call of this signature is traced
                    # again as it runs, its segments run compiled (jobs/segments.py).
                    state = torch.get_rng_state()
                    call = _segmented(script, entry, program, runner, target, args, kwargs, device=device, seed=seed,
                                      execute=execute, repeat=repeat, grad=grad, eager=run_eagerly, dims=dims)
                    call.served = []
                    torch.set_rng_state(state)
                    result.calls.append(call)
                    made.append((_SERVES_ALL, None, _SEGMENTED, program, call, runner, []))
                    return _served_in_segments(program, call, runner, target, run_eagerly, args, kwargs, number)
                call = TracedCall(program, run_pipeline(program.trace, steps, check=check), served=[])
                if grad:
                    _differentiate(call, entry, steps, check)
                compiled = result.compiled(call.final)
                if execute:
                    state = torch.get_rng_state()
                    call.report = _execute(call, compiled, run_eagerly, args, kwargs, seed, device, script, repeat)
                    _check_gradients(call, script, run_eagerly, args, kwargs, seed, device, executor)
                    torch.set_rng_state(state)
            finally:
                busy.pop()
            result.calls.append(call)
            # The train/eval modes the entry set (`model.train()` at its start): the trace
            # runs only the tensor ops, so each call it serves sets them as the entry did.
            modes_set = [(module, module.training) for module, was in found_state.modes if module.training != was]
            # Whether the trace runs a backward of its own: asked once, not on every call it serves.
            found = (compiled, program, call, trains(call.final), modes_set)
            checks = size_check(program.trace) if dims is not None else None
            guard = replace(found_state, scalars=found_state.scalars + list(program.settings),
                            homes=list(program.homes), rereads=[(home, kind) for _, home, kind in program.rereads],
                            grad_needs=[(t, t.requires_grad) for t in program.state if isinstance(t, torch.Tensor)])
            made.append((guard, checks, *found))
        compiled, program, call, training, modes_set = found
        if compiled is _SEGMENTED:
            return _served_in_segments(program, call, training, target, run_eagerly, args, kwargs, number)
        call.served.append(number)
        if dims is not None:
            reused = call.served[0] != number
            row = SizedCall(_sizes_of(program.trace, {}, args, kwargs, program), result.calls.index(call) + 1,
                            reused, retraced=None if reused else failed, report=call.report if not reused else None)
            if reused and execute:  # every call is compared with eager, not only the first of a trace
                busy.append(True)
                try:
                    state = torch.get_rng_state()
                    row.report = _execute(call, compiled, run_eagerly, args, kwargs, seed, device, script, 0,
                                          inputs=program.inputs_for(args, kwargs))
                    torch.set_rng_state(state)
                finally:
                    busy.pop()
            result.sized.append(row)
        elif execute and not program.first_step and call.served[0] != number and _recheck_due(len(call.served) - 1):
            busy.append(True)
            try:
                state = torch.get_rng_state()
                with quiet():  # the entry's own prints come from the calls it was traced for, as before
                    call.rechecks[number] = _execute(call, compiled, run_eagerly, args, kwargs, seed, device, script,
                                                     0, inputs=program.inputs_for(args, kwargs))
                torch.set_rng_state(state)
            finally:
                busy.pop()
        if not execute or program.first_step:
            return run_eagerly(*args, **kwargs)
        for module, mode in modes_set:
            module.training = mode
        if training:
            with torch.no_grad():  # the trace runs its own backward
                return compiled(*program.inputs_for(args, kwargs))
        return compiled(*program.inputs_for(args, kwargs))

    def _served_in_segments(program, call, runner, target, run_eagerly, args, kwargs, number):
        """A call of a program traced in segments: traced again as it runs (the Python
        between its segments runs for real), and compared with eager too when due."""
        call.served.append(number)
        busy.append(True)
        try:
            later = len(call.served) - 1
            # With symbolic sizes every call is compared, as a call a whole trace serves is.
            due = later and (dims is not None or _recheck_due(later))
            if execute and due:
                state = torch.get_rng_state()
                with quiet():
                    call.rechecks[number] = check_segmented(program, runner, target, args, kwargs, seed=seed,
                                                            device=device, options=_replay_options(entry, program, dims),
                                                            eager=run_eagerly)
                torch.set_rng_state(state)
            if dims is not None:
                result.sized.append(SizedCall(_sizes_of(program.trace, {}, args, kwargs, program),
                                              result.calls.index(call) + 1, bool(later),
                                              report=call.rechecks.get(number) if later else call.report))
            # The first call's Python printed already, in the check's eager run.
            with quiet() if not later and call.report is not None else contextlib.nullcontext():
                got = replay(target, args, kwargs, runner, **_replay_options(entry, program, dims))
            call.breaks_met.append(runner.breaks_met)
            return got
        finally:
            busy.pop()

    if isinstance(fn, type):
        # `SCRIPT:Net`: the calls of every instance of Net the script makes.
        original_call = fn.__dict__.get("__call__")

        def call_instance(module, *args, **kwargs):
            def run_eagerly(*args, **kwargs):
                return torch.nn.Module.__call__(module, *args, **kwargs)

            return run_eagerly(*args, **kwargs) if busy else on_call(module, run_eagerly, args, kwargs)

        fn.__call__ = call_instance
    else:
        script.namespace[entry] = _TracingEntry(fn, lambda args, kwargs: on_call(fn, fn, args, kwargs))
    seed_everything(seed)
    try:
        run_main_blocks(script)
    except UserError:
        raise
    except SystemExit as exc:
        # `sys.exit(main())` ends a script that went well: only a failure status is one.
        if exc.code not in (None, 0):
            raise UserError(f"{script.path}: the script's main block exited with status {exc.code}") from None
    except ProxyEscapedError as exc:
        raise escaped_state(exc, [call.program.trace for call in result.calls]) from exc
    except Exception as exc:
        raise exception_at_user_line(exc, script.module.__file__, prefix="the script's main block failed: ") from exc
    finally:
        if not isinstance(fn, type):
            script.namespace[entry] = fn
        elif original_call is None:
            del fn.__call__
        else:
            fn.__call__ = original_call
    if not result.calls:
        what = f"an instance of {entry}" if isinstance(fn, type) else entry
        raise UserError(f"{script.path}: the main block never called {what}")
