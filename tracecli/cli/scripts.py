"""Commands that take several scripts: `tracecli run a.py b.py 'models/*.py' --jobs 4
--junit out.xml -- ARGS`. One script runs here as always; several (or --junit) run each
in a process of its own, then a summary table, and the exit code is the worst of them."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Annotated

import typer
from typer.core import TyperCommand

from tracecli.cli import options as opt
from tracecli.core.errors import UserError
from tracecli.jobs.batch import expand_targets, run_scripts, selected_index
from tracecli.render.batch_view import BatchReport, worst_exit, write_junit
from tracecli.render.reports import emit

Targets = Annotated[
    list[str],
    typer.Argument(metavar="SCRIPT[:ENTRY]...", show_default=False,
                   help="Python scripts, each optionally with the entry to trace; globs in quotes ('models/*.py'). "
                        "After --, the arguments each script sees in sys.argv."),
]
Jobs = Annotated[
    int | None,
    typer.Option("--jobs", "-j", metavar="N", min=1,
                 help="With several scripts: how many run at once, each in its own process (default: the CPU count)."),
]
Junit = Annotated[
    str | None,
    typer.Option("--junit", metavar="FILE", help="Write a JUnit XML report: one test case per script and entry."),
]


class ScriptsCommand(TyperCommand):
    """Keeps what follows `--` apart: the scripts' own command line, not more scripts."""

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:
        if "--" in args:
            cut = args.index("--")
            ctx.meta["script_args"], args = args[cut + 1:], args[:cut]
        else:
            ctx.meta["script_args"] = []
        ctx.meta["own_args"] = list(args)
        return super().parse_args(ctx, args)


def for_each_script(context: typer.Context, command: str, targets: list[str], jobs: int | None, junit: str | None, color: opt.Color,
                    fmt: opt.Format, debug: bool, one: Callable[[str, list[str]], None]) -> None:
    """Run `one(target, script_args)` here when there is one script (or this process is the
    child running one of several); otherwise each script in a child process."""
    script_args: list[str] = context.meta["script_args"]
    expanded = opt.guarded(debug, color, lambda: expand_targets(targets))
    index = selected_index()
    if index is not None:
        one(expanded[index], script_args)
        return
    if len(expanded) == 1 and junit is None:
        one(expanded[0], script_args)
        return
    opt.guarded(debug, color, lambda: _check_junit(junit))
    argv = list(context.meta["own_args"])
    if color is opt.Color.auto and opt.make_console("auto").is_terminal:
        argv += ["--color", "always"]  # the children write to pipes; the user reads a terminal
    if script_args:
        argv += ["--", *script_args]
    runs = run_scripts(command, argv, expanded, jobs or _cores())
    report = BatchReport(command, runs)
    if junit is not None:
        write_junit(junit, command, runs)
    emit(report, fmt.value, color.value)
    if worst_exit(runs):
        raise typer.Exit(worst_exit(runs))


def _cores() -> int:
    # The cores this process may use (a container's share), not the machine's.
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _check_junit(path: str | None) -> None:
    if path is not None and os.path.isdir(path):
        raise UserError(f"--junit {path}: is a directory")
    if path is not None and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        raise UserError(f"--junit {path}: its directory does not exist")
