"""Tracing for a device this machine lacks (`cuda:0` without a GPU, `meta`): every tensor the
trace reads stands for its twin on that device, as if the script had moved its model
there: inputs, parameters, captured globals, `.grad`s and optimizer state, in inference,
training steps and main-block scripts alike. Tensors the entry makes keep torch's rule."""

import json
from pathlib import Path

import pytest
import torch

from tests.conftest import ROOT
from tests.test_cli import assert_user_error, needs_cuda, no_cuda, write
from tests.test_training import assert_matches_eager
from tracecli.core.trace import walk
from tracecli.core.values import TensorValue
from tracecli.jobs.devices import move_state
from tracecli.jobs.runner import trace_script

SAMPLES = sorted(p.name for p in (ROOT / "sample_programs").glob("*.py"))


def _traced(target: str, device: str = "cuda:0", script_args=None):
    job = trace_script(target, device=device, execute=False, script_args=script_args)
    return [call.program.trace for call in job.calls]


def _assert_on(trace, device: str) -> None:
    """Every input on `device`, and every value made from them too. Only an optimizer's step
    may make values elsewhere: torch keeps its step counts on the CPU on every device (and
    under torch.compile, the step sizes stacked from them)."""
    inputs = [v for v in trace.inputs if isinstance(v, TensorValue)]
    assert inputs and all(v.device == device for v in inputs if "_step_" not in v.name), inputs
    for bsym in trace.bsyms:
        made = [v for _, b in walk([bsym]) for v in b.output_values() if isinstance(v, TensorValue)]
        elsewhere = [v for v in made if v.device != device]
        assert not elsewhere or (bsym.source is not None and ".step()" in bsym.source.text
                                 and all(v.device == "cpu" for v in elsewhere)), (bsym.source, elsewhere[:3])


@pytest.mark.parametrize("script", SAMPLES)
def test_every_sample_traces_for_a_gpu_this_machine_lacks(script):
    if script.startswith("hf_"):
        pytest.importorskip("transformers")
    for trace in _traced(f"sample_programs/{script}"):
        _assert_on(trace, "cuda:0")


def test_the_llama_training_step_traces_for_cuda():
    pytest.importorskip("transformers")
    (trace,) = _traced("sample_programs/hf_train_step.py", script_args=["--llama"])
    _assert_on(trace, "cuda:0")


def test_a_training_step_reads_its_model_gradients_and_optimizer_state_on_the_device():
    (trace,) = _traced("sample_programs/train_step.py")
    params = ["model_fc1_weight", "model_fc1_bias", "model_norm_weight", "model_norm_bias", "model_fc2_weight",
              "model_fc2_bias"]
    assert [v.name for v in trace.inputs] == ["x", "labels", *params]
    # The gradients the step leaves, and AdamW's moments made on its first step, beside their parameters.
    set_grads = [b for b in trace.bsyms if b.symbol.name == "set_grad"]
    assert [b.args[0].name for b in set_grads] == params
    assert all(b.args[1].device == "cuda:0" for b in set_grads)
    moments = [b.output for b in trace.bsyms if b.symbol.name == "zeros_like"]
    assert len(moments) == 2 * len(params) and all(m.device == "cuda:0" for m in moments)
    # On a GPU AdamW takes its multi-tensor path (torch._foreach_*), traced one tensor at a time;
    # its step counts stay on the CPU, as torch keeps them.
    steps = [b.output for b in trace.bsyms if b.symbol.name == "tensor"]
    assert len(steps) == len(params) and all(s.device == "cpu" and s.shape == () for s in steps)


MAIN_STEP = """
    import torch
    import torch.nn.functional as F
    from torch import nn


    def train_step(model, optimizer, x, y):
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.detach()


    def main():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
        optimizer = torch.optim.{optimizer}
        for _ in range(3):
            train_step(model, optimizer, torch.randn(4, 8), torch.randn(4, 1))


    if __name__ == "__main__":
        main()
"""


