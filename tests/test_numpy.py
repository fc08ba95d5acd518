"""numpy inside the traced function: arrays made from traced tensors are traced as torch
ops at the user's lines (through torch's numpy layer, with numpy's dtypes), go back to
tensors, and come out of the entry as numpy arrays; numpy scalars are constants; what
cannot be traced is refused at the user's line, naming numpy."""

import re

import pytest

from tests.test_cli import write


def ops_at(stdout: str, script: str, line: int) -> list[str]:
    """The operations the trace shows under the source comment of `script`'s `line`."""
    lines = stdout.splitlines()
    start = next(i for i, text in enumerate(lines) if text.strip().startswith(f"# {script}:{line}:"))
    ops = []
    for text in lines[start + 1:]:
        if not text.startswith("  ") or text.strip().startswith("# ") and ".py:" in text or not text.strip():
            break
        if not text.strip().startswith("#"):
            ops.append(text.strip().split("  #")[0])
    return ops


ARRAY_OPS = """
    import numpy as np
    import torch


    def f(x):
        a = x.numpy()
        b = np.sin(a) * 2
        c = b.sum(axis=0)
        d = np.concatenate([a, b])
        e = a.T @ b
        g = a[1:, ::2] - a.mean()
        rows, cols = a.shape
        kind = a.dtype == np.float32
        return torch.from_numpy(b) + x, c, d, torch.as_tensor(e), torch.tensor(g), rows * cols, kind


    def sample_inputs(device):
        return (torch.randn(3, 4, device=device),)
"""


def test_numpy_on_an_array_of_a_traced_tensor_is_torch_ops_at_the_users_lines(cli, tmp_path):
    script = write(tmp_path, "array_ops.py", ARRAY_OPS)
    result = cli("run", script, "--depth", "0")
    assert result.exit_code == 0, result.output
    assert "all 7 outputs match eager" in result.stdout
    assert ops_at(result.stdout, "array_ops.py", 8) == ["t0 = ltorch.sin(x)", "t1 = ltorch.mul(t0, 2)"]
    assert ops_at(result.stdout, "array_ops.py", 9) == ["t2 = ltorch.sum(t1, dim=(0,))"]
    assert ops_at(result.stdout, "array_ops.py", 10) == ["t3 = ltorch.cat((x, t1))"]
    assert "ltorch.permute(x, (1, 0))" in result.stdout and "ltorch.matmul(" in result.stdout
    # x.numpy() itself records nothing: the array's values are x. Shapes and dtypes are
    # answered, never recorded; arrays come back from the entry as arrays.
    assert "# array_ops.py:7:" not in result.stdout and "# array_ops.py:13:" not in result.stdout
    assert "return (t" in result.stdout and "torch.Tensor.numpy(t2), torch.Tensor.numpy(t3)" in result.stdout
    assert re.search(r"^12\s+-\s+int\s+yes", result.stdout, re.M) and re.search(r"^True\s+-\s+bool\s+yes", result.stdout, re.M)


TENSORS_TO_NUMPY = """
    import numpy as np
    import torch


    def f(x):
        full = np.full_like(x, 2)
        zeros = np.zeros_like(x, dtype=np.int64)
        joined = np.concatenate([x, x])
        same = np.asarray(x)
        copied = np.array(x)
        same[0] = 7
        copied[1] = 9
        return full, zeros, joined, same, copied, x


    def sample_inputs(device):
        return (torch.randn(3, 4, device=device),)
"""


