"""`tracecli diff`, `tracecli passes` and `-p` on run, as users run them."""

import json
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ROOT
from tests.test_cli import assert_user_error


def diff(cli, *args):
    return cli("diff", *args, "--color", "never")


def test_rename_diff_shows_renames_not_walls_of_changes(cli, golden):
    result = diff(cli, "sample_programs/seed_cse.py", "-p", "rename", "--depth", "0")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert not [line for line in lines if line.startswith(("+ ", "- "))][2:], "only the header line changes"
    assert "~   z = ltorch.mul(a, b)  # z: \"cpu f32[3, 4]\"    [t4 -> z, t0 -> a, t1 -> b]" in lines
    assert "[t7 -> a_1]" in result.stdout
    golden("seed_cse.rename.diff.txt", result.stdout)


def test_each_pass_gets_its_own_diff(cli, golden):
    result = diff(cli, "sample_programs/seed_cse.py", "-p", "dce,cse,rename,renumber", "--each", "--depth", "0")
    assert result.exit_code == 0
    text = result.stdout
    assert text.index("── cse: merged 3") < text.index("── rename: renamed 5")
    assert text.rstrip().endswith("unchanged: dce, renumber")
    # Timings vary: compare the rest.
    golden("seed_cse.each.diff.txt", "\n".join(line.split(" (")[0] if line.startswith("──") else line for line in text.splitlines()) + "\n")


def test_cse_diff_removes_the_duplicates(cli):
    result = diff(cli, "sample_programs/seed_cse.py", "-p", "cse", "--depth", "0")
    removed = [line for line in result.stdout.splitlines() if line.startswith("-   t")]
    assert removed == [
        '-   t2 = ltorch.mul(x, y)  # t2: "cpu f32[3, 4]"',
        '-   t3 = ltorch.true_divide(y, x)  # t3: "cpu f32[3, 4]"',
        '-   t5 = ltorch.mul(t2, t3)  # t5: "cpu f32[3, 4]"',
    ]
    assert "~   t6 = ltorch.mul(t4, 1)" in result.stdout and "[t5 -> t4]" in result.stdout


def test_side_by_side(cli, golden):
    result = diff(cli, "sample_programs/seed_sincos.py", "-p", "rename", "--side-by-side", "--depth", "0")
    assert result.exit_code == 0
    assert "before" in result.stdout and "after" in result.stdout
    assert any("t2 = ltorch.add(t0, t1)" in line and "y = ltorch.add(t0, t1)" in line for line in result.stdout.splitlines())


def test_stat(cli):
    result = diff(cli, "sample_programs/seed_cse.py", "-p", "dce,cse,rename", "--stat")
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines()[2:]}
    assert rows["dce"][1:6] == ["0", "0", "0", "0", "0"]
    assert rows["cse"][1:5] == ["0", "3", "0", "3"]
    assert rows["rename"][1:5] == ["0", "0", "5", "0"]
    assert rows["rename"][-1] == "ms"


def test_exit_code_like_git_diff(cli):
    assert diff(cli, "sample_programs/seed_sincos.py", "-p", "dce", "--exit-code").exit_code == 0
    assert diff(cli, "sample_programs/seed_cse.py", "-p", "cse", "--exit-code").exit_code == 1
    assert diff(cli, "sample_programs/seed_cse.py", "-p", "cse").exit_code == 0


def test_no_change_is_said(cli):
    result = diff(cli, "sample_programs/seed_sincos.py", "-p", "dce,cse")
    assert result.stdout.strip() == "no change: dce, cse left the trace as it was"


def test_plain_text_diff(cli):
    result = diff(cli, "sample_programs/seed_cse.py", "-p", "rename", "--text", "--depth", "0")
    lines = result.stdout.splitlines()
    assert lines[:2] == ["--- before", "+++ after"]
    assert '-  t0 = ltorch.mul(x, y)  # t0: "cpu f32[3, 4]"' in lines
    assert '+  a = ltorch.mul(x, y)  # a: "cpu f32[3, 4]"' in lines


def test_json_diff(cli):
    result = cli("diff", "sample_programs/seed_cse.py", "-p", "cse,rename", "--format", "json")
    report = json.loads(result.stdout)
    assert report["command"] == "diff" and report["passes"] == ["cse", "rename"] and report["changed"]
    assert report["stages"][0]["value_map"] == {"t2": "t0", "t3": "t1", "t5": "t4"}
    assert report["value_map"]["t5"] == "z" and report["value_map"]["t7"] == "a_1"
    assert report["stages"][1]["stats"] == {"renamed": 5}
    kinds = {line["kind"] for line in report["lines"]}
    assert kinds <= {" ", "~", "-", "+"}


