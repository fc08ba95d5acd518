"""Reach: how many real models and compiler-test-style functions tracecli traces and
matches, next to what torch.compile(fullgraph=True, backend="eager") captures and matches.

    python -m benchmarks.reach.run                           # both sets, then the summary
    python -m benchmarks.reach.run --set functions -k numpy  # the cases whose name has "numpy"
    python -m benchmarks.reach.run --out benchmarks/reach/baseline.txt
    python -m benchmarks.reach.run --compare benchmarks/reach/baseline.txt
    python -m benchmarks.reach.run --set functions --update-expected
    python -m benchmarks.reach.run -k levit --keep /tmp/reach   # keep the scripts to rerun by hand
    python -m benchmarks.reach.run --list                    # the cases, and what each exercises
    python -m benchmarks.reach.run --set functions --fullgraph --out /tmp/before.txt
    python -m benchmarks.reach.run --set functions --compare /tmp/before.txt   # graph breaks: before and after

Each case is a script (benchmarks/reach/functions/*.py, or a model script made from
models.py) run through `tracecli run SCRIPT:ENTRY --no-timing` and `tracecli examine`, and
through torch.compile. The work happens in worker processes, so a case that hangs is
stopped at its timeout and one that kills its process is reported, not lost; the models
each get a process of their own. The summary is deterministic: the same tracecli and
torch give the same text, which --out writes and --compare reads back.

--fullgraph passes `--fullgraph` to both tracecli commands (one trace or an error: a read
of a tensor's value is refused with exit 2, as before graph breaks, instead of cutting the
trace into segments); the torch.compile reference is the same either way (it always asks
for fullgraph=True), and the summary's first line says when it was given. A run with it
and one without, the second with --compare on the first, give the counts before and
after graph breaks.
"""

from __future__ import annotations

import argparse
import collections
import importlib.metadata
import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.reach import functions, models  # noqa: E402
from benchmarks.reach.harness import CRASHED, MATCH, OUTCOMES, TIMEOUT, Case, Outcome, run_compile, run_tracecli  # noqa: E402

KINDS = ("functions", "models")
PHASES = ("tracecli", "compile")
EXPECTED = Path(__file__).resolve().parent / "expected.txt"
PER_CASE = "per case: set, name, tracecli, opaque ops, torch.compile, tracecli's reason"


def all_cases() -> list[Case]:
    return functions.cases() + models.cases()


# -- the worker: runs tasks ("KIND/NAME/PHASE") and reports each as a JSON line ----------

def worker(tasks: list[str], root: Path, fullgraph: bool = False) -> int:
    report = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever the cases print goes to the log, not into the reports
    lookup = {f"{case.kind}/{case.name}": case for case in all_cases()}
    for task in tasks:
        key, phase = task.rsplit("/", 1)
        report.write(json.dumps({"start": task}) + "\n")
        start = time.perf_counter()
        try:
            outcome = (run_tracecli(lookup[key], root, fullgraph=fullgraph) if phase == "tracecli"
                       else run_compile(lookup[key], root))
        except Exception as exc:  # the harness's own failure, kept apart from the measurement
            traceback.print_exc()
            outcome = Outcome(CRASHED, f"harness: {type(exc).__name__}: {exc}")
        seconds = time.perf_counter() - start
        report.write(json.dumps({"done": task, "outcome": outcome.to_json(), "seconds": seconds}) + "\n")
        if outcome.outcome == CRASHED:
            return 3  # the rest runs in a fresh process, whatever state this one was left in
    return 0


# -- the parent: workers, timeouts, progress --------------------------------------------

@dataclass
class Worker:
    proc: subprocess.Popen
    tasks: list[str]
    current: str | None = None
    started: float = 0.0
    buffer: bytes = b""
    finished: set[str] = field(default_factory=set)

    def remaining(self) -> list[str]:
        return [t for t in self.tasks if t not in self.finished and t != self.current]


