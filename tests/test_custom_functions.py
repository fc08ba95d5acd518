"""A custom torch.autograd.Function is one call of the trace, named for it: its
subsymbols are what its forward ran, every executor runs them, every pass keeps the
call, examine counts what is inside it, and wherever gradients are taken they are the
function's own backward (functions here have backwards that differ from autograd of
their forwards, so a test passes only if that backward is what runs)."""

import re
import subprocess
import sys

import pytest

from tests.test_cli import assert_user_error, write

# BLOOM's GeLU, as the issue met it: a module calling the function outside training.
GELU = """
    import torch
    from torch import nn


    class GeLUFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            tanh_out = torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x))
            ff = 0.5 * x * ((1 - tanh_out * tanh_out) * (0.79788456 + 0.1070322243 * x * x)) + 0.5 * (1 + tanh_out)
            return ff * g


    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            return GeLUFunction.apply(self.lin(x))


    model = M()


    def entry(x):
        return model(x)


    def sample_inputs(device):
        return (torch.randn(3, 4, device=device),)
"""


def test_a_functions_call_shows_its_forward_and_examine_counts_it(cli, tmp_path):
    path = write(tmp_path, "gelu.py", GELU)
    text = cli("trace", path, "--color", "never").stdout
    call = "t12 = GeLUFunction_apply(t3)  # t12: \"cpu f32[3, 4]\"\n"
    assert call + "    # t4 = ltorch.mul(t3, 0.5)" in text
    assert "    # t10 = ltorch.tanh(t9)" in text and "\n  t4 = " not in text  # inside the call only
    assert "      # t10 = prims.tanh(t9)" in cli("trace", path, "--depth", "2", "--color", "never").stdout
    assert "    # " not in cli("trace", path, "--depth", "0", "--color", "never").stdout.split(call)[1]
    examined = cli("examine", path, "--strict", "--color", "never")
    assert examined.exit_code == 0, examined.output
    assert "ltorch.tanh" in examined.stdout and "0 opaque" in examined.stdout


@pytest.mark.parametrize("executor", ["torch", "prims", "inductor"])
def test_every_executor_runs_what_the_call_holds(cli, tmp_path, executor):
    path = write(tmp_path, "gelu.py", GELU)
    for passes in ("dce,cse,rename,renumber", "lower,dce", "fuse"):
        result = cli("run", path, "-e", executor, "-p", passes, "--no-timing", "--depth", "0", "--color", "never")
        assert result.exit_code == 0, result.output
        assert re.search(r" = GeLUFunction_apply\(t\d+\)  #", result.stdout) and "the output matches eager" in result.stdout


