"""Section 10 of the benchmarks: start-up. What a command costs before it does any work,
against what it cannot avoid: `python -c "import torch"`.

Each command is a fresh process, timed from spawn to exit by the CPU time it used (user
and system; the suite's default, steady under load) or by the wall clock (--wall).
Start-up swings by half a second from run to run on a shared machine, so the reference
and the command take turns, pair after pair, and the figure is the median of the
differences within pairs: load that hits one pair hits both of its runs.

The processes may write bytecode (PYTHONDONTWRITEBYTECODE is dropped from their
environment): an installed tracecli has its .pyc files, and compiling some 200 modules
from source on every run would add half a second that no user pays. The first, unmeasured
round writes them.

    trace    `tracecli trace` of a three-op script (trace, verify, print)
    version  `tracecli --version`
    help     `tracecli --help`
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

TARGET_OVER_IMPORT_S = 0.3  # the design's start-up target: at most 0.3 s beyond `import torch`

THREE_OPS = '''import torch


def f(x):
    return (x.sin() + 1).relu()


def sample_inputs(device):
    return (torch.randn(4, 4),)
'''


@dataclass
class StartupRow:
    command: str
    import_s: float  # median of `python -c "import torch"`, the runs paired with this command's
    command_s: float  # median of the command's own runs
    over_s: float  # median of (command - import torch) within pairs
    pairs: int
    wall: bool  # timed by the wall clock, else by the processes' CPU time

    @property
    def meets(self) -> bool:
        return self.over_s <= TARGET_OVER_IMPORT_S


def _tracecli() -> list[str]:
    """The installed console script, as a user runs it; `python -m tracecli` without one."""
    script = Path(sys.executable).with_name("tracecli")
    return [str(script)] if script.exists() else [sys.executable, "-m", "tracecli"]


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _seconds(argv: list[str], cwd: Path, wall: bool) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    start, cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start if wall else _children_cpu() - cpu
    if done.returncode != 0:  # timing a command that failed means nothing
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr}")
    return seconds


def startup_commands(workdir: Path) -> dict[str, list[str]]:
    script = workdir / "three_ops.py"
    script.write_text(THREE_OPS)
    tracecli = _tracecli()
    return {
        "trace": [*tracecli, "trace", f"{script.name}:f", "--color", "never"],
        "version": [*tracecli, "--version"],
        "help": [*tracecli, "--help"],
    }


def bench_startup(workdir: Path, pairs: int, wall: bool = False) -> list[StartupRow]:
    reference = [sys.executable, "-c", "import torch"]
    commands = startup_commands(workdir)
    # One unmeasured round: the first runs read every file from disk, later ones from the cache.
    for argv in (reference, *commands.values()):
        _seconds(argv, workdir, wall)
    rows = []
    for name, argv in commands.items():
        imports, runs, over = [], [], []
        for _ in range(pairs):
            imported = _seconds(reference, workdir, wall)
            ran = _seconds(argv, workdir, wall)
            imports.append(imported)
            runs.append(ran)
            over.append(ran - imported)
        rows.append(StartupRow(name, statistics.median(imports), statistics.median(runs), statistics.median(over),
                               pairs, wall))
    return rows


def print_startup(rows: list[StartupRow]) -> None:
    clock = "wall clock" if rows[0].wall else "CPU time of the process"
    print(f"10. Start-up: each command against `python -c \"import torch\"`, {rows[0].pairs} paired runs (s, {clock})")
    print(f"   {'command':<9} {'import torch':>12} {'command':>8} {'over (median of pairs)':>23}")
    for r in rows:
        print(f"   {r.command:<9} {r.import_s:>12.2f} {r.command_s:>8.2f} {r.over_s:>23.2f}")
    print("   trace = `tracecli trace` of a three-op script; version, help = `tracecli --version`, `--help`")
    print()


def startup_targets(rows: list[StartupRow]) -> list[tuple[str, str, str, bool]]:
    """The summary's lines: each command's time beyond `import torch`."""
    return [(f"start-up: tracecli {r.command} over import torch", f"{r.over_s:.2f} s",
             f"<= {TARGET_OVER_IMPORT_S:.1f} s", r.meets) for r in rows]
