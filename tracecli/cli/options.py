"""Options shared by the commands, and the error handling every command goes through."""

from __future__ import annotations

import contextlib
import math
import sys
import traceback
from collections.abc import Iterator
from enum import StrEnum
from typing import Annotated

import click
import typer

from tracecli.core.errors import UserError
from tracecli.core.verify import VerificationError
from tracecli.executors import EXECUTORS, CompiledRunError
from tracecli.executors.files import load_executor_file
from tracecli.jobs.batch import record_entry
from tracecli.jobs.runner import JobResult
from tracecli.passes.pipeline import Step, load_pass_file, parse_passes
from tracecli.render.calls_view import MAX_TRACES
from tracecli.render.console import make_console


class Color(StrEnum):
    auto = "auto"
    always = "always"
    never = "never"


class Format(StrEnum):
    text = "text"
    json = "json"


class Show(StrEnum):
    forward = "forward"
    backward = "backward"
    all = "all"


Target = Annotated[str, typer.Argument(metavar="SCRIPT[:ENTRY]", help="A Python script, optionally with the entry to trace.")]
ScriptArgs = Annotated[
    list[str] | None,
    typer.Argument(metavar="[-- SCRIPT_ARGS...]", show_default=False,
                   help="Arguments the script sees in sys.argv (sys.argv[0] is the script), after --."),
]
Device = Annotated[str, typer.Option("--device", "-d", help="Device to trace for (and run on): cpu, cuda:0, ...")]
Inputs = Annotated[
    list[str] | None,
    typer.Option("--input", "-i", metavar="SPEC",
                 help="An input instead of sample_inputs(): f32[3,4], i64[8], bool[2], 3, 2.5. Repeatable."),
]
Passes = Annotated[
    list[str] | None,
    typer.Option("--passes", "-p", metavar="P1,P2", help="Passes to run, in order: dce,cse,rename. Repeatable."),
]
PassFiles = Annotated[
    list[str] | None,
    typer.Option("--pass-file", metavar="FILE", help="A Python file that registers passes of your own. Repeatable."),
]
NoVerify = Annotated[bool, typer.Option("--no-verify", help="Skip the verifier after each pass.")]
Depth = Annotated[str, typer.Option("--depth", metavar="N|all", help="Subsymbol levels to show (0 hides them).")]
FormatOpt = Annotated[Format, typer.Option("--format", help="text, or one JSON object on stdout.")]
ColorOpt = Annotated[Color, typer.Option("--color", help="Colour output: auto (terminal only), always, never.")]
Seed = Annotated[int, typer.Option("--seed", help="RNG seed for inputs, the script's main block and both runs.")]
Executor = Annotated[
    str, typer.Option("--executor", "-e", metavar="NAME",
                      help="How the trace runs: torch (as printed), prims (lowered to prims, checks the decompositions), "
                           "inductor (fusion regions compiled by torch's inductor), or another registered executor "
                           "(`tracecli executors` lists them)."),
]
ExecutorFiles = Annotated[
    list[str] | None,
    typer.Option("--executor-file", metavar="FILE", help="A Python file that registers executors of your own. Repeatable."),
]
Debug = Annotated[bool, typer.Option("--debug", help="Show Python tracebacks for errors.")]
AllTraces = Annotated[
    bool, typer.Option("--all-traces", help=f"Print every distinct trace of a script's main block, not only the first {MAX_TRACES}."),
]
NoTiming = Annotated[
    bool, typer.Option("--no-timing", help="Skip timing eager and compiled calls (the script's code then runs once more, not N+1 times)."),
]
Fullgraph = Annotated[
    bool, typer.Option("--fullgraph", help="One trace or an error: a read of a tensor's value in the entry (loss.item(), "
                                          "a branch on a tensor) is refused at its line (exit 2) instead of cutting "
                                          "the trace into segments there."),
]
Grad = Annotated[
    bool, typer.Option("--grad", help="Also the backward of the outputs for every input and parameter that requires "
                                     "grad (cotangents of ones): printed after the forward, and run checks it "
                                     "against eager autograd."),
]
ShowOpt = Annotated[
    Show, typer.Option("--show", help="With --grad or a training step: print the forward, the backward, or all "
                                      "(both, the default)."),
]
Repeat = Annotated[
    int, typer.Option("--repeat", metavar="N", min=1,
                      help="Time eager and compiled calls as the median of N calls each, after a warm-up."),
]


