"""Training steps written the way users write them: `loss.backward()`, `.grad`, optimizer
steps and zero_grad inside the traced entry. Each is traced (forward, a backward region
at the backward() line, the optimizer's in-place updates) and checked against eager:
the loss, every parameter after the step, and every `.grad` the step leaves."""

import json

import pytest
import torch

from tests.test_cli import assert_user_error, write
from tracecli.core.dims import Dim
from tracecli.core.regions import backward_regions
from tracecli.core.values import TensorValue
from tracecli.jobs.runner import trace_script
from tracecli.ops import ltorch
from tracecli.ops.grads import RULES

STEP = """
    import torch
    import torch.nn.functional as F
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 3))
    optimizer = {optimizer}


    def train_step(x, y):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss


    def sample_inputs(device):
        return torch.randn(5, 6, device=device), torch.randint(0, 3, (5,), device=device)
"""

OPTIMIZERS = {
    "sgd": "torch.optim.SGD(model.parameters(), lr=0.1)",
    "sgd-momentum-decay": "torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-2)",
    "sgd-nesterov": "torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)",
    "adam": "torch.optim.Adam(model.parameters(), lr=1e-2)",
    "rmsprop": "torch.optim.RMSprop(model.parameters(), lr=1e-2, momentum=0.5)",
    "adagrad": "torch.optim.Adagrad(model.parameters(), lr=1e-1)",
    "adamw": "torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)",
}


def _run(path, *options):
    return trace_script(str(path), repeat=0, **dict(options))


def _checked(job):
    report = job.calls[0].report
    return report, {w.name for w in report.written}, {g.name for g in report.gradients}


