"""One reach case, measured twice: tracecli's `run` job (and `examine`) on the case's own
script, as a user runs it, and `torch.compile(fullgraph=True, backend="eager")` on the
same entry and inputs, the reference the comparison is made against.

A case is a script written to a directory of its own, and the entry in it to trace. Both
measurements load the script afresh, so Python state a case writes (a global counter, a
module's cache) starts the same for each.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
import os
import random
import re
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy
import torch
from typer.testing import CliRunner

from tracecli.cli.app import app

# Outcomes, in the order the summary counts them.
MATCH, DIFFERS, REFUSED, CRASHED, TIMEOUT = "match", "differs", "refused", "crashed", "timeout"
OUTCOMES = (MATCH, DIFFERS, REFUSED, CRASHED, TIMEOUT)


@dataclass(frozen=True)
class Case:
    """A script to write (`filename` holding `source`) and the entry in it to trace."""

    kind: str  # "functions" or "models"
    name: str  # unique in its kind: "containers.list_append_stack", "timm.levit_128s"
    filename: str
    source: str
    entry: str
    doc: str = ""  # what it exercises, one line

    def write(self, root: Path) -> Path:
        directory = root / self.kind / self.name
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / self.filename
        path.write_text(self.source)
        return path


@dataclass(frozen=True)
class Outcome:
    outcome: str
    reason: str = ""  # one line; empty when matching
    opaque: int | None = None  # opaque ops `examine` counts; None when it could not trace
    opaque_ops: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"outcome": self.outcome, "reason": self.reason, "opaque": self.opaque,
                "opaque_ops": list(self.opaque_ops)}

    @classmethod
    def from_json(cls, data: dict) -> Outcome:
        return cls(data["outcome"], data["reason"], data["opaque"], tuple(data["opaque_ops"]))


def seed_everything(seed: int = 0) -> None:
    torch.manual_seed(seed)
    random.seed(seed)
    numpy.random.seed(seed)


@contextlib.contextmanager
def working_directory(path: Path) -> Iterator[None]:
    """Run from the script's directory: tracecli's messages then name `file.py:LINE`,
    the same wherever the case was written."""
    saved = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(saved)


def one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    line = re.sub(r"0x[0-9a-f]{6,}", "0x…", line)
    return line if len(line) <= limit else line[: limit - 1] + "…"


# -- tracecli ------------------------------------------------------------------------

def _error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("tracecli: error: ")]
    return lines[-1].removeprefix("tracecli: error: ") if lines else ""


def _mismatch(stdout: str) -> str:
    """What differs, from run's JSON report: the first output, written input or later call."""
    try:
        report = json.loads(stdout)
    except json.JSONDecodeError:
        return "differs from eager (no report)"
    for call in report.get("calls", []):
        result = call.get("result") or {}
        for item in [*result.get("outputs", []), *result.get("written", [])]:
            if not item.get("match", True):
                what = " ".join(str(item[k]) for k in ("name", "shape", "dtype") if item.get(k) is not None)
                return f"output {what}: {item.get('problem')}"
        for recheck in call.get("rechecks", []):
            if not recheck["result"].get("match", True):
                return f"the later call {recheck['call']} differs from eager"
    return "differs from eager"


def run_tracecli(case: Case, root: Path, *, examine: bool = True, fullgraph: bool = False) -> Outcome:
    """`tracecli run SCRIPT:ENTRY --no-timing --format json`, then `examine` for the opaque ops;
    with `fullgraph`, both with `--fullgraph` (a read of a tensor's value is refused, not cut)."""
    script = case.write(root)
    runner = CliRunner()
    target = f"{script.name}:{case.entry}"
    extra = ["--fullgraph"] if fullgraph else []
    grad_mode = torch.is_grad_enabled()
    with working_directory(script.parent):
        result = runner.invoke(app, ["run", target, "--no-timing", "--format", "json", *extra])
        leaked = torch.is_grad_enabled() != grad_mode
        torch.set_grad_enabled(grad_mode)  # the next case starts as a process of its own would
        report = runner.invoke(app, ["examine", target, "--format", "json", *extra]) if examine else None
        torch.set_grad_enabled(grad_mode)
    error = _error_line(result.stderr)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        last = traceback.format_exception_only(result.exception)[-1]
        outcome, reason = CRASHED, f"uncaught {one_line(last)}"
    elif "Traceback (most recent call last)" in result.stderr:
        outcome, reason = CRASHED, f"a traceback (exit {result.exit_code}): {error}"
    elif result.exit_code == 0:
        outcome, reason = MATCH, ""
    elif result.exit_code == 2:
        outcome, reason = REFUSED, error
    elif result.exit_code == 1 and error.startswith("internal error"):
        outcome, reason = CRASHED, error
    elif result.exit_code == 1:
        outcome, reason = DIFFERS, error or _mismatch(result.stdout)
    else:
        outcome, reason = CRASHED, f"exit {result.exit_code}: {error}"
    opaque, opaque_ops = None, ()
    if report is not None:
        with contextlib.suppress(json.JSONDecodeError):
            data = json.loads(report.stdout)
            opaque = data["opaque"]
            opaque_ops = tuple(f"{op['name']}" for op in data["ops"] if not op["modeled"])
    reason = reason.replace(f"{script.parent}{os.sep}", "")
    if leaked:  # a bug of its own, named even where the case matches: what runs next sees it
        reason = f"{reason} (and tracecli left grad mode {'off' if grad_mode else 'on'} after it)".lstrip()
    return Outcome(outcome, one_line(reason), opaque, opaque_ops)


