"""What a command imports before it does its work: `tracecli trace` of a plain script
leaves out what only other commands and options need (sympy and symbolic shapes for
calls without a meta kernel, torch's compilers for the inductor executor, transformers).
How long start-up takes is measured in benchmarks/startup_bench.py, not here."""

import json
import subprocess
import sys
import textwrap

import torch

import tracecli
from tests.conftest import ROOT

# The command as the `tracecli` script and `python -m tracecli` run it, then what it left
# imported, and whether the garbage collector, off while importing, is on again.
_RUN_AND_REPORT = textwrap.dedent("""
    import gc, json, sys
    from tracecli.cli.start import main
    try:
        main()
    finally:
        sys.stderr.write("\\nMODULES " + json.dumps({"modules": sorted(sys.modules), "gc": gc.isenabled()}) + "\\n")
""")

THREE_OPS = """\
import torch


def f(x):
    return (x.sin() + 1).relu()


def sample_inputs(device):
    return (torch.randn(4, 4),)
"""

NOT_NEEDED_TO_TRACE = ("sympy", "torch.fx.experimental.symbolic_shapes", "torch._inductor", "torch._dynamo",
                       "transformers")


def _left_out_imported(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in NOT_NEEDED_TO_TRACE))


def run_and_report(*args: str) -> tuple[subprocess.CompletedProcess, set[str], bool]:
    done = subprocess.run([sys.executable, "-c", _RUN_AND_REPORT, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    report = json.loads(done.stderr.rsplit("MODULES ", 1)[1])
    return done, set(report["modules"]), report["gc"]


def test_trace_of_a_plain_script_imports_only_what_tracing_needs(tmp_path):
    script = tmp_path / "three_ops.py"
    script.write_text(THREE_OPS)
    done, modules, collecting = run_and_report("trace", f"{script}:f", "--color", "never")
    assert done.returncode == 0, done.stderr
    assert "ltorch.relu" in done.stdout
    assert _left_out_imported(modules) == []
    assert collecting


def test_version_imports_no_compiler():
    done, modules, collecting = run_and_report("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"tracecli {tracecli.__version__} (torch {torch.__version__})\n"
    assert _left_out_imported(modules) == []
    assert collecting
