"""The architecture's rules, checked: layers import downward only, and no import hides
inside a function (design.md: if a cycle appears, move the piece down) unless a comment
at it says that deferring it saves start-up."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tracecli"
LAYERS = ["core", "ops", "frontend", "passes", "executors", "jobs", "render", "cli"]
FILES = sorted(p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).parts[0] in LAYERS)


def _imports(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node, node.module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node, alias.name


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down(path):
    layer = path.relative_to(PACKAGE).parts[0]
    tree = ast.parse(path.read_text())
    for _, module in _imports(tree):
        parts = module.split(".")
        if parts[0] == "tracecli" and len(parts) > 1 and parts[1] in LAYERS:
            assert LAYERS.index(parts[1]) <= LAYERS.index(layer), f"{layer} imports {module}"


def _says_it_saves_startup(lines: list[str], lineno: int) -> bool:
    """The import's own line, or the comment right above it, names start-up."""
    said = [lines[lineno - 1]]
    above = lineno - 2
    while above >= 0 and lines[above].lstrip().startswith("#"):
        said.append(lines[above])
        above -= 1
    return any("start-up" in line for line in said)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_imports_inside_functions(path):
    source = path.read_text()
    lines = source.splitlines()
    for func in ast.walk(ast.parse(source)):
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = [n for n in ast.walk(func) if isinstance(n, (ast.Import, ast.ImportFrom))
                     and not _says_it_saves_startup(lines, n.lineno)]
            assert not inner, f"{path.name}: {func.name} imports inside the function (line {inner[0].lineno})"


def test_only_render_and_cli_import_rich_and_only_cli_imports_typer():
    for path in FILES:
        layer = path.relative_to(PACKAGE).parts[0]
        modules = {m.split(".")[0] for _, m in _imports(ast.parse(path.read_text()))}
        if "rich" in modules:
            assert layer in ("render", "cli"), path
        if "typer" in modules:
            assert layer == "cli", path
