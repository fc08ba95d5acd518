"""`tracecli diff`: the trace before vs after the pipeline."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from tracecli.cli import options as opt
from tracecli.core.errors import UserError
from tracecli.jobs.runner import trace_script
from tracecli.passes.pipeline import known_passes
from tracecli.render.reports import DiffLayout, DiffReport, emit
from tracecli.render.save import check_saveable, save_stages
from tracecli.render.save_segments import check_segments_saveable, save_segments

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
    all_traces: opt.AllTraces = False, dynamic: opt.Dynamic = False, grad: opt.Grad = False,
    show: opt.ShowOpt = opt.Show.all, fullgraph: opt.Fullgraph = False,
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
        with opt.script_output(fmt):
            job = trace_script(target, device=device, input_specs=inputs, seed=opt.check_seed(seed), execute=False,
                               steps=steps, check=not no_verify, script_args=script_args, dynamic=dynamic,
                               grad=grad, fullgraph=fullgraph)
        opt.check_show(show, grad, job)
        report = DiffReport(job, levels, DiffLayout(each, side_by_side, stat, text), all_traces,
                            opt.offered(opt.DYNAMIC), show.value)
        if save is not None:
            for call in job.calls:  # every call's files or none
                if call.segments:
                    check_segments_saveable(call)
                    continue
                check_saveable(call.stages)
                check_saveable(call.grad_stages)
            for i, (call, per_call) in enumerate(zip(job.calls, report.per_call, strict=True)):
                folder = save if len(job.calls) == 1 else os.path.join(save, f"call-{i + 1}")
                if call.segments:  # every segment in each stage's file, in order
                    save_segments(folder, call, levels, per_call)
                    continue
                save_stages(folder, call.stages, levels, per_call, call.program.inputs)
                if call.grad_stages:  # the backward's stages beside the forward's
                    save_stages(os.path.join(folder, "backward"), call.grad_stages, levels,
                                per_call.get("backward", {}))
        return report

    report = opt.guarded(debug, color, work)
    opt.announce_entry(report.job, color)
    emit(report, fmt.value, color.value)
    if exit_code and report.changed:
        raise typer.Exit(1)
