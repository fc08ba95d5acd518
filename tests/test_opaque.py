"""The opaque fallback: every torch callable that reaches the tracer traces, prints a
name that resolves in the generated code, and runs as eager does."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch._higher_order_ops import while_loop
from torch._higher_order_ops.scan import scan

from tests.ops.harness import assert_matches
from tests.test_cli import assert_user_error, run_process, write
from tracecli.core.errors import TracingError
from tracecli.core.printing import format_trace
from tracecli.core.pytree import tree_leaves
from tracecli.core.symbol import Tag
from tracecli.core.values import TensorValue
from tracecli.core.verify import verify
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable
from tracecli.ops.opaque import opaque_aliases, opaque_mutates
from tracecli.ops.torch_bridge import TO_TORCH
from tracecli.ops.torch_paths import torch_path
from tracecli.passes.cse import cse
from tracecli.passes.dce import dce


@torch.library.custom_op("tracecli_test::scaled_sin", mutates_args=())
def scaled_sin(x: torch.Tensor, scale: float) -> torch.Tensor:
    return x.sin() * scale


@scaled_sin.register_fake
def _(x, scale):
    return torch.empty_like(x)


@torch.library.custom_op("tracecli_test::no_fake", mutates_args=())
def no_fake(x: torch.Tensor) -> torch.Tensor:
    return x.cos()


_LIB = torch.library.Library("tracecli_test_lib", "DEF")
_LIB.define("rows_sum(Tensor x) -> Tensor")
_LIB.impl("rows_sum", lambda x: x.sum(-1), "CompositeExplicitAutograd")
torch.library.register_fake("tracecli_test_lib::rows_sum", lambda x: x.new_empty(x.shape[:-1]))


def doubled_plus_one(x):
    """A function of the user's own that takes part in __torch_function__: it reaches the
    tracer whole, and has no dotted path under torch."""
    if torch.overrides.has_torch_function_unary(x):
        return torch.overrides.handle_torch_function(doubled_plus_one, (x,), x)
    return x * 2 + 1


def _clone(args):
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)


def check(fn, *args, calls: tuple[str, ...] = ()) -> str:
    """Trace, verify, compile and run `fn` against eager; the trace must record each of
    `calls` at the top level. Returns the trace text."""
    program = trace_callable(fn, args, name="fn")
    trace = program.trace
    verify(trace)
    recorded = [b.symbol.qualname for b in trace.bsyms]
    for call in calls:
        assert call in recorded, f"{call} not recorded; got {recorded}"
    with torch.no_grad():
        expected = fn(*_clone(args))
        actual = compile_trace(trace)(*_clone(program.inputs))
    for value, e in zip(tree_leaves(trace.output), tree_leaves(expected), strict=True):
        assert isinstance(value, TensorValue)
        assert (value.shape, TO_TORCH[value.dtype]) == (tuple(e.shape), e.dtype), "traced output type differs"
    assert_matches("torch", trace, expected, actual, exact=False)
    return format_trace(trace)


def randn(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(0))


# -- callables by their public path --------------------------------------------------


def test_linalg_function_is_spelled_by_its_public_path():
    # The nuclear norm is not modelled (its other orders are): it stays a torch call.
    text = check(lambda x: torch.linalg.matrix_norm(x, ord="nuc"), randn(3, 4), calls=("torch.linalg.matrix_norm",))
    assert "linalg_matrix_norm" not in text


def test_special_expit_matches_eager_whichever_way_it_is_traced():
    check(lambda x: torch.special.expit(x) * 2, randn(3, 4))


def test_an_opaque_op_with_a_complex_output():
    text = check(lambda x: torch.view_as_complex(x), randn(3, 8, 2), calls=("torch.view_as_complex",))
    assert '"cpu c64[3, 8]"' in text


def test_special_function_is_spelled_as_users_write_it():
    # torch._C._special.special_multigammaln, as torch.special spells it.
    check(lambda x: torch.special.multigammaln(x.abs() + 2, 2), randn(3, 4), calls=("torch.special.multigammaln",))


def test_internal_callable_without_a_public_spelling_keeps_its_internal_one():
    check(lambda x, y: torch._C._nn.mse_loss(x, y), randn(3, 4), randn(3, 4), calls=("torch._C._nn.mse_loss",))


# -- operators of torch.ops ----------------------------------------------------------


def test_aten_overload_without_an_ltorch_counterpart():
    check(lambda x: torch.ops.aten.cumulative_trapezoid.dx(x, dim=1), randn(3, 4),
          calls=("torch.ops.aten.cumulative_trapezoid.dx",))


def test_aten_overload_packet():
    check(lambda x: torch.ops.aten.cumulative_trapezoid(x, dim=0), randn(3, 4),
          calls=("torch.ops.aten.cumulative_trapezoid",))


def test_custom_op_takes_its_shapes_from_its_fake_kernel():
    check(lambda x: scaled_sin(x, 3.0) + 1, randn(3, 4), calls=("torch.ops.tracecli_test.scaled_sin.default",))


def test_library_defined_op_with_a_registered_fake_kernel():
    check(lambda x: torch.ops.tracecli_test_lib.rows_sum(x), randn(3, 4), calls=("torch.ops.tracecli_test_lib.rows_sum",))


def test_custom_op_without_a_fake_kernel_is_one_clear_error():
    with pytest.raises(TracingError, match="no fake impl registered") as info:
        trace_callable(lambda x: no_fake(x), (randn(3),), name="fn")
    assert info.value.line is not None and "no_fake(x)" in info.value.source


def test_higher_order_op_with_callables_bound_in_the_globals():
    text = check(
        lambda x: torch.cond(x.sum() > 0, lambda a: a.sin(), lambda a: a.cos(), (x,)), randn(3, 4),
        calls=("torch.ops.higher_order.cond",),
    )
    assert "torch.ops.higher_order.cond(t1, lambda_, lambda__1, (x,))" in text


def test_higher_order_ops_whose_fake_kernels_need_a_shape_environment():
    check(lambda x: while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2), (torch.zeros((), dtype=torch.int64), x)),
          randn(3), calls=("torch.ops.higher_order.while_loop",))
    check(lambda x: scan(lambda c, a: (c + a, c * 2), x[0], x), randn(4, 3), calls=("torch.ops.higher_order.scan",))


def test_callable_with_no_dotted_path_is_bound_by_its_name():
    text = check(lambda x: doubled_plus_one(x), randn(3, 4), calls=("doubled_plus_one",))
    assert "= doubled_plus_one(x)" in text


class Scaler:
    """An unhashable callable object taking part in __torch_function__."""

    __hash__ = None

    def __init__(self, k):
        self.k = k

    def __eq__(self, other):
        return isinstance(other, Scaler) and other.k == self.k

    def __call__(self, x):
        if torch.overrides.has_torch_function_unary(x):
            return torch.overrides.handle_torch_function(self, (x,), x)
        return x * self.k


def test_unhashable_callable_object_is_bound_by_its_type_name():
    triple = Scaler(3.0)
    text = check(lambda x: triple(x) + 1, randn(3), calls=("scaler",))
    assert "= scaler(x)" in text


@pytest.mark.parametrize(("fn", "name"), [
    (lambda x: torch.allclose(x, x), "torch.allclose"),  # a Python bool from the values
    (lambda x: torch.narrow(x, 0, x.long().abs().max() % 2, 1), "torch.narrow"),  # a start from the values
    (lambda x: torch.equal(x, x), "torch.equal"),  # a Python bool from the values
])
def test_data_dependent_output_is_one_clear_error_at_the_users_line(fn, name):
    # (A size of its own that the data decide, as torch.ops.aten._unique2 gives, is an
    # unbacked size: test_unbacked_sizes.py.)
    with pytest.raises(TracingError, match="depends on the values in its input tensors") as info:
        trace_callable(fn, (randn(3),), name="fn")
    assert name in str(info.value) and info.value.line is not None


# -- dtypes ---------------------------------------------------------------------------


def test_opaque_op_returning_uint64():
    # `.view(dtype)` is not modelled: an opaque Tensor.view reinterpreting the bytes.
    text = check(lambda x: x.view(torch.uint64) * 2, torch.arange(6).reshape(2, 3), calls=("torch.Tensor.view",))
    assert '"cpu u64[2, 3]"' in text


def test_opaque_op_returning_complex32():
    text = check(lambda x: torch.view_as_complex(x.half()), randn(3, 2), calls=("torch.view_as_complex",))
    assert '"cpu c32[3]"' in text


def test_modelled_conversion_to_a_new_dtype():
    text = check(lambda x: (x.abs() * 10).to(torch.uint64), randn(3, 4))
    assert '"cpu u64[3, 4]"' in text


def test_promotion_torch_refuses_is_an_error_at_the_users_line():
    a = torch.arange(3).to(torch.uint16)
    b = torch.arange(3, dtype=torch.int32)
    with pytest.raises(RuntimeError):
        _ = a + b
    with pytest.raises(TracingError, match="torch does not promote uint16 with int32") as info:
        trace_callable(lambda a, b: a + b, (a, b), name="fn")
    assert info.value.line is not None


# -- objects passed as arguments ------------------------------------------------------


def distance_loss(a, p, n, distance_function):
    """An unmodelled torch-style function taking a module: it hands itself off through
    torch.overrides' attributes, which tracing cannot skip, so it stays one opaque call."""
    if torch.overrides.has_torch_function_variadic(a, p, n):
        return torch.overrides.handle_torch_function(distance_loss, (a, p, n), a, p, n,
                                                     distance_function=distance_function)
    return (distance_function(a, p) - distance_function(a, n)).clamp_min(0).mean()