def test_numpy_functions_given_traced_tensors_are_traced(cli, tmp_path):
    script = write(tmp_path, "tensors_in.py", TENSORS_TO_NUMPY)
    result = cli("run", script, "--depth", "0")
    assert result.exit_code == 0, result.output
    assert "all 6 outputs and 1 input written in place match eager" in result.stdout
    assert ops_at(result.stdout, "tensors_in.py", 7) == ["t0 = ltorch.full_like(x, 2)"]
    assert ops_at(result.stdout, "tensors_in.py", 8) == ["t1 = ltorch.zeros_like(x, dtype=torch.int64)"]
    assert ops_at(result.stdout, "tensors_in.py", 11) == ["t3 = ltorch.clone(x)"]
    # np.asarray(x) is x's memory, np.array(x) a copy of it: only the first write reaches x.
    assert any(op.endswith("= ltorch.setitem_(x, (0,), 7)") for op in ops_at(result.stdout, "tensors_in.py", 12))
    assert any(op.endswith("= ltorch.setitem_(t3, (1,), 9)") for op in ops_at(result.stdout, "tensors_in.py", 13))
    assert "numpy/" not in result.output


WRITES = """
    import numpy as np
    import torch


    def f(x):
        a = x.numpy()
        a[0] = 0
        a += 1
        b = a.T
        b[1] = 5
        row = a[2]
        row *= 3
        x.add_(1)
        return a.copy()


    def sample_inputs(device):
        return (torch.randn(3, 4, device=device),)
"""


def test_writes_through_an_array_reach_the_tensor_as_in_eager(cli, tmp_path):
    script = write(tmp_path, "writes.py", WRITES)
    for executor in ("torch", "prims"):
        result = cli("run", script, "--depth", "0", "-e", executor)
        assert result.exit_code == 0, result.output
        assert "x (written)" in result.stdout and "the output and 1 input written in place match eager" in result.stdout


MAIN_LOOP = """
    import numpy as np
    import torch


    def normalize(x):
        a = x.numpy()
        centred = (a - a.mean(axis=0)) / (a.std(axis=0) + 1e-5)
        return centred.astype(np.float32), np.abs(centred).max()


    if __name__ == "__main__":
        torch.manual_seed(0)
        for step in range(3):
            out, peak = normalize(torch.randn(8, 4))
            assert type(out) is np.ndarray and out.dtype == np.float32, type(out)
            assert type(peak) is np.float32, type(peak)
        print("ok", out.shape)
"""


def test_an_entry_returning_arrays_gives_the_main_block_numpy_arrays(cli, tmp_path):
    script = write(tmp_path, "main_loop.py", MAIN_LOOP)
    result = cli("run", script, "--depth", "0")
    assert result.exit_code == 0, result.output
    assert "ok (8, 4)" in result.stdout
    assert "3 calls, 1 distinct trace" in result.stdout
    assert "return (torch.Tensor.numpy(t" in result.stdout and "numpy_scalar(torch.Tensor.numpy(t" in result.stdout
    # A saved stage runs and traces again, the array and the numpy scalar included.
    saved = tmp_path / "saved"
    result = cli("diff", f"{script}:normalize", "-i", "f32[8,4]", "-p", "dce", "--save", str(saved))
    assert result.exit_code == 0, result.output
    result = cli("run", str(saved / "01-dce.py"))
    assert result.exit_code == 0, result.output
    assert "all 2 outputs match eager" in result.stdout


MODULE = """
    import numpy as np
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x)
            stats = np.abs(h.detach().numpy()).mean(axis=-1, keepdims=True)
            return h / np.sqrt(h.shape[-1]) + torch.from_numpy(stats)


    model = Net()


    def sample_inputs(device):
        return (torch.randn(2, 4, device=device),)
"""


def test_numpy_in_a_modules_forward(cli, tmp_path):
    script = write(tmp_path, "module.py", MODULE)
    result = cli("run", script, "--depth", "0")
    assert result.exit_code == 0, result.output
    assert "the output matches eager" in result.stdout
    assert "ltorch.detach(" in result.stdout and "ltorch.abs(" in result.stdout


DTYPES = """
    import numpy as np
    import torch


    def f(x):
        a = x.numpy()
        return a / 2, a * 1.5, np.sin(a), np.cumsum(a), a.sum(), np.square(a), a > 1.5, np.float32(2) * a


    def sample_inputs(device):
        return (torch.arange(12, dtype=torch.int32, device=device).reshape(3, 4),)
"""


