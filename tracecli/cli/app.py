"""The `tracecli` command: thin typer commands over tracecli.jobs.runner."""

from __future__ import annotations

import gc
import sys
from typing import Annotated

import typer

from tracecli.cli import options as opt
from tracecli.cli.bisect_command import bisect
from tracecli.cli.diff_command import diff
from tracecli.cli.scripts import Jobs, Junit, ScriptsCommand, Targets, for_each_script
from tracecli.cli.snapshot_command import check, snapshot
from tracecli.executors import EXECUTORS
from tracecli.jobs.examine import examine_script
from tracecli.jobs.runner import DEFAULT_REPEAT, JobResult, trace_script
from tracecli.jobs.snapshots import versions
from tracecli.passes.base import REGISTRY
from tracecli.render.reports import ExamineReport, JobReport, emit

app = typer.Typer(
    add_completion=False, rich_markup_mode=None,
    help="Trace a PyTorch script, run passes over the trace, diff it, and check the compiled result against eager.",
)
app.command()(diff)
app.command()(snapshot)
app.command(cls=ScriptsCommand)(check)
app.command()(bisect)


def _version(value: bool) -> None:
    if value:
        installed = versions()
        sys.stdout.write(f"tracecli {installed['tracecli']} (torch {installed['torch']})\n")
        raise typer.Exit(0)


@app.callback(invoke_without_command=True)
def _main(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Show tracecli's and torch's versions and exit.")] = False,
) -> None:
    # `tracecli` alone is a request for help, not a mistake: the help, exit 0.
    if ctx.invoked_subcommand is None:
        sys.stdout.write(ctx.get_help() + "\n")
        raise typer.Exit(0)


def build_job(target, device, inputs, seed, fmt: opt.Format, steps, verify: bool, *, execute: bool,
              executor: str = "torch", script_args: list[str] | None = None, repeat: int = 0,
              dynamic: bool = False, sizes: list[str] | None = None, grad: bool = False,
              fullgraph: bool = True) -> JobResult:
    with opt.script_output(fmt):
        return trace_script(
            target, device=device, input_specs=inputs, seed=opt.check_seed(seed), execute=execute, steps=steps,
            check=verify, executor=executor, script_args=script_args, repeat=repeat, dynamic=dynamic, sizes=sizes,
            grad=grad, fullgraph=fullgraph,
        )


def _command(command: str, target, device, inputs, passes, pass_files, no_verify, depth, fmt, color, seed, debug,
             executor: str = "torch", script_args: list[str] | None = None, repeat: int = 0,
             all_traces: bool = False, dynamic: bool = False, sizes: list[str] | None = None,
             executor_files: list[str] | None = None, grad: bool = False, show: opt.Show = opt.Show.all,
             fullgraph: bool = True):
    def work():
        opt.load_executors(executor_files)
        levels = opt.parse_depth(depth)
        steps = opt.pipeline_steps(passes, pass_files)
        job = build_job(target, device, inputs, seed, fmt, steps, not no_verify, execute=command == "run",
                        executor=executor, script_args=script_args, repeat=repeat, dynamic=dynamic, sizes=sizes,
                        grad=grad, fullgraph=fullgraph)
        opt.check_show(show, grad, job)
        return job, levels

    job, levels = opt.guarded(debug, color, work)
    opt.announce_entry(job, color)
    emit(JobReport(command, job, levels, all_traces, opt.offered(opt.DYNAMIC), show.value), fmt.value, color.value)
    if not job.match:
        raise typer.Exit(1)


@app.command(cls=ScriptsCommand)
def run(
    context: typer.Context, targets: Targets, device: opt.Device = "cpu", inputs: opt.Inputs = None, passes: opt.Passes = None,
    pass_files: opt.PassFiles = None, no_verify: opt.NoVerify = False, depth: opt.Depth = "1",
    fmt: opt.FormatOpt = opt.Format.text, color: opt.ColorOpt = opt.Color.auto, seed: opt.Seed = 0,
    debug: opt.Debug = False, executor: opt.Executor = "torch", executor_files: opt.ExecutorFiles = None,
    no_timing: opt.NoTiming = False, repeat: opt.Repeat = DEFAULT_REPEAT, all_traces: opt.AllTraces = False, dynamic: opt.Dynamic = False,
    sizes: opt.Sizes = None, grad: opt.Grad = False, show: opt.ShowOpt = opt.Show.all, jobs: Jobs = None,
    junit: Junit = None, fullgraph: opt.Fullgraph = False,
) -> None:
    """Trace the entry, run the passes, execute the result and compare it with eager PyTorch (exit 1 on mismatch).
    Several scripts run each in its own process, then a summary; the exit code is the worst."""

    def one(target: str, script_args: list[str]) -> None:
        _command("run", target, device, inputs, passes, pass_files, no_verify, depth, fmt, color, seed, debug,
                 executor, script_args, repeat=0 if no_timing else repeat, all_traces=all_traces, dynamic=dynamic,
                 sizes=sizes, executor_files=executor_files, grad=grad, show=show, fullgraph=fullgraph)

    for_each_script(context, "run", targets, jobs, junit, color, fmt, debug, one)


