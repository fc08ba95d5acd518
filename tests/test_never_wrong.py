"""Programs on which a trace could differ from eager without anyone noticing: each is now
either traced right (and checked by `run`) or refused with one clear error."""

import json
import os
import textwrap

import pytest
import torch

from tests.test_cli import write
from tracecli.core.errors import TracingError
from tracecli.core.symbol import Tag
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable
from tracecli.passes.lower import lower

# -- tensors made inside the entry -----------------------------------------------------


FACTORIES = """
    import torch

    SCALE = torch.tensor([2.0, 3.0, 4.0])


    def f(x):
        perm = torch.randperm(x.shape[0])
        noise = torch.randint(0, 10, (3,))
        eye = torch.eye(3)
        c = torch.tensor([1.0, 2.0, 3.0])
        lin = torch.linspace(0, 1, 3)
        return x[perm] * SCALE + noise + eye.sum(0) + c + lin


    def sample_inputs(device):
        return (torch.randn(3, 3, device=device),)
"""


def test_factories_inside_the_entry_are_ops_at_their_line(cli, tmp_path):
    script = write(tmp_path, "factories.py", FACTORIES)
    result = cli("run", script, "--depth", "0")
    assert result.exit_code == 0, result.output
    # Only the global is an input, marked as captured; each factory is an op at its line.
    assert "def f(x, SCALE):" in result.stdout
    assert '# SCALE: "cpu f32[3]", captured' in result.stdout
    for line, op in [(8, "ltorch.randperm(3)"), (9, "ltorch.randint(0, 10, (3,))"), (10, "ltorch.eye(3)"),
                     (11, "ltorch.tensor([1.0, 2.0, 3.0])"), (12, "ltorch.linspace(0, 1, 3)")]:
        assert f"# factories.py:{line}:" in result.stdout and op in result.stdout
    assert "the output matches eager" in result.stdout


def test_random_factories_are_tagged_and_run_on_every_call():
    def f(x):
        return x[torch.randperm(4)] + torch.randint(0, 3, (4,))

    trace = trace_callable(f, (torch.randn(4),)).trace
    random = [b.symbol.qualname for b in trace.bsyms if Tag.RANDOM in b.symbol.tags]
    assert random == ["ltorch.randperm", "ltorch.randint"]


def test_examine_counts_factories_and_lists_captured_inputs(cli, tmp_path):
    script = write(tmp_path, "factories.py", FACTORIES)
    result = cli("examine", script, "--strict", "--format", "json")
    assert result.exit_code == 0  # every factory modelled: nothing for --strict to report
    report = json.loads(result.stdout)
    assert report["captured"] == ['SCALE: "cpu f32[3]"']
    assert {"ltorch.randperm", "ltorch.eye", "ltorch.tensor", "ltorch.linspace"} <= {
        op["name"] for op in report["ops"] if op["modeled"]}


# -- state outside the arguments -----------------------------------------------------------


def test_a_global_tensor_written_in_place_is_compared_and_left_as_eager_leaves_it(cli, tmp_path):
    script = write(tmp_path, "counter.py", """
        import torch

        COUNTER = torch.zeros(1)


        def step(x):
            COUNTER.add_(1)
            return x * COUNTER


        if __name__ == "__main__":
            step(torch.ones(2))
            step(torch.ones(2))
            print("counter", COUNTER.item())
    """)
    result = cli("run", script, "--depth", "0")
    assert result.exit_code == 0, result.output
    # Twice, as plain python: neither the check nor the timing runs changed the global.
    assert "counter 2.0" in result.stdout
    assert "COUNTER (written)" in result.stdout


def test_a_pass_dropping_an_inplace_write_to_an_input_is_caught(cli, tmp_path):
    script = write(tmp_path, "scale.py", """
        import torch


        def f(x):
            x.mul_(2)


        def sample_inputs(device):
            return (torch.randn(3, device=device),)
    """)
    passes = write(tmp_path, "drop.py", """
        from tracecli.core.symbol import Tag
        from tracecli.passes import PassResult, register


        @register("drop-writes", "drops every in-place op")
        def drop_writes(trace):
            kept = tuple(b for b in trace.bsyms if Tag.INPLACE not in b.symbol.tags)
            return PassResult(trace.replace(bsyms=kept), kept != trace.bsyms)
    """)
    assert cli("run", script).exit_code == 0
    result = cli("run", script, "--pass-file", passes, "-p", "drop-writes", "--no-verify")
    assert result.exit_code == 1, result.output
    assert "x (written)" in result.stdout and "NO" in result.stdout


