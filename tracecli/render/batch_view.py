"""Several scripts' results: each script's own output in order, then a summary table
(script, entry, result, time); as one JSON object; and as a JUnit XML report."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tracecli.jobs.batch import ScriptRun
from tracecli.render.console import colored, print_table
from tracecli.render.json_report import FORMAT_VERSION

# What each command's exit codes mean for one script.
_RESULTS = {
    "run": {0: "matches eager", 1: "DIFFERS from eager"},
    "examine": {0: "traced", 1: "opaque or untraceable ops"},
    "check": {0: "equal", 1: "DIFFERENT or missing"},
}


def result_word(command: str, run: ScriptRun) -> str:
    # A script that stopped with an error (bad input, exit 2; or a fault of ours or of the
    # compiled trace, exit 1) says so, not what its exit code means otherwise.
    if run.exit_code == 2 or (run.exit_code and run.error is not None):
        return "error"
    return _RESULTS.get(command, {}).get(run.exit_code, f"exit {run.exit_code}")


def worst_exit(runs: list[ScriptRun]) -> int:
    return max((run.exit_code for run in runs), default=0)


@dataclass
class BatchReport:
    command: str
    runs: list[ScriptRun]

    def text(self, console: Console) -> None:
        for run in self.runs:
            console.print(f"── {run.target} ──", markup=False, style="bold")
            sys.stdout.write(run.stdout)
            if run.stderr:
                sys.stderr.write(run.stderr)
            sys.stdout.write("\n")
        self.summary(console)

    def summary(self, console: Console) -> None:
        table = Table(box=None, header_style="bold", pad_edge=False)
        for column in ("script", "entry", "result", "time"):
            table.add_column(column, justify="right" if column == "time" else "left")
        for run in self.runs:
            word = Text(result_word(self.command, run), style="bold red" if run.exit_code and colored(console) else "")
            table.add_row(Text(run.target), Text(run.entry or "-"), word, f"{run.seconds:.1f} s")
        print_table(console, table)
        passed = sum(run.exit_code == 0 for run in self.runs)
        failed = sum(run.exit_code == 1 for run in self.runs)
        errors = len(self.runs) - passed - failed
        console.print(f"{len(self.runs)} scripts: {passed} passed, {failed} failed, {errors} "
                      f"{'error' if errors == 1 else 'errors'} (exit {worst_exit(self.runs)})", markup=False)

    def json(self) -> dict:
        scripts = []
        for run in self.runs:
            try:
                report = json.loads(run.stdout) if run.stdout.strip() else None
            except json.JSONDecodeError:
                report = None
            scripts.append({"script": run.target, "entry": run.entry, "exit_code": run.exit_code,
                            "result": result_word(self.command, run), "seconds": round(run.seconds, 3),
                            "error": run.error, "report": report})
        return {"format": FORMAT_VERSION, "command": self.command, "scripts": scripts,
                "exit_code": worst_exit(self.runs)}


def write_junit(path: str, command: str, runs: list[ScriptRun]) -> None:
    """One test case per script and entry: a failure (exit 1) carries the script's output,
    an error (exit 2) its message. Written whole or not at all."""
    failures = sum(run.exit_code == 1 for run in runs)
    errors = sum(run.exit_code not in (0, 1) for run in runs)
    total = sum(run.seconds for run in runs)
    suites = ET.Element("testsuites", name="tracecli", tests=str(len(runs)), failures=str(failures),
                        errors=str(errors), time=f"{total:.3f}")
    suite = ET.SubElement(suites, "testsuite", name=f"tracecli {command}", tests=str(len(runs)),
                          failures=str(failures), errors=str(errors), time=f"{total:.3f}")
    for run in runs:
        case = ET.SubElement(suite, "testcase", classname=run.target.split(":", 1)[0],
                             name=run.entry or run.target, time=f"{run.seconds:.3f}")
        if run.exit_code == 1:
            failure = ET.SubElement(case, "failure", message=run.error or result_word(command, run), type="failure")
            failure.text = run.stdout
        elif run.exit_code != 0:
            error = ET.SubElement(case, "error", message=run.error or f"exit {run.exit_code}", type="error")
            error.text = run.stderr
        if run.stdout and run.exit_code != 1:
            ET.SubElement(case, "system-out").text = run.stdout
    ET.indent(suites)
    data = ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
    directory = os.path.dirname(os.path.abspath(path))
    with tempfile.NamedTemporaryFile("w", dir=directory, delete=False, suffix=".tmp") as tmp:
        tmp.write(data)
    os.replace(tmp.name, path)
