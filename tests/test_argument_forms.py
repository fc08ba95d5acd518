"""Arguments reach what a trace calls in the forms eager passes them.

torch tells some forms apart: one torch.Size is a shape where one tuple is data
(`x.new(torch.Size([5, 8]))` is 5x8, `x.new((5, 8))` holds 5 and 8); sizes may be
varargs, one sequence, or a keyword; a type may be a dtype, a type name or a typed
class. Each program here is run (`run` exits 0 only when the trace agrees with eager),
and what the trace prints is the call it makes.
"""

import pytest

from tests.test_cli import write

PROGRAM = """
    import torch


    def f(x):
        {body}


    def sample_inputs(device):
        return (torch.randn(2, 3, device=device),)
"""


def run(cli, tmp_path, body: str, *options: str):
    script = write(tmp_path, "forms.py", PROGRAM.replace("{body}", body))
    return cli("run", script, "--color", "never", "--depth", "0", *options)


# -- legacy constructors: a torch.Size or integers are a shape, one sequence is data ------


@pytest.mark.parametrize("body", [
    "y = x.new(torch.Size([5, 8])); return y.shape, y.fill_(2) + 1",
    "return x.new(x.shape).fill_(2) * x",
    "y = x.new(torch.Size([])); return y.shape, y.fill_(2)",
    "return x.new((5, 8)), x.new([1, 2]), x.new(4, 2).zero_(), x.new().shape",
    "y = x.new(x); y.mul_(2); return x, y",
    "return torch.Tensor(2, 3).fill_(1.0) + x.sum()",
    "return torch.Tensor(torch.Size([2, 3])).zero_(), torch.Tensor([1, 2]) * 2, torch.Tensor().shape",
    "return torch.FloatTensor(2, 3).zero_() + x, torch.LongTensor([1, 2]) + 1, torch.DoubleTensor(x.shape).fill_(3)",
    "return isinstance(x, torch.FloatTensor), isinstance(x, torch.LongTensor), torch.FloatTensor.dtype",
    "y = torch.Tensor(x); y.add_(1); return x",
], ids=["new-size", "new-shape", "new-empty-size", "new-data", "new-tensor-alias", "Tensor-ints", "Tensor-forms",
        "typed-classes", "typed-class-queries", "Tensor-of-tensor"])
def test_legacy_constructors_read_their_arguments_as_eager_does(cli, tmp_path, body):
    result = run(cli, tmp_path, body)
    assert result.exit_code == 0, result.output


def test_a_legacy_constructor_is_traced_as_the_factory_it_means(cli, tmp_path):
    result = run(cli, tmp_path, "return x.new(torch.Size([5, 8])).zero_(), x.new((5, 8)), torch.Tensor(2, 3).zero_()")
    assert result.exit_code == 0, result.output
    assert 'ltorch.empty((5, 8), dtype=torch.float32, device="cpu")  # t0: "cpu f32[5, 8]"' in result.stdout
    assert 'ltorch.tensor((5, 8), dtype=torch.float32, device="cpu")  # t2: "cpu f32[2]"' in result.stdout
    assert 'ltorch.empty((2, 3), dtype=torch.float32, device="cpu")' in result.stdout
    assert "captured" not in result.stdout  # made by the trace on every call, not frozen into an input


def test_legacy_constructors_with_symbolic_sizes(cli, tmp_path):
    result = run(cli, tmp_path, "return torch.Tensor(x.shape).fill_(1) + x.new(x.shape).fill_(2)", "--dynamic")
    assert result.exit_code == 0, result.output
    assert 'ltorch.empty((s0, s1), dtype=torch.float32, device="cpu")' in result.stdout


@pytest.mark.parametrize(("body", "error"), [
    ("return x.new(x.long())", "Tensor.new: expected torch.float32 (got torch.int64)"),
    ("return x.new(2, 3, device='meta')", "legacy constructor expects device type: cpu but device type: meta"),
    ("return x.new(2.5)", "data must be a sequence (got float)"),
])
def test_forms_eager_refuses_are_refused_at_the_users_line(cli, tmp_path, body, error):
    result = run(cli, tmp_path, body)
    assert result.exit_code == 2
    assert "forms.py:6:" in result.output and error in result.output