def test_the_prims_executor_writes_inputs_back(cli, tmp_path):
    script = write(tmp_path, "inplace.py", """
        import torch


        def f(x, y):
            x.add_(y)
            x[0] = 5.0
            return y * 2


        def sample_inputs(device):
            return torch.randn(3, device=device), torch.randn(3, device=device)
    """)
    result = cli("run", script, "--executor", "prims", "--depth", "0")
    assert result.exit_code == 0, result.output
    assert "x (written)" in result.stdout


def test_lstm_weights_are_named_after_their_module(cli, tmp_path):
    script = write(tmp_path, "rnn.py", """
        import torch
        import torch.nn as nn

        lstm = nn.LSTM(4, 3, batch_first=True)


        def f(x):
            out, _ = lstm(x)
            return out


        def sample_inputs(device):
            return (torch.randn(2, 5, 4, device=device),)
    """)
    result = cli("run", f"{script}:f", "--depth", "0")
    assert result.exit_code == 0, result.output
    assert "def f(x, lstm_weight_ih_l0, lstm_weight_hh_l0, lstm_bias_ih_l0, lstm_bias_hh_l0):" in result.stdout
    assert "captured_1" not in result.stdout


def test_parameters_met_through_a_loop_variable_are_named_after_their_module(cli, tmp_path):
    # An EMA update walks the parameters with a loop variable: each is still the module's
    # parameter, named so and found there again by a later call, not `p`, `p_1`, ...
    script = write(tmp_path, "ema.py", """
        import torch
        import torch.nn as nn

        model = nn.Linear(3, 3)
        ema = nn.Linear(3, 3)


        def step(x):
            with torch.no_grad():
                for p_ema, p in zip(ema.parameters(), model.parameters()):
                    p_ema.mul_(0.9).add_(p, alpha=0.1)
            return ema(x)


        if __name__ == "__main__":
            for _ in range(3):
                step(torch.randn(2, 3))
    """)
    result = cli("run", f"{script}:step", "--depth", "0", "--no-timing")
    assert result.exit_code == 0, result.output
    assert "def step(x, ema_weight, model_weight, ema_bias, model_bias):" in result.stdout
    assert "ema_weight (written)" in result.stdout and "p_ema (written)" not in result.stdout
    assert "3 calls" in result.stdout
    assert "ltorch.set_grad_enabled(False)" in result.stdout and "ltorch.restore_grad_enabled()" in result.stdout


def test_a_no_grad_entry_returns_what_needs_no_gradient_as_eager_does(cli, tmp_path):
    # The main block reads the result as numpy: eager's needs no gradient, so the
    # trace's must not either, on every executor.
    script = write(tmp_path, "predict.py", """
        import torch
        from torch import nn

        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))


        @torch.no_grad()
        def predict(x):
            return model(x).softmax(-1)


        def main():
            for _ in range(2):
                print(predict(torch.randn(5, 4)).numpy().argmax(-1).shape)


        if __name__ == "__main__":
            main()
    """)
    for executor in ("torch", "prims", "inductor"):
        result = cli("run", f"{script}:predict", "--executor", executor, "--depth", "0", "--no-timing")
        assert result.exit_code == 0, result.output
        assert "predict: 2 calls, 1 distinct trace" in result.stdout


def test_the_grad_mode_is_restored_when_the_trace_raises_inside_a_no_grad_block():
    def f(x):
        with torch.no_grad():
            torch._check_tensor_all(x > 0, lambda: "x must be positive")
            return x * 2

    compiled = compile_trace(trace_callable(f, (torch.ones(3),)).trace)
    with pytest.raises(RuntimeError):
        compiled(-torch.ones(3))
    assert torch.is_grad_enabled()


# -- what the entry returns -------------------------------------------------------------------


def test_dataclass_and_named_tuple_outputs_are_built_again(cli, tmp_path):
    script = write(tmp_path, "outputs.py", """
        from dataclasses import dataclass
        from typing import NamedTuple

        import torch


        @dataclass
        class Out:
            loss: torch.Tensor
            logits: torch.Tensor
            step: int = 0


        class Pair(NamedTuple):
            a: torch.Tensor
            b: torch.Tensor


        def f(x):
            return Out(loss=x.sum(), logits=x * 2), Pair(x + 1, x - 1), {"k": [x.exp()]}


        def sample_inputs(device):
            return (torch.randn(3, device=device),)
    """)
    result = cli("run", script, "--depth", "0", "-p", "dce")
    assert result.exit_code == 0, result.output
    assert 'return (Out(loss=t0, logits=t1, step=0), Pair(a=t2, b=t3), {"k": [t4]})' in result.stdout
    assert "all 6 outputs match eager" in result.stdout  # the tensors, and step=0