@pytest.mark.parametrize(("body", "sample", "runs"), [
    # table[ids] with a 4-row table: ids drawn from 0..9 would run out of bounds; they
    # are drawn among the traced call's own.
    ("return table[ids]", "torch.randn(4, 8), torch.tensor([0, 3, 1])",
     [("--seed", "0"), ("--seed", "1"), ("--seed", "2")]),
    # `x[0] += 1` is saved as the view's in-place add and its put-back `setitem_(t0, 0,
    # t4)`, whose value is the very view written: traced again, nothing to refuse.
    ("x = table.clone()\n    x[0] += 1\n    x[:, 1].mul_(ids)\n    return x", "torch.randn(2, 3), 2",
     [("--executor", "torch"), ("--executor", "prims")]),
])
def test_saved_stages_run_again(cli, tmp_path, body, sample, runs):
    script = tmp_path / "stage.py"
    script.write_text(f"import torch\n\n\ndef f(table, ids):\n    {body}\n\n\n"
                      f"def sample_inputs(device):\n    return {sample}\n")
    out = tmp_path / "stages"
    assert diff(cli, str(script), "-p", "dce", "--save", str(out)).exit_code == 0
    for options in runs:
        again = cli("run", str(out / "01-dce.py"), *options, "--no-timing")
        assert again.exit_code == 0, again.output


