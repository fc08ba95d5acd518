"""Output read in a terminal: the colour scheme, one colour rule, side-by-side layout,
and plain output with no trailing padding."""

import re

import pytest

from tests.test_cli import write

SGR = re.compile(r"\x1b\[([0-9;]*)m")
BOLD, DIM, RED, GREEN, YELLOW, CYAN = 1, 2, 31, 32, 33, 36
FOREGROUND = set(range(30, 38)) | set(range(90, 98))


def styled(output: str) -> tuple[str, list[frozenset]]:
    """The text without escapes, and the SGR codes active on each of its characters."""
    chars: list[str] = []
    styles: list[frozenset] = []
    active: set[int] = set()
    at = 0
    for m in [*SGR.finditer(output), None]:
        end = m.start() if m else len(output)
        chars.extend(output[at:end])
        styles.extend([frozenset(active)] * (end - at))
        if m is None:
            break
        for code in [int(c) for c in m.group(1).split(";") if c] or [0]:
            if code == 0:
                active.clear()
            elif code == 39:
                active -= FOREGROUND
            elif code == 22:
                active -= {BOLD, DIM}
            elif code != 49:
                active.add(code)
        at = m.end()
    return "".join(chars), styles


def style_of(output: str, needle: str, after: str = "") -> set[int]:
    """The codes shared by every character of `needle` (its first occurrence after `after`)."""
    text, styles = styled(output)
    start = text.index(needle, text.index(after) if after else 0)
    return set.intersection(*(set(s) for s in styles[start : start + len(needle)]))


def plain(output: str) -> str:
    return SGR.sub("", output)


# -- the colour scheme: the user's code, then the ops, then the bookkeeping ----------------


def test_trace_colours_lead_from_the_users_code_to_the_ops_to_the_types(cli):
    out = cli("trace", "sample_programs/seed_cse.py", "--color", "always").stdout
    source = style_of(out, "a = x * y", after="# seed_cse.py:7:")
    assert BOLD in source and DIM not in source, "the user's own code is the most visible"
    assert DIM in style_of(out, "# seed_cse.py:7:")
    assert CYAN in style_of(out, "ltorch.mul")
    assert style_of(out, "(x, y)", after="ltorch.mul") == set(), "arguments in the terminal's own colour"
    assert DIM in style_of(out, '# t0: "cpu f32[3, 4]"')
    assert DIM in style_of(out, "# t0 = prims.mul(x, y)"), "the decomposition is bookkeeping"
    assert DIM in style_of(out, "# sample_programs/seed_cse.py:func")


def test_opaque_calls_in_the_warning_colour(cli, tmp_path):
    script = write(tmp_path, "partly.py", """
        import torch
        def f(x):
            return torch.cumulative_trapezoid(x, dim=0) * 2
    """)
    out = cli("trace", script, "-i", "f32[4]", "--color", "always").stdout
    assert YELLOW in style_of(out, "torch.cumulative_trapezoid", after="= torch.cumulative_trapezoid")
    assert CYAN in style_of(out, "ltorch.mul")
    examined = cli("examine", script, "-i", "f32[4]", "--color", "always").stdout
    assert {BOLD, YELLOW} <= style_of(examined, "OPAQUE")
    assert YELLOW in style_of(examined, "torch.cumulative_trapezoid", after="torch.cumulative_trapezoid is opaque")
    assert YELLOW not in style_of(examined, " is opaque, reached from:")
    assert BOLD in style_of(examined, "return torch.cumulative_trapezoid(x, dim=0) * 2")


def test_module_scopes_stand_apart(cli):
    out = cli("trace", "sample_programs/gpt_block.py", "--depth", "0", "--color", "always").stdout
    assert style_of(out, "# ── attn") & FOREGROUND


@pytest.mark.parametrize("script", ["seed_cse.py", "gpt_block.py"])
def test_colour_adds_escapes_and_nothing_else(cli, script):
    coloured = cli("trace", f"sample_programs/{script}", "--depth", "all", "--color", "always").stdout
    assert plain(coloured) == cli("trace", f"sample_programs/{script}", "--depth", "all", "--color", "never").stdout


# -- one rule: --color always wins over NO_COLOR, which only changes auto --------------------

COMMANDS = [
    ("run", "sample_programs/seed_cse.py"),
    ("trace", "sample_programs/seed_cse.py"),
    ("examine", "sample_programs/seed_cse.py"),
    ("diff", "sample_programs/seed_cse.py", "-p", "cse,rename"),
    ("diff", "sample_programs/seed_cse.py", "-p", "cse,rename", "--side-by-side"),
    ("diff", "sample_programs/seed_cse.py", "-p", "cse,rename", "--each"),
    ("diff", "sample_programs/seed_cse.py", "-p", "cse,rename", "--stat"),
    ("diff", "sample_programs/seed_cse.py", "-p", "cse,rename", "--text"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:1] + a[3:]))
