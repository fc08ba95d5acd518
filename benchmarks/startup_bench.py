"""Section 10 of the benchmarks: start-up. What a command costs before it does any work,
against what it cannot avoid: `python -c "import torch"`.

Each command is a fresh process, timed from spawn to exit by the CPU time it used (user
and system; the suite's default, steady under load) or by the wall clock (--wall).
Start-up swings by half a second from run to run on a shared machine, so the processes
take turns, round after round (import torch, then each command), and each figure is the
median over rounds of a command's difference to the import of its own round: load that
hits one round hits all of its runs.

`tracecli` imports torch with the garbage collector off and then freezes what it made
(cli/start.py), which also spares the collector's pass over it at exit: the same import
done that way is a second reference, so that the column beside the target shows what
tracecli's own imports and work cost.

    trace    `tracecli trace` of a three-op script (trace, verify, print)
    version  `tracecli --version`
    help     `tracecli --help`

The processes may write bytecode (PYTHONDONTWRITEBYTECODE is dropped from their
environment): an installed tracecli has its .pyc files, and compiling some 300 modules
from source on every run would add half a second that no user pays. The first, unmeasured
round writes them.
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


# The references: torch imported plainly, and as tracecli's entry point imports it.
IMPORT_TORCH = "import torch"
IMPORT_AS_TRACECLI = "import gc; gc.disable(); import torch; gc.freeze(); gc.enable()"


@dataclass
class StartupRow:
    command: str
    import_s: float  # median of `python -c "import torch"` over the rounds
    command_s: float  # median of the command's own runs
    over_s: float  # median over rounds of (command - import torch)
    own_s: float  # median over rounds of (command - torch imported as tracecli imports it)
    rounds: int
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


def bench_startup(workdir: Path, rounds: int, wall: bool = False) -> list[StartupRow]:
    runs = {"import": [sys.executable, "-c", IMPORT_TORCH], "as tracecli": [sys.executable, "-c", IMPORT_AS_TRACECLI],
            **startup_commands(workdir)}
    # One unmeasured round: the first runs read every file from disk (and write bytecode),
    # later ones from the cache.
    for argv in runs.values():
        _seconds(argv, workdir, wall)
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, argv in runs.items():
            seconds[name].append(_seconds(argv, workdir, wall))

    def over(name: str, reference: str) -> float:
        return statistics.median(a - b for a, b in zip(seconds[name], seconds[reference], strict=True))

    return [
        StartupRow(name, statistics.median(seconds["import"]), statistics.median(seconds[name]),
                   over(name, "import"), over(name, "as tracecli"), rounds, wall)
        for name in runs if name not in ("import", "as tracecli")
    ]


def print_startup(rows: list[StartupRow]) -> None:
    clock = "wall clock" if rows[0].wall else "CPU time of the processes"
    print(f"10. Start-up: each command against `python -c \"import torch\"`, {rows[0].rounds} rounds (s, {clock})")
    print(f"   {'command':<9} {'import torch':>12} {'command':>8} {'over import':>11} {'over the same import':>20}")
    for r in rows:
        print(f"   {r.command:<9} {r.import_s:>12.2f} {r.command_s:>8.2f} {r.over_s:>11.2f} {r.own_s:>20.2f}")
    print("   trace = `tracecli trace` of a three-op script; version, help = `tracecli --version`, `--help`")
    print("   over import: median over rounds of the difference to `import torch` (the target's figure); over the")
    print("   same import: to torch imported as tracecli does (collector off, then frozen): tracecli's own imports and work")
    print()


def startup_targets(rows: list[StartupRow]) -> list[tuple[str, str, str, bool]]:
    """The summary's lines: each command's time beyond `import torch`."""
    return [(f"start-up: tracecli {r.command} over import torch", f"{r.over_s:.2f} s",
             f"<= {TARGET_OVER_IMPORT_S:.1f} s", r.meets) for r in rows]