def test_array_dtypes_are_numpys(cli, tmp_path):
    # torch divides ints into float32, numpy into float64; numpy sums int32 in int64.
    script = write(tmp_path, "dtypes.py", DTYPES)
    result = cli("run", script, "--depth", "0")
    assert result.exit_code == 0, result.output
    assert "all 8 outputs match eager" in result.stdout
    table = result.stdout[result.stdout.index("output "):]
    dtypes = re.findall(r"^t\d+\s+(?:\[[^\]]*\]|-)\s+(\w+)\s+yes", table, re.M)
    assert dtypes == ["float64", "float64", "float64", "int64", "int64", "int32", "bool", "float64"]


@pytest.mark.parametrize(("expression", "dtype", "traced"), [
    ("x + np.finfo(np.float32).min", "float32", "ltorch.add(x, -3.4028234663852886e+38)"),
    ("np.float32(2.0) * x", "float32", "ltorch.mul(x, 2.0)"),
    ("x * np.int64(3)", "float32", "ltorch.mul(x, 3)"),
    ("torch.full((2,), np.float32(1.5))", "float32", "ltorch.full((2,), 1.5)"),
    ("torch.full((2,), np.int32(1))", "int64", "ltorch.full((2,), 1)"),
    ("x[np.int64(1)]", "float32", "ltorch.getitem(x, 1)"),
    ("x.view(np.int64(2), -1)", "float32", "ltorch.reshape(x, (2, -1))"),
    ("i + np.bool_(True)", "float32", "ltorch.add(i, 1.0)"),  # torch reads numpy's bool as a float
    ("i * np.int64(2)", "int32", "ltorch.mul(i, 2)"),
    ("torch.tensor([np.float64(1.5), 2.0])", "float64", "ltorch.tensor([1.5, 2.0], dtype=torch.float64)"),
    ("torch.as_tensor(np.int32(3))", "int32", "ltorch.tensor(3, dtype=torch.int32)"),
    ("x.clamp(min=np.float32(0))", "float32", "ltorch.clamp(x, min=0.0)"),
])
def test_numpy_scalars_are_constants_of_the_dtype_eager_gives(cli, tmp_path, expression, dtype, traced):
    script = write(tmp_path, "scalars.py", f"""
        import numpy as np
        import torch


        def f(x, i):
            return {expression}


        def sample_inputs(device):
            return (torch.randn(4, 3, device=device), torch.arange(4, dtype=torch.int32, device=device))
    """)
    result = cli("run", script, "--depth", "0")
    assert result.exit_code == 0, result.output
    assert traced in result.stdout
    assert f" {dtype} " in result.stdout[result.stdout.index("output "):] and "the output matches eager" in result.stdout


REFUSED = """
import numpy as np
import torch


def f(x):
    BODY


def sample_inputs(device):
    return (torch.randn(3, 4, device=device, requires_grad=GRAD),)
"""