# -- an unmodelled call gets its torch.Size as one -----------------------------------------


def test_an_unmodelled_call_gets_a_torch_size_as_a_torch_size(cli, tmp_path):
    script = write(tmp_path, "grid.py", """
        import torch


        def grid(x, size):
            # Handed to __torch_function__ through the module's attributes: a call tracing
            # does not look into, whose arguments are what it gets.
            if torch.overrides.has_torch_function((x,)):
                return torch.overrides.handle_torch_function(grid, (x,), x, size)
            # What a torch.Size means here is not what a tuple means.
            return x.new_zeros(size) if isinstance(size, torch.Size) else x.new_tensor(size)


        def f(x):
            return grid(x, torch.Size([5, 8])), grid(x, x.shape), grid(x, (5, 8))


        def sample_inputs(device):
            return (torch.randn(2, 3, device=device),)
    """)
    result = cli("run", script, "--color", "never")
    assert result.exit_code == 0, result.output
    assert 'grid(x, torch.Size((5, 8)))  # t0: "cpu f32[5, 8]"' in result.stdout
    assert 'grid(x, torch.Size((2, 3)))  # t1: "cpu f32[2, 3]"' in result.stdout
    assert 'grid(x, (5, 8))  # t2: "cpu f32[2]"' in result.stdout


# -- sizes as varargs, one sequence, a torch.Size, or by keyword ---------------------------


@pytest.mark.parametrize("body", [
    "return x.view(size=(3, 2)), x.view(torch.Size([3, 2])), x.view(6)",
    "return x.view(dtype=torch.int32), x.view(torch.int32)",
    "return x.reshape(shape=(3, 2)), x.reshape(torch.Size([6])), x.reshape([3, 2])",
    "return x.permute(dims=(1, 0)), x.permute(dims=[1, 0]), x.permute(torch.Size([1, 0])), x.permute(1, 0)",
    "return x.repeat(repeats=(2, 1)), x.repeat(torch.Size([2, 1])), x.repeat([2, 1]), x.repeat(2, 1)",
    "return x.expand(size=(4, 2, 3)), x.expand(torch.Size([4, 2, 3])), x.expand([4, 2, 3]), x.expand(4, -1, -1)",
    "return x.tile(dims=(2, 1)), x.tile(torch.Size([2, 1])), x.flatten(start_dim=0)",
    "return (x.new_zeros(torch.Size([2, 3])), x.new_ones([2, 3]), x.new_full((2,), 3), x.new_zeros(2, 3),"
    " x.new_empty(size=(2,)).shape, x.new_tensor(torch.Size([4, 5])))",
    "return (torch.zeros(torch.Size([2, 3])), torch.ones([2, 3]), torch.full(torch.Size([2]), 3.0),"
    " torch.zeros(size=(2,)), torch.rand(torch.Size([2])).shape, torch.randn(2, 3).shape, torch.empty([2]).shape)",
])
def test_sizes_in_every_form(cli, tmp_path, body):
    result = run(cli, tmp_path, body)
    assert result.exit_code == 0, result.output


# -- types: a dtype, a type name, a typed class, or the tensor's own ----------------------


@pytest.mark.parametrize("body", [
    "return x.type(), str(x.type()), torch.typename(x), x.storage_type().__name__",
    "return x.long().type(x.type()) + 1",
    "return x.type(torch.DoubleTensor), x.type('torch.LongTensor'), x.type(dtype='torch.IntTensor'), x.type(torch.half)",
    "return x.type(torch.FloatTensor) is x",
])
def test_type_in_every_form(cli, tmp_path, body):
    result = run(cli, tmp_path, body)
    assert result.exit_code == 0, result.output


def test_a_device_returned_is_a_device(cli, tmp_path):
    result = run(cli, tmp_path, "return x.device, x.dtype, x.shape")
    assert result.exit_code == 0, result.output
    assert 'return (torch.device("cpu"), torch.float32, torch.Size((2, 3)))' in result.stdout
