"""Tracing for a device this machine lacks (`cuda:0` without a GPU): tensors the entry makes
keep torch's rule, and what eager takes across devices traces while what it refuses is
refused in its words."""

from pathlib import Path

from tests.test_cli import assert_user_error, write
from tests.test_training import assert_matches_eager
from tracecli.jobs.runner import trace_script


def _traced(target: str, device: str = "cuda:0", script_args=None):
    job = trace_script(target, device=device, execute=False, script_args=script_args)
    return [call.program.trace for call in job.calls]


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