@pytest.mark.parametrize(("optimizer", "state"), [
    ("SGD(model.parameters(), lr=0.1, momentum=0.9)", {"momentum_buffer": "cuda:0"}),
    ("AdamW(model.parameters(), lr=1e-3)", {"exp_avg": "cuda:0", "exp_avg_sq": "cuda:0", "step": "cpu"}),
])
def test_a_main_block_that_builds_model_and_optimizer_traces_its_state_on_the_device(tmp_path, optimizer, state):
    path = write(tmp_path, "main_step.py", MAIN_STEP.replace("{optimizer}", optimizer))
    first, later = _traced(path)
    for trace in (first, later):
        _assert_on(trace, "cuda:0")
    # The later steps read the state the first one made, each where torch keeps it on a GPU.
    kind = optimizer.split("(")[0].lower()
    read = {v.name: v.device for v in later.inputs if isinstance(v, TensorValue) and v.name.startswith(kind)}
    expected = {f"{kind}_{key}_model_{layer}_{p}": device for key, device in state.items() for layer in (0, 2)
                for p in ("weight", "bias")}
    assert read == expected


GLOBALS = """
    import torch
    from torch import nn

    W = torch.randn(4, 4)
    scale = torch.tensor(2.0)
    table = {"bias": torch.zeros(4)}
    encoder = nn.Linear(4, 4)
    encoder.register_buffer("shift", torch.ones(4))  # registered after it was built


    def make_entry():
        offset = torch.full((4,), 0.5)

        def f(x):
            y = encoder(x @ W) * scale + table["bias"] + encoder.shift + offset
            # The device a user's weight is on, asked of the weight.
            return y + torch.ones(4, device=encoder.weight.device)

        return f


    f = make_entry()


    def sample_inputs(device):
        return (torch.randn(3, 4, device=device),)
"""


def test_captured_globals_closures_and_a_module_in_a_global_are_on_the_device(tmp_path):
    (trace,) = _traced(write(tmp_path, "captured.py", GLOBALS) + ":f")
    devices = {v.name: v.device for v in trace.inputs}
    assert devices == {"x": "cuda:0", "W": "cuda:0", "encoder_weight": "cuda:0", "encoder_bias": "cuda:0",
                       "scale": "cuda:0", "table_bias": "cuda:0", "encoder_shift": "cuda:0", "offset": "cuda:0"}
    _assert_on(trace, "cuda:0")


MIXED = """
    import torch


    def f(x):
        ids = torch.arange(2)              # on the CPU, as in eager
        y = x[ids] * torch.tensor(3.0)     # a CPU index and a CPU zero-dim tensor are fine on any device
        z = x.clone()
        z[0] = torch.ones(4)               # copied across, as eager copies
        return y, z, x + torch.ones(4)     # a CPU vector beside a GPU tensor is not


    def sample_inputs(device):
        return (torch.randn(4, 4, device=device),)
"""


def test_a_factory_without_a_device_makes_a_cpu_tensor_and_mixing_fails_as_in_eager(cli, tmp_path):
    path = write(tmp_path, "mixed.py", MIXED)
    result = cli("trace", path, "--device", "cuda:0")
    assert_user_error(result, "mixed.py:10:", "Expected all tensors to be on the same device, but found at least two "
                      "devices, cuda:0 and cpu!", "device=x.device", "x + torch.ones(4)")
    # What eager takes across devices traces, and on the CPU matches eager.
    allowed = path.replace("mixed.py", "allowed.py")
    Path(allowed).write_text(Path(path).read_text().replace("x + torch.ones(4)", "x + torch.ones(4, device=x.device)"))
    (trace,) = _traced(allowed)
    assert all(v.device == "cuda:0" for v in trace.output)
    assert_matches_eager(cli, allowed)


def test_a_matmul_with_a_cpu_weight_says_so_in_eagers_words(cli, tmp_path):
    path = write(tmp_path, "mm.py", """
        import torch


        def f(x):
            return x @ torch.eye(4)


        def sample_inputs(device):
            return (torch.randn(2, 4, device=device),)
    """)
    assert_user_error(cli("trace", path, "--device", "cuda:0"), "mm.py:6:", "found at least two devices, cuda:0 and cpu")


AMP_STEP = """
    import torch
    import torch.nn.functional as F
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)


    def train_step(x, labels):
        with {autocast}:
            loss = F.cross_entropy(model(x), labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()


    def sample_inputs(device):
        return torch.randn(8, 16, device=device), torch.randint(0, 4, (8,), device=device)
"""