Dynamic = Annotated[
    bool, typer.Option("--dynamic", help="Every dim of every tensor input is a symbol (s0, s1, ...): one trace for many sizes."),
]
Sizes = Annotated[
    list[str] | None,
    typer.Option("--sizes", metavar="N=SIZE,...",
                 help="One more call with these dim sizes (n=5,m=7), served by a trace whose guards hold. Repeatable."),
]

# The note on specialised arguments names --dynamic only where the running command
# accepts it.
DYNAMIC = "--dynamic"


def offered(option: str) -> str | None:
    """`option` if the running command accepts it, else None."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None and any(option in param.opts for param in ctx.command.params):
        return option
    return None


def parse_depth(text: str) -> float:
    if text == "all":
        return math.inf
    try:
        depth = int(text)
    except ValueError:
        raise UserError(f"bad --depth {text!r}: expected a number or 'all'") from None
    if depth < 0:
        raise UserError(f"bad --depth {text!r}: must be 0 or more")
    return depth


def check_seed(seed: int) -> int:
    # torch takes seeds that fit 64 bits, signed or not.
    if not -(2**63) <= seed < 2**64:
        raise UserError(f"bad --seed {seed}: must fit in 64 bits (-2**63 to 2**64 - 1)")
    return seed


def refuse_conflicts(given: dict[str, bool], conflicts: list[tuple[str, str, str]]) -> None:
    """Options that ask for outputs excluding each other are bad usage, not a silent choice.
    `conflicts` holds (option, option, why) and `given` says which options were given."""
    for first, second, why in conflicts:
        if given.get(first) and given.get(second):
            raise UserError(f"{first} and {second} cannot be used together: {why}")


@contextlib.contextmanager
def script_output(fmt: Format) -> Iterator[None]:
    """With --format json stdout carries one JSON object: what the script prints goes to stderr."""
    if fmt is Format.json:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    else:
        yield


def announce_entry(job: JobResult, color: Color) -> None:
    """Which entry tracecli chose, on stderr, when the user did not name it (and to the
    process that started this one for one of several scripts)."""
    record_entry(job.entry)
    if job.entry_reason != "given":
        make_console(color.value, stderr=True).print(
            f"tracecli: entry {job.entry} ({job.entry_reason})", markup=False, highlight=False
        )


def check_show(show: Show, grad: bool, job=None) -> None:
    """`--show` needs a backward: --grad's, or (once traced) a training step's own."""
    if show is Show.all or grad:
        return
    if job is not None and any(call.backward_stages for call in job.calls):
        return
    if job is not None:
        raise UserError(f"--show {show.value} needs a backward: --grad, or an entry that calls loss.backward()")


def load_executors(executor_files: list[str] | None) -> list[str]:
    """Load the users' executor files; the names of every executor known after."""
    for path in executor_files or []:
        load_executor_file(path)
    return sorted(EXECUTORS)


def pipeline_steps(passes: list[str] | None, pass_files: list[str] | None) -> list[Step]:
    for path in pass_files or []:
        load_pass_file(path)
    return parse_passes(passes)


def fail(debug: bool, color: Color, message: str, code: int, exc: BaseException | None = None):
    if debug and exc is not None:
        traceback.print_exception(exc, file=sys.stderr)
    make_console(color.value, stderr=True).print(f"tracecli: error: {message}", markup=False, highlight=False)
    raise typer.Exit(code)


def guarded(debug: bool, color: Color, work):
    """Run `work`, turning failures into one clear message and the contract's exit code."""
    try:
        return work()
    except UserError as exc:
        fail(debug, color, str(exc), 2, exc)
    except (VerificationError, CompiledRunError) as exc:
        fail(debug, color, str(exc), 1, exc)
    except KeyboardInterrupt:
        fail(debug, color, "interrupted", 130)
    except Exception as exc:  # a bug of ours: say so plainly, traceback on request
        fail(debug, color, f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)", 1, exc)