def test_an_object_holding_traced_tensors_is_refused_at_the_return_line(cli, tmp_path):
    script = write(tmp_path, "box.py", """
        import torch


        class Box:
            def __init__(self, t):
                self.t = t


        def f(x):
            y = x * 2
            return Box(y)


        def sample_inputs(device):
            return (torch.randn(3, device=device),)
    """)
    result = cli("trace", script)
    assert result.exit_code == 2 and result.stdout == ""
    assert "box.py:12: f returns a Box holding traced tensors" in result.stderr
    assert "register_pytree_node" in result.stderr and "(at `return Box(y)`)" in result.stderr


# -- randomness the trace cannot replay -------------------------------------------------------


def test_python_randomness_in_the_entry_is_refused(cli, tmp_path):
    script = write(tmp_path, "pyrand.py", """
        import random

        import torch


        def f(x):
            if random.random() < 0.5:
                return x * 2
            return x + random.random()


        def sample_inputs(device):
            return (torch.randn(3, device=device),)
    """)
    result = cli("trace", script)
    assert result.exit_code == 2
    assert "draws from Python's random module" in result.stderr and "torch.rand" in result.stderr


# -- a script's main block calling its entry more than once -----------------------------------------


def test_a_trace_serves_a_later_call_only_while_what_it_assumed_holds(cli, tmp_path):
    script = write(tmp_path, "guards.py", """
        import torch
        import torch.nn as nn

        SCALE = 2.0
        W = torch.ones(3)
        model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))


        def step(x):
            return model(x * SCALE * W)


        if __name__ == "__main__":
            x = torch.ones(2, 3)
            model.eval()
            a = step(x)
            SCALE = 3.0
            b = step(x)
            W = torch.full((3,), 5.0)
            c = step(x)
            model.train()
            d = step(x)
            model.eval()
            print("right", bool((b == model(x * 3)).all()), bool((c == model(x * 15)).all()))
    """)
    result = cli("run", f"{script}:step", "--depth", "0", "--all-traces")
    assert result.exit_code == 0, result.output
    assert "right True True" in result.stdout
    assert "step: 4 calls, 3 distinct traces" in result.stdout  # the W call reuses b's text, not its tensor
    assert "ltorch.dropout" in result.stdout


def test_numbers_in_modules_configs_and_helpers_are_guarded_too(cli, tmp_path):
    # Each is a constant in the trace; a later call after it changed gets a trace of its own.
    script = write(tmp_path, "numbers.py", """
        import argparse
        from dataclasses import dataclass

        import torch
        from torch import nn


        @dataclass
        class Config:
            bias: float = 0.0


        class Scaler(nn.Module):
            def __init__(self):
                super().__init__()
                self.temperature = 1.0
                self.lin = nn.Linear(4, 4)

            def forward(self, x):
                return self.lin(x) / self.temperature


        config = {"shift": 0.0}
        cfg = Config()
        args = argparse.Namespace(alpha=1.0)
        model = Scaler()
        OFFSET = 0.0


        def helper(y):
            return y - OFFSET


        def f(x):
            return helper(model(x) + config["shift"] + cfg.bias) * args.alpha


        def eager(x):
            return (model.lin(x) / model.temperature + config["shift"] + cfg.bias - OFFSET) * args.alpha


        if __name__ == "__main__":
            x = torch.randn(2, 4)
            right = []
            for change in range(6):
                if change == 1:
                    model.temperature = 2.0
                elif change == 2:
                    config["shift"] = 10.0
                elif change == 3:
                    cfg.bias = 1.0
                elif change == 4:
                    args.alpha = 3.0
                elif change == 5:
                    OFFSET = 7.0
                right.append(torch.allclose(f(x), eager(x)))
            print("right", all(right))
    """)
    result = cli("run", f"{script}:f", "--depth", "0", "--no-timing")
    assert result.exit_code == 0, result.output
    assert "right True" in result.stdout
    assert "f: 6 calls, 6 distinct traces" in result.stdout


