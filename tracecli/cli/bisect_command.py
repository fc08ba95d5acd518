"""`tracecli bisect`: the first pass, and the first bound symbol inside it, that breaks the result."""

from __future__ import annotations

import typer

from tracecli.cli import options as opt
from tracecli.core.errors import UserError
from tracecli.jobs.bisect import bisect as bisect_script
from tracecli.passes.pipeline import known_passes
from tracecli.render.bisect_view import BisectReport
from tracecli.render.reports import emit


def bisect(
    target: opt.Target, script_args: opt.ScriptArgs = None, passes: opt.Passes = None,
    pass_files: opt.PassFiles = None, device: opt.Device = "cpu", inputs: opt.Inputs = None,
    seed: opt.Seed = 0, depth: opt.Depth = "0", fmt: opt.FormatOpt = opt.Format.text,
    color: opt.ColorOpt = opt.Color.auto, debug: opt.Debug = False, fullgraph: opt.Fullgraph = False,
) -> None:
    """Find the first pass after which the result stops matching eager, and the bound symbol whose rewriting breaks it."""

    def work():
        levels = opt.parse_depth(depth)
        steps = opt.pipeline_steps(passes, pass_files)
        if not steps:
            raise UserError(f"bisect needs the passes to search, e.g. -p dce,cse,rename (known passes: {known_passes()})")
        with opt.script_output(fmt):
            result = bisect_script(target, steps, device=device, input_specs=inputs, seed=opt.check_seed(seed),
                                   script_args=script_args, fullgraph=fullgraph)
        return BisectReport(result, levels)

    report = opt.guarded(debug, color, work)
    emit(report, fmt.value, color.value)
    if report.result.found:
        raise typer.Exit(1)