FUNCTIONS = """
    import torch
    from torch.autograd.function import once_differentiable


    class RoundSTE(torch.autograd.Function):
        \"\"\"Rounds on the way forward, passes the gradient through tanh's on the way back.\"\"\"
        @staticmethod
        def forward(ctx, x, levels):
            h = torch.tanh(x)
            ctx.save_for_backward(h)  # made inside, not returned: the call returns it once gradients are taken
            ctx.levels = levels
            return torch.round(h * levels) / levels

        @staticmethod
        def backward(ctx, g):
            (h,) = ctx.saved_tensors
            return g * (1 - h * h), None


    class Clip(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, lo, hi, scale):
            ctx.save_for_backward(x)
            ctx.lo, ctx.hi, ctx.scale = lo, hi, scale
            return x.clamp(lo, hi) * scale

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            inside = ((x > ctx.lo) & (x < ctx.hi)).to(g.dtype)
            return g * inside * ctx.scale + 0.25 * g, None, None, (g * x).sum().reshape(ctx.scale.shape)


    class TwoOut(torch.autograd.Function):
        @staticmethod
        def forward(x, y):
            s = x + y
            return s.sin(), (s > 0).sum(-1)

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, y = inputs
            ctx.mark_non_differentiable(output[1])
            ctx.save_for_backward(x + y)

        @staticmethod
        def backward(ctx, g, g_count):
            (s,) = ctx.saved_tensors
            return g * s.cos() * 2, g * s.cos() * 3


    class Noisy(torch.autograd.Function):
        \"\"\"Draws a mask in its forward: its backward reads that mask, never one drawn again.\"\"\"
        @staticmethod
        def forward(ctx, x):
            mask = (torch.rand_like(x) > 0.5).to(x.dtype)
            ctx.save_for_backward(mask)
            return x * mask

        @staticmethod
        def backward(ctx, g):
            (mask,) = ctx.saved_tensors
            return g * mask * 3


    class Same(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x  # a new tensor sharing x's memory, as autograd returns it

        @staticmethod
        def backward(ctx, g):
            return g * 5


    class Outer(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return RoundSTE.apply(x, 4.0) * 2  # a function inside a function

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x


    STATS = torch.zeros(4)


    class Tracked(torch.autograd.Function):
        \"\"\"Updates a running buffer it was not given, in place, as batch norm does.\"\"\"
        @staticmethod
        def forward(ctx, x):
            STATS.mul_(0.9).add_(x.mean(0) * 0.1)
            ctx.save_for_backward(x)
            return x.relu()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * (x > 0).to(g.dtype) * 2


    w = torch.nn.Parameter(torch.randn(4, 4))
    scale = torch.nn.Parameter(torch.tensor([1.5]))


    def model(x, y):
        h = Clip.apply(x @ w, -0.5, 0.5, scale)
        s, count = TwoOut.apply(h, y)
        q = RoundSTE.apply(Tracked.apply(s), 4.0) + Noisy.apply(s) + Outer.apply(h) + Same.apply(h)
        return q.sum(-1) + count


    def step(x, y):
        loss = model(x, y).sum()
        loss.backward()
        return loss


    def sample_inputs(device):
        return torch.randn(3, 4, device=device), torch.randn(3, 4, device=device)
"""


@pytest.mark.parametrize("passes", ["dce,cse,rename,renumber", "lower,dce,cse,rename"])
@pytest.mark.parametrize("entry, grad", [("model", "--grad"), ("step", "--no-timing")])
def test_gradients_are_the_functions_own_backwards(cli, tmp_path, passes, entry, grad):
    path = write(tmp_path, "functions.py", FUNCTIONS)
    for executor in ("torch", "prims", "inductor"):
        result = cli("run", f"{path}:{entry}", grad, "-e", executor, "-p", passes, "--no-timing", "--depth", "0",
                     "--color", "never")
        assert result.exit_code == 0, result.output
        assert "gradients match eager autograd" in result.stdout and "1 input written in place" in result.stdout
    text = cli("trace", f"{path}:{entry}", "-p", passes, "--color", "never").stdout
    for name in ("Clip", "TwoOut", "RoundSTE", "Tracked", "Noisy", "Outer", "Same"):
        assert f"= {name}_apply(" in text, name


def test_what_a_backward_reads_of_the_inside_is_returned_by_the_call(cli, tmp_path):
    path = write(tmp_path, "functions.py", FUNCTIONS)
    text = cli("trace", f"{path}:step", "-p", "rename", "--color", "never").stdout
    # Noisy's mask and RoundSTE's tanh are read by their backwards: the calls return them,
    # named after the forward's variables (`h_1`: the program's own `h` came first).
    assert ", mask) = Noisy_apply(s)" in text and ", h_1) = RoundSTE_apply(" in text
    # Without gradients, the calls return what the functions return and no more.
    plain = cli("trace", f"{path}:model", "--color", "never").stdout
    assert ") = Noisy_apply(" not in plain and ") = RoundSTE_apply(" not in plain


