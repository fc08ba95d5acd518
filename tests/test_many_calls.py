"""A main block that calls its entry many times: traces grouped by their text, a cap on
how many print, a summary naming the specialised argument, and failures never hidden."""

import json

import click
import pytest

from tests.test_cli import write
from tracecli.cli.options import DYNAMIC, offered
from tracecli.jobs.runner import trace_script
from tracecli.render.calls_view import MAX_TRACES, specialisation_notes

LOOP = """
    import torch

    def step(x, t):
        return x * t + 1

    if __name__ == "__main__":
        x = torch.ones(3)
        for t in range(100):
            y = step(x, t)
        print("last", float(y.sum()))
"""

# Breaks numerics for one call only: the trace where t is 50 adds 2 instead of 1.
BREAK_AT_50 = """
    from tracecli.passes import PassResult, register

    @register("break-at-50", "adds 2 instead of 1 in the trace where t is 50")
    def break_at_50(trace):
        if not any(v.name == "t" and getattr(v, "value", None) == 50 for v in trace.inputs):
            return PassResult(trace, False)
        bsyms = tuple(b.replace(args=(b.args[0], 2)) if b.symbol.qualname == "ltorch.add" else b for b in trace.bsyms)
        return PassResult(trace.replace(bsyms=bsyms), True)
"""


@pytest.fixture
def loop(tmp_path):
    return write(tmp_path, "loop.py", LOOP)


def headings(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("── trace ")]


@pytest.mark.parametrize("command", ["trace", "run"])
def test_a_loop_over_an_int_prints_a_few_traces_and_names_the_argument(cli, loop, command):
    result = cli(command, loop, "--depth", "0", "--color", "never", *(["--no-timing"] if command == "run" else []))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("last 300.0\n"), "the script's own output first"
    assert headings(out) == [f"── trace {k} of 100 · call {k} ──" for k in range(1, MAX_TRACES + 1)]
    assert out.count("def step(x, t):") == MAX_TRACES
    assert '# t: "int 2"' in out and '# t: "int 3"' not in out
    summary = "step: 100 calls, 100 distinct traces; 97 not shown (calls 4-100)"
    summary += ", all matching eager" if command == "run" else ""
    assert f"{summary}; --all-traces prints them\n" in out
    assert out.rstrip().endswith("t took 100 int values: 0, 1, 2, ..., 99; each value is traced separately")
    if command == "run":
        assert out.count("the output matches eager") == MAX_TRACES


def test_all_traces_prints_every_one(cli, loop):
    out = cli("trace", loop, "--depth", "0", "--all-traces", "--color", "never").stdout
    assert len(headings(out)) == 100 and "not shown" not in out
    assert "step: 100 calls, 100 distinct traces\n" in out


def test_calls_with_one_trace_are_one_group(cli):
    out = cli("trace", "sample_programs/main_block.py", "--color", "never").stdout
    assert headings(out) == ["── trace 1 of 2 · 2 calls: 1-2 ──", "── trace 2 of 2 · call 3 ──"]
    assert out.rstrip().endswith("normalize_rows: 3 calls, 2 distinct traces")


def test_one_call_prints_just_its_trace(cli):
    out = cli("run", "sample_programs/seed_cse.py", "--color", "never").stdout
    assert "── trace" not in out and "distinct" not in out and "traced separately" not in out


def test_a_mismatching_call_is_never_hidden(cli, loop, tmp_path):
    passes = write(tmp_path, "breaks.py", BREAK_AT_50)
    result = cli("run", loop, "--pass-file", passes, "-p", "break-at-50", "--depth", "0", "--no-timing", "--color", "never")
    assert result.exit_code == 1, result.output
    out = result.stdout
    assert headings(out) == [*(f"── trace {k} of 100 · call {k} ──" for k in (1, 2, 3)), "── trace 51 of 100 · call 51 ──"]
    failing = out.split("── trace 51 of 100 · call 51 ──", 1)[1]
    assert '# t: "int 50"' in failing and "ltorch.add(t0, 2)" in failing
    assert "1 of 1 outputs differ from eager" in failing
    # The summary counts the 96 hidden traces, which all match.
    assert "step: 100 calls, 100 distinct traces; 1 differs from eager (trace 51); 96 not shown (calls 4-50, 52-100), all matching eager" in out