def test_later_calls_a_trace_serves_are_compared_with_eager_too(cli, tmp_path):
    # A number three objects deep is not guarded: the trace keeps 2.0, and the later
    # calls it serves after the change are caught comparing with eager, never silent.
    script = write(tmp_path, "deep.py", """
        import types

        import torch


        def make():
            h = types.SimpleNamespace(a=types.SimpleNamespace(inner=types.SimpleNamespace(value=2.0)))

            def f(x):
                return x * h.a.inner.value

            return f, h


        f, h = make()


        if __name__ == "__main__":
            for v in (2.0, 2.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0):
                h.a.inner.value = v
                f(torch.ones(3))
    """)
    result = cli("run", f"{script}:f", "--depth", "0", "--no-timing")
    assert result.exit_code == 1, result.output
    assert "calls 3-5, 9 reused this trace and differ from eager: if something it holds" in result.stdout
    assert "if nothing did, the trace is wrong for these calls" in result.stdout  # a guess, said as one
    assert "1 more call with this trace matches eager" in result.stdout  # call 2
    data = json.loads(cli("run", f"{script}:f", "--format", "json").stdout)
    assert [r["call"] for r in data["calls"][0]["rechecks"]] == [2, 3, 4, 5, 9]
    assert data["match"] is False


def test_python_state_the_entry_changes_is_replayed_by_its_trace(cli, tmp_path):
    # The trace sets what the call set; each call finds `step` moved on and is traced
    # again, its trace holding the value eager's own run of that call uses.
    script = write(tmp_path, "counter.py", """
        import torch

        step = 0
        history = []


        def f(x):
            global step
            step += 1
            history.append(step)
            return x * step


        if __name__ == "__main__":
            for _ in range(3):
                f(torch.ones(2))
            print(step, history)
    """)
    result = cli("run", f"{script}:f", "--depth", "0", "--no-timing")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "3 [1, 2, 3]"
    assert 'ltorch.store_item(globals, "step", 1)' in result.stdout
    assert "f: 3 calls, 3 distinct traces" in result.stdout
    data = json.loads(cli("run", f"{script}:f", "--format", "json").stdout)
    assert data["match"] is True and "notes" not in data["calls"][0]


def test_a_call_under_no_grad_gets_its_own_trace(cli, tmp_path):
    script = write(tmp_path, "modes.py", """
        import torch
        from torch import nn

        model = nn.Linear(3, 3)


        def f(x):
            with torch.no_grad():
                model.weight.mul_(1.0)
            return model(x)


        if __name__ == "__main__":
            x = torch.ones(2, 3)
            with torch.no_grad():
                a = f(x)
            b = f(x)
            print("needs grad", a.requires_grad, b.requires_grad)
    """)
    result = cli("run", f"{script}:f", "--depth", "0", "--no-timing")
    assert result.exit_code == 0, result.output
    assert "needs grad False True" in result.stdout
    assert "f: 2 calls, 2 distinct traces" in result.stdout


def test_a_dict_of_tensors_is_read_afresh_on_every_call(cli, tmp_path):
    script = write(tmp_path, "batches.py", """
        import torch


        def step(batch):
            return batch["x"] * batch["w"]


        if __name__ == "__main__":
            for i in range(3):
                print("got", step({"x": torch.full((2,), float(i)), "w": torch.ones(2)}).tolist())
    """)
    result = cli("run", script, "--depth", "0")
    assert result.exit_code == 0, result.output
    assert "got [0.0, 0.0]" in result.stdout and "got [2.0, 2.0]" in result.stdout
    assert "def step(batch_x, batch_w):" in result.stdout


# -- odds and ends -----------------------------------------------------------------------------------


def test_as_subclass_of_a_traced_tensor(cli, tmp_path):
    script = write(tmp_path, "subclass.py", """
        import torch


        class Tagged(torch.Tensor):
            pass


        def f(x):
            return (x * 2).as_subclass(Tagged) + 1


        def sample_inputs(device):
            return (torch.randn(3, device=device),)
    """)
    result = cli("run", script, "--depth", "0")
    assert result.exit_code == 0, result.output


def test_save_into_a_folder_of_an_earlier_run_replaces_its_stages(cli, tmp_path):
    folder = tmp_path / "stages"
    assert cli("diff", "sample_programs/seed_cse.py", "-p", "dce,cse,rename", "--save", str(folder)).exit_code == 0
    assert cli("diff", "sample_programs/seed_cse.py", "-p", "cse", "--save", str(folder)).exit_code == 0
    assert sorted(os.listdir(folder)) == ["00-initial.py", "01-cse.py", "report.json"]


