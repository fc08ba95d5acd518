"""`--grad` on the command line: the backward of an entry's outputs printed after its
forward, passes run on it, and run checking every gradient against eager autograd."""

import json

import pytest

from tests.test_cli import assert_user_error, write
from tracecli.ops import prims
from tracecli.ops.grads import RULES

LOSS = """
    import torch
    import torch.nn.functional as F


    def loss_fn(x, w, target):
        h = torch.tanh(x @ w)
        return F.mse_loss(h, target)


    def sample_inputs(device):
        x = torch.randn(4, 3, device=device)
        w = torch.randn(3, 2, device=device, requires_grad=True)
        return (x, w, torch.randn(4, 2, device=device))
"""


def test_run_prints_the_backward_and_checks_the_gradient(cli, tmp_path):
    result = cli("run", write(tmp_path, "loss.py", LOSS), "--grad", "-p", "dce,rename", "--no-timing",
                 "--color", "never")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.index("def loss_fn(") < out.index("def loss_fn_backward(")
    backward = out[out.index("def loss_fn_backward("):]
    assert "grad_w = prims.matmul(" in backward
    assert "# loss.py:7:  h = torch.tanh(x @ w)" in backward  # the forward line each gradient comes from
    assert "grad_x" not in backward and "grad_target" not in backward  # dce: nobody asked for them
    assert "the output matches eager; the gradient matches eager autograd" in out


def test_json_carries_both_traces_and_the_gradients(cli, tmp_path):
    result = cli("run", write(tmp_path, "loss.py", LOSS), "--grad", "--no-timing", "--format", "json")
    assert result.exit_code == 0, result.output
    call = json.loads(result.stdout)["calls"][0]
    assert call["grad"]["requires_grad"] == ["w"]
    assert "def loss_fn_backward(" in call["grad"]["backward"]["text"]
    assert [g["name"] for g in call["result"]["gradients"]] == ["grad_w"] and call["result"]["match"]