def test_save_writes_runnable_files_and_a_report(cli, tmp_path):
    out = tmp_path / "stages"
    result = diff(cli, "sample_programs/seed_cse.py", "-p", "dce,cse,rename", "--save", str(out))
    assert result.exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == ["00-initial.py", "01-dce.py", "02-cse.py", "03-rename.py", "report.json"]
    assert json.loads((out / "report.json").read_text())["passes"] == ["dce", "cse", "rename"]
    ran = subprocess.run([sys.executable, str(out / "03-rename.py")], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    again = cli("run", str(out / "03-rename.py"), "--color", "never")
    assert again.exit_code == 0 and "all 4 outputs match eager" in again.stdout


def test_save_writes_symbolic_traces_that_run_at_the_traced_sizes(cli, tmp_path):
    # Sizes that are expressions over the size symbols (`s0*s1`) are spelled as such in
    # the file, which reads them with prims.shape from inputs of the traced call's sizes.
    script = tmp_path / "flat.py"
    script.write_text("import torch\n\n\ndef f(x):\n    return x.reshape(x.shape[0] * x.shape[1]) * 2\n\n\n"
                      "def sample_inputs(device):\n    return (torch.randn(4, 3),)\n")
    out = tmp_path / "stages"
    result = diff(cli, str(script), "--dynamic", "-p", "lower", "--save", str(out))
    assert result.exit_code == 0, result.output
    lowered = (out / "01-lower.py").read_text()
    assert "prims.reshape(x, (s0*s1,))" in lowered and "torch.randn((4, 3)" in lowered
    ran = subprocess.run([sys.executable, str(out / "01-lower.py")], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    for options in ([], ["--dynamic"]):
        again = cli("run", str(out / "01-lower.py"), *options, "--no-timing", "--color", "never")
        assert again.exit_code == 0 and "match" in again.stdout, again.output


def test_bad_input_writes_nothing(cli, tmp_path):
    out = tmp_path / "never"
    assert_user_error(cli("diff", "sample_programs/seed_cse.py", "-p", "dse", "--save", str(out)), "unknown pass 'dse'", "known passes: cse, dce")
    assert not out.exists()


def test_diff_needs_passes(cli):
    assert_user_error(cli("diff", "sample_programs/seed_cse.py"), "diff needs passes", "-p dce,cse,rename")


def test_passes_are_listed(cli):
    result = cli("passes")
    names = [line.split()[0] for line in result.stdout.splitlines()]
    assert names == ["cse", "dce", "fuse", "lower", "rename", "renumber"]
    assert "merge pure bound symbols" in result.stdout


def test_user_pass_file(cli, tmp_path):
    pass_file = tmp_path / "my_passes.py"
    pass_file.write_text(textwrap.dedent("""
        from tracecli.passes import PassResult, register

        @register("drop-hints", "forget the variable-name hints")
        def drop_hints(trace):
            bsyms = tuple(b.replace(name_hints=()) for b in trace.bsyms)
            changed = any(b.name_hints for b in trace.bsyms)
            return PassResult(trace.replace(bsyms=bsyms) if changed else trace, changed)
    """))
    listed = cli("passes", "--pass-file", str(pass_file))
    assert "drop-hints  forget the variable-name hints" in listed.stdout
    # Without hints, rename has nothing to apply.
    result = diff(cli, "sample_programs/seed_cse.py", "--pass-file", str(pass_file), "-p", "drop-hints,rename", "--exit-code")
    assert result.exit_code == 0 and result.stdout.strip() == "no change: drop-hints, rename left the trace as it was"
    result = diff(cli, "sample_programs/seed_cse.py", "--pass-file", str(pass_file), "-p", "rename,drop-hints", "--exit-code")
    assert result.exit_code == 1 and "passes: rename, drop-hints" in result.stdout and "[t0 -> a]" in result.stdout


def test_pass_options_are_read_by_the_pass_they_belong_to(cli):
    for spec in ("lower:1", "lower:all"):
        result = cli("run", "sample_programs/seed_sincos.py", "-p", spec, "--color", "never")
        assert result.exit_code == 0, result.output
        assert f"passes: {spec}\n" in result.stdout
    assert_user_error(
        cli("run", "sample_programs/seed_sincos.py", "-p", "lower:deep"),
        "bad option for lower: 'deep' (expected a depth: a number or 'all')",
    )
    assert_user_error(cli("diff", "sample_programs/seed_sincos.py", "-p", "dce:1"), "pass dce takes no options (got dce:1)")


@pytest.mark.parametrize("script", ["seed_cse.py", "seed_sincos.py", "mlp.py", "gpt_block.py", "main_block.py"])
def test_run_with_passes_still_matches_eager(cli, script):
    result = cli("run", f"sample_programs/{script}", "-p", "dce,cse", "-p", "rename,renumber", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "passes: dce, cse, rename, renumber" in result.stdout


def test_lowered_run_matches_eager_through_prims(cli):
    result = cli("run", "sample_programs/gpt_block.py", "-p", "lower,dce,cse", "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "ltorch." not in result.stdout and "prims.matmul" in result.stdout


def test_subprocess_diff_exit_code():
    result = subprocess.run(
        [sys.executable, "-m", "tracecli", "diff", "sample_programs/seed_cse.py", "-p", "cse", "--exit-code", "--stat"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 1 and "cse" in result.stdout


def test_whole_pipeline_diff_follows_values_through_merges_and_renames(cli, golden):
    result = diff(cli, "sample_programs/seed_cse.py", "-p", "cse,rename", "--depth", "0")
    lines = result.stdout.splitlines()
    assert '~   z = ltorch.mul(a, b)  # z: "cpu f32[3, 4]"    [t4 -> z, t0 -> a, t1 -> b]' in lines
    assert '-   t5 = ltorch.mul(t2, t3)  # t5: "cpu f32[3, 4]"' in lines
    assert not any(line.startswith("+ ") and "ltorch" in line for line in lines)
    golden("seed_cse.cse-rename.diff.txt", result.stdout)


@pytest.mark.parametrize(
    "options",
    [
        ("--text", "--side-by-side"),
        ("--text", "--stat"),
        ("--text", "--each"),
        ("--stat", "--side-by-side"),
        ("--stat", "--each"),
        ("--format", "json", "--side-by-side"),
        ("--format", "json", "--stat"),
        ("--format", "json", "--text"),
        ("--format", "json", "--each"),
    ],
)
def test_options_that_exclude_each_other_are_bad_usage(cli, options):
    named = [o for o in options if o.startswith("--")]
    named = ["--format json" if o == "--format" else o for o in named]
    assert_user_error(cli("diff", "sample_programs/seed_cse.py", "-p", "cse", *options), *named, "cannot be used together")


def test_each_and_side_by_side_combine(cli):
    result = diff(cli, "sample_programs/seed_cse.py", "-p", "cse,rename", "--each", "--side-by-side")
    assert result.exit_code == 0 and "── cse: merged 3" in result.stdout and " │ " in result.stdout


@pytest.mark.parametrize("spec", ["dce,,cse", "dce,", ",dce", "", "lower:"])
def test_empty_pass_names_are_bad_usage(cli, spec):
    message = "empty option" if spec == "lower:" else "empty pass name"
    assert_user_error(cli("run", "sample_programs/seed_cse.py", "-p", spec), message, repr(spec))
    assert_user_error(cli("diff", "sample_programs/seed_cse.py", "-p", spec), message)
