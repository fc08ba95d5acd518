"""What `tracecli bisect` reports: each pass's verdict, the culprit pass, the bound
symbol whose rewriting breaks the result (what the pass made of it, as a diff with
its source line), and the outputs that disagree with eager."""

from __future__ import annotations

import math
from dataclasses import dataclass

from rich.console import Console
from rich.text import Text

from tracecli.core.equivalence import compare_traces
from tracecli.core.printing import format_bsym, format_source, format_trace
from tracecli.jobs.bisect import Attempt, Bisection
from tracecli.render.check_view import trace_diff
from tracecli.render.diff import TraceDiff
from tracecli.render.diff_view import print_diff
from tracecli.render.json_report import FORMAT_VERSION, output_check_json
from tracecli.render.text import print_report


def _report_of(attempt: Attempt | None):
    if attempt is None or attempt.job is None:
        return None
    for call in attempt.job.calls:
        if call.report is not None and not call.report.match:
            return call.report
    return None


@dataclass
class BisectReport:
    result: Bisection
    depth: float = 0

    def change(self) -> TraceDiff | None:
        """The trace with the culprit applied up to the bound symbol before the faulty
        one, against the trace with it applied up to that one too."""
        r = self.result
        if r.good is None or r.bad is None or r.good.job is None or r.bad.job is None:
            return None
        before, after = r.good.job.calls[0].final, r.bad.job.calls[0].final
        comparison = compare_traces(before, after, depth=math.inf)
        return trace_diff(format_trace(before, self.depth), format_trace(after, self.depth), comparison)

    def _culprit_lines(self) -> list[str]:
        r = self.result
        if r.index is None or r.before_pass is None:
            return []
        bsym = r.before_pass.bsyms[r.index]
        lines = [format_source(bsym)] if bsym.source is not None else []
        return [*lines, format_bsym(bsym)]

    def text(self, console: Console) -> None:
        r = self.result
        for name, broken in r.verdicts:
            verdict = Text("DIFFERS from eager", style="bold red") if broken else Text("matches eager", style="green")
            label = "initial trace" if name == "initial" else f"after {name}"
            console.print(Text(f"{label:<28} ") + verdict)
        if not r.found:
            console.print("nothing breaks: every output matches eager after all the passes", markup=False)
            return
        if r.broken_before_passes:
            console.print("the trace disagrees with eager before any pass: no pass is to blame", markup=False)
        elif r.index is None:
            console.print(f"{r.culprit} breaks the result even applied to no bound symbol", markup=False)
        else:
            total = len(r.before_pass.bsyms)
            console.print(f"{r.culprit} breaks the result at bound symbol {r.index + 1} of {total} (applied to the "
                          f"first {r.index} it matches eager, to the first {r.index + 1} it does not):", markup=False)
            for line in self._culprit_lines():
                console.print(f"  {line}", markup=False)
            diff = self.change()
            if diff is not None and diff.changed:
                console.print(f"what {r.culprit} made of it:", markup=False)
                print_diff(console, diff)
        report = _report_of(r.bad)
        if report is not None:
            console.print("outputs:", markup=False)
            print_report(console, report)
        elif r.bad is not None and r.bad.error:
            console.print(r.bad.error, markup=False)

    def json(self) -> dict:
        r = self.result
        diff = self.change()
        report = _report_of(r.bad)
        return {
            "format": FORMAT_VERSION, "command": "bisect", "script": r.script, "entry": r.entry,
            "passes": r.passes,
            "verdicts": [{"after": name, "match": not broken} for name, broken in r.verdicts],
            "broken": r.found, "broken_before_passes": r.broken_before_passes, "culprit": r.culprit,
            "bound_symbol": None if r.index is None else {"index": r.index, "lines": self._culprit_lines()},
            "change": [] if diff is None else [
                {"kind": line.kind, "before": line.before, "after": line.after}
                for line in diff.lines if line.kind != " " and not line.header],
            "outputs": [] if report is None else [output_check_json(o) for o in (*report.outputs, *report.written)],
            "error": r.bad.error if r.bad is not None and r.bad.error else None,
        }