def test_version_and_bare_command(cli):
    result = cli()
    assert result.exit_code == 0 and "Commands:" in result.stdout
    version = cli("--version")
    assert version.exit_code == 0 and version.stdout.startswith("tracecli ") and torch.__version__ in version.stdout


def test_a_write_through_a_view_of_an_input_reaches_the_input(cli, tmp_path):
    script = write(tmp_path, "through.py", """
        import torch


        def f(x):
            v = x.transpose(0, 1)
            v.add_(1.0)  # x changes too: the caller sees it
            return x * 1


        def sample_inputs(device):
            return (torch.randn(4, 4, device=device),)
    """)
    for executor in ("torch", "prims"):
        result = cli("run", script, "--executor", executor, "--depth", "0")
        assert result.exit_code == 0, result.output
        assert "x (written)" in result.stdout and "ltorch.copy_(x, " in result.stdout


@pytest.mark.parametrize("passes", [[], ["-p", "lower,dce"]])
def test_a_repeat_that_moves_no_data_is_still_a_copy(cli, tmp_path, passes):
    # Its prims merge dims without a copy there: run as prims, the result was a view of x.
    script = write(tmp_path, "tiled.py", """
        import torch


        def f(x):
            ones, column, row = x.repeat(1, 1), x[:, :1].repeat(1, 4), x.tile((1, 1))
            x.add_(1.0)
            return ones, column, row


        def sample_inputs(device):
            return (torch.randn(4, 4, device=device),)
    """)
    result = cli("run", script, "--executor", "prims", *passes)
    assert result.exit_code == 0, result.output


def test_an_inplace_op_reading_a_view_of_what_it_writes_is_refused():
    from tracecli.core.errors import TracingError

    def reading_a_view_of_what_it_writes(x):
        x = x.clone()
        x.mul_(x.transpose(0, 1))  # torch refuses a partly overlapping in-place op
        return x

    try:
        trace_callable(reading_a_view_of_what_it_writes, (torch.randn(4, 4),))
    except TracingError as exc:
        assert "reads a view of the tensor it writes" in str(exc) and exc.line is not None
    else:
        raise AssertionError("traced")


# -- sparse tensors ---------------------------------------------------------------------------

SPARSE_WEIGHT = torch.eye(3).to_sparse()


@pytest.mark.parametrize("layout", ["to_sparse", "to_sparse_csr"])
def test_a_sparse_input_is_refused_at_the_entry(layout):
    def f(x):
        return x * 2

    with pytest.raises(TracingError, match=r"input `x` is a sparse tensor .*sparse tensors are not traced") as info:
        trace_callable(f, (getattr(torch.eye(3), layout)(),))
    assert info.value.file.endswith("test_never_wrong.py") and info.value.source == "def f(x):"


def test_a_sparse_tensor_captured_or_made_inside_is_refused_at_its_line():
    def captured(x):
        return x + SPARSE_WEIGHT

    def made(i, v):
        return torch.sparse_coo_tensor(i, v, (3, 3)) * 2

    with pytest.raises(TracingError, match="the captured tensor `SPARSE_WEIGHT` is a sparse tensor") as info:
        trace_callable(captured, (torch.ones(3, 3),))
    assert info.value.source == "return x + SPARSE_WEIGHT"
    with pytest.raises(TracingError, match="torch.sparse_coo_tensor makes a sparse_coo tensor") as info:
        trace_callable(made, (torch.tensor([[0, 1], [1, 2]]), torch.ones(2)))
    assert info.value.source == "return torch.sparse_coo_tensor(i, v, (3, 3)) * 2"


def test_a_sparse_input_exits_2_naming_the_entry(cli, tmp_path):
    script = write(tmp_path, "sparse.py", """
        import torch


        def f(x):
            return x * 2


        def sample_inputs(device):
            return (torch.eye(3, device=device).to_sparse(),)
    """)
    result = cli("run", script)
    assert result.exit_code == 2
    assert "sparse.py:5" in result.output and "sparse tensors are not traced" in result.output


# -- the random generator's state -----------------------------------------------------------