@app.command()
def trace(
    target: opt.Target, script_args: opt.ScriptArgs = None, device: opt.Device = "cpu", inputs: opt.Inputs = None, passes: opt.Passes = None,
    pass_files: opt.PassFiles = None, no_verify: opt.NoVerify = False, depth: opt.Depth = "1",
    fmt: opt.FormatOpt = opt.Format.text, color: opt.ColorOpt = opt.Color.auto, seed: opt.Seed = 0,
    debug: opt.Debug = False, all_traces: opt.AllTraces = False, dynamic: opt.Dynamic = False,
    sizes: opt.Sizes = None, grad: opt.Grad = False, show: opt.ShowOpt = opt.Show.all,
    fullgraph: opt.Fullgraph = False,
) -> None:
    """Print the trace of the entry (after the passes); it runs only the segments a read of a value cuts it into."""
    _command("trace", target, device, inputs, passes, pass_files, no_verify, depth, fmt, color, seed, debug,
             script_args=script_args, all_traces=all_traces, dynamic=dynamic, sizes=sizes, grad=grad, show=show,
             fullgraph=fullgraph)


@app.command()
def passes(pass_files: opt.PassFiles = None, color: opt.ColorOpt = opt.Color.auto, debug: opt.Debug = False) -> None:
    """List the passes, each with its one-line description."""
    opt.guarded(debug, color, lambda: opt.pipeline_steps(None, pass_files))
    width = max(len(name) for name in REGISTRY)
    for name in sorted(REGISTRY):
        sys.stdout.write(f"{name.ljust(width)}  {REGISTRY[name].description}\n")


@app.command()
def executors(executor_files: opt.ExecutorFiles = None, color: opt.ColorOpt = opt.Color.auto,
              debug: opt.Debug = False) -> None:
    """List the executors, each with its one-line description."""
    names = opt.guarded(debug, color, lambda: opt.load_executors(executor_files))
    width = max(len(name) for name in names)
    for name in names:
        sys.stdout.write(f"{name.ljust(width)}  {EXECUTORS[name].description}\n")


@app.command(cls=ScriptsCommand)
def examine(
    context: typer.Context, targets: Targets, device: opt.Device = "cpu", inputs: opt.Inputs = None,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 when any op is opaque or the trace is cut "
                                                          "(a graph break).")] = False,
    fmt: opt.FormatOpt = opt.Format.text, color: opt.ColorOpt = opt.Color.auto, seed: opt.Seed = 0,
    debug: opt.Debug = False, jobs: Jobs = None, junit: Junit = None, fullgraph: opt.Fullgraph = False,
) -> None:
    """Which ops the program uses, which are modelled or opaque, where its trace is cut, and what could not be traced.
    Several scripts run each in its own process, then a summary; the exit code is the worst."""
    for_each_script(context, "examine", targets, jobs, junit, color, fmt, debug,
                    lambda target, script_args: _examine(target, script_args, device, inputs, strict, fmt, color,
                                                         seed, debug, fullgraph))


def _examine(target: str, script_args: list[str], device, inputs, strict, fmt, color, seed, debug,
             fullgraph: bool = False) -> None:
    def work():
        with opt.script_output(fmt):
            return examine_script(target, device=device, input_specs=inputs, seed=opt.check_seed(seed),
                                  script_args=script_args, fullgraph=fullgraph)

    report = opt.guarded(debug, color, work)
    if report.job is not None:
        opt.announce_entry(report.job, color)
    emit(ExamineReport(report), fmt.value, color.value)
    if report.untraceable:
        raise typer.Exit(1)
    if strict and (report.opaque or report.breaks):
        # One line a CI log shows: what --strict failed on (the report above says where).
        cuts = sum(b.count for b in report.breaks)
        failed = [f"{len(report.opaque)} opaque op{'s' if len(report.opaque) != 1 else ''}"] if report.opaque else []
        failed += [f"the trace is cut {cuts} time{'s' if cuts != 1 else ''} (graph breaks)"] if report.breaks else []
        typer.echo(f"tracecli: examine --strict fails: {' and '.join(failed)}", err=True)
        raise typer.Exit(1)


def main() -> None:
    # Everything imported so far (torch above all) lives as long as the process: keep the
    # garbage collector from rescanning it while a large trace allocates.
    gc.freeze()
    app(prog_name="tracecli")