class Scheduler:
    def __init__(self, root: Path, jobs: int, timeouts: dict[str, float], total: int, quiet: bool,
                 fullgraph: bool = False):
        self.root, self.jobs, self.timeouts, self.total, self.quiet = root, jobs, timeouts, total, quiet
        self.fullgraph = fullgraph
        self.results: dict[str, tuple[Outcome, float]] = {}
        self.selector = selectors.DefaultSelector()
        self.spawned = 0

    def run(self, batches: list[list[str]]) -> None:
        pending = collections.deque(batches)
        running: list[Worker] = []
        try:
            while pending or running:
                while pending and len(running) < self.jobs:
                    running.append(self._spawn(pending.popleft()))
                for key, _ in self.selector.select(timeout=1.0):
                    w = key.data
                    chunk = os.read(key.fd, 1 << 16)
                    if chunk:
                        self._read(w, chunk)
                        continue
                    self._close(w)
                    running.remove(w)
                    if w.current is None and not w.finished and w.proc.returncode != 0:
                        w.current = w.tasks[0]  # it never started: its log says why
                    if w.current is not None:
                        self._record(w, Outcome(CRASHED, f"the process died (exit {w.proc.returncode})"))
                    if w.remaining():
                        pending.appendleft(w.remaining())
                for w in list(running):
                    limit = self.timeouts[w.current.split("/", 1)[0]] if w.current else None
                    if limit is not None and time.monotonic() - w.started > limit:
                        os.killpg(w.proc.pid, signal.SIGKILL)
                        self._close(w)
                        running.remove(w)
                        self._record(w, Outcome(TIMEOUT, f"no result after {limit:g} s"))
                        if w.remaining():
                            pending.appendleft(w.remaining())
        finally:
            for w in running:  # interrupted: no worker outlives the run
                os.killpg(w.proc.pid, signal.SIGKILL)
                self._close(w)

    def _spawn(self, tasks: list[str]) -> Worker:
        self.spawned += 1
        log = open(self.root / f"worker-{self.spawned}.log", "wb")  # noqa: SIM115 - the child owns it
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.reach.run", "--worker", "--root", str(self.root),
             *(["--fullgraph"] if self.fullgraph else []), *tasks],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=log, env=env, start_new_session=True)
        log.close()
        w = Worker(proc, tasks)
        self.selector.register(proc.stdout, selectors.EVENT_READ, w)
        return w

    def _close(self, w: Worker) -> None:
        self.selector.unregister(w.proc.stdout)
        w.proc.stdout.close()
        w.proc.wait()

    def _read(self, w: Worker, chunk: bytes) -> None:
        w.buffer += chunk
        *lines, w.buffer = w.buffer.split(b"\n")
        for line in lines:
            message = json.loads(line)
            if "start" in message:
                w.current, w.started = message["start"], time.monotonic()
            else:
                self._record(w, Outcome.from_json(message["outcome"]), message["seconds"])

    def _record(self, w: Worker, outcome: Outcome, seconds: float | None = None) -> None:
        """The outcome of the task `w` is on; it is then done."""
        task = w.current
        seconds = time.monotonic() - w.started if seconds is None else seconds
        w.finished.add(task)
        w.current = None
        self.results[task] = (outcome, seconds)
        if not self.quiet:
            width = len(str(self.total))
            print(f"[{len(self.results):>{width}}/{self.total}] {task:<70} {outcome.outcome:<8} {seconds:6.1f} s",
                  file=sys.stderr, flush=True)