def assert_matches_eager(cli, target: str, *options: str) -> None:
    """`tracecli run TARGET` exits 0, and its JSON says every compared call matches."""
    result = cli("run", target, *options, "--no-timing", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["match"] is True


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_an_optimizer_step_matches_eager(tmp_path, name):
    path = write(tmp_path, "step.py", STEP.replace("{optimizer}", OPTIMIZERS[name]))
    job = _run(path)
    report, written, grads = _checked(job)
    assert report.match, report
    params = {"model_0_weight", "model_0_bias", "model_2_weight", "model_2_bias"}
    # Adagrad makes its state when it is built: inputs the step writes, named for what they are.
    state = {f"adagrad_{k}_{p}" for p in params for k in ("sum", "step")} if name == "adagrad" else set()
    assert written == params | state
    assert grads == {f"{p}.grad" for p in params}
    trace = job.calls[0].final
    assert len(backward_regions(trace)) == 1
    assert sum(b.symbol is ltorch.set_grad for b in trace.bsyms) == 4


def test_the_sample_prints_the_step_then_its_backward(cli):
    result = cli("run", "sample_programs/train_step.py", "--no-timing", "--depth", "0", "-p", "dce,rename",
                 "--color", "never")
    assert result.exit_code == 0, result.output
    out = result.stdout
    step, backward = out.index("def train_step("), out.index("def backward0(")
    assert step < backward
    assert "= autograd.backward0(" in out[step:backward]  # the backward is one call at its line
    assert "# train_step.py:32:  loss.backward()" in out
    assert "grad_model_fc1_weight = ltorch.matmul(" in out[backward:]
    assert "# train_step.py:19:  h = F.gelu(self.norm(self.fc1(x)))" in out[backward:]  # where each gradient comes from
    assert "ltorch.set_grad(model_fc1_weight, " in out[step:backward]
    assert "the output and 6 inputs written in place match eager; all 6 gradients match eager autograd" in out


def test_show_and_json_split_the_step_from_its_backward(cli):
    forward = cli("trace", "sample_programs/train_step.py", "--show", "forward", "--color", "never").stdout
    backward = cli("trace", "sample_programs/train_step.py", "--show", "backward", "--color", "never").stdout
    assert "def train_step(" in forward and "def backward0(" not in forward
    assert "def backward0(" in backward and "def train_step(" not in backward
    call = json.loads(cli("trace", "sample_programs/train_step.py", "--format", "json").stdout)["calls"][0]
    assert "def train_step_backward(" in call["backward"]["text"]


def test_diff_shows_dce_dropping_gradients_nobody_asked_for(cli):
    result = cli("diff", "sample_programs/train_step.py", "-p", "dce,cse,rename", "--show", "backward",
                 "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    removed = [line for line in result.stdout.splitlines() if line.startswith("-   ")]
    # The input x requires no grad: its gradient through fc1 is computed by the rule, then dropped.
    assert any("ltorch.matmul(" in line and "model_fc1_weight" in line for line in removed), result.stdout


def test_gradients_accumulate_into_an_existing_grad(tmp_path):
    source = """
        import torch

        w = torch.nn.Parameter(torch.randn(4, 3))
        (w * 2).sum().backward()  # a .grad from before the traced call


        def accumulate(x):
            loss = (x @ w).square().mean()
            loss.backward()
            return loss


        def sample_inputs(device):
            return (torch.randn(5, 4, device=device),)
    """
    job = _run(write(tmp_path, "acc.py", source))
    report, written, grads = _checked(job)
    assert report.match and grads == {"w.grad"}
    trace = job.calls[0].final
    assert "w_grad" in [v.name for v in trace.inputs]  # the .grad read, then added to in place, as autograd does
    assert any(b.symbol is ltorch.add_ and b.args[0].name == "w_grad" for b in trace.bsyms)
    assert "w_grad" in written


def test_two_backward_calls_add_up_and_no_grad_work_passes_nothing_on(tmp_path):
    source = """
        import torch

        w = torch.nn.Parameter(torch.randn(3, 3))


        def micro_batches(a, b):
            with torch.no_grad():
                scale = (w * w).sum()  # computed from w, but no gradient flows through it
            first = (a @ w).sum() * scale
            first.backward()
            second = (b @ w.detach() + b @ w).sum()
            second.backward()
            return first + second


        def sample_inputs(device):
            return torch.randn(2, 3, device=device), torch.randn(2, 3, device=device)
    """
    job = _run(write(tmp_path, "micro.py", source))
    report, _, grads = _checked(job)
    assert report.match and grads == {"w.grad"}, report
    assert len(backward_regions(job.calls[0].final)) == 2


def test_backward_with_a_gradient_argument(tmp_path):
    source = """
        import torch

        w = torch.nn.Parameter(torch.randn(3))


        def vector_loss(x, seed):
            out = x * w
            out.backward(gradient=seed)
            return out


        def sample_inputs(device):
            return torch.randn(3, device=device), torch.randn(3, device=device)
    """
    report, _, grads = _checked(_run(write(tmp_path, "seeded.py", source)))
    assert report.match and grads == {"w.grad"}


def test_a_wrong_backward_rule_fails_the_step(cli, tmp_path, monkeypatch):
    right = RULES[ltorch.linear]

    def wrong(g, out, x, weight, bias=None):
        grads = right(g, out, x, weight, bias)
        return grads[0], ltorch.mul(grads[1], 1.01), grads[2]

    monkeypatch.setitem(RULES, ltorch.linear, wrong)
    path = write(tmp_path, "step.py", STEP.replace("{optimizer}", OPTIMIZERS["sgd"]))
    result = cli("run", str(path), "--no-timing", "--color", "never")
    assert result.exit_code == 1, result.output
    assert "model_0_weight.grad" in result.stdout and "NO" in result.stdout


@pytest.mark.parametrize(("body", "message"), [
    ("loss = x.sum()\n    loss.backward()", "does not require grad"),
    ("out = x * w\n    out.backward()", "needs gradient="),
    ("loss = (x * w).sum()\n    loss.backward(create_graph=True)", "create_graph=True"),
    ("loss = (x * w).sum()\n    torch.autograd.grad(loss, [w], create_graph=True)", "create_graph=True is not traced"),
    ("loss = (x * w).sum()\n    torch.autograd.grad(loss, [w, x])", "differentiated tensors does not require grad"),
    ("h = x * w\n    h.register_hook(lambda g: g * 2)", "register_hook is not traced: a gradient hook runs inside"),
    ("h = x * w\n    h.retain_grad()", "retain_grad is not traced: a traced step keeps the .grad of leaves only"),
    # Freezing inside the step: the trace would still differentiate w.
    ("loss = (x * w).sum()\n    w.requires_grad_(False)", "changing requires_grad is not traced: which tensors"),
    ("loss = (x * w).sum()\n    w.requires_grad = False", "freeze or unfreeze before calling it"),
])
def test_what_is_not_traced_is_refused_at_its_line(cli, tmp_path, body, message):
    source = f"""
import torch

w = torch.nn.Parameter(torch.randn(3))


def step(x):
    {body}
    return x


def sample_inputs(device):
    return (torch.randn(3, device=device),)
"""
    path = tmp_path / "bad.py"
    path.write_text(source)
    assert_user_error(cli("run", str(path)), message, "bad.py:9")


MAIN = """
    import torch
    from torch import nn


    def train_step(model, optimizer, x):
        optimizer.zero_grad()
        loss = model(x).square().mean()
        loss.backward()
        optimizer.step()
        return loss.detach()


    def main():
        torch.manual_seed(0)
        model = nn.Linear(4, 2)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
        schedule = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
        for _ in range(4):
            print(float(train_step(model, optimizer, torch.ones(3, 4))))
            schedule.step()


    if __name__ == "__main__":
        main()
"""


def test_a_training_loop_in_main(cli, tmp_path):
    path = write(tmp_path, "loop.py", MAIN)
    result = cli("run", str(path), "--no-timing", "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    # The first step makes Adam's state inside the trace; the second reads it as inputs
    # (named for what it is), written in place; a new learning rate needs a new trace.
    assert "train_step: 4 calls, 3 distinct traces" in result.stdout
    assert "adam_exp_avg_model_weight" in result.stdout
    # The loop printed what eager prints: the script went on with the traced steps' results.
    eager = []
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    schedule = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    for _ in range(4):
        optimizer.zero_grad()
        loss = model(torch.ones(3, 4)).square().mean()
        loss.backward()
        optimizer.step()
        eager.append(float(loss.detach()))
        schedule.step()
    printed = [float(line) for line in result.stdout.splitlines()[:4]]
    assert printed == pytest.approx(eager, rel=1e-4)  # Adam amplifies rounding where gradients are tiny


def test_a_bias_before_batch_norm_moves_by_rounding_alone_and_that_is_no_mismatch(cli, tmp_path):
    # Batch norm takes the mean out: the gradient of the bias before it is zero but for
    # rounding, and Adam turns that rounding into steps of up to its learning rate, in
    # eager and in the trace alike, but not the same ones.
    path = write(tmp_path, "bn.py", """
        import torch
        import torch.nn.functional as F
        from torch import nn

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(10, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 3))
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)


        def train_step(x, y):
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss.detach()


        if __name__ == "__main__":
            for _ in range(7):
                train_step(torch.randn(8, 10), torch.randint(0, 3, (8,)))
    """)
    result = cli("run", f"{path}:train_step", "--no-timing", "--depth", "0", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    notes = [w["problem"] for call in data["calls"] for w in call["result"]["written"] if w["problem"]]
    assert notes and all("zero but for rounding" in note or "the update's rounding" in note for note in notes)
    assert data["match"] is True
    # The first step makes Adam's state; one trace serves every later step, though each
    # leaves a new .grad tensor (zero_grad reads it): it is read afresh on every call.
    assert [call["served"] for call in data["calls"]] == [[0], [1, 2, 3, 4, 5, 6]]
    assert [r["call"] for r in data["calls"][1]["rechecks"]] == [3, 4, 5, 6]


def test_a_step_that_sets_train_mode_itself_serves_a_loop_that_evaluates_between_steps(cli, tmp_path):
    # evaluate() leaves the model in eval mode; train_step() puts it back in train mode
    # first. The state a trace takes for granted is what the call found: eval, each time.
    path = write(tmp_path, "epochs.py", """
        import torch
        import torch.nn.functional as F
        from torch import nn

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.2), nn.Linear(6, 2))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)


        def train_step(x, y):
            model.train()
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss.detach()


        @torch.no_grad()
        def evaluate(x):
            model.eval()
            return model(x).argmax(-1)


        if __name__ == "__main__":
            for _ in range(5):
                train_step(torch.randn(4, 6), torch.randint(0, 2, (4,)))
                evaluate(torch.randn(4, 6))
    """)
    result = cli("run", f"{path}:train_step", "--no-timing", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [call["served"] for call in data["calls"]] == [[0], [1, 2, 3, 4]] and data["match"] is True


@pytest.mark.parametrize("executor", ["torch", "prims"])
def test_amsgrad_and_a_returned_view_of_the_weights_match_eager(cli, tmp_path, executor):
    # Adam(amsgrad=True) keeps its running maximum with torch.maximum(..., out=...); the
    # step returns a view of the weight it updated, which must keep eager's values once
    # the check puts the weight back.
    path = write(tmp_path, "amsgrad.py", """
        import torch

        w = torch.nn.Parameter(torch.ones(3))
        opt = torch.optim.Adam([w], lr=0.1, amsgrad=True)


        def step(x):
            opt.zero_grad()
            (w * x).sum().backward()
            opt.step()
            return w.detach()


        def sample_inputs(device):
            return (torch.randn(3),)
    """)
    assert_matches_eager(cli, f"{path}:step", "--executor", executor)


def test_a_parameter_frozen_between_steps_gets_a_trace_that_leaves_it_alone(cli, tmp_path):
    # Frozen on the seventh call only, which no recheck compares with eager: a trace made
    # while it trained would go on updating it there.
    path = write(tmp_path, "freeze.py", """
        import torch

        w = torch.nn.Parameter(torch.ones(3))
        b = torch.nn.Parameter(torch.zeros(3))
        opt = torch.optim.SGD([w, b], lr=0.1)


        def step(x):
            opt.zero_grad()
            (w * x + b * x).sum().backward()
            opt.step()
            return w.detach().clone()


        if __name__ == "__main__":
            for i in range(8):
                w.requires_grad_(i != 6)
                step(torch.ones(3))
            assert torch.allclose(w, torch.full((3,), 0.3)), w  # seven steps of 0.1
    """)
    assert_matches_eager(cli, f"{path}:step")


@pytest.mark.parametrize("executor", ["torch", "prims"])
def test_a_broadcast_gradient_is_left_as_a_grad_of_its_own_memory(cli, tmp_path, executor):
    # b's gradient is the loss's ones broadcast: autograd stores it in memory of its own,
    # which zero_grad(set_to_none=False) and the next backward write in place.
    path = write(tmp_path, "broadcast.py", """
        import torch

        b = torch.nn.Parameter(torch.zeros(3))
        opt = torch.optim.SGD([b], lr=0.1)


        def step(x):
            opt.zero_grad(set_to_none=False)
            (x + b).sum().backward()
            opt.step()
            return b.detach().clone()


        if __name__ == "__main__":
            for _ in range(6):
                step(torch.ones(3))
                assert b.grad.stride() == (1,), b.grad.stride()
            assert torch.allclose(b, torch.full((3,), -0.6)), b
    """)
    assert_matches_eager(cli, f"{path}:step", "--executor", executor)


@pytest.mark.parametrize(("optimizer", "fragments"), [
    # RAdam's step branches on the value of its step count, a tensor in its state (made
    # by an eager step before: one the first traced step makes from constants is known).
    ("RAdam([w], lr=0.1)", ("torch.optim.radam.", "reads it, which is library code")),
    ("ASGD([w], lr=0.1, foreach=True)", ("torch.optim.asgd.", "reads it, which is library code")),
])
def test_a_read_in_torchs_own_optimizer_is_a_break_naming_that_code(cli, tmp_path, optimizer, fragments):
    # Cut at the user's line, the reason naming the library code that reads; with
    # --fullgraph, the advice is about that code and how to use it, not the user's line.
    path = write(tmp_path, "opt.py", f"""
        import torch

        w = torch.nn.Parameter(torch.ones(3))
        opt = torch.optim.{optimizer}


        def step(x):
            opt.zero_grad()
            (w * x).sum().backward()
            opt.step()
            return w.detach().clone()


        def sample_inputs(device):
            return (torch.randn(3),)


        step(torch.randn(3))
    """)
    result = cli("run", str(path), "--no-timing")
    assert result.exit_code == 0, result.output
    assert "cut at opt.py:11:  opt.step()" in result.stdout and f"in {fragments[0]}" in result.stdout
    assert "match eager; the gradient matches eager autograd" in result.stdout
    assert_user_error(cli("run", str(path), "--fullgraph"), "opt.py:11", *fragments)


def test_x_add_y_with_a_0d_tensor_alpha_multiplies_by_it(cli, tmp_path):
    # torch.optim.ASGD passes its step size so; eager reads the number the tensor holds.
    path = write(tmp_path, "alpha.py", """
        import torch


        def f(x, y, a):
            return x.add(y, alpha=-a) - x.sub(y, alpha=a.double())


        def sample_inputs(device):
            return torch.randn(3), torch.randn(3), torch.tensor(0.5)
    """)
    assert_matches_eager(cli, str(path))


@pytest.mark.parametrize("optimizer", ["RMSprop(model.parameters(), lr=1e-2, momentum=0.9)",
                                       "SGD(model.parameters(), lr=1e-2, momentum=0.9)"])
def test_an_optimizers_state_for_a_rounding_level_gradient_is_judged_with_that_gradient(cli, tmp_path, optimizer):
    # The bias before the batch norm has a gradient that is zero but for rounding:
    # RMSprop divides it by its own running size, and its momentum buffer then moves by
    # whole steps on rounding alone, differently in eager and in the trace.
    path = write(tmp_path, "bn.py", f"""
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 1))
        opt = torch.optim.{optimizer}


        def train_step(x):
            opt.zero_grad()
            loss = model(x).square().mean()
            loss.backward()
            opt.step()
            return loss.detach()


        if __name__ == "__main__":
            x = torch.randn(16, 4)
            for _ in range(3):
                train_step(x)
    """)
    assert_matches_eager(cli, f"{path}:train_step")


@pytest.mark.parametrize("executor", ["torch", "prims"])
def test_gradients_accumulated_over_calls_stay_in_the_same_grad_tensor(cli, tmp_path, executor):
    # No zero_grad: autograd adds into the .grad already there, in place; a reference to
    # it taken after the first call sees every later call's gradient.
    path = write(tmp_path, "accumulate.py", """
        import torch

        w = torch.nn.Parameter(torch.ones(3))


        def micro_step(x):
            loss = (w * x).square().mean()
            loss.backward()
            return loss.detach()


        if __name__ == "__main__":
            x = torch.tensor([1.0, 2.0, 3.0])
            micro_step(x)
            g = w.grad
            for i in range(5):
                micro_step(x)
                assert g is w.grad, "the .grad tensor was replaced"
            assert torch.allclose(g, 6 * torch.tensor([2.0, 8.0, 18.0]) / 3)
    """)
    assert_matches_eager(cli, f"{path}:micro_step", "--executor", executor)


def test_each_call_a_trace_serves_sets_the_modes_the_step_sets(cli, tmp_path):
    # The trace runs only the tensor ops: after a served step the model must still be in
    # the train mode the step put it in, as after eager's. The fifth call is the first one
    # not also run eagerly to compare.
    path = write(tmp_path, "modes.py", """
        import torch
        from torch import nn

        model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))


        def train_step(x):
            model.train()
            return model(x).sum()


        if __name__ == "__main__":
            for _ in range(6):
                model.eval()
                train_step(torch.ones(2, 3))
                assert model.training and model[1].training, "the step left the model in eval mode"
    """)
    result = cli("run", f"{path}:train_step", "--no-timing", "--format", "json")
    assert result.exit_code == 0, result.output
    assert [call["served"] for call in json.loads(result.stdout)["calls"]] == [[0, 1, 2, 3, 4, 5]]


def test_gradients_accumulating_over_calls_get_a_trace_that_reads_them(cli, tmp_path):
    # No zero_grad: the first call finds no .grad, the later ones add to the one there.
    path = write(tmp_path, "accumulate.py", """
        import torch
        from torch import nn

        torch.manual_seed(0)
        model = nn.Linear(3, 2)


        def step(x):
            loss = model(x).square().sum()
            loss.backward()
            return loss.detach()


        if __name__ == "__main__":
            for _ in range(4):
                step(torch.ones(2, 3))
            print("grad", round(float(model.weight.grad.sum()), 4))
    """)
    result = cli("run", f"{path}:step", "--no-timing", "--depth", "0")
    assert result.exit_code == 0, result.output
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    for _ in range(4):
        model(torch.ones(2, 3)).square().sum().backward()
    assert f"grad {round(float(model.weight.grad.sum()), 4)}" in result.stdout
    assert "step: 4 calls, 2 distinct traces" in result.stdout


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_hugging_face_training_steps_match_eager(family):
    pytest.importorskip("transformers")
    job = trace_script("sample_programs/hf_train_step.py", repeat=0, script_args=["--llama"] if family == "llama" else [])
    report, written, _ = _checked(job)
    assert report.match, [c for c in (*report.outputs, *report.written) if not c.match]
    # Every parameter the step updates (Llama's rotary frequencies are a buffer).
    params = [v for v in job.calls[0].program.trace.inputs if v.name != "input_ids" and "inv_freq" not in v.name]
    assert written == {v.name for v in params}


def test_cse_merging_two_arguments_of_a_backward_keeps_one_parameter(cli):
    # GPT-2's step reads one value twice where cse finds it made twice: the backward
    # region then takes it once, and its function still compiles.
    pytest.importorskip("transformers")
    result = cli("run", "sample_programs/hf_train_step.py", "-p", "dce,cse,rename", "--no-timing", "--depth", "0")
    assert result.exit_code == 0, result.output
    assert "the output and 28 inputs written in place match eager" in result.stdout


def test_batch_norm_in_training_updates_its_running_statistics(tmp_path):
    source = """
        import torch
        import torch.nn.functional as F
        from torch import nn

        torch.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                              nn.Flatten(), nn.Linear(8, 5))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


        def train_step(images, labels):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
            return loss


        def sample_inputs(device):
            return torch.randn(4, 3, 8, 8, device=device), torch.randint(0, 5, (4,), device=device)
    """
    job = _run(write(tmp_path, "cnn_step.py", source))
    report, written, grads = _checked(job)
    assert report.match, report
    assert {"model_1_running_mean", "model_1_running_var", "model_1_num_batches_tracked"} <= written
    assert len(grads) == 6


def test_in_place_ops_in_the_forward_keep_their_writes_and_their_gradients(tmp_path):
    source = """
        import torch

        w = torch.nn.Parameter(torch.randn(3, 3))
        seen = torch.zeros(3)


        def step(x):
            with torch.no_grad():
                w.data.clamp_(-0.5, 0.5)  # clipped where autograd does not look: w stays the leaf
            h = x @ w
            h.mul_(2)  # in place on a value the backward of `x @ w` does not need, and one it does
            seen.copy_(h.sum(0))  # a captured buffer written in the forward
            loss = (h * seen.detach()).sum() + h.relu_().sum()
            loss.backward()
            return loss


        def sample_inputs(device):
            return (torch.randn(2, 3, device=device),)
    """
    report, written, grads = _checked(_run(write(tmp_path, "inplace_step.py", source)))
    assert report.match, report
    assert written == {"w", "seen"} and grads == {"w.grad"}


CUSTOM = """
    import torch


    class ScaledTanh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            y = torch.tanh(x) * scale
            ctx.save_for_backward(y)
            ctx.scale = scale
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            # A deliberately different gradient than the forward's ops would give: it must be this one.
            return grad * (ctx.scale - y * y / ctx.scale) * 0.5, None


    class Split(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2, x * 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, ga, gb):
            return ga + gb


    class Untraceable(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            return grad * float(grad.sum())


    w = torch.nn.Parameter(torch.randn(4))


    def step(x):
        a, b = Split.apply(x * w)
        loss = ScaledTanh.apply(a, 2.0).sum() + b.sum()
        loss.backward()
        return loss


    def untraceable(x):
        loss = Untraceable.apply(x * w).sum()
        loss.backward()
        return loss


    def forward_only(x):
        return Untraceable.apply(x * w) + 1


    def sample_inputs(device):
        return (torch.randn(4, device=device),)
"""


def test_a_custom_autograd_functions_own_backward_is_traced_and_used(cli, tmp_path):
    path = write(tmp_path, "custom.py", CUSTOM)
    job = trace_script(f"{path}:step", repeat=0)
    report, _, grads = _checked(job)
    assert report.match and grads == {"w.grad"}, report
    text = cli("trace", f"{path}:step", "--depth", "0", "--color", "never").stdout
    assert "ScaledTanh_apply(" in text and "Split_apply(" in text
    backward = text[text.index("def backward0("):]
    # The function's own backward, at the line that applied it: 0.5 * grad * (scale - y²/scale).
    at_apply = backward[backward.index("# custom.py:49:  loss = ScaledTanh.apply(a, 2.0).sum() + b.sum()"):]
    assert "ltorch.mul(" in at_apply and "ltorch.true_divide(" in at_apply


def test_a_custom_function_whose_backward_cannot_be_traced(cli, tmp_path):
    path = write(tmp_path, "custom.py", CUSTOM)
    assert_user_error(cli("run", f"{path}:untraceable"), "custom autograd.Function", "Untraceable.backward",
                      "custom.py:56", "custom.py:41: Tensor.__float__ needs the tensor's values")
    result = cli("run", f"{path}:forward_only", "--no-timing", "--color", "never")  # no backward needed: traced
    assert result.exit_code == 0, result.output


def test_one_symbolic_training_step_serves_every_batch_size():
    job = trace_script("sample_programs/train_step.py", repeat=0, dynamic=True, sizes=["s0=4,s1=16", "s0=13,s1=16"])
    assert len(job.calls) == 1 and [row.reused for row in job.sized] == [False, True, True]
    assert all(row.report.match and row.report.gradients for row in job.sized)
    region = backward_regions(job.calls[0].final)[0]
    assert any(isinstance(d, Dim) for v in region.arg_values() if isinstance(v, TensorValue) for d in v.shape)


SCHEDULED = """
    import torch
    from torch import nn


    def train_step(model, optimizer, x):
        optimizer.zero_grad(set_to_none=False)  # the same .grad tensors, zeroed and added to in place
        loss = model(x).square().mean()
        loss.backward()
        optimizer.step()
        {inside}
        return {"loss": loss.detach(), "lr": optimizer.param_groups[0]["lr"]}


    def main():
        torch.manual_seed(0)
        model = nn.Linear(4, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        schedule = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
        for _ in range(3):
            out = train_step(model, optimizer, torch.ones(3, 4))
            print(float(out["loss"]), out["lr"])
            {outside}


    if __name__ == "__main__":
        main()
"""


def test_a_scheduler_stepping_outside_the_step_gets_a_trace_per_learning_rate(cli, tmp_path):
    path = write(tmp_path, "sched.py", SCHEDULED.replace("{inside}", "pass").replace("{outside}", "schedule.step()"))
    result = cli("run", str(path), "--no-timing", "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "train_step: 3 calls, 3 distinct traces" in result.stdout
    assert [line.split()[1] for line in result.stdout.splitlines()[:3]] == ["0.1", "0.05", "0.025"]


def test_a_scheduler_stepping_inside_the_step_is_refused(cli, tmp_path):
    source = SCHEDULED.replace("{inside}", "schedule.step()").replace("{outside}", "pass")
    source = source.replace("def train_step(model, optimizer, x):", "def train_step(model, optimizer, x, schedule):")
    source = source.replace("train_step(model, optimizer, torch.ones(3, 4))",
                            "train_step(model, optimizer, torch.ones(3, 4), schedule)")
    path = write(tmp_path, "sched.py", source)
    assert_user_error(cli("run", str(path)), "changes its optimizer's settings (lr 0.1 -> 0.05)",
                      "step the scheduler outside")


def test_grad_uses_a_custom_functions_own_backward(cli, tmp_path):
    source = """
        import torch


        class ClampGrad(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g.clamp(-0.1, 0.1)  # not the forward's derivative: it must be this one


        def f(x):
            return ClampGrad.apply(x).sum()


        def sample_inputs(device):
            return (torch.randn(4, device=device, requires_grad=True) * 3,)
    """
    result = cli("run", write(tmp_path, "clamped.py", source), "--grad", "--no-timing", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "ltorch.clamp(" in result.stdout[result.stdout.index("def f_backward("):]
    assert "the gradient matches eager autograd" in result.stdout


def test_autograd_grad_returns_gradients_and_leaves_grad_alone(tmp_path):
    source = """
        import torch
        import torch.nn.functional as F

        w = torch.nn.Parameter(torch.randn(4, 3))
        spare = torch.nn.Parameter(torch.randn(2))


        def saliency(x, y):
            hidden = torch.tanh(x @ w)
            loss = F.cross_entropy(hidden, y)
            grad_x, grad_hidden, grad_w = torch.autograd.grad(loss, [x, hidden, w], retain_graph=True)
            unused, = torch.autograd.grad(loss, [spare], allow_unused=True, materialize_grads=True)
            return grad_x.abs().amax(dim=1), grad_hidden, grad_w, unused


        def sample_inputs(device):
            return torch.randn(5, 4, device=device, requires_grad=True), torch.randint(0, 3, (5,), device=device)
    """
    job = _run(write(tmp_path, "saliency.py", source))
    report, written, grads = _checked(job)
    assert report.match and not written and not grads, report
    assert len(report.outputs) == 4
    assert len(backward_regions(job.calls[0].final)) == 1  # the second reaches nothing: zeros, no backward


def test_examine_counts_the_backwards_ops_and_lowering_keeps_the_grads_checked(cli):
    result = cli("examine", "sample_programs/train_step.py", "--color", "never")
    assert result.exit_code == 0, result.output
    assert ", 0 opaque (0 distinct)" in result.stdout and "ltorch.matmul" in result.stdout  # the backward's ops
    lowered = cli("run", "sample_programs/train_step.py", "-p", "lower,dce,cse,renumber", "--no-timing",
                  "--depth", "0", "--color", "never")
    assert lowered.exit_code == 0, lowered.output
    assert "all 6 gradients match eager autograd" in lowered.stdout  # prims.set_grad is compared too


def test_backward_inputs_accumulates_into_those_leaves_only(tmp_path):
    source = """
        import torch
        from torch import nn

        torch.manual_seed(0)
        gen = nn.Linear(4, 4)
        disc = nn.Linear(4, 1)


        def generator_step(z):
            loss = -disc(gen(z)).mean()
            loss.backward(inputs=list(gen.parameters()))  # the discriminator's .grad stays None
            return loss


        def sample_inputs(device):
            return (torch.randn(6, 4, device=device),)
    """
    report, _, grads = _checked(_run(write(tmp_path, "gan.py", source)))
    assert report.match and grads == {"gen_weight.grad", "gen_bias.grad"}, report


def test_an_autocast_step_is_held_to_its_working_precision(tmp_path):
    # Under bfloat16 autocast the layer norm's weight and bias gradients carry bfloat16
    # rounding in eager as in the trace: compared at float32's tolerance they differed.
    source = """
        import torch
        import torch.nn.functional as F
        from torch import nn

        torch.manual_seed(1)
        model = nn.Sequential(nn.Linear(8, 24), nn.SiLU(), nn.LayerNorm(24), nn.Linear(24, 1))
        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.05)


        def train_step(x, y):
            optimizer.zero_grad()
            with torch.autocast("cpu", dtype=torch.bfloat16):
                pred = model(x).squeeze(-1)
            loss = F.smooth_l1_loss(pred.float(), y)
            loss.backward()
            optimizer.step()
            return loss.detach()


        def sample_inputs(device):
            return torch.randn(12, 8, device=device), torch.randn(12, device=device)
    """
    report, written, grads = _checked(_run(write(tmp_path, "amp_step.py", source)))
    assert report.match, [c for c in (*report.written, *report.gradients) if not c.match]
    assert "model_2_weight.grad" in grads and "model_2_weight" in written
