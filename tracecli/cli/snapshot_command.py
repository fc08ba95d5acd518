"""`tracecli snapshot` and `tracecli check`: golden traces for CI."""

from __future__ import annotations

from typing import Annotated

import typer

from tracecli.cli import options as opt
from tracecli.cli.scripts import Jobs, Junit, Targets, for_each_script
from tracecli.jobs import snapshots
from tracecli.jobs.batch import record_entry
from tracecli.render.check_view import CheckReport, SnapshotReport
from tracecli.render.reports import emit

Scripts = Annotated[list[str], typer.Argument(metavar="SCRIPT[:ENTRY]...", help="Scripts (globs too), each optionally with its entry.")]
Dir = Annotated[str, typer.Option("--dir", metavar="DIR", help="Where the snapshots are kept.")]
Update = Annotated[bool, typer.Option("--update", help="Rewrite the snapshots that differ or are missing (exit 0).")]
StrictLines = Annotated[bool, typer.Option("--strict-lines", help="A bound symbol whose source line moved is a difference.")]
# `check` retraces as the snapshot records; these, when given, replace what it records.
MaybePasses = Annotated[list[str] | None, typer.Option("--passes", "-p", metavar="P1,P2", help="Passes in place of the recorded ones.")]
MaybeDevice = Annotated[str | None, typer.Option("--device", "-d", help="Device in place of the recorded one.")]
MaybeSeed = Annotated[int | None, typer.Option("--seed", help="Seed in place of the recorded one.")]
MaybeDepth = Annotated[str | None, typer.Option("--depth", metavar="N|all", help="Subsymbol levels in place of the recorded ones.")]


def _depth(text: str) -> str:
    levels = opt.parse_depth(text)  # refuses what is not a depth
    return "all" if levels == float("inf") else str(int(levels))


def _passes(specs: list[str] | None) -> tuple[str, ...]:
    return tuple(item.strip() for spec in specs or [] for item in spec.split(","))


def snapshot(
    scripts: Scripts, folder: Dir, passes: opt.Passes = None, pass_files: opt.PassFiles = None,
    inputs: opt.Inputs = None, device: opt.Device = "cpu", seed: opt.Seed = 0, depth: opt.Depth = "1",
    fmt: opt.FormatOpt = opt.Format.text, color: opt.ColorOpt = opt.Color.auto, debug: opt.Debug = False,
    fullgraph: opt.Fullgraph = False,
) -> None:
    """Store each script's trace (after the passes) in DIR, for `tracecli check`; a call traced
    in segments stores them all, each with where the trace was cut."""

    def work():
        opt.pipeline_steps(passes, pass_files)  # unknown passes exit 2 before anything is traced
        settings = snapshots.Settings(_passes(passes), tuple(pass_files or ()), tuple(inputs or ()), device,
                            opt.check_seed(seed), _depth(depth))
        with opt.script_output(fmt):
            return snapshots.snapshot(scripts, folder, settings, fullgraph)

    made = opt.guarded(debug, color, work)
    emit(SnapshotReport(made, folder), fmt.value, color.value)


def check(
    context: typer.Context, scripts: Targets, folder: Dir, update: Update = False, strict_lines: StrictLines = False,
    pass_files: opt.PassFiles = None, passes: MaybePasses = None, inputs: opt.Inputs = None,
    device: MaybeDevice = None, seed: MaybeSeed = None, depth: MaybeDepth = None,
    fmt: opt.FormatOpt = opt.Format.text, color: opt.ColorOpt = opt.Color.auto, debug: opt.Debug = False,
    jobs: Jobs = None, junit: Junit = None, fullgraph: opt.Fullgraph = False,
) -> None:
    """Trace again and compare with the snapshots up to renaming (exit 1 when different or missing).
    Several scripts run each in its own process, then a summary; the exit code is the worst."""
    for_each_script(context, "check", scripts, jobs, junit, color, fmt, debug,
                    lambda target, script_args: _check([target], folder, update, strict_lines, pass_files, passes,
                                                       inputs, device, seed, depth, fmt, color, debug, fullgraph))


def _check(scripts: list[str], folder: str, update: bool, strict_lines: bool, pass_files, passes, inputs, device,
           seed, depth, fmt: opt.Format, color: opt.Color, debug: bool, fullgraph: bool = False) -> None:
    def work():
        opt.pipeline_steps(passes, pass_files)
        overrides = {
            "passes": _passes(passes) if passes else None, "pass_files": tuple(pass_files) if pass_files else None,
            "inputs": tuple(inputs) if inputs else None, "device": device,
            "seed": opt.check_seed(seed) if seed is not None else None,
            "depth": _depth(depth) if depth is not None else None,
        }
        with opt.script_output(fmt):
            return snapshots.check(scripts, folder, strict_lines=strict_lines, update=update, overrides=overrides,
                                   fullgraph=fullgraph)

    results = opt.guarded(debug, color, work)
    for result in results:
        if result.entry:
            record_entry(result.entry)
    report = CheckReport(results, folder, strict_lines)
    emit(report, fmt.value, color.value)
    if not report.ok:
        raise typer.Exit(1)