def _triplet(a, p, n):
    return distance_loss(a, p, n, distance_function=nn.PairwiseDistance())


def test_module_argument_is_bound_in_the_globals_under_a_stable_name():
    text = check(_triplet, randn(4, 5), randn(4, 5), randn(4, 5),
                 calls=("distance_loss",))
    assert "distance_function=pairwise_distance)" in text
    # A second trace (a new module object) prints the same.
    again = trace_callable(_triplet, (randn(4, 5), randn(4, 5), randn(4, 5)), name="fn")
    assert format_trace(again.trace) == text


def test_two_objects_of_one_kind_get_two_names():
    first, second = nn.PairwiseDistance(), nn.PairwiseDistance(p=1.0)

    def fn(a, p, n):
        return distance_loss(a, p, n, distance_function=first) + distance_loss(a, p, n, distance_function=second)

    text = check(fn, randn(4, 5), randn(4, 5), randn(4, 5))
    assert "distance_function=pairwise_distance)" in text and "distance_function=pairwise_distance_1)" in text


def test_bound_names_avoid_the_traces_own_names():
    def fn(pairwise_distance, p, n):  # an input already has the object's natural name
        return _triplet(pairwise_distance, p, n)

    program = trace_callable(fn, (randn(4, 5), randn(4, 5), randn(4, 5)))
    text = format_trace(program.trace)
    assert "distance_function=pairwise_distance_1)" in text
    compile_trace(program.trace)(*program.inputs)