def test_json_keeps_every_call_and_says_how_they_group(cli, loop):
    result = cli("run", loop, "--format", "json", "--no-timing")
    report = json.loads(result.stdout)
    assert len(report["calls"]) == 100
    assert [c["group"] for c in report["calls"]] == list(range(100))
    assert report["calls"][7]["served"] == [7]
    assert report["groups"][7] == {"calls": [7], "served": [7]}
    assert report["specialized"] == [{"argument": "t", "types": ["int"], "values": list(range(100))}]
    grouped = json.loads(cli("trace", "sample_programs/main_block.py", "--format", "json").stdout)
    assert [(c["group"], c["served"]) for c in grouped["calls"]] == [(0, [0, 1]), (1, [2])]
    assert grouped["groups"] == [{"calls": [0], "served": [0, 1]}, {"calls": [1], "served": [2]}]
    assert grouped["specialized"] == []


def test_arguments_that_differ_otherwise_are_not_named(cli, tmp_path):
    script = write(tmp_path, "shapes.py", """
        import torch

        def step(x, scale, name):
            return x * scale

        if __name__ == "__main__":
            for n, scale in ((2, 0.5), (3, 0.5), (4, True)):
                step(torch.ones(n), scale, "same")
    """)
    out = cli("trace", script, "--color", "never").stdout
    # x changed shape (not a number), name never changed; scale took a float and a bool.
    notes = [line for line in out.splitlines() if "each value is traced separately" in line]
    assert notes == ["scale took 2 float/bool values: 0.5, True; each value is traced separately"]


def test_the_dynamic_hint_waits_for_the_option(cli, loop):
    assert DYNAMIC not in cli("trace", loop, "--color", "never").stdout
    # Where a command accepts it, the note names it.
    command = click.Command("run", params=[click.Option([DYNAMIC], is_flag=True)])
    with click.Context(command):
        assert offered(DYNAMIC) == DYNAMIC
    with click.Context(click.Command("run", params=[])):
        assert offered(DYNAMIC) is None


def test_the_note_names_the_dynamic_option_it_is_given(tmp_path):
    job = trace_script(write(tmp_path, "loop.py", LOOP), execute=False)
    (note,) = specialisation_notes(job.calls, "--dynamic")
    assert note.endswith("each value is traced separately (--dynamic makes it symbolic)")


def test_diff_groups_calls_too(cli, loop):
    out = cli("diff", loop, "-p", "rename", "--depth", "0", "--color", "never").stdout
    assert len(headings(out)) == MAX_TRACES
    assert "step: 100 calls, 100 distinct traces; 97 not shown (calls 4-100); --all-traces prints them" in out
    report = json.loads(cli("diff", loop, "-p", "rename", "--format", "json").stdout)
    assert len(report["calls"]) == 100 and report["calls"][3]["group"] == 3
    assert report["specialized"][0]["argument"] == "t"


def test_instances_with_one_trace_share_it_and_one_table(cli, tmp_path):
    script = write(tmp_path, "nets.py", """
        import torch

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(4, 2)

            def forward(self, x):
                return self.fc(x).relu()

        if __name__ == "__main__":
            for _ in range(3):
                Net()(torch.ones(1, 4))
    """)
    result = cli("run", f"{script}:Net", "--no-timing", "--color", "never")
    assert result.exit_code == 0, result.output
    out = result.stdout
    # Each instance has its own weights, so its own trace and check; they print alike.
    assert headings(out) == ["── trace 1 of 1 · 3 calls: 1-3 ──"]
    assert out.count("output   shape") == 1 and "\ncall 1:\n" in out
    assert "2 more calls with this trace match eager" in out
    assert out.rstrip().endswith("Net: 3 calls, 1 distinct trace")
