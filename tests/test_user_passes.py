"""Users' own passes (`--pass-file`), through the CLI: what the README promises a pass
may do without knowing the pipeline's bookkeeping."""

import json
import shlex
import textwrap

from tests.conftest import ROOT
from tests.test_cli import assert_user_error

# Renames the first value to the name given as its option and adds a new value, its
# negation, that nothing reads. Nothing here touches the trace's name registry.
NAME_FIRST = """
from tracecli.core.symbol import BoundSymbol
from tracecli.core.values import TensorValue
from tracecli.ops import prims
from tracecli.passes import PassResult, map_trace, register, renamer


def identifier(text):
    if not text.isidentifier():
        raise ValueError("expected a Python identifier")
    return {"name": text}


@register("name-first", "name the first value, add its negation", options=identifier)
def name_first(trace, name="first"):
    old = trace.bsyms[0].output
    renamed = map_trace(trace, renamer({old.name: name}))
    first = renamed.bsyms[0].output
    negated = TensorValue("negated", first.shape, first.dtype, first.device)
    bsyms = (renamed.bsyms[0], BoundSymbol(prims.neg, (first,), (), negated), *renamed.bsyms[1:])
    return PassResult(renamed.replace(bsyms=bsyms), True, {"renamed": 1}, {old.name: name})
"""


def pass_file(tmp_path, source: str) -> str:
    path = tmp_path / "my_passes.py"
    path.write_text(textwrap.dedent(source))
    return str(path)


def test_a_pass_renames_and_adds_values_without_keeping_the_registry(cli, tmp_path):
    passes = pass_file(tmp_path, NAME_FIRST)
    result = cli("run", "sample_programs/seed_cse.py", "--pass-file", passes, "-p", "name-first",
                 "--depth", "0", "--no-timing", "--color", "never")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert '  first = ltorch.mul(x, y)  # first: "cpu f32[3, 4]"' in lines
    assert '  negated = prims.neg(first)  # negated: "cpu f32[3, 4]"' in lines
    assert '  t4 = ltorch.mul(first, t1)  # t4: "cpu f32[3, 4]"' in lines
    assert "all 4 outputs match eager" in result.stdout

    # Later passes see the new names: dce drops the unread negation, rename names the
    # renamed value after the user's variable again.
    result = cli("diff", "sample_programs/seed_cse.py", "--pass-file", passes, "-p", "name-first:prod,dce,rename",
                 "--depth", "0", "--each", "--color", "never")
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert '~   prod = ltorch.mul(x, y)  # prod: "cpu f32[3, 4]"    [t0 -> prod]' in text
    assert '+   negated = prims.neg(prod)  # negated: "cpu f32[3, 4]"' in text
    assert '-   negated = prims.neg(prod)  # negated: "cpu f32[3, 4]"' in text
    assert '~   a = ltorch.mul(x, y)  # a: "cpu f32[3, 4]"    [prod -> a]' in text

    report = json.loads(cli("diff", "sample_programs/seed_cse.py", "--pass-file", passes, "-p", "name-first",
                            "--format", "json").stdout)
    assert report["value_map"] == {"t0": "first"}
    assert report["stages"][0]["added"] == 1 and report["stages"][0]["removed"] == 0


def test_stat_summarises_a_user_pass_like_any_other(cli, tmp_path):
    # The columns come from the traces and the value map, not from the pass's own stats.
    passes = pass_file(tmp_path, NAME_FIRST)
    result = cli("diff", "sample_programs/seed_cse.py", "--pass-file", passes, "-p", "name-first,cse", "--stat")
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines()[2:]}
    assert rows["name-first"][1:6] == ["1", "0", "1", "0", "0"]  # +added -removed ~renamed merged subsymbols
    assert rows["cse"][1:6] == ["0", "3", "0", "3", "0"]


def test_the_verifier_still_catches_what_a_user_pass_breaks(cli, tmp_path):
    passes = pass_file(tmp_path, NAME_FIRST)
    # `t1` is taken: the renamed value and the old t1 would share a name.
    result = cli("run", "sample_programs/seed_cse.py", "--pass-file", passes, "-p", "name-first:t1")
    assert result.exit_code == 1
    assert "pass name-first:t1 broke the trace: t1 is defined twice" in result.stderr


def test_a_user_pass_reads_its_own_options(cli, tmp_path):
    passes = pass_file(tmp_path, NAME_FIRST)
    assert_user_error(
        cli("run", "sample_programs/seed_cse.py", "--pass-file", passes, "-p", "name-first:1st"),
        "bad option for name-first: '1st' (expected a Python identifier)",
    )


# --- the README's own example, as written there -------------------------------------------


def readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index(f"\n## {title}\n")
    return text[start : text.index("\n## ", start + 1)]


def _readme_passes_section() -> str:
    return readme_section("Passes")


def _fenced(section: str, fence: str) -> list[str]:
    return [block.split("\n```", 1)[0] for block in section.split(f"```{fence}\n")[1:]]


def test_every_pass_file_in_the_readme_loads(cli, tmp_path):
    for code in _fenced(_readme_passes_section(), "python"):
        name = code.split('@register("', 1)[1].split('"', 1)[0]
        listed = cli("passes", "--pass-file", pass_file(tmp_path, code))
        assert listed.exit_code == 0, listed.output
        assert name in listed.stdout.split()


def test_the_readme_substitution_example_does_what_it_shows(cli, tmp_path):
    section = _readme_passes_section()
    (code,) = [block for block in _fenced(section, "python") if '@register("square"' in block]
    (shown,) = [block for block in _fenced(section, "") if block.startswith("$ tracecli diff")]
    passes = pass_file(tmp_path, code)
    command, *expected = shown.splitlines()
    args = [passes if arg == "my_passes.py" else arg for arg in shlex.split(command)[2:]]
    result = cli(*args, "--color", "never")
    assert result.exit_code == 0, result.output
    assert [line.rstrip() for line in result.stdout.rstrip().splitlines()] == [line.rstrip() for line in expected]

    result = cli("run", "sample_programs/main_block.py:normalize_rows", "-i", "f32[4,16]", "--pass-file", passes,
                 "-p", "square,rename,lower", "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "prims.mul(centered, centered)" in result.stdout and "the output matches eager" in result.stdout