def test_torch_objects_are_spelled_by_their_path():
    def fn(x):
        return torch.empty_strided(x.shape, (48, 1, 12, 3), layout=torch.strided).fill_(1.0) + x

    program = trace_callable(fn, (randn(1, 3, 4, 4),))
    assert "layout=torch.strided" in format_trace(program.trace)
    torch.testing.assert_close(compile_trace(program.trace)(*program.inputs), fn(program.inputs[0]))


# -- what an opaque call may alias or write ------------------------------------------


@pytest.mark.parametrize("func", [torch.diagonal, torch.Tensor.select, torch.movedim, torch.as_strided,
                                  torch.Tensor.unfold, torch.ops.aten.diagonal.default, torch.ops.aten.unbind.int,
                                  torch._C._linalg.linalg_diagonal])
def test_views_may_alias_their_input(func):
    assert opaque_aliases(func) and not opaque_mutates(func)


@pytest.mark.parametrize("func", [torch.add, torch.cumprod, torch.linalg.vector_norm, F.logsigmoid,
                                  torch.ops.aten.cumprod.default, torch.ops.aten.add])
def test_computations_do_not_alias(func):
    assert not opaque_aliases(func) and not opaque_mutates(func)


@pytest.mark.parametrize("func", [torch.asinh_, torch.ops.aten.add_.Tensor, torch.ops.aten.add.out])
def test_in_place_and_out_variants_write_and_alias(func):
    assert opaque_aliases(func) and opaque_mutates(func)


