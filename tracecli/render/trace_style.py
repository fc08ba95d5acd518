"""The colours of trace text on a terminal.

A reader's eye should go first to what they wrote (the code quoted in a source
comment, bold), then to the operations it became (`ltorch.*` / `prims.*` calls in
cyan, opaque `torch.*` calls in yellow, the colour of a warning), and last to the
bookkeeping: type comments, the decomposition, the header and the input types, all
dim. Styles only: the characters are the trace text's, so a coloured line with its
escapes removed is the plain line byte for byte.

The line shapes are those `tracecli.core.printing` writes; a line this module does not
recognise is left unstyled rather than guessed at.
"""

from __future__ import annotations

import re

from rich.text import Text

# The scheme, in one place (the README's "Colours" note describes it).
SOURCE_CODE = "bold"
SOURCE_PLACE = "dim"
OP = "cyan"
OPAQUE_OP = "yellow"
SCOPE = "magenta"
KEYWORD = "blue"
ENTRY_NAME = "bold"
DIM = "dim"

_SOURCE = re.compile(r"^(?P<lead>\s*# )(?P<place>\S+:\d+:)(?P<code>  .*)$")
_SCOPE = re.compile(r"^\s*# ── ")
_DEF = re.compile(r"^(?P<kw>def) (?P<name>[A-Za-z_][A-Za-z0-9_]*)\(")
_RETURN = re.compile(r"^(?P<lead>\s*)(?P<kw>return)\b")
_CALL = re.compile(r"(?:^\s*|= )(?P<op>(?P<ns>ltorch|prims|torch)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)\(")


def comment_start(line: str) -> int:
    """Where the line's trailing `#` comment starts, outside string constants; -1 if none."""
    quote = ""
    escaped = False
    for i, ch in enumerate(line):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            return i
    return -1


def op_style(qualname: str) -> str:
    """Opaque calls are `torch.*`: modelled ones live in `ltorch` and `prims`."""
    return OPAQUE_OP if qualname.startswith("torch.") else OP


def style_line(line: str, index: int = 1) -> Text:
    """One line of trace text, styled by what it is; `index` 0 is the header line."""
    text = Text(line)
    stripped = line.lstrip(" ")
    indent = len(line) - len(stripped)
    if index == 0 and line.startswith("# "):
        text.stylize(DIM)
    elif m := _DEF.match(line):
        text.stylize(KEYWORD, *m.span("kw"))
        text.stylize(ENTRY_NAME, *m.span("name"))
    elif m := _SOURCE.match(line):
        text.stylize(SOURCE_PLACE, indent, m.end("place"))
        text.stylize(SOURCE_CODE, m.start("code") + 2)
    elif _SCOPE.match(line):
        text.stylize(SCOPE, indent)
    elif stripped.startswith("#"):
        # Input types at the top, the decomposition under each operation.
        text.stylize(DIM, indent)
    elif m := _RETURN.match(line):
        text.stylize(KEYWORD, *m.span("kw"))
    else:
        _style_op_line(text, line)
    return text


def _style_op_line(text: Text, line: str) -> None:
    comment = comment_start(line)
    code = line if comment < 0 else line[:comment]
    if m := _CALL.search(code):
        text.stylize(op_style(m.group("op")), *m.span("op"))
    if comment >= 0:
        text.stylize(DIM, comment)


def style_call_site(site: str) -> Text:
    """`file.py:LINE:  code`, as examine lists call sites: the place dim, the code bold."""
    text = Text(site)
    place, sep, _ = site.partition(":  ")
    if sep:
        text.stylize(SOURCE_PLACE, 0, len(place) + 1)
        text.stylize(SOURCE_CODE, len(place) + len(sep))
    return text


def style_trace(trace_text: str) -> list[Text]:
    return [style_line(line, i) for i, line in enumerate(trace_text.splitlines())]
