"""Loading a script: its code runs as a module, without its main blocks; the functions it
uses as decorators are no entries; what Python refuses to compile is a syntax error at
its line, whether or not the script has a main block."""

import pytest

from tests.test_cli import assert_user_error, write


def test_a_decorator_the_script_defines_is_no_entry(cli, tmp_path):
    script = write(tmp_path, "decorated.py", """
        import torch

        def logged(fn):
            return fn

        @logged
        def model(x):
            return torch.sin(x)
    """)
    result = cli("trace", script, "-i", "f32[3]")
    assert result.exit_code == 0, result.output
    assert "entry model" in result.stderr
    assert "t0 = ltorch.sin(x)" in result.stdout


def test_the_main_block_does_not_run_when_the_inputs_are_given(cli, tmp_path):
    script = write(tmp_path, "with_main.py", """
        import torch

        def model(x):
            return torch.cos(x)

        if __name__ == "__main__":
            raise SystemExit(3)
    """)
    result = cli("trace", script, "-i", "f32[3]")
    assert result.exit_code == 0, result.output
    assert "t0 = ltorch.cos(x)" in result.stdout


@pytest.mark.parametrize("main_block", ["", 'if __name__ == "__main__":\n    model(torch.ones(3))\n'])
def test_what_only_the_compiler_refuses_is_a_syntax_error_at_its_line(cli, tmp_path, main_block):
    # The parser takes a `return` outside any function; compiling it fails.
    script = write(tmp_path, "returns.py", "import torch\n\ndef model(x):\n    return x\n\nreturn 1\n" + main_block)
    assert_user_error(cli("trace", script, "-i", "f32[3]"), "returns.py:6: syntax error", "return 1")