@pytest.mark.parametrize(("autocast", "dtype"), [
    ('torch.autocast("cuda", dtype=torch.bfloat16)', "bfloat16"),
    ("torch.cuda.amp.autocast()", "float16"),
])
def test_cuda_autocast_in_a_training_step_casts_the_models_weights_for_cuda_only(cli, tmp_path, autocast, dtype):
    path = write(tmp_path, "amp_step.py", AMP_STEP.replace("{autocast}", autocast))
    (trace,) = _traced(path)
    casts = {b.args[0].name for b in trace.bsyms
             if b.symbol.name in ("to", "convert_element_type") and b.output.dtype.name == dtype}
    assert {"x", "model_0_weight", "model_0_bias", "model_2_weight", "model_2_bias"} <= casts
    # CUDA's cross_entropy: log_softmax in the working precision, then nll_loss in float32.
    at = [b.symbol.name for b in trace.bsyms].index("log_softmax")
    assert [b.output.dtype.name for b in trace.bsyms[at: at + 2]] == [dtype, "float32"]
    # For the CPU, torch.autocast("cuda") leaves every tensor alone.
    (cpu_trace,) = _traced(path, device="cpu")
    assert not any(b.symbol.name in ("to", "convert_element_type") for b in cpu_trace.bsyms[:5])
    assert_matches_eager(cli, path)


def test_meta_traces_like_a_device_this_machine_lacks_and_run_says_to_trace(cli):
    for trace in _traced("sample_programs/train_step.py", device="meta"):
        _assert_on(trace, "meta")
    for trace in _traced("sample_programs/main_block.py", device="meta"):
        _assert_on(trace, "meta")
    assert_user_error(cli("run", "sample_programs/mlp.py", "--device", "meta"), "meta hold no values",
                      "tracecli trace")


@no_cuda
def test_every_command_that_only_traces_takes_a_missing_gpu(cli, tmp_path):
    target = "sample_programs/train_step.py"
    result = cli("trace", target, "--device", "cuda:0", "--format", "json")
    assert result.exit_code == 0, result.output
    (call,) = json.loads(result.stdout)["calls"]
    assert {i["device"] for i in call["trace"]["inputs"]} == {"cuda:0"}
    examined = cli("examine", target, "--device", "cuda:0", "--strict", "--format", "json")
    assert examined.exit_code == 0, examined.output
    assert json.loads(examined.stdout)["device"] == "cuda:0"
    diffed = cli("diff", target, "--device", "cuda:0", "-p", "dce,cse,rename", "--format", "json")
    assert diffed.exit_code == 0, diffed.output
    assert '"cuda:0 f32[32, 16]"' in json.loads(diffed.stdout)["after"]
    snapshots = str(tmp_path / "snapshots")
    assert cli("snapshot", target, "--dir", snapshots, "--device", "cuda:0", "-p", "dce").exit_code == 0
    checked = cli("check", target, "--dir", snapshots)
    assert checked.exit_code == 0 and "1 equal" in checked.stdout, checked.output
    assert_user_error(cli("run", target, "--device", "cuda:0"), "cuda:0 is not available", "tracecli trace")


def test_on_a_device_the_machine_has_the_scripts_state_moves_there_as_to_would_move_it():
    # `meta` stands in for a GPU here: a real move, and objects stay the ones that hold them.
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    model(torch.randn(4, 3)).sum().backward()
    optimizer.step()
    weight, w = model.weight, torch.nn.Parameter(torch.ones(2))
    namespace = {"model": model, "optimizer": optimizer, "w": w, "table": torch.zeros(2), "n": 3}
    move_state("meta", lambda: None, namespace)
    assert model.weight is weight and weight.device.type == "meta" and weight.grad.device.type == "meta"
    assert namespace["w"] is w and w.device.type == "meta"
    state = optimizer.state[weight]
    assert state["exp_avg"].device.type == "meta" and state["step"].device.type == "cpu"
    assert optimizer.param_groups[0]["params"][0] is weight


@needs_cuda
@pytest.mark.parametrize("script", ["train_step.py", "mlp.py"])
def test_run_on_a_gpu_moves_a_model_held_in_a_global(cli, script):
    result = cli("run", f"sample_programs/{script}", "--device", "cuda:0", "--no-timing", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["match"] is True