def test_a_seed_set_inside_the_entry_is_set_by_the_trace_too(cli, tmp_path):
    script = write(tmp_path, "seeded.py", """
        import torch
        import torch.nn.functional as F


        def f(x):
            torch.manual_seed(7)
            noise = torch.rand(3)
            return F.dropout(x, 0.5) + noise


        def sample_inputs(device):
            return (torch.randn(2, 3, device=device),)
    """)
    for executor in ("torch", "prims"):
        result = cli("run", script, "--executor", executor, "--depth", "0", "--no-timing")
        assert result.exit_code == 0, result.output
        assert "ltorch.manual_seed(7)" in result.stdout and "matches eager" in result.stdout
    trace = trace_callable(_seeded, (torch.ones(3),)).trace
    assert [b.symbol.qualname for b in trace.bsyms][:2] == ["ltorch.manual_seed", "ltorch.rand"]
    assert Tag.SIDE_EFFECT in trace.bsyms[0].symbol.tags


def _seeded(x):
    torch.manual_seed(3)
    return torch.rand(3) + x


def test_draws_shaped_like_a_transposed_tensor_follow_its_layout(cli, tmp_path):
    # Eager fills memory in order: rand_like, randn_like, randint_like and dropout of a
    # transposed tensor draw the transposed values, and so must every executor, lowered too.
    script = write(tmp_path, "like.py", """
        import torch
        import torch.nn.functional as F


        def f(x):
            t = x.transpose(0, 1) * 2
            return torch.rand_like(t), torch.randn_like(t), torch.randint_like(t, 9), F.dropout(t, 0.4)


        def sample_inputs(device):
            return (torch.randn(5, 3, device=device),)
    """)
    for executor, passes in (("torch", "dce"), ("prims", "dce"), ("torch", "lower,cse"), ("inductor", "fuse")):
        result = cli("run", script, "--executor", executor, "-p", passes, "--no-timing")
        assert result.exit_code == 0, result.output
        assert "all 4 outputs match eager" in result.stdout
    lowered = lower(trace_callable(lambda x: torch.rand_like(x.T), (torch.ones(2, 3),)).trace).trace
    assert lowered.bsyms[-1].kwargs[-1][0] == "like"


# -- uninitialised memory ---------------------------------------------------------------------


def test_values_made_from_empty_memory_are_compared_by_their_types_only(cli, tmp_path):
    script = write(tmp_path, "empty.py", """
        import torch


        def f(x):
            buf = torch.empty(3, 4)
            filled = torch.empty_like(x).fill_(2.0)
            part = torch.empty(3)
            part[:2] = 1.0
            return buf, filled * x, part


        def sample_inputs(device):
            return (torch.randn(3, 4, device=device),)
    """)
    result = cli("run", script, "--format", "json", "--no-timing")
    assert result.exit_code == 0, result.output
    (call,) = json.loads(result.stdout)["calls"]
    outputs = call["result"]["outputs"]
    assert [o["match"] for o in outputs] == [True, True, True]
    # Filled all over, the middle one is compared by value; the others only by type.
    assert [o["max_abs_error"] is None for o in outputs] == [True, False, True]


def test_contiguous_copies_exactly_when_torch_does():
    # x.t().contiguous() is a copy: writing it leaves x alone; x.contiguous() of a
    # contiguous x is x itself: writing it writes x.
    def f(x):
        v = x.t().contiguous()
        v.add_(1)
        w = x.contiguous()
        w.mul_(2)
        u = x[:, 1:].contiguous()
        u.sub_(3)
        return x, v, w, u

    x = torch.randn(3, 4)
    trace = trace_callable(f, (x,), name="f").trace
    for level in (trace, lower(trace).trace):
        for got, want in zip(compile_trace(level)(x.clone()), f(x.clone()), strict=True):
            assert torch.equal(got, want)


def test_a_layout_read_is_answered_only_where_tracing_knows_the_layout():
    # The proxy's own strides are a C-contiguous tensor's: right for x and x.contiguous(),
    # wrong for a transpose, whose is_contiguous() is False in eager.
    def known(x):
        t = x.t().contiguous()
        return t * t.stride(0) if x.is_contiguous() and t.is_contiguous() else t

    x = torch.randn(3, 4)
    trace = trace_callable(known, (x,), name="known").trace
    assert torch.equal(compile_trace(trace)(x), known(x))

    def asks(x):
        t = x.t()
        return t if t.is_contiguous() else t.contiguous()

    with pytest.raises(TracingError, match=r"Tensor.is_contiguous asks for the memory layout of a tensor that may "
                                           r"not be contiguous") as info:
        trace_callable(asks, (x,), name="asks")
    assert "t.is_contiguous()" in info.value.source
    with pytest.raises(TracingError, match="storage_offset"):
        trace_callable(lambda x: x[1:] * x[1:].storage_offset(), (x,), name="offset")