def test_color_always_wins_over_no_color(cli, monkeypatch, args):
    monkeypatch.setenv("NO_COLOR", "1")
    out = cli(*args, "--color", "always").stdout
    codes = set().union(*styled(out)[1])
    assert codes & FOREGROUND, "colours, not only bold and dim"


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:1] + a[3:]))
def test_no_color_turns_auto_off_even_when_colour_is_forced(cli, monkeypatch, args):
    # FORCE_COLOR makes the test's pipe look like a terminal to auto; NO_COLOR still wins there.
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("NO_COLOR", "1")
    result = cli(*args, "--color", "auto")
    assert "\x1b[" not in result.stdout and "\x1b[" not in result.stderr
    monkeypatch.delenv("NO_COLOR")
    assert "\x1b[" not in cli(*args, "--color", "never").stdout


def test_text_diff_is_coloured_like_git_on_request(cli):
    out = cli("diff", "sample_programs/seed_cse.py", "-p", "rename", "--text", "--depth", "0", "--color", "always").stdout
    assert RED in style_of(out, "-  t0 = ltorch.mul(x, y)")
    assert GREEN in style_of(out, "+  a = ltorch.mul(x, y)")
    never = cli("diff", "sample_programs/seed_cse.py", "-p", "rename", "--text", "--depth", "0", "--color", "never").stdout
    assert plain(out) == never


# -- side by side: markers without colour, aligned columns, indented continuations -----------


def side_by_side(cli, monkeypatch, script, passes, width):
    monkeypatch.setenv("COLUMNS", str(width))
    result = cli("diff", f"sample_programs/{script}", "-p", passes, "--side-by-side", "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["before", "│", "after"]
    return [line.split(" │ ") if " │ " in line else [line.removesuffix(" │"), ""] for line in lines[2:]]


def test_side_by_side_marks_every_change_without_colour(cli, monkeypatch):
    rows = side_by_side(cli, monkeypatch, "seed_cse.py", "cse,rename", 120)
    assert ['~   t0 = ltorch.mul(x, y)  # t0: "cpu f32[3, 4]"', '~   a = ltorch.mul(x, y)  # a: "cpu f32[3, 4]"'] in [
        [left.rstrip(), right] for left, right in rows
    ]
    removed = [left.rstrip() for left, right in rows if "t2 = ltorch.mul(x, y)" in left]
    unchanged = [left.rstrip() for left, right in rows if left.startswith(" ") and "# seed_cse.py:7:" in left]
    # A removed line keeps its column: its code starts where unchanged code does.
    assert removed == ['-   t2 = ltorch.mul(x, y)  # t2: "cpu f32[3, 4]"']
    assert unchanged == ["    # seed_cse.py:7:  a = x * y"]


@pytest.mark.parametrize("width", [70, 120])
def test_side_by_side_wraps_inside_its_column_keeping_indentation(cli, monkeypatch, width):
    rows = side_by_side(cli, monkeypatch, "gpt_block.py", "cse,rename", width)
    column = (width - 3) // 2
    continued = 0
    for left, right in rows:
        for cell in (left, right):
            assert len(cell.rstrip()) <= column, cell
            # A cell starts with its marker column, or continues a line further in than any code.
            assert cell[:2] in ("  ", "- ", "+ ", "~ ") or cell == "", cell
        if left.startswith("      ") and not left.lstrip().startswith("#"):
            continued += 1
    assert continued, "some long lines wrapped"
    joined = [left for left, _ in rows]
    at = next(i for i, left in enumerate(joined) if "t12 = ltorch.layer_norm" in left)
    # The continuation of an op line is indented past the op line itself.
    assert joined[at + 1].startswith(" " * 8) and joined[at + 1].strip()


def test_piped_output_has_no_trailing_spaces(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("COLUMNS", "100")
    outputs = [
        cli("diff", "sample_programs/gpt_block.py", "-p", "cse,rename", "--side-by-side", "--color", "never").stdout,
        cli("diff", "sample_programs/seed_cse.py", "-p", "cse,rename", "--stat", "--color", "never").stdout,
        cli("examine", "sample_programs/gpt_block.py", "--color", "never").stdout,
        cli("run", "sample_programs/seed_cse.py", "--color", "never").stdout,
    ]
    for out in outputs:
        assert [line for line in out.splitlines() if line != line.rstrip()] == []