def batches_for(kind: str, cases: list[Case], phases: tuple[str, ...], jobs: int) -> list[list[str]]:
    """Models: a process each, both measurements. Functions: each measurement in processes
    of its own (torch.compile's state never meets tracecli's), split over the jobs."""
    if kind == "models":
        return [[f"models/{c.name}/{phase}" for phase in phases] for c in cases]
    out = []
    for phase in phases:
        tasks = [f"functions/{c.name}/{phase}" for c in cases]
        size = -(-len(tasks) // jobs)
        out += [tasks[i : i + size] for i in range(0, len(tasks), size)]
    return out


# -- the summary --------------------------------------------------------------------------

LOCATION = re.compile(r"^([\w./<>-]+\.py:\d+): ")
SOURCE = re.compile(r" \(at `.*$")  # to the end: a long reason may have lost its closing quote


def cause(reason: str) -> str:
    """A reason without where it happened: cases failing the same way group together."""
    return SOURCE.sub("", LOCATION.sub("", reason))


def versions() -> str:
    def version(name):
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return "absent"
    commit = subprocess.run(["git", "log", "-1", "--format=%h", "--", "tracecli"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "tracecli"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    return (f"tracecli at {commit}{' with uncommitted changes' if dirty else ''} · torch {version('torch')}"
            f" · timm {version('timm')} · torchvision {version('torchvision')}")


def _counts_table(kind: str, cases: list[Case], results, phases) -> list[str]:
    lines = [f"{kind} ({len(cases)} cases)".ljust(22) + "".join(f"{o:>9}" for o in OUTCOMES)]
    for phase, label in (("tracecli", "tracecli"), ("compile", "torch.compile")):
        if phase not in phases:
            continue
        counts = collections.Counter(results[f"{kind}/{c.name}/{phase}"][0].outcome for c in cases)
        lines.append(f"  {label}".ljust(22) + "".join(f"{counts[o]:>9}" for o in OUTCOMES))
    return lines


def _by_cause(kind: str, cases: list[Case], results, phase: str) -> list[str]:
    groups = collections.defaultdict(list)
    for c in cases:
        outcome = results[f"{kind}/{c.name}/{phase}"][0]
        if outcome.outcome != MATCH:
            groups[(outcome.outcome, cause(outcome.reason))].append((c.name, outcome.reason))
    lines = []
    for (outcome, why), members in sorted(groups.items(), key=lambda g: (-len(g[1]), g[0])):
        lines.append(f"  {outcome} ({len(members)}): {why}")
        for name, reason in members:
            where = LOCATION.match(reason)
            lines.append(f"      {name}" + (f"  [{where.group(1)}]" if where else ""))
    return lines or ["  (none)"]


def _opaque(kind: str, cases: list[Case], results) -> list[str]:
    reached = collections.defaultdict(list)
    for c in cases:
        for op in results[f"{kind}/{c.name}/tracecli"][0].opaque_ops:
            reached[op].append(c.name)
    return [f"  {op} ({len(names)}): {', '.join(names)}" for op, names in sorted(reached.items())] or ["  (none)"]


def summary(cases: list[Case], results, phases: tuple[str, ...], fullgraph: bool = False) -> str:
    lines = [f"reach · {versions()}" + (" · tracecli --fullgraph" if fullgraph else ""), ""]
    kinds = [k for k in KINDS if any(c.kind == k for c in cases)]
    for kind in kinds:
        lines += _counts_table(kind, [c for c in cases if c.kind == kind], results, phases)
    for kind in kinds:
        chosen = [c for c in cases if c.kind == kind]
        for phase, label in (("tracecli", "tracecli"), ("compile", "torch.compile")):
            if phase in phases:
                lines += ["", f"{kind}, {label}: the cases that do not match, by cause"]
                lines += _by_cause(kind, chosen, results, phase)
        if "tracecli" in phases:
            lines += ["", f"{kind}: the opaque ops tracecli examine reports, and where"]
            lines += _opaque(kind, chosen, results)
    lines += ["", PER_CASE]
    for c in cases:
        traced = results.get(f"{c.kind}/{c.name}/tracecli", (Outcome("-"), 0))[0]
        compiled = results.get(f"{c.kind}/{c.name}/compile", (Outcome("-"), 0))[0]
        opaque = "-" if traced.opaque is None else str(traced.opaque)
        lines.append(f"{c.kind:<9} {c.name:<48} {traced.outcome:<8} {opaque:>3} {compiled.outcome:<8} {traced.reason}".rstrip())
    return "\n".join(lines) + "\n"


def read_results(path: Path) -> dict[str, tuple[str, str, str]]:
    """(tracecli, opaque, torch.compile) per `kind/name`, from a summary written by --out."""
    text = path.read_text().split(PER_CASE + "\n", 1)[1]
    out = {}
    for line in text.splitlines():
        kind, name, traced, opaque, compiled, *_ = line.split(maxsplit=5) + [""]
        out[f"{kind}/{name}"] = (traced, opaque, compiled)
    return out


def comparison(before_path: Path, cases: list[Case], results) -> str:
    before = read_results(before_path)
    lines = [f"compared with {before_path}:"]
    for kind in KINDS:
        keys = [f"{c.kind}/{c.name}" for c in cases if c.kind == kind and f"{c.kind}/{c.name}" in before]
        if not keys:
            continue
        for index, (phase, label) in ((0, ("tracecli", "tracecli")), (2, ("compile", "torch.compile"))):
            if f"{keys[0]}/{phase}" not in results:
                continue
            was = sum(before[k][index] == MATCH for k in keys)
            now = sum(results[f"{k}/{phase}"][0].outcome == MATCH for k in keys)
            lines.append(f"  {kind}, {label}: {was} -> {now} of {len(keys)} match")
        changed = [(k, before[k][0], results[f"{k}/tracecli"][0].outcome) for k in keys
                   if f"{k}/tracecli" in results and before[k][0] != results[f"{k}/tracecli"][0].outcome]
        for key, was, now in changed:
            lines.append(f"    {key.split('/', 1)[1]}: {was} -> {now}")
    return "\n".join(lines) + "\n"


def write_expected(cases: list[Case], results) -> None:
    lines = [
        "# tracecli's outcome on each function of the reach set (benchmarks/reach/functions).",
        "# tests/test_reach.py fails when one recorded here as `match` no longer matches. After",
        "# an improvement: python -m benchmarks.reach.run --set functions --update-expected",
    ]
    lines += [f"{c.name} {results[f'functions/{c.name}/tracecli'][0].outcome}" for c in cases if c.kind == "functions"]
    EXPECTED.write_text("\n".join(lines) + "\n")


def read_expected() -> dict[str, str]:
    rows = (line.split() for line in EXPECTED.read_text().splitlines() if line and not line.startswith("#"))
    return {name: outcome for name, outcome in rows}


# -- the command line -----------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--set", choices=[*KINDS, "all"], default="all", help="which set to run (default: both)")
    parser.add_argument("-k", dest="pattern", help="only the cases whose name contains this")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="worker processes at once (default 1)")
    parser.add_argument("--no-compile", action="store_true", help="leave out the torch.compile reference")
    parser.add_argument("--timeout", type=float, help="seconds per case and measurement (default: functions 60, models 300)")
    parser.add_argument("--out", type=Path, help="also write the summary (without timings) to this file")
    parser.add_argument("--compare", type=Path, help="a summary written by --out: the counts before and now")
    parser.add_argument("--update-expected", action="store_true", help=f"rewrite {EXPECTED.name} from this run's functions")
    parser.add_argument("--fullgraph", action="store_true",
                        help="pass --fullgraph to tracecli's run and examine: a read of a tensor's value is\n"
                             "refused (exit 2) instead of cut into segments; torch.compile is unchanged")
    parser.add_argument("--keep", type=Path, help="write the scripts and logs here and keep them")
    parser.add_argument("--list", action="store_true", help="list the chosen cases and what each exercises")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("tasks", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args.tasks, args.root, args.fullgraph)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that the workers are stopped too

    kinds = KINDS if args.set == "all" else (args.set,)
    cases = [c for c in all_cases() if c.kind in kinds and (not args.pattern or args.pattern in c.name)]
    if not cases:
        parser.error("no case matches")
    if args.list:
        print("\n".join(f"{c.kind:<9} {c.name:<48} {c.doc}" for c in cases))
        return 0
    if args.update_expected and (args.pattern or "functions" not in kinds):
        parser.error("--update-expected needs the whole function set")
    if args.update_expected and args.fullgraph:
        parser.error("--update-expected records tracecli's default run: leave out --fullgraph")
    phases = ("tracecli",) if args.no_compile else PHASES
    timeouts = {"functions": args.timeout or 60.0, "models": args.timeout or 300.0}
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="reach-"))
    workdir.mkdir(parents=True, exist_ok=True)
    scheduler = Scheduler(workdir.resolve(), args.jobs, timeouts, len(cases) * len(phases), args.quiet,
                          args.fullgraph)
    took = {}
    for kind in kinds:
        chosen = [c for c in cases if c.kind == kind]
        if chosen:
            start = time.monotonic()
            scheduler.run(batches_for(kind, chosen, phases, args.jobs))
            took[kind] = time.monotonic() - start
    text = summary(cases, scheduler.results, phases, args.fullgraph)
    print(text, end="")
    print("\n" + " · ".join(f"{kind} took {seconds:.0f} s" for kind, seconds in took.items()))
    if args.keep:
        print(f"scripts and worker logs in {args.keep}; rerun one with "
              f"`python -m tracecli run {args.keep}/KIND/NAME/FILE.py:ENTRY`")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    if args.out:
        args.out.write_text(text)
    if args.compare:
        print(comparison(args.compare, cases, scheduler.results), end="")
    if args.update_expected:
        write_expected(cases, scheduler.results)
        print(f"wrote {EXPECTED.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
