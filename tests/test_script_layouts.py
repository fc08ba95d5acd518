"""Scripts laid out the way PyTorch users write them: decorated entries, a `main()` that
builds its model, argparse, `sys.exit(main())`, prints and counters in the entry."""

import torch

from tests.test_cli import write

MAIN_FN = """
    import argparse
    import sys

    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(8, 16)
            self.fc2 = nn.Linear(16, 4)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))


    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--batch", type=int, default=2)
        args = parser.parse_args()
        print("argv0", sys.argv[0].endswith("mainfn.py"))
        model = Net().eval()
        x = torch.randn(args.batch, 8)
        out = model(x)
        print("out", tuple(out.shape))


    if __name__ == "__main__":
        sys.exit(main())
"""


def test_decorated_entry_is_found(cli, tmp_path):
    script = write(tmp_path, "deco.py", """
        import functools
        import torch


        def logged(fn):
            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                return fn(*args, **kwargs)
            return wrapper


        @logged
        @torch.no_grad()
        def infer(x):
            return torch.relu(x) * 2


        def sample_inputs(device):
            return (torch.randn(4, device=device),)
    """)
    result = cli("run", script, "--depth", "0")
    assert result.exit_code == 0, result.output
    assert "entry infer (the only top-level function in the script)" in result.stderr
    assert "ltorch.relu" in result.stdout


def test_a_decorated_entry_beside_another_function_is_not_passed_over(cli, tmp_path):
    # Two real candidates: the error lists both rather than picking the undecorated one.
    script = write(tmp_path, "two.py", """
        import torch


        @torch.no_grad()
        def infer(x):
            return x * 2


        def other(x):
            return x + 1


        def sample_inputs(device):
            return (torch.randn(4),)
    """)
    result = cli("run", script)
    assert result.exit_code == 2
    assert "several possible entries: infer, other" in result.stderr


def test_main_that_builds_its_model_traces_the_model(cli, tmp_path):
    script = write(tmp_path, "mainfn.py", MAIN_FN)
    result = cli("run", script, "--depth", "0")
    assert result.exit_code == 0, result.output
    assert "entry Net (the nn.Module class the script's main block runs)" in result.stderr
    assert "def Net(x, fc1_weight, fc1_bias, fc2_weight, fc2_bias):" in result.stdout
    assert '# x: "cpu f32[2, 8]"' in result.stdout
    assert "the output matches eager" in result.stdout
    # The script ran as by python: its own argv, its prints once, `sys.exit(main())` a success.
    assert result.stdout.count("argv0 True") == 1
    assert result.stdout.count("out (2, 4)") == 1


def test_arguments_after_the_double_dash_go_to_the_script(cli, tmp_path):
    script = write(tmp_path, "mainfn.py", MAIN_FN)
    result = cli("trace", script, "--depth", "0", "--", "--batch", "5")
    assert result.exit_code == 0, result.output
    assert '# x: "cpu f32[5, 8]"' in result.stdout


def test_main_itself_as_the_entry_leaves_construction_out(cli, tmp_path):
    script = write(tmp_path, "mainfn.py", MAIN_FN)
    result = cli("run", f"{script}:main", "--depth", "0")
    assert result.exit_code == 0, result.output
    # The weights were made for real while main() built the model: inputs named after it.
    assert "def main(model_fc1_weight, model_fc1_bias, model_fc2_weight, model_fc2_bias):" in result.stdout
    assert "ltorch.randn((2, 8))" in result.stdout
    assert "kaiming" not in result.stdout


def test_a_module_class_entry_with_inputs_is_instantiated(cli, tmp_path):
    script = write(tmp_path, "mainfn.py", MAIN_FN)
    result = cli("run", f"{script}:Net", "-i", "f32[3,8]", "--depth", "0")
    assert result.exit_code == 0, result.output
    assert '# x: "cpu f32[3, 8]"' in result.stdout


def test_a_failing_exit_status_of_the_main_block_is_an_error(cli, tmp_path):
    script = write(tmp_path, "fails.py", """
        import sys
        import torch


        def f(x):
            return x + 1


        if __name__ == "__main__":
            f(torch.ones(2))
            sys.exit(3)
    """)
    result = cli("run", script)
    assert result.exit_code == 2
    assert "exited with status 3" in result.stderr


COUNTING = """
    import os

    import torch

    CALLS = []


    def step(x):
        CALLS.append(1)
        # Counted in the environment, which tracing cannot put back as it found it.
        os.environ["STEP_RUNS"] = str(int(os.environ.get("STEP_RUNS", "0")) + 1)
        print("in step")
        return x * 2


    if __name__ == "__main__":
        os.environ["STEP_RUNS"] = "0"
        step(torch.ones(3))
        print("user code ran", os.environ["STEP_RUNS"], "times;", len(CALLS), "call logged;", "rand",
              torch.rand(1).item())
"""


def test_the_entrys_output_appears_once_and_timing_can_be_turned_off(cli, tmp_path):
    script = write(tmp_path, "count.py", COUNTING)
    timed = cli("run", script, "--depth", "0")
    assert timed.exit_code == 0, timed.output
    assert timed.stdout.count("in step") == 1
    untimed = cli("run", script, "--depth", "0", "--no-timing")
    assert untimed.stdout.count("in step") == 1
    # Traced once, run eagerly once to check: nothing else runs the user's Python. The
    # state tracing looks at ends as the script's one call leaves it.
    assert "user code ran 2 times; 1 call logged" in untimed.stdout
    assert "not timed" in untimed.stdout


def test_seed_reaches_the_scripts_main_block(cli, tmp_path):
    script = write(tmp_path, "count.py", COUNTING)
    result = cli("trace", script, "--seed", "5", "--depth", "0")
    torch.manual_seed(5)
    assert f"rand {torch.rand(1).item()}" in result.stdout


def test_a_seed_out_of_range_is_a_usage_error(cli):
    result = cli("run", "sample_programs/seed_cse.py", "--seed", str(2**70))
    assert result.exit_code == 2
    assert "bad --seed" in result.stderr