def fill_twos_(t):
    if torch.overrides.has_torch_function_unary(t):
        return torch.overrides.handle_torch_function(fill_twos_, (t,), t)
    return t.fill_(2.0)


def test_python_function_without_a_schema_is_judged_by_its_meta_runs():
    assert not opaque_aliases(fill_twos_) and not opaque_mutates(fill_twos_)
    check(lambda x: fill_twos_(x * 1) + x, randn(3), calls=("fill_twos_",))
    assert opaque_aliases(fill_twos_) and opaque_mutates(fill_twos_)


def _renorm_in_place(x, rows):
    y = x * 1
    torch.embedding_renorm_(y, rows, 1.0, 2.0)
    return y + 1


def _embedding_max_norm(ids, w):
    before = w.sum()
    out = F.embedding(ids, w, max_norm=1.0, padding_idx=-1)
    return out, before, w.sum()


def test_embedding_with_max_norm_writes_the_weight_in_place_as_torch_does():
    # torch renormalises the rows it picks in the weight itself: the trace shows that
    # write, so cse cannot merge the sums taken before and after it.
    args = (torch.tensor([1, 2, 1]), torch.full((4, 3), 2.0))
    text = check(_embedding_max_norm, *args, calls=("torch.embedding_renorm_",))
    assert "ltorch.embedding(" in text
    trace = trace_callable(_embedding_max_norm, args).trace
    merged = cse(trace).trace
    w = args[1].clone()
    expected = _embedding_max_norm(args[0], args[1].clone())
    for got, want in zip(compile_trace(merged)(args[0], w), expected, strict=True):
        torch.testing.assert_close(got, want)


def test_in_place_function_rebinds_the_users_tensor_and_survives_the_passes():
    args = (randn(5, 3) * 4, torch.tensor([0, 2]))
    text = check(_renorm_in_place, *args, calls=("torch.embedding_renorm_",))
    assert "t2 = ltorch.add(t1, 1)" in text  # `y + 1` reads the result of embedding_renorm_
    trace = trace_callable(_renorm_in_place, args).trace
    kept = dce(cse(trace).trace).trace
    assert "torch.embedding_renorm_" in [b.symbol.qualname for b in kept.bsyms]
    torch.testing.assert_close(compile_trace(kept)(*_clone(args)), _renorm_in_place(*_clone(args)))


def test_out_argument_of_an_unmodelled_call_is_refused_at_the_users_line():
    with pytest.raises(TracingError, match=r"torch.polar\(..., out=...\) writes its result into `out`") as info:
        trace_callable(lambda x, z: torch.polar(x, x, out=z), (randn(3), torch.zeros(3, dtype=torch.complex64)),
                       name="fn")
    assert info.value.line is not None


def test_op_writing_an_argument_it_does_not_return_is_never_dropped():
    def fn(x, y):
        a, b = x * 1, y * 1
        # GradScaler's unscale: it writes the gradients and the flag, and returns nothing.
        torch._amp_foreach_non_finite_check_and_unscale_([a, b], torch.zeros(1), torch.full((1,), 0.5))
        return a + b

    trace = trace_callable(fn, (randn(3), randn(3))).trace
    kept = dce(cse(trace).trace).trace
    assert "torch._amp_foreach_non_finite_check_and_unscale_" in [b.symbol.qualname for b in kept.bsyms]
    torch.testing.assert_close(compile_trace(kept)(randn(3), randn(3)), fn(randn(3), randn(3)))


# -- spellings ------------------------------------------------------------------------


