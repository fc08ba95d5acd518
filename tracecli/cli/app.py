"""The `tracecli` command: thin typer commands over tracecli.executors.runner."""

from __future__ import annotations

import contextlib
import json
import math
import sys
import traceback
from enum import Enum
from typing import Annotated

import typer

from tracecli.core.errors import UserError
from tracecli.core.verify import VerificationError
from tracecli.executors.runner import CompiledRunError, JobResult, trace_script
from tracecli.render.console import make_console
from tracecli.render.json_report import job_json
from tracecli.render.text import print_report, print_trace
from tracecli.core.printing import format_trace

app = typer.Typer(
    add_completion=False, no_args_is_help=True, rich_markup_mode=None,
    help="Trace a PyTorch script, print what the compiler sees, and check the compiled result against eager.",
)


class Color(str, Enum):
    auto = "auto"
    always = "always"
    never = "never"


class Format(str, Enum):
    text = "text"
    json = "json"


TargetArg = Annotated[str, typer.Argument(metavar="SCRIPT[:ENTRY]", help="A Python script, optionally with the entry to trace.")]
DeviceOpt = Annotated[str, typer.Option("--device", "-d", help="Device to trace for (and run on): cpu, cuda:0, ...")]
InputOpt = Annotated[
    list[str] | None,
    typer.Option("--input", "-i", metavar="SPEC", help="An input instead of sample_inputs(): f32[3,4], i64[8], bool[2], 3, 2.5. Repeatable."),
]
DepthOpt = Annotated[str, typer.Option("--depth", metavar="N|all", help="Subsymbol levels to show (0 hides them).")]
FormatOpt = Annotated[Format, typer.Option("--format", help="text, or one JSON object on stdout.")]
ColorOpt = Annotated[Color, typer.Option("--color", help="Colour output: auto (terminal only), always, never.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="RNG seed for inputs and for both runs.")]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show Python tracebacks for errors.")]


def _depth(text: str) -> float:
    if text == "all":
        return math.inf
    try:
        depth = int(text)
    except ValueError:
        raise UserError(f"bad --depth {text!r}: expected a number or 'all'") from None
    if depth < 0:
        raise UserError(f"bad --depth {text!r}: must be 0 or more")
    return depth


def _fail(debug: bool, color: Color, message: str, code: int, exc: BaseException | None = None) -> None:
    err = make_console(color.value, stderr=True)
    if debug and exc is not None:
        traceback.print_exception(exc, file=sys.stderr)
    err.print(f"tracecli: error: {message}", markup=False, highlight=False)
    raise typer.Exit(code)


def _guarded(debug: bool, color: Color, work):
    """Run `work`, turning failures into one clear message and the contract's exit code."""
    try:
        return work()
    except UserError as exc:
        _fail(debug, color, str(exc), 2, exc)
    except VerificationError as exc:
        _fail(debug, color, str(exc), 1, exc)
    except CompiledRunError as exc:
        _fail(debug, color, str(exc), 1, exc)
    except KeyboardInterrupt:
        _fail(debug, color, "interrupted", 130)
    except Exception as exc:  # a bug of ours: say so plainly, traceback on request
        _fail(debug, color, f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)", 1, exc)


def _announce_entry(job: JobResult, color: Color) -> None:
    if job.entry_reason != "given":
        make_console(color.value, stderr=True).print(
            f"tracecli: entry {job.entry} ({job.entry_reason})", markup=False, highlight=False
        )


def _emit(command: str, job: JobResult, depth: float, fmt: Format, color: Color) -> None:
    _announce_entry(job, color)
    if fmt is Format.json:
        sys.stdout.write(json.dumps(job_json(command, job, depth), indent=2) + "\n")
        return
    console = make_console(color.value)
    for i, call in enumerate(job.calls):
        if i:
            console.print()
        print_trace(console, format_trace(call.program.trace, depth))
        if call.report is not None:
            console.print()
            print_report(console, call.report)


def _job(target, device, inputs, seed, depth, fmt: Format, *, execute: bool) -> tuple[JobResult, float]:
    levels = _depth(depth)
    # With --format json stdout carries one JSON object: what the script prints goes to stderr.
    with contextlib.redirect_stdout(sys.stderr) if fmt is Format.json else contextlib.nullcontext():
        job = trace_script(target, device=device, input_specs=inputs, seed=seed, execute=execute)
    return job, levels


@app.command()
def run(
    target: TargetArg, device: DeviceOpt = "cpu", inputs: InputOpt = None, depth: DepthOpt = "1",
    format: FormatOpt = Format.text, color: ColorOpt = Color.auto, seed: SeedOpt = 0, debug: DebugOpt = False,
) -> None:
    """Trace the entry, execute the compiled trace and compare it with eager PyTorch (exit 1 on mismatch)."""

    job, levels = _guarded(debug, color, lambda: _job(target, device, inputs, seed, depth, format, execute=True))
    _emit("run", job, levels, format, color)
    if not job.match:
        raise typer.Exit(1)


@app.command()
def trace(
    target: TargetArg, device: DeviceOpt = "cpu", inputs: InputOpt = None, depth: DepthOpt = "1",
    format: FormatOpt = Format.text, color: ColorOpt = Color.auto, seed: SeedOpt = 0, debug: DebugOpt = False,
) -> None:
    """Print the trace of the entry without executing it (works for devices this machine lacks)."""

    job, levels = _guarded(debug, color, lambda: _job(target, device, inputs, seed, depth, format, execute=False))
    _emit("trace", job, levels, format, color)


def main() -> None:
    app(prog_name="tracecli")
