"""Several scripts in one invocation: each runs in a process of its own (a script's
globals, its torch state and a crash stay its own), up to `jobs` at a time, and the
results come back in the order the scripts were given.

A child is the same command line run again with an environment variable saying which
of the scripts is its own (`TRACECLI_SCRIPT_INDEX`), so every option reaches it exactly
as the user spelled it; it writes the entry it chose to `TRACECLI_SCRIPT_RESULT`.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tracecli.core.errors import UserError
from tracecli.jobs.runner import split_target

INDEX_VARIABLE = "TRACECLI_SCRIPT_INDEX"
RESULT_VARIABLE = "TRACECLI_SCRIPT_RESULT"
_GLOB_CHARACTERS = frozenset("*?[")


@dataclass
class ScriptRun:
    target: str
    exit_code: int
    seconds: float
    stdout: str
    stderr: str
    entry: str | None  # None when the script failed before an entry was chosen

    @property
    def error(self) -> str | None:
        """The child's one-line error, without the `tracecli: error: ` prefix."""
        for line in reversed(self.stderr.splitlines()):
            if line.startswith("tracecli: error: "):
                return line.removeprefix("tracecli: error: ")
        return None


def expand_targets(patterns: list[str]) -> list[str]:
    """The scripts the arguments name, in order: a pattern with `*`, `?` or `[` is a glob
    (sorted; `:ENTRY` after it applies to each match); the same script twice runs once."""
    targets: list[str] = []
    for pattern in patterns:
        path, entry = split_target(pattern)
        if _GLOB_CHARACTERS & set(path) and not os.path.exists(path):
            matches = sorted(glob.glob(path, recursive=True))
            if not matches:
                raise UserError(f"{path}: no script matches this pattern")
            targets.extend(f"{m}:{entry}" if entry else m for m in matches)
        else:
            targets.append(pattern)
    return list(dict.fromkeys(targets))


def selected_index() -> int | None:
    """In a child, which of the expanded targets is its own."""
    value = os.environ.get(INDEX_VARIABLE)
    return int(value) if value is not None else None


def record_entry(entry: str) -> None:
    """In a child, tell the parent which entry the script ran."""
    path = os.environ.get(RESULT_VARIABLE)
    if path:
        Path(path).write_text(json.dumps({"entry": entry}))


def run_scripts(command: str, argv: list[str], targets: list[str], jobs: int) -> list[ScriptRun]:
    """Run `tracecli COMMAND ARGV` once per target, `jobs` at a time."""
    with tempfile.TemporaryDirectory(prefix="tracecli-scripts-") as tmp, ThreadPoolExecutor(max(1, jobs)) as pool:
        runs = [pool.submit(_run_one, command, argv, index, target, Path(tmp) / f"{index}.json")
                for index, target in enumerate(targets)]
        return [run.result() for run in runs]


def _run_one(command: str, argv: list[str], index: int, target: str, result_file: Path) -> ScriptRun:
    env = {**os.environ, INDEX_VARIABLE: str(index), RESULT_VARIABLE: str(result_file)}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tracecli", command, *argv], env=env, capture_output=True,
                          text=True, check=False)
    seconds = time.perf_counter() - start
    entry = json.loads(result_file.read_text())["entry"] if result_file.exists() else None
    return ScriptRun(target, done.returncode, seconds, done.stdout, done.stderr, entry)