@pytest.mark.parametrize(("body", "line", "says"), [
    ("a = x.numpy()\n    if a.sum() > 0:\n        return x", 8, "bool() of a numpy array made from traced tensors"),
    ("return torch.tensor(x.numpy().tolist())", 7, "ndarray.tolist() of a numpy array"),
    ("return x * float(np.mean(x.numpy()))", 7, "float() of a numpy array"),
    ("return x + torch.from_numpy(np.random.randn(3, 4))", 7, "numpy.random.randn uses numpy's global generator"),
    ("return x.numpy().astype(object)", 7, "numpy's object dtype is not traced"),
    ("return np.interp(x.numpy(), [0.0, 1.0], [1.0, 2.0])", 7, "numpy.interp is not traced"),
    ("return np.add.reduce(x.numpy(), axis=0)", 7, "numpy.add.reduce is not traced"),
    ("return np.sin(x)", 7, "numpy converts a traced tensor to an array in its own code"),
    ("return x + x.numpy()", 7, "an operation between a numpy array and a tensor"),
    ("return x.bfloat16().numpy()", 7, "numpy has no dtype for bfloat16"),
    ("return x.to(torch.uint16).numpy() + 1", 7, "numpy arrays of uint16 are not traced"),
    ("return x.numpy().resize((2, 6))", 7, "ndarray.resize() changes an array's shape in place"),
    ("return (x * 2).numpy()", 7, "can't call numpy() on a tensor that requires grad"),
])
def test_numpy_that_cannot_be_traced_is_refused_at_the_users_line(cli, tmp_path, body, line, says):
    source = REFUSED.replace("BODY", body).replace("GRAD", str("requires grad" in says))
    script = write(tmp_path, "refused.py", source)
    # (One trace: a read of an array's values, refused here, cuts the trace without it.)
    result = cli("trace", script, "--fullgraph")
    assert result.exit_code == 2, result.output
    assert f"refused.py:{line}: " in result.stderr and says in result.stderr
    assert "numpy/" not in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("body", [
    "a = x.numpy()\n    if a.sum() > 0:\n        return x\n    return -x",
    "return torch.tensor(x.numpy().tolist())",
    "return x * float(np.mean(x.numpy()))",
])
def test_a_read_of_an_arrays_values_cuts_the_trace(cli, tmp_path, body):
    script = write(tmp_path, "cut.py", REFUSED.replace("BODY", body).replace("GRAD", "False"))
    result = cli("run", script, "--no-timing", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "Python read" in result.stdout


CUDA = """
    import numpy as np
    import torch


    def f(x):
        a = np.tanh(x.cpu().numpy()) * 2
        return torch.from_numpy(a).to(x.device) + x


    def g(x):
        return torch.from_numpy(np.tanh(x.numpy()))


    def sample_inputs(device):
        return (torch.randn(3, 4, device=device),)
"""


def test_numpy_on_a_gpu_tensor_needs_cpu_first_as_in_eager(cli, tmp_path):
    script = write(tmp_path, "on_gpu.py", CUDA)
    result = cli("trace", f"{script}:f", "--device", "cuda:0", "--depth", "0")
    assert result.exit_code == 0, result.output
    assert ops_at(result.stdout, "on_gpu.py", 7) == [
        't0 = ltorch.to(x, device="cpu")', "t1 = ltorch.tanh(t0)", "t2 = ltorch.mul(t1, 2)"]
    assert ops_at(result.stdout, "on_gpu.py", 8) == ['t3 = ltorch.to(t2, device="cuda:0")', "t4 = ltorch.add(t3, x)"]
    result = cli("trace", f"{script}:g", "--device", "cuda:0")
    assert result.exit_code == 2
    assert "on_gpu.py:12: can't convert cuda:0 device type tensor to numpy" in result.stderr
    assert "Tensor.cpu()" in result.stderr


def test_array_values_are_named_after_the_users_variables(cli, tmp_path):
    script = write(tmp_path, "names.py", """
        import numpy as np
        import torch


        def f(x):
            a = x.numpy()
            scaled = np.sin(a) * 2
            total = scaled.sum(axis=0)
            return torch.from_numpy(total) + 1


        def sample_inputs(device):
            return (torch.randn(3, 4, device=device),)
    """)
    result = cli("trace", script, "-p", "rename", "--depth", "0")
    assert result.exit_code == 0, result.output
    assert "scaled = ltorch.mul(t0, 2)" in result.stdout and "total = ltorch.sum(scaled, dim=(0,))" in result.stdout


def test_numpy_with_sizes_under_symbolic_shapes(cli, tmp_path):
    script = write(tmp_path, "sized.py", """
        import numpy as np
        import torch


        def f(x):
            a = x.numpy()
            rows = a.shape[0]
            return torch.from_numpy((a - a.mean(axis=0)) / rows)


        def sample_inputs(device):
            return (torch.randn(6, 4, device=device),)
    """)
    result = cli("run", script, "--dynamic", "--sizes", "s0=3,s1=5", "--depth", "0")
    assert result.exit_code == 0, result.output
    assert "1 trace for 2 calls; every call matches eager" in result.stdout