@pytest.mark.parametrize(("obj", "path"), [
    (torch._C._special.special_expit, "torch.special.expit"),
    (torch._C._nn.log_sigmoid, "torch.nn.functional.logsigmoid"),
    (torch._C._linalg.linalg_vector_norm, "torch.linalg.vector_norm"),
    (torch._C._fft.fft_rfft, "torch.fft.rfft"),
    (torch._C._VariableFunctions.cumprod, "torch.cumprod"),
    (torch._C._nn.mse_loss, "torch._C._nn.mse_loss"),
    (torch.Tensor.add, "torch.Tensor.add"),
    (torch.ops.aten.add.Tensor, "torch.ops.aten.add.Tensor"),
    (torch.ops.aten.add, "torch.ops.aten.add"),
    (torch.ops.higher_order.cond, "torch.ops.higher_order.cond"),
    (torch.nn.init.uniform_, "torch.nn.init.uniform_"),
    (torch.masked.sum, "torch.masked.sum"),
    (torch.Tensor.H.__get__, "torch.Tensor.H.__get__"),
    (torch.channels_last, "torch.channels_last"),
    (doubled_plus_one, None),
])
def test_torch_path_prefers_the_public_spelling(obj, path):
    assert torch_path(obj) == path


# -- through the command line ----------------------------------------------------------

_SCRIPT = """
    import torch
    import torch.nn.functional as F
    from torch import nn

    def distance_loss(a, p, n, distance_function):
        if torch.overrides.has_torch_function_variadic(a, p, n):
            return torch.overrides.handle_torch_function(distance_loss, (a, p, n), a, p, n,
                                                         distance_function=distance_function)
        return (distance_function(a, p) - distance_function(a, n)).clamp_min(0).mean()

    def f(a, p, n):
        norms = torch.linalg.vector_norm(a, dim=1)
        spectrum = torch.fft.rfft(a).abs()
        loss = distance_loss(a, p, n, distance_function=nn.PairwiseDistance())
        return norms * loss + F.logsigmoid(spectrum).sum(1) + torch.ops.aten.cumprod.default(p, 1)[:, 0]
"""