DEFAULT_FLOAT64 = """
    import torch
    torch.set_default_dtype(torch.float64)


    def f(x):
        return x + torch.ones(3)


    def sample_inputs(device):
        return (torch.randn(3, device=device),)
"""


def test_another_default_dtype_is_refused_not_traced_as_float32(cli, tmp_path):
    # torch.ones(3) is float64 here: a trace declaring float32 would be wrong.
    try:
        result = cli("run", write(tmp_path, "f64.py", DEFAULT_FLOAT64))
    finally:
        torch.set_default_dtype(torch.float32)
    assert result.exit_code == 2
    assert "f64.py:6: tracecli models torch's default dtype as float32" in result.output


def test_setting_the_default_dtype_inside_the_entry_is_refused_at_its_line():
    def entry(x):
        torch.set_default_dtype(torch.float64)
        return x + torch.ones(3)

    try:
        with pytest.raises(TracingError, match=r"torch.set_default_dtype\(torch.float64\)") as info:
            trace_callable(entry, (torch.randn(3),), name="entry")
    finally:
        torch.set_default_dtype(torch.float32)
    assert "torch.set_default_dtype(torch.float64)" in info.value.source
    trace_callable(lambda x: (torch.set_default_dtype(torch.float32), x + 1)[1], (torch.randn(3),), name="fn")


def _own_generator(x):
    generator = torch.Generator().manual_seed(1)
    return x + torch.rand(3, generator=generator)


def test_a_generator_seeded_in_the_entry_is_refused_not_frozen():
    # Eager draws the same numbers on every call from a generator seeded anew; a trace
    # holding the generator would draw on, and a captured result would freeze them.
    with pytest.raises(TracingError, match=r"torch.rand\(..., generator=...\) draws from a torch.Generator") as info:
        trace_callable(_own_generator, (torch.zeros(3),), name="entry")
    assert info.value.line is not None


def _forks_the_rng(x):
    with torch.random.fork_rng():
        torch.manual_seed(3)
        a = torch.rand(3)
    return x + a - torch.rand(3)


def test_a_restored_rng_state_is_restored_by_the_trace_too():
    # fork_rng reads the state and restores it on leaving: the draw after it repeats the
    # one eager makes from the state before, on every call and through both executors.
    program = trace_callable(_forks_the_rng, (torch.zeros(3),), name="entry")
    names = [b.symbol.name for b in program.trace.bsyms]
    assert names.index("get_rng_state") < names.index("manual_seed") < names.index("set_rng_state")
    for trace in (program.trace, lower(program.trace).trace):
        torch.manual_seed(0)
        expected = [_forks_the_rng(torch.zeros(3)) for _ in range(2)]
        torch.manual_seed(0)
        actual = [compile_trace(trace)(torch.zeros(3)) for _ in range(2)]
        torch.testing.assert_close(actual, expected, rtol=0, atol=0)
    assert torch.get_rng_state is torch.random.get_rng_state  # torch's own functions are back


@pytest.mark.parametrize(("entry", "name"), [
    (lambda x: torch.vmap(lambda row: row.sum() * 2)(x), "vmap"),
    (lambda x: torch.func.grad(lambda w: (w * x).sum())(torch.ones(4)), "grad"),
])
def test_function_transforms_on_traced_tensors_are_refused_by_name(entry, name):
    # They run their function below the tracer: the message says which and where.
    with pytest.raises(TracingError, match=rf"torch.func.{name} is not traced") as info:
        trace_callable(entry, (torch.randn(3, 4),), name="entry")
    assert info.value.line is not None
    assert torch.vmap(lambda row: row.sum())(torch.ones(2, 3)).tolist() == [3.0, 3.0]  # torch's own after tracing


def test_a_gradient_penalty_is_refused_by_name():
    def step(x, w):
        loss = (x @ w).sum()
        return torch.autograd.grad(loss, [w], create_graph=True)

    with pytest.raises(TracingError, match=r"create_graph=True is not traced") as info:
        trace_callable(step, (torch.randn(3, 4), torch.randn(4, 2, requires_grad=True)), name="step")
    assert info.value.line is not None
    w = torch.randn(4, 2, requires_grad=True)
    (torch.randn(3, 4) @ w).sum().backward()  # torch's own afterwards
    assert w.grad is not None