# -- torch.compile -------------------------------------------------------------------

_loads = itertools.count()


def load_case(script: Path):
    """The script as a fresh module: its own globals, classes and weights."""
    name = f"reach_case_{next(_loads)}"
    spec = importlib.util.spec_from_file_location(name, script)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look their module up here
    seed_everything()
    spec.loader.exec_module(module)
    return module


def case_inputs(module) -> tuple[tuple, dict]:
    """The entry's arguments, as tracecli reads `sample_inputs`: the args, or (args, kwargs)."""
    seed_everything()
    sample = module.sample_inputs("cpu")
    if isinstance(sample, tuple) and len(sample) == 2 and isinstance(sample[0], (tuple, list)) \
            and isinstance(sample[1], dict):
        return tuple(sample[0]), dict(sample[1])
    return (tuple(sample), {}) if isinstance(sample, (tuple, list)) else ((sample,), {})


def _same_type(a, b) -> bool:
    # Each load of a script makes its classes anew, and a namedtuple made inside the entry
    # is a new class on every call (dynamo's even names another module): such classes are
    # the same when their names (and a namedtuple's fields) are. Any other class must be
    # the very same.
    ta, tb = type(a), type(b)
    if ta is tb:
        return True
    if ta.__qualname__ != tb.__qualname__:
        return False
    if issubclass(ta, tuple) and hasattr(ta, "_fields"):
        return ta._fields == getattr(tb, "_fields", None)
    return all(t.__module__.startswith("reach_case_") for t in (ta, tb))


def difference(expected, actual, where: str = "output") -> str | None:
    """Where `actual` departs from `expected`: type, structure, shape, dtype or values."""
    if isinstance(expected, torch.Tensor) and isinstance(actual, torch.Tensor):
        if expected.shape != actual.shape or expected.dtype != actual.dtype:
            return f"{where}: {actual.dtype} {list(actual.shape)}, eager {expected.dtype} {list(expected.shape)}"
        try:
            torch.testing.assert_close(actual.detach(), expected.detach(), equal_nan=True, check_device=False)
        except AssertionError:
            return f"{where}: values"
        return None
    if not _same_type(expected, actual):
        return f"{where}: {type(actual).__qualname__}, eager {type(expected).__qualname__}"
    if isinstance(expected, numpy.ndarray):
        return None if numpy.allclose(expected, actual, equal_nan=True) else f"{where}: values"
    if isinstance(expected, dict):
        if list(expected) != list(actual):
            return f"{where}: keys {list(actual)}, eager {list(expected)}"
        return next((d for k in expected if (d := difference(expected[k], actual[k], f"{where}[{k!r}]"))), None)
    if isinstance(expected, (list, tuple)):
        if len(expected) != len(actual):
            return f"{where}: length {len(actual)}, eager {len(expected)}"
        return next((d for i, (e, a) in enumerate(zip(expected, actual, strict=True))
                     if (d := difference(e, a, f"{where}[{i}]"))), None)
    if hasattr(expected, "__dataclass_fields__"):
        return difference(vars(expected), vars(actual), where)
    return None if expected == actual else f"{where}: {actual!r}, eager {expected!r}"


def _entry(module, case: Case):
    return getattr(module, case.entry)


def run_compile(case: Case, root: Path) -> Outcome:
    """Eager on one fresh load of the script, torch.compile on another, compared."""
    script = case.write(root)
    with working_directory(script.parent):
        module = load_case(script)
        args, kwargs = case_inputs(module)
        seed_everything()
        try:
            expected = _entry(module, case)(*args, **kwargs)
        except Exception as exc:  # the case itself is wrong: say so, it is not a measurement
            return Outcome(CRASHED, one_line(f"the case fails eagerly: {type(exc).__name__}: {exc}"))
        torch._dynamo.reset()
        module = load_case(script)
        args, kwargs = case_inputs(module)
        seed_everything()
        try:
            compiled = torch.compile(_entry(module, case), fullgraph=True, backend="eager")
            actual = compiled(*args, **kwargs)
        except (torch._dynamo.exc.Unsupported, torch._dynamo.exc.UserError) as exc:
            return Outcome(REFUSED, one_line(f"{type(exc).__name__}: {str(exc).strip().splitlines()[0]}"))
        except Exception as exc:
            lines = str(exc).strip().splitlines()
            return Outcome(CRASHED, one_line(f"{type(exc).__name__}: {lines[0] if lines else ''}"))
        finally:
            torch._dynamo.reset()
    problem = difference(expected, actual)
    return Outcome(DIFFERS, one_line(problem)) if problem else Outcome(MATCH)