def test_a_modules_parameters_get_their_gradients(cli):
    result = cli("run", "sample_programs/mlp.py", "--grad", "--no-timing", "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    for name in ("grad_fc1_weight", "grad_fc1_bias", "grad_fc2_weight", "grad_fc2_bias"):
        assert f"{name} = " in result.stdout
    assert "all 4 gradients match eager autograd" in result.stdout


def test_a_wrong_backward_rule_is_caught_by_the_comparison(cli, tmp_path, monkeypatch):
    right = RULES[prims.tanh]
    monkeypatch.setitem(RULES, prims.tanh, lambda *args, **kwargs: [g if g is None else prims.mul(g, 2.0)
                                                                      for g in right(*args, **kwargs)])
    result = cli("run", write(tmp_path, "loss.py", LOSS), "--grad", "--no-timing", "--color", "never")
    assert result.exit_code == 1
    assert "1 of 1 gradients differ from eager autograd" in result.stdout


DETERMINANT = """
    import torch


    def f(x):
        return torch.linalg.det(x) * 2


    def sample_inputs(device):
        return (torch.eye(3, device=device).add(0.1).requires_grad_(),)
"""


@pytest.mark.parametrize(("script", "message"), [
    ("sample_programs/seed_sincos.py", "no input or parameter of foo requires grad"),
    ("sample_programs/main_block.py", "no input or parameter of normalize_rows requires grad"),
    (None, "prims.det"),
])
def test_what_cannot_be_differentiated_is_refused(cli, tmp_path, script, message):
    assert_user_error(cli("run", script or write(tmp_path, "determinant.py", DETERMINANT), "--grad"), message)


def test_convolutions_and_max_pooling_differentiate(cli):
    # The CNN sample: convolutions (torch's backward kernel), max pooling (the gradient
    # at each window's first maximum), batch norm in eval mode.
    result = cli("run", "sample_programs/cnn.py", "--grad", "--no-timing", "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "all 10 gradients match eager autograd" in result.stdout
    assert "torch.ops.aten.convolution_backward.default(" in result.stdout


def test_an_input_spec_can_require_grad(cli):
    result = cli("run", "sample_programs/seed_sincos.py", "-i", "f32[4,4]:grad", "--grad", "--no-timing",
                 "--color", "never")
    assert result.exit_code == 0, result.output
    assert "grad_x = " in result.stdout and "the gradient matches eager autograd" in result.stdout
    assert_user_error(cli("run", "sample_programs/seed_sincos.py", "-i", "i64[4]:grad"),
                      "only a floating point tensor can require grad")


def test_show_picks_the_forward_or_the_backward(cli, tmp_path):
    script = write(tmp_path, "loss.py", LOSS)
    backward = cli("trace", script, "--grad", "--show", "backward", "--depth", "0", "--color", "never").stdout
    assert "def loss_fn_backward(" in backward and "def loss_fn(" not in backward
    forward = cli("trace", script, "--grad", "--show", "forward", "--depth", "0", "--color", "never").stdout
    assert "def loss_fn(" in forward and "_backward" not in forward
    assert_user_error(cli("trace", script, "--show", "backward"), "--show backward needs a backward: --grad, or an entry that calls loss.backward()")


def test_diff_shows_the_passes_at_work_on_the_backward(cli, tmp_path):
    script = write(tmp_path, "loss.py", LOSS)
    result = cli("diff", script, "--grad", "--show", "backward", "-p", "dce,cse,rename", "--depth", "0",
                 "--color", "never")
    assert result.exit_code == 0, result.output
    removed = [line for line in result.stdout.splitlines() if line.startswith("-   ")]
    assert any("prims.neg(grad_h)" in line for line in removed)  # the gradient of target, which nobody asked for
    assert "passes: dce, cse, rename, dce" not in result.stdout
    report = json.loads(cli("diff", script, "--grad", "-p", "dce", "--format", "json").stdout)
    assert report["backward"]["changed"] and not report["changed"]


SEEDED = """
    import torch


    def f(x, w):
        return torch.tanh(x @ w), (x * w.sum()).sin()


    def sample_inputs(device):
        return (torch.randn(4, 3, device=device, requires_grad=True),
                torch.randn(3, 2, device=device, requires_grad=True))


    def sample_grads(device):
        return (torch.full((4, 2), 0.5, device=device), torch.linspace(-1, 1, 12, device=device).reshape(4, 3))
"""


def test_sample_grads_seeds_the_backward(cli, tmp_path):
    # Cotangents other than ones: both sides must use them for the gradients to agree.
    result = cli("run", write(tmp_path, "seeded.py", SEEDED), "--grad", "--no-timing", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "all 2 gradients match eager autograd" in result.stdout
    one_short = SEEDED.replace("return (torch.full((4, 2), 0.5, device=device), ", "return (")
    assert_user_error(cli("run", write(tmp_path, "short.py", one_short), "--grad"), "sample_grads() gave 1 cotangents")


def test_save_writes_the_backwards_stages_beside_the_forwards(cli, tmp_path):
    saved = tmp_path / "saved"
    result = cli("diff", write(tmp_path, "loss.py", LOSS), "--grad", "-p", "dce", "--save", str(saved))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (saved / "backward").iterdir()) == ["00-initial.py", "01-dce.py", "report.json"]
    again = cli("run", str(saved / "backward" / "01-dce.py"), "--no-timing")  # a runnable file of its own
    assert again.exit_code == 0, again.output


DATACLASS_OUTPUT = """
    from dataclasses import dataclass

    import torch
    import torch.nn.functional as F


    @dataclass
    class Output:
        logits: torch.Tensor
        loss: torch.Tensor


    def classify(x, w, labels):
        logits = x @ w
        return Output(logits, F.cross_entropy(logits, labels))


    def sample_inputs(device):
        return (torch.randn(4, 3, device=device), torch.randn(3, 5, device=device, requires_grad=True),
                torch.tensor([0, 4, 2, 1], device=device))
"""


def test_outputs_in_a_dataclass_are_seeded_like_any_container(cli, tmp_path):
    result = cli("run", write(tmp_path, "classify.py", DATACLASS_OUTPUT), "--grad", "--no-timing", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "the gradient matches eager autograd" in result.stdout


MAIN_MODEL = """
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            return torch.tanh(self.fc(x)).sum()


    def main():
        torch.manual_seed(0)
        model = Net()
        for n in (2, 5):
            print(float(model(torch.randn(n, 4))))


    if __name__ == "__main__":
        main()
"""


def test_grad_through_a_main_block(cli, tmp_path):
    result = cli("run", write(tmp_path, "main_model.py", MAIN_MODEL), "--grad", "--no-timing", "--depth", "0",
                 "--color", "never")
    assert result.exit_code == 0, result.output
    assert result.stdout.count("def Net_backward(") == 2  # one trace per batch size, each with its backward
    assert result.stdout.count("all 2 gradients match eager autograd") == 2
