from pathlib import Path

import pytest
from typer.testing import CliRunner

from tracecli.cli.app import app
from tracecli.passes import REGISTRY

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"


def pytest_addoption(parser):
    parser.addoption("--update-goldens", action="store_true", help="rewrite golden files from current output")


@pytest.fixture
def update_goldens(request) -> bool:
    return request.config.getoption("--update-goldens")


@pytest.fixture(autouse=True)
def _in_repo_root(monkeypatch):
    # Paths in traces are relative to the working directory: run everything from the root.
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("NO_COLOR", raising=False)


@pytest.fixture(autouse=True)
def _pass_registry_restored():
    # Tests register passes of their own; the next test must see only the built-in ones.
    saved = dict(REGISTRY)
    yield
    REGISTRY.clear()
    REGISTRY.update(saved)


@pytest.fixture
def cli():
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(app, list(args), catch_exceptions=False)

    return invoke


@pytest.fixture
def golden(update_goldens):
    def check(name: str, text: str) -> None:
        path = GOLDEN / name
        if update_goldens:
            path.write_text(text)
        if not path.exists():
            pytest.fail(f"golden file {path} is missing; run pytest --update-goldens and review the diff")
        assert text == path.read_text(), f"output differs from {path}; rerun with --update-goldens if intended"

    return check