def test_a_saved_trace_defines_the_functions_and_runs(cli, tmp_path):
    path = write(tmp_path, "functions.py", FUNCTIONS)
    saved = tmp_path / "saved"
    result = cli("diff", f"{path}:model", "-p", "dce,rename", "--save", str(saved))
    assert result.exit_code == 0, result.output
    text = (saved / "02-rename.py").read_text()
    assert "\ndef Clip_apply(" in text and "\ndef Outer_apply(" in text
    ran = subprocess.run([sys.executable, str(saved / "02-rename.py")], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    again = cli("run", str(saved / "02-rename.py"), "--no-timing", "--color", "never")
    assert again.exit_code == 0 and "1 input written in place match eager" in again.stdout, again.output


def test_one_symbolic_trace_serves_other_sizes(cli, tmp_path):
    path = write(tmp_path, "functions.py", FUNCTIONS)
    result = cli("run", f"{path}:model", "--dynamic", "--sizes", "s0=6,s2=6", "--no-timing", "--depth", "0",
                 "--color", "never")
    assert result.exit_code == 0, result.output
    assert "1 trace for 2 calls" in result.stdout


UNTRACEABLE = """
    import torch


    class Untraceable(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * float(grad.sum())


    w = torch.nn.Parameter(torch.randn(4))


    def f(x):
        return Untraceable.apply(x * w) + 1


    def sample_inputs(device):
        return (torch.randn(4, device=device),)
"""


def test_a_gradient_through_a_function_whose_backward_cannot_be_traced_is_refused(cli, tmp_path):
    path = write(tmp_path, "untraceable.py", UNTRACEABLE)
    assert_user_error(cli("run", path, "--grad"), "--grad: Untraceable_apply", "untraceable.py:19",
                      "a custom autograd.Function whose backward is not traced",
                      "untraceable.py:12: Tensor.__float__ needs the tensor's values")
    result = cli("run", path, "--no-timing", "--color", "never")  # no gradient asked for: traced and run
    assert result.exit_code == 0 and "Untraceable_apply(" in result.stdout, result.output


def test_the_calls_in_every_layer_are_one_function(cli, tmp_path):
    layers = GELU.replace("""    model = M()
""", """    model = nn.Sequential(M(), M(), M())
""")
    path = write(tmp_path, "layers.py", layers)
    result = cli("run", path, "--grad", "-p", "cse,dce", "--no-timing", "--depth", "0", "--color", "never")
    assert result.exit_code == 0 and "all 6 gradients match eager autograd" in result.stdout, result.output
    assert len(re.findall(r" = GeLUFunction_apply\(t\d+\)  #", result.stdout)) == 3
    saved = tmp_path / "saved"
    assert cli("diff", path, "-p", "dce", "--save", str(saved)).exit_code == 0
    assert (saved / "01-dce.py").read_text().count("\ndef GeLUFunction_apply(") == 1
    again = cli("run", str(saved / "01-dce.py"), "--no-timing", "--color", "never")
    assert again.exit_code == 0 and "the output matches eager" in again.stdout, again.output


def test_a_gradient_is_passed_on_as_autograd_does_under_autocast(cli, tmp_path):
    path = write(tmp_path, "amp.py", """
        import torch


        class Mul(torch.autograd.Function):
            @staticmethod
            @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.bfloat16)
            def forward(ctx, a, b, bias):
                ctx.save_for_backward(a, b)
                return a @ b + bias

            @staticmethod
            @torch.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                a, b = ctx.saved_tensors
                # bf16 gradients for f32 inputs, the bias's as broadcast: autograd casts and sums them.
                return g @ b.t() * 2, a.t() @ g, g


        w = torch.nn.Parameter(torch.randn(4, 4))
        bias = torch.nn.Parameter(torch.randn(4))


        def f(x):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return Mul.apply(x, w, bias).float().sum()


        def sample_inputs(device):
            return (torch.randn(3, 4, device=device),)
    """)
    result = cli("run", path, "--grad", "--no-timing", "--depth", "0", "--color", "never")
    assert result.exit_code == 0 and "all 2 gradients match eager autograd" in result.stdout, result.output
