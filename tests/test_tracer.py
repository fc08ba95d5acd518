"""The tracer: inputs, names, hints, devices, captured tensors, opaque calls, errors."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils._pytree import tree_leaves, tree_map

from tracecli.core import dtypes
from tracecli.core.errors import TracingError
from tracecli.core.printing import format_trace
from tracecli.core.symbol import Symbol
from tracecli.core.values import TensorValue
from tracecli.core.verify import verify
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.recorder import _CallSpec
from tracecli.frontend.symbolic import DimPolicy
from tracecli.frontend.tracer import trace_callable

SCALE = torch.tensor([2.0, 3.0])


def traced(fn, *args, **kwargs):
    program = trace_callable(fn, args, kwargs)
    verify(program.trace)
    return program


def test_module_parameters_become_inputs_named_after_their_qualified_names():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    program = traced(model, torch.randn(3, 4))
    assert [v.name for v in program.trace.inputs] == ["input", "_0_weight", "_0_bias", "_2_weight", "_2_bias"]
    out = compile_trace(program.trace)(*program.inputs)
    torch.testing.assert_close(out, model(program.inputs[0]))
    # The module is left as it was: real parameters, not proxies.
    assert type(model[0].weight) is nn.Parameter


def test_tied_weights_are_one_input():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(4, 4, bias=False)
            self.b = nn.Linear(4, 4, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    program = traced(Tied(), torch.randn(2, 4))
    assert [v.name for v in program.trace.inputs] == ["x", "a_weight"]


def test_name_hints_are_recorded_but_names_stay_generic():
    def f(x, y):
        total = x + y
        scaled = total * 2
        return scaled

    trace = traced(f, torch.randn(2), torch.randn(2)).trace
    assert [b.name_hints for b in trace.bsyms] == [(("t0", "total"),), (("t1", "scaled"),)]
    assert "total = ltorch" not in format_trace(trace)


def test_reassigned_variable_hints_each_value():
    def f(x):
        x = x + 1
        x = x * 2
        return x

    trace = traced(f, torch.randn(2)).trace
    assert [b.name_hints[0][1] for b in trace.bsyms] == ["x", "x"]


def test_captured_global_tensor_becomes_a_named_input():
    def f(x):
        return x * SCALE

    program = traced(f, torch.ones(2))
    assert [v.name for v in program.trace.inputs] == ["x", "SCALE"]
    assert torch.equal(compile_trace(program.trace)(*program.inputs), SCALE)


def test_tracing_for_an_absent_device_needs_no_device():
    program = trace_callable(lambda x: torch.zeros(2, device=x.device) + x.sum(), (torch.randn(2),), device="cuda:3")
    assert "cuda:3 f32[2]" in format_trace(program.trace)
    assert program.trace.inputs[0].device == "cuda:3"


def test_metadata_reads_record_nothing():
    def f(x):
        assert isinstance(x, torch.Tensor) and x.dim() == 2 and x.is_floating_point()
        return x.reshape(x.shape[0] * x.size(1), 1) + x.numel() + len(x)

    trace = traced(f, torch.randn(3, 4)).trace
    assert [b.symbol.qualname for b in trace.bsyms] == ["ltorch.reshape", "ltorch.add", "ltorch.add"]


def test_identity_operations_record_nothing():
    def f(x):
        return x.float().reshape(2, 3)

    trace = traced(f, torch.randn(2, 3)).trace
    assert trace.bsyms == () and trace.output is trace.inputs[0]


def test_detach_is_an_op_because_gradients_stop_there():
    # A training step's backward must not flow through it (tests/test_training.py).
    trace = traced(lambda x: x.detach(), torch.randn(2, 3)).trace
    assert [b.symbol.qualname for b in trace.bsyms] == ["ltorch.detach"]


def test_contiguous_is_an_op_because_it_may_copy():
    # Whether x.contiguous() is x or a copy decides where later writes land.
    trace = traced(lambda x: x.contiguous(), torch.randn(2, 3)).trace
    assert [b.symbol.qualname for b in trace.bsyms] == ["ltorch.contiguous"]


def test_unmodelled_torch_call_becomes_opaque_and_still_runs():
    def f(x):
        return torch.cumulative_trapezoid(x, dim=0) + 1

    program = traced(f, torch.arange(4.0))
    first = program.trace.bsyms[0]
    assert first.symbol.qualname == "torch.cumulative_trapezoid"
    assert "torch.cumulative_trapezoid(x, dim=0)" in format_trace(program.trace)
    torch.testing.assert_close(compile_trace(program.trace)(*program.inputs), f(torch.arange(4.0)))


def test_data_dependent_access_points_at_the_users_line():
    def f(x):
        return x * x.max().item()

    with pytest.raises(TracingError) as info:
        trace_callable(f, (torch.randn(3),))
    assert info.value.file.endswith("test_tracer.py") and "x.max().item()" in info.value.source
    assert "a number read out of a traced tensor: keep it a tensor" in info.value.message


def test_a_distributions_value_check_says_how_to_turn_it_off():
    from torch.distributions import Normal

    def f(mu):  # validate_args=True: what torch does by default, which another test may have changed
        return Normal(mu, torch.ones_like(mu), validate_args=True).rsample()

    with pytest.raises(TracingError, match="torch.distributions checks its arguments' values: pass "
                                           "validate_args=False"):
        trace_callable(f, (torch.randn(3),))
    def unchecked(mu):
        return Normal(mu, torch.ones_like(mu), validate_args=False).rsample()

    mu = torch.randn(3)
    program = trace_callable(unchecked, (mu,), name="fn")
    assert "torch.Tensor.normal_" in [b.symbol.qualname for b in program.trace.bsyms]  # the draw, on every call
    torch.manual_seed(1)
    expected = unchecked(mu)
    torch.manual_seed(1)
    assert torch.equal(compile_trace(program.trace)(*program.inputs), expected)


def test_relu_inplace_writes_its_input():
    # nn.ReLU(inplace=True): relu's result written into the input, which the caller sees.
    program = trace_callable(lambda x: F.relu(x, inplace=True), (torch.randn(3),), name="fn")
    assert [b.symbol.qualname for b in program.trace.bsyms] == ["ltorch.relu", "ltorch.copy_"]
    x = torch.randn(3)
    expected = torch.relu(x)
    compile_trace(program.trace)(x)
    assert torch.equal(x, expected)


def test_out_argument_writes_the_result_into_the_given_tensor():
    # torch.maximum(a, b, out=a) is how torch's own Adam(amsgrad=True) keeps its maximum.
    def fn(a, b, pair):
        torch.maximum(a, b, out=a)
        values, indices = pair
        torch.sort(b, descending=True, out=(values, indices))
        return torch.add(a, 1, out=torch.empty(3)) * 2

    args = (torch.randn(3), torch.randn(3), (torch.zeros(3), torch.zeros(3, dtype=torch.long)))
    program = trace_callable(fn, args, name="fn")
    assert [b.symbol.qualname for b in program.trace.bsyms].count("ltorch.copy_") == 4
    eager_args = tree_map(lambda t: t.clone(), args)
    expected = fn(*eager_args)
    traced_args = tree_map(lambda t: t.clone(), args)
    assert torch.equal(compile_trace(program.trace)(*program.inputs_for(traced_args, {})), expected)
    for eager_tensor, traced_tensor in zip(tree_leaves(eager_args), tree_leaves(traced_args), strict=True):
        assert torch.equal(eager_tensor, traced_tensor)


def test_out_argument_torch_would_resize_or_cannot_cast_into_is_refused_at_the_users_line():
    with pytest.raises(TracingError, match=r"result of shape \[3\] into a tensor of shape \[2\], which torch resizes"):
        trace_callable(lambda x, z: torch.neg(x, out=z), (torch.randn(3), torch.zeros(2)), name="fn")
    with pytest.raises(TracingError, match="result type torch.float32 can't be cast to the desired output type "
                                           "torch.int64") as info:
        trace_callable(lambda x, z: torch.neg(x, out=z), (torch.randn(3), torch.zeros(3, dtype=torch.long)), name="fn")
    assert info.value.line is not None


def test_source_location_is_the_innermost_user_frame():
    def helper(x):
        return torch.tanh(x)

    def f(x):
        return helper(x) * 2

    trace = traced(f, torch.randn(2)).trace
    assert trace.bsyms[0].source.text == "return torch.tanh(x)"
    assert trace.bsyms[1].source.text == "return helper(x) * 2"
    assert not trace.bsyms[0].source.file.startswith("/")


def test_number_and_keyword_inputs():
    def f(x, *, scale=2.0, shift):
        return x * scale + shift

    program = traced(f, torch.ones(2), shift=1)
    assert [v.name for v in program.trace.inputs] == ["x", "scale", "shift"]
    assert torch.equal(compile_trace(program.trace)(*program.inputs), torch.full((2,), 3.0))


def test_tensor_lists_as_inputs():
    def f(xs):
        return torch.cat(xs, dim=0)

    program = traced(f, [torch.ones(2), torch.zeros(3)])
    assert [v.name for v in program.trace.inputs] == ["xs_0", "xs_1"]
    assert compile_trace(program.trace)(*program.inputs).shape == (5,)


def test_symbols_called_directly_trace_like_torch_calls():
    from tracecli.ops import ltorch

    def f(x, y):
        t0 = ltorch.mul(x, y)
        return ltorch.add(t0, 1)

    trace = traced(f, torch.randn(2), torch.randn(2)).trace
    assert [b.symbol.qualname for b in trace.bsyms] == ["ltorch.mul", "ltorch.add"]
    assert trace.bsyms[0].name_hints == (("t0", "t0"),)


def test_module_scopes_name_the_submodule_that_issued_each_call():
    class Inner(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)

        def forward(self, x):
            return torch.tanh(self.proj(x))

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([Inner(), Inner()])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x) + 1
            return x

    trace = traced(Outer(), torch.randn(2, 4)).trace
    assert [(b.scope, b.symbol.name) for b in trace.bsyms] == [
        ("layers.0", "linear"), ("layers.0", "tanh"), ("", "add"),
        ("layers.1", "linear"), ("layers.1", "tanh"), ("", "add"),
    ]
    text = format_trace(trace, depth=0)
    assert text.count("# ── layers.0") == 1 and text.count("# ── layers.1") == 1 and text.count("# ── forward") == 0
    assert trace.name == "Outer" and text.count("# ── Outer") == 2  # back in the entry module twice
    # Plain functions have no scopes.
    plain = format_trace(traced(lambda x: x + 1, torch.ones(1)).trace)
    assert not [line for line in plain.splitlines() if line.startswith("  # ──")]


def test_printed_calls_keep_the_defaults_torch_needs():
    # Left out, `dim=None` makes torch.sum(x, keepdim=True), which torch refuses; the
    # printed call is the one the executor runs.
    def f(x, s):
        return (torch.sum(x, dim=None, keepdim=True), x.mean(dim=None, keepdim=True), x.sum(dim=1),
                s.repeat(()))

    x, s = torch.randn(2, 3), torch.tensor(2.0)
    program = traced(f, x, s)
    text = format_trace(program.trace, depth=0)
    assert "ltorch.sum(x, dim=None, keepdim=True)" in text and "ltorch.mean(x, dim=None, keepdim=True)" in text
    assert "ltorch.sum(x, dim=1)" in text  # what torch takes without them stays short
    for got, want in zip(compile_trace(program.trace)(x, s), f(x, s), strict=True):
        torch.testing.assert_close(got, want)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "symbolic"])
def test_a_returned_torch_size_stays_a_torch_size(dynamic):
    def f(x):
        y = x * 2
        return y, x.shape, {"tail": y.shape[1:] + (1,), "size": x.size()}

    x = torch.randn(3, 4)
    program = trace_callable(f, (x,), dims=DimPolicy(dynamic=dynamic))
    verify(program.trace)
    assert "torch.Size((" in format_trace(program.trace)
    other = torch.randn(5, 6) if dynamic else x
    got, want = compile_trace(program.trace)(other), f(other)
    assert [type(v) for v in (got[1], got[2]["tail"], got[2]["size"])] == [torch.Size] * 3
    assert got[1:] == want[1:]


def test_run_of_an_entry_returning_its_input_shape_matches_eager(cli, tmp_path):
    script = tmp_path / "shape.py"
    script.write_text("import torch\n\n\ndef f(x):\n    return x.shape\n\n\n"
                      "def sample_inputs(device):\n    return (torch.randn(3, 4, device=device),)\n")
    result = cli("run", str(script), "--no-timing")
    assert result.exit_code == 0, result.output
    assert "match eager" in result.stdout


def test_function_forms_of_metadata_reads_record_nothing():
    def f(x, n):
        if torch.is_floating_point(x) and not torch.is_complex(x) and torch.is_signed(n):
            return x * torch.numel(x), torch.result_type(x, n)
        return x, None

    program = traced(f, torch.randn(3, 4), torch.ones(2, dtype=torch.int32))
    assert [b.symbol.qualname for b in program.trace.bsyms] == ["ltorch.mul"]
    assert "ltorch.mul(x, 12)" in format_trace(program.trace)
    assert traced(lambda n: -n if torch.is_signed(n) else n, torch.ones(2, dtype=torch.uint8)).trace.output.name == "n"


def test_no_sizes_for_a_sizes_parameter_print_as_the_empty_sequence():
    # A symbol whose torch implementation needs its sizes: none at all is `()`, not nothing.
    sym = Symbol("permute_like", "ltorch", impl=torch.Tensor.permute, decomposition=lambda x, *dims: x)
    x = TensorValue("x", (), dtypes.float32, "cpu")
    assert _CallSpec(sym).normalize((x,), {}) == ((x, ()), {})
    assert _CallSpec(sym).normalize((x, 0, 1), {}) == ((x, 0, 1), {})


def test_an_attribute_missing_on_a_traced_tensor_is_reported_as_on_a_tensor(cli, tmp_path):
    script = tmp_path / "missing.py"
    script.write_text("import torch\n\n\ndef f(x):\n    return x.no_such_method()\n\n\n"
                      "def sample_inputs(device):\n    return (torch.ones(3),)\n")
    result = cli("run", str(script))
    assert result.exit_code == 2
    assert "AttributeError: 'Tensor' object has no attribute 'no_such_method'" in result.stderr
