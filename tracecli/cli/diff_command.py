"""`tracecli diff`: the trace before vs after the pipeline."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Annotated

import typer

from tracecli.cli import options as opt
from tracecli.core.errors import UserError
from tracecli.core.printing import format_trace
from tracecli.executors.runner import trace_script
from tracecli.passes.pipeline import known_passes
from tracecli.render.calls_view import show_groups
from tracecli.render.console import make_console
from tracecli.render.diff import text_diff
from tracecli.render.diff_report import describe, diff_json, stat_rows, step_diffs, whole_diff
from tracecli.render.diff_view import print_diff, print_side_by_side, print_stat, print_text_diff
from tracecli.render.groups import group_calls
from tracecli.render.json_report import FORMAT_VERSION, grouping_json
from tracecli.render.save import check_saveable, save_stages

Each = Annotated[bool, typer.Option("--each", help="One diff per pass that changed something.")]
SideBySide = Annotated[bool, typer.Option("--side-by-side", help="Two columns, changes within a line highlighted.")]
Stat = Annotated[bool, typer.Option("--stat", help="Per-pass summary: +added -removed ~renamed, merged, time.")]
ExitCode = Annotated[bool, typer.Option("--exit-code", help="Exit 1 when the passes changed something, 0 when not.")]
Save = Annotated[str | None, typer.Option("--save", metavar="DIR", help="Write each stage as a runnable file, plus report.json.")]
PlainText = Annotated[bool, typer.Option("--text", help="A plain unified text diff, without value identity.")]

# Each of these asks for a different output; --each and --side-by-side combine (each pass in two columns).
_JSON = "--format json prints the whole structured diff, which {} does not shape"
CONFLICTS = [
    ("--text", "--side-by-side", "--text is one plain unified diff, --side-by-side two columns"),
    ("--text", "--stat", "--text is a unified diff, --stat a per-pass summary"),
    ("--text", "--each", "--text diffs the whole pipeline at once, --each one pass at a time"),
    ("--stat", "--side-by-side", "--stat is a per-pass summary table, not a diff to lay out"),
    ("--stat", "--each", "--stat already has one row per pass"),
    *(("--format json", option, _JSON.format(option)) for option in ("--text", "--side-by-side", "--stat", "--each")),
]


def diff(
    target: opt.Target, script_args: opt.ScriptArgs = None, passes: opt.Passes = None, each: Each = False, side_by_side: SideBySide = False,
    stat: Stat = False, exit_code: ExitCode = False, save: Save = None, text: PlainText = False,
    device: opt.Device = "cpu", inputs: opt.Inputs = None, pass_files: opt.PassFiles = None,
    no_verify: opt.NoVerify = False, depth: opt.Depth = "1", fmt: opt.FormatOpt = opt.Format.text,
    color: opt.ColorOpt = opt.Color.auto, seed: opt.Seed = 0, debug: opt.Debug = False,
    all_traces: opt.AllTraces = False, dynamic: opt.Dynamic = False,
) -> None:
    """Show how the passes change the trace (like git diff: --exit-code, --stat, --save)."""

    def work():
        given = {"--text": text, "--side-by-side": side_by_side, "--stat": stat, "--each": each,
                 "--format json": fmt is opt.Format.json}
        opt.refuse_conflicts(given, CONFLICTS)
        levels = opt.parse_depth(depth)
        steps = opt.pipeline_steps(passes, pass_files)
        if not steps:
            raise UserError(f"diff needs passes to compare against, e.g. -p dce,cse,rename (known passes: {known_passes()})")
        if save is not None and os.path.exists(save) and not os.path.isdir(save):
            raise UserError(f"--save {save}: exists and is not a directory")
        with contextlib.redirect_stdout(sys.stderr) if fmt is opt.Format.json else contextlib.nullcontext():
            job = trace_script(target, device=device, input_specs=inputs, seed=opt.check_seed(seed), execute=False,
                               steps=steps, check=not no_verify, script_args=script_args, dynamic=dynamic)
        reports = [diff_json(job, call.stages, levels) for call in job.calls]
        if save is not None:
            for call in job.calls:  # every call's files or none
                check_saveable(call.stages)
            for i, (call, report) in enumerate(zip(job.calls, reports, strict=True)):
                folder = save if len(job.calls) == 1 else os.path.join(save, f"call-{i + 1}")
                save_stages(folder, call.stages, levels, report)
        return job, levels, reports

    job, levels, reports = opt.guarded(debug, color, work)
    if job.entry_reason != "given":
        make_console(color.value, stderr=True).print(f"tracecli: entry {job.entry} ({job.entry_reason})", markup=False)
    # Calls whose every stage prints alike show one diff (a main block calling the entry in a loop).
    def stages_text(call) -> str:
        return "\0".join(format_trace(stage.trace, levels) for stage in call.stages)

    if fmt is opt.Format.json:
        if len(reports) == 1:
            out = reports[0]
        else:
            per_call, grouping = grouping_json(job.calls, stages_text)
            calls = [{**report, **group} for report, group in zip(reports, per_call, strict=True)]
            out = {"format": FORMAT_VERSION, "command": "diff", "calls": calls, **grouping}
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
    else:
        console = make_console(color.value)

        def show(group) -> None:
            _show(console, group.calls[0].stages, levels, each=each, side_by_side=side_by_side, stat=stat, text=text)

        show_groups(console, job, group_calls(job.calls, stages_text), show, all_traces=all_traces,
                    dynamic_option=opt.offered(opt.DYNAMIC))
    if exit_code and any(r["changed"] for r in reports):
        raise typer.Exit(1)


def _show(console, stages, depth: float, *, each: bool, side_by_side: bool, stat: bool, text: bool) -> None:
    if stat:
        print_stat(console, stat_rows(stages))
        return
    if text:
        print_text_diff(console, text_diff(stages[0].trace, stages[-1].trace, depth))
        return
    show = print_side_by_side if side_by_side else print_diff
    if each:
        unchanged = []
        for stage, diff in step_diffs(stages, depth):
            if not diff.changed:
                unchanged.append(stage.name)
                continue
            console.print(f"── {describe(stage)} ──", markup=False, style="bold")
            show(console, diff)
        if unchanged:
            console.print(f"unchanged: {', '.join(unchanged)}", markup=False)
        return
    diff = whole_diff(stages, depth)
    if not diff.changed:
        console.print(f"no change: {', '.join(s.name for s in stages[1:])} left the trace as it was", markup=False)
        return
    show(console, diff)