@pytest.mark.parametrize("source", [
    # A module class of the script whose forward reads a global: guarded while the main
    # block runs, though `__name__` is "__main__" then.
    """
    SCALE = 1.0


    class Net(torch.nn.Module):
        def forward(self, x):
            return x * SCALE


    net = Net()


    def f(x):
        return net(x)


    def change():
        global SCALE
        SCALE = 3.0
    """,
    # A number two attributes into an instance of one of the script's own classes.
    """
    class Holder:
        pass


    h = Holder()
    h.inner = Holder()
    h.inner.k = 1.0


    def f(x):
        return x * h.inner.k


    def change():
        h.inner.k = 3.0
    """,
    # A number in a dict, and a number, that the entry's closure holds.
    """
    def make():
        state = {"k": 1.0}

        def f(x):
            return x * state["k"]

        def change():
            state["k"] = 3.0

        return f, change


    f, change = make()
    """,
    """
    def make():
        k = 1.0

        def f(x):
            return x * k

        def change():
            nonlocal k
            k = 3.0

        return f, change


    f, change = make()
    """,
])
def test_a_number_the_scripts_own_classes_or_closures_hold_is_guarded(cli, tmp_path, source):
    # Changed before the sixth call, which no recheck compares with eager.
    script = write(tmp_path, "held.py", "import torch\n" + textwrap.dedent(source) + textwrap.dedent("""

        if __name__ == "__main__":
            x = torch.ones(3)
            for i in range(7):
                if i == 5:
                    change()
                expected = x * (3.0 if i >= 5 else 1.0)
                assert torch.equal(f(x), expected), f"call {i + 1} differs from eager"
    """))
    result = cli("run", f"{script}:f", "--depth", "0", "--no-timing")
    assert result.exit_code == 0, result.output
    assert "f: 7 calls, 2 distinct traces" in result.stdout


@pytest.mark.parametrize("executor", ["torch", "prims", "inductor"])
def test_what_is_returned_of_an_input_written_in_place_is_that_input(cli, tmp_path, executor):
    # `y = x.add_(1)` is x itself: after `x.mul_(2)` it holds x's final values, and the
    # caller's `out is x`. Lowered, the writes are functional and copied back at the end:
    # the trace returns the input, not a copy of one of its versions.
    script = write(tmp_path, "alias.py", """
        import torch


        def step(x):
            y = x.add_(1)
            x.mul_(2)
            return y


        if __name__ == "__main__":
            for _ in range(6):
                x = torch.zeros(3)
                out = step(x)
                assert out is x, "the result is not the input written in place"
                assert torch.equal(x, torch.full((3,), 2.0)), x
    """)
    result = cli("run", f"{script}:step", "--executor", executor, "--depth", "0", "--no-timing")
    assert result.exit_code == 0, result.output
    assert "step: 6 calls, 1 distinct trace" in result.stdout


def test_max_and_min_over_every_element_pick_the_zero_eager_picks(cli, tmp_path):
    # Zeros of both signs tie: torch.max(x) returns another one than torch.amax(x), and
    # Python formatting the value reads the sign. Through every depth and executor.
    path = write(tmp_path, "zeros.py", """
        import torch


        def f(x):
            return torch.tensor([float(len(f"{x.max()}{x.min()}{x.amax()}{x.amin()}"))]), x.max(), x.min()


        def sample_inputs(device):
            return (torch.tensor(SIGNS),)


        SIGNS = [[-0.0, -0.0, -0.0, -0.0], [-0.0, -0.0, -0.0, -0.0], [-0.0, 0.0, -0.0, -0.0], [-0.0, 0.0, 0.0, 0.0]]
    """)
    signs = torch.tensor([[-0.0] * 4, [-0.0] * 4, [-0.0, 0.0, -0.0, -0.0], [-0.0, 0.0, 0.0, 0.0]])
    assert f"{signs.max()}" != f"{signs.amax()}"  # the case still ties apart in this torch
    for options in ([], ["-p", "lower"], ["--executor", "prims"], ["--executor", "inductor"]):
        result = cli("run", path, "--no-timing", "--color", "never", *options)
        assert result.exit_code == 0, (options, result.output)
        assert "match eager" in result.stdout, (options, result.output)
    # Their gradient is amax's: shared evenly among the tied elements.
    ties = write(tmp_path, "ties.py", """
        import torch


        def f(x):
            return x.max() * 2 + x.min()


        def sample_inputs(device):
            return (torch.tensor([[1.0, 3.0, 3.0], [-2.0, 0.5, -2.0]], requires_grad=True),)
    """)
    result = cli("run", ties, "--no-timing", "--color", "never", "--grad")
    assert result.exit_code == 0, result.output
    assert "the gradient matches eager autograd" in result.stdout