def test_run_of_a_script_with_opaque_calls_matches_eager(cli, tmp_path):
    script = write(tmp_path, "opaque_calls.py", _SCRIPT)
    result = cli("run", script, "-i", "f32[4,8]", "-i", "f32[4,8]", "-i", "f32[4,8]", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "torch.linalg.vector_norm(a, dim=1)" in result.stdout
    assert "distance_function=pairwise_distance)" in result.stdout
    assert "matches eager" in result.stdout


def test_save_refuses_a_trace_with_a_bound_object_and_writes_nothing(cli, tmp_path):
    script = write(tmp_path, "opaque_calls.py", _SCRIPT)
    out = tmp_path / "stages"
    result = cli("diff", script, "-i", "f32[4,8]", "-i", "f32[4,8]", "-i", "f32[4,8]", "-p", "dce", "--save", str(out))
    assert_user_error(result, "--save", "`pairwise_distance` (a torch.nn.modules.distance.PairwiseDistance object)",
                      "nothing was written")
    assert not out.exists()


def test_save_refuses_a_custom_op_of_the_script(cli, tmp_path):
    script = write(tmp_path, "custom.py", """
        import torch

        @torch.library.custom_op("tracecli_save_test::twice", mutates_args=())
        def twice(x: torch.Tensor) -> torch.Tensor:
            return x * 2

        twice.register_fake(lambda x: torch.empty_like(x))

        def f(x):
            return twice(x) + 1
    """)
    out = tmp_path / "stages"
    result = cli("diff", script, "-i", "f32[3]", "-p", "dce", "--save", str(out))
    assert_user_error(result, "`torch.ops.tracecli_save_test.twice.default` (the operator tracecli_save_test::twice")
    assert not out.exists()


def test_save_keeps_opaque_calls_torch_can_spell(cli, tmp_path):
    script = write(tmp_path, "spelled.py", """
        import torch

        def f(x):
            return torch.empty_strided(x.shape, (48, 1, 12, 3), layout=torch.strided).fill_(1.0) * torch.linalg.vector_norm(x)
    """)
    out = tmp_path / "stages"
    assert cli("diff", script, "-i", "f32[1,3,4,4]", "-p", "dce", "--save", str(out)).exit_code == 0
    again = cli("run", str(out / "01-dce.py"), "--color", "never")
    assert again.exit_code == 0, again.output


def test_examine_counts_a_callable_without_a_path_as_opaque(cli, tmp_path):
    script = write(tmp_path, "own.py", """
        import torch

        def doubled(x):
            if torch.overrides.has_torch_function_unary(x):
                return torch.overrides.handle_torch_function(doubled, (x,), x)
            return x * 2

        def f(x):
            return doubled(x) + 1
    """)
    result = cli("examine", script, "-i", "f32[3]", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "doubled is opaque" in result.stdout


def test_tensor_properties_are_ops_and_unmodelled_inplace_methods_rebind():
    def f(x, z):
        y = z.clone()
        y.mvlgamma_(1)  # an in-place method whose twin tracecli does not model: opaque, and y is its result
        return y, x.H, x.data * 2  # x.H of a complex tensor: the conjugate transpose, left to torch

    x = torch.randn(3, 3, dtype=torch.complex64)
    z = torch.rand(3, 3) + 1  # mvlgamma takes values above 0 only
    program = trace_callable(f, (x, z))
    ops = [b.symbol.qualname for b in program.trace.bsyms]
    assert ops == ["ltorch.clone", "torch.Tensor.mvlgamma_", "torch.Tensor.H.__get__", "ltorch.detach", "ltorch.mul"]
    assert Tag.INPLACE in program.trace.bsyms[1].symbol.tags
    for got, want in zip(compile_trace(program.trace)(x.clone(), z.clone()), f(x.clone(), z.clone()), strict=True):
        torch.testing.assert_close(got, want)


def test_views_are_taken_again_and_written_back_through_their_scatter_twins():
    def f(x):
        d = torch.diagonal(x)
        x.add_(1)  # d is taken again from the new x when read
        s = x.select(1, 0)
        s.mul_(3)  # written back as x[:, 0] = s
        d.sub_(1)  # written back with torch.diagonal_scatter
        return d * 1, x

    x = torch.randn(3, 3)
    program = trace_callable(f, (x.clone(),))
    ops = [b.symbol.qualname for b in program.trace.bsyms]
    assert ops.count("ltorch.diagonal") == 2 and "ltorch.setitem_" in ops and "torch.diagonal_scatter" in ops
    got_x, want_x = x.clone(), x.clone()
    for got, want in zip(compile_trace(program.trace)(got_x), f(want_x), strict=True):
        torch.testing.assert_close(got, want)
    torch.testing.assert_close(got_x, want_x)


def test_a_write_through_an_opaque_view_without_a_scatter_twin_is_refused():
    def f(x):
        x.as_strided((2,), (2,)).add_(1)
        return x

    with pytest.raises(TracingError, match="cannot write back"):
        trace_callable(f, (torch.randn(4),))


def test_a_meta_kernel_known_to_disagree_with_the_device_kernel_is_refused():
    # In eval mode the CPU kernel returns empty save_mean/save_invstd, the meta kernel
    # declares them of the channel count: a trace would declare the wrong shapes.
    x, w, b = randn(2, 3, 4), randn(3), randn(3)
    with pytest.raises(TracingError, match=r"torch.native_batch_norm cannot be traced: with training=False"):
        trace_callable(lambda x: torch.native_batch_norm(x, w, b, torch.zeros(3), torch.ones(3), False, 0.1, 1e-5),
                       (x,), name="fn")
    trace_callable(lambda x: torch.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5), (x,), name="fn")


def test_an_unmodelled_call_refusing_its_arguments_says_so_in_one_line(tmp_path):
    # torch logs the fake kernel's refusal itself (an ERROR with a traceback): held back.
    path = write(tmp_path, "bad_complex.py", """
        import torch


        def f(x):
            return torch.view_as_complex(x)


        def sample_inputs(device):
            return (torch.zeros(3, 4),)
    """)
    result = run_process("run", str(path))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "torch.view_as_complex cannot be traced: Tensor must have a last dimension of size 2" \
        in lines[0], result.stderr
