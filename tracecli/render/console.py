"""Consoles: colour on a terminal, plain text in pipes, `--color` and NO_COLOR obeyed.

One rule for every view (no-color.org: a command-line flag overrides NO_COLOR):
`--color always` colours, whatever NO_COLOR says; `--color never` never does;
`auto` colours only a terminal, and not when NO_COLOR is set to a non-empty value
(or TERM is dumb, which rich checks). Views ask `colored(console)` and nothing else.
"""

from __future__ import annotations

import os
import sys

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text


def make_console(color: str = "auto", *, stderr: bool = False) -> Console:
    file = sys.stderr if stderr else sys.stdout
    if color == "always":
        # no_color=False explicitly: left unset, rich reads NO_COLOR itself and drops
        # colours while still writing bold and dim, half obeying each side.
        return Console(file=file, force_terminal=True, color_system="standard", no_color=False, highlight=False,
                       soft_wrap=True)
    if color == "never" or os.environ.get("NO_COLOR"):
        return Console(file=file, no_color=True, color_system=None, highlight=False, soft_wrap=True)
    return Console(file=file, highlight=False, soft_wrap=True)


def colored(console: Console) -> bool:
    """Whether this console writes escape codes at all (styles included, not only colours)."""
    return console.color_system is not None


def print_table(console: Console, table: Table) -> None:
    """A table without the padding rich adds after the last column: pipes and goldens
    get no trailing spaces."""
    # As wide as its widest row needs, past the terminal's width if it must: a name cut
    # or folded in two (`adam_exp_avg_model_fc1_weight (written)`) is harder to read
    # than a long line.
    natural = Measurement.get(console, console.options.update(width=10_000), table).maximum
    options = console.options.update(width=max(console.width, natural))
    for segments in console.render_lines(table, options, pad=False):
        line = Text.assemble(*((s.text, s.style) for s in segments if not s.control))
        line.rstrip()
        console.print(line, soft_wrap=True)
