"""A command as a process of its own, measured as the kernel counts it: its CPU time (user
and system, all threads), its wall time and its peak resident memory.

Linux keeps a process's memory high-water mark across exec, so a child forked from a big
process (the benchmark run, pytest) starts with its parent's peak. The command therefore
runs under a small launcher, which forks it and reports the command's own figures.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

_LAUNCHER = """
import json, os, subprocess, sys, time
start = time.perf_counter()
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
child.returncode = os.waitstatus_to_exitcode(status)
with open(sys.argv[1], "w") as out:
    json.dump({"cpu": usage.ru_utime + usage.ru_stime, "wall": time.perf_counter() - start,
               "maxrss": usage.ru_maxrss}, out)
sys.exit(child.returncode)
"""


@dataclass
class Measured:
    cpu: float  # seconds, user + system
    wall: float  # seconds
    peak_rss: int  # bytes
    exit_code: int
    stdout: str
    stderr: str


def measure(argv: list[str], env: dict[str, str] | None = None, cwd: str | Path | None = None) -> Measured:
    """Run `argv` (with `env` added to this process's environment) and measure it."""
    with tempfile.TemporaryDirectory(prefix="tracecli-measure-") as tmp:
        figures = Path(tmp) / "figures.json"
        done = subprocess.run([sys.executable, "-c", _LAUNCHER, str(figures), *argv], cwd=cwd, capture_output=True,
                              text=True, env={**os.environ, **(env or {})}, check=False)
        got = json.loads(figures.read_text())
    # ru_maxrss is in kB on Linux, in bytes on macOS.
    peak = got["maxrss"] * (1 if sys.platform == "darwin" else 1024)
    return Measured(got["cpu"], got["wall"], peak, done.returncode, done.stdout, done.stderr)


__all__ = ["Measured", "measure"]
