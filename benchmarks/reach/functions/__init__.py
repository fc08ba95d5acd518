"""The function set: small functions written the way compiler test suites write them,
one Python feature around tensor ops each, grouped by theme in the files beside this one.

Each file is a script tracecli could load as it is. A function marked `@case(inputs)` is a
case: `inputs()` makes its arguments, under a fixed seed. The script of a case is its
whole file plus a `sample_inputs` that returns them, so the lines tracecli names in its
messages are the lines of the file here."""

from __future__ import annotations

import ast
from pathlib import Path

from benchmarks.reach.harness import Case

HERE = Path(__file__).resolve().parent
FILES = ["containers", "pyfeatures", "builtin_calls", "numpy_calls", "type_queries", "objects", "state", "breaks"]

SAMPLE_INPUTS = '''


def sample_inputs(device):
    return {entry}.case_inputs()
'''


def _is_case_marker(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "case"


def marked(source: str) -> list[tuple[str, str]]:
    """(function name, first docstring line) of every case in a file, in file order."""
    tree = ast.parse(source)
    return [(node.name, (ast.get_docstring(node) or "").partition("\n")[0])
            for node in tree.body
            if isinstance(node, ast.FunctionDef) and any(map(_is_case_marker, node.decorator_list))]


def cases() -> list[Case]:
    out = []
    for stem in FILES:
        source = (HERE / f"{stem}.py").read_text()
        for name, doc in marked(source):
            out.append(Case("functions", f"{stem}.{name}", f"{stem}.py",
                            source + SAMPLE_INPUTS.format(entry=name), name, doc))
    return out
