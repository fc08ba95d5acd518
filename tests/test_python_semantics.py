"""The Python around the ops, as eager has it: what a tensor says of its device, numbers
read out of tensors whose values tracing knows, the containers the entry returns, and
the objects unmodelled calls return. Each program is run (`run` exits 0 only when the
trace agrees with eager)."""

import pytest

from tests.test_cli import write

PROGRAM = """
    import collections
    import dataclasses
    from typing import NamedTuple

    import torch
    from torch.overrides import handle_torch_function, has_torch_function


    class Config(dict):
        pass


    class Ordered(collections.OrderedDict):
        pass


    class AttrDict(dict):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.__dict__ = self


    class Named(dict):
        def __init__(self, name):
            super().__init__()
            self.name = name


    class Tags(list):
        pass


    class Stats:
        def __init__(self, n):
            self.n = n


    def stats(x):
        if has_torch_function((x,)):
            return handle_torch_function(stats, (x,), x)
        return Stats(x.numel()), x.device, {{"dtype": x.dtype, "dim": x.dim()}}


    def f(x):
        {body}


    def sample_inputs(device):
        return (torch.randn(2, 3, device=device),)
"""


def script(tmp_path, body: str) -> str:
    """The program's path, with its entry `f` named."""
    path = write(tmp_path, "semantics.py", PROGRAM.replace("{{", "{").replace("}}", "}").replace("{body}", body))
    return f"{path}:f"


def run(cli, tmp_path, body: str, *options: str):
    return cli("run", script(tmp_path, body), "--color", "never", "--depth", "0", *options)


# -- what a tensor says of its device -------------------------------------------------------


def test_type_names_the_traced_device_and_converts_by_it(cli, tmp_path):
    result = run(cli, tmp_path, "return x.double().type(x.type()) + 1, x.type()")
    assert result.exit_code == 0, result.output


def test_device_queries_answer_for_the_traced_device_on_any_machine(cli, tmp_path):
    path = script(tmp_path, "a = x.double().type(x.type()); return (a + 1, x.type(), str(x.type()), "
                            "torch.typename(x), x.is_cuda, x.get_device(), str(x.device), x.storage_type().__name__)")
    result = cli("trace", path, "--device", "cuda:0", "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    assert 'ltorch.to(t0, dtype=torch.float32)  # t1: "cuda:0 f32[2, 3]"' in result.stdout
    assert ('"torch.cuda.FloatTensor", "torch.cuda.FloatTensor", "torch.cuda.FloatTensor", True, 0, "cuda:0", '
            '"FloatStorage")') in result.stdout


def test_a_device_an_unmodelled_call_returns_is_the_traced_device(cli, tmp_path):
    path = script(tmp_path, "s, device, meta = stats(x); return x * s.n, device")
    result = cli("trace", path, "--device", "cuda:0", "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    assert 'torch.device("cuda:0"))' in result.stdout


def test_a_copy_to_another_device_is_declared_there(cli, tmp_path):
    # On the meta tensors an unmodelled call runs on, torch's own .cpu() moves to the CPU
    # as in eager; its result is declared there, not on the device of what it read.
    path = write(tmp_path, "host.py", """
        import torch


        def to_host(x):
            # Handed to __torch_function__ through the module's attributes: a call
            # tracing does not look into.
            if torch.overrides.has_torch_function((x,)):
                return torch.overrides.handle_torch_function(to_host, (x,), x)
            return x.cpu() * 2


        def f(x):
            return to_host(x), x.cpu() + 1, x.cuda(0), x.cuda()
    """)
    result = cli("trace", path, "--input", "f32[2,3]", "--device", "cuda:0", "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    assert 't0 = to_host(x)  # t0: "cpu f32[2, 3]"' in result.stdout
    assert 't1 = ltorch.to(x, device="cpu")  # t1: "cpu f32[2, 3]"' in result.stdout


# -- the containers the entry returns ----------------------------------------------------------


@pytest.mark.parametrize("body", [
    "Pair = collections.namedtuple('Pair', ['a', 'b']); return Pair(x + 1, x * 2)",
    "class Pair(NamedTuple):\n            a: torch.Tensor\n            b: int\n        return Pair(x + 1, 2)",
    "@dataclasses.dataclass\n        class Out:\n            a: torch.Tensor\n        return Out(x + 1)",
    "class Local(dict):\n            pass\n        return Local(a=x)",
], ids=["namedtuple", "NamedTuple", "dataclass", "dict-subclass"])
def test_a_class_made_inside_the_entry_is_compared_by_its_name_and_fields(cli, tmp_path, body):
    result = run(cli, tmp_path, body)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(("body", "built"), [
    ("return Config(a=x + 1), Ordered(b=x * 2)", 'return (Config({"a": t0}), Ordered({"b": t1}))'),
    ("d = AttrDict(a=x + 1); return d", 'return AttrDict({"a": t0})'),
    ("n = Named('k'); n['t'] = x + 1; return n", 'return filled_Named({"t": t0})'),
    ("return collections.defaultdict(list, {'a': [x + 1]})", 'return defaultdict(list, {"a": [t0]})'),
    ("return Tags([x + 1, x * 2])", "return Tags([t0, t1])"),
])
def test_a_returned_dict_or_list_subclass_keeps_its_type(cli, tmp_path, body, built):
    result = run(cli, tmp_path, body)
    assert result.exit_code == 0, result.output
    assert built in result.stdout


def test_the_compiled_trace_returns_the_subclass(tmp_path):
    from tracecli.jobs.runner import trace_script

    job = trace_script(script(tmp_path, "d = AttrDict(a=x + 1); return d"), repeat=0)
    program = job.calls[0].program
    out = job.compiled(job.calls[0].final)(*program.inputs)
    assert type(out).__name__ == "AttrDict" and out.a is out["a"]


# -- objects unmodelled calls return -------------------------------------------------------------


def test_an_unmodelled_call_returning_python_objects_is_traced_and_runs(cli, tmp_path):
    result = run(cli, tmp_path, "s, device, meta = stats(x); return x * s.n, s, device, meta")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("body", [
    "s = x.untyped_storage(); return x + s.nbytes()",
    "return x + 1, x.storage().size()",
])
def test_a_storage_is_refused_at_the_users_line(cli, tmp_path, body):
    result = run(cli, tmp_path, body)
    assert result.exit_code == 2
    assert "semantics.py:46:" in result.output and "the storage of a traced tensor" in result.output
    assert "Traceback" not in result.output


# -- numbers read out of tensors whose values tracing knows ----------------------------------------


@pytest.mark.parametrize("body", [
    "items = [x, x * 2, x * 3]; return items[torch.as_tensor(2)], items[torch.tensor(1) + 1]",
    "n = torch.arange(4).sum(); return x * int(n), x[:, torch.tensor(1)] * float(torch.tensor(2.5))",
    "t = torch.tensor([1.0, 2.0]); return x * t.tolist()[1]",
    "t = torch.zeros(3); t[1] = 5; k = torch.tensor(0); k += 1; return x * t[1].item() * k.item()",
    "t = torch.tensor(3); return x * 2 if t > 2 else x",
    "idx = torch.tensor([2, 0]); return [x, x + 1, x + 2][idx[0]], x.new_zeros(int(torch.tensor(4)))",
], ids=["index", "int-float", "tolist", "written-with-constants", "bool", "index-of-index"])
def test_a_tensor_made_from_constants_reads_as_the_number_it_holds(cli, tmp_path, body):
    result = run(cli, tmp_path, body)
    assert result.exit_code == 0, result.output


def test_the_tensor_read_stays_an_op_in_the_trace(cli, tmp_path):
    result = cli("trace", script(tmp_path, "items = [x, x * 2, x * 3]; return items[torch.as_tensor(2)]"),
                 "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    assert 't2 = ltorch.tensor(2)  # t2: "cpu i64[]"' in result.stdout and 'return t1' in result.stdout


@pytest.mark.parametrize("body", [
    "t = torch.tensor(3.0); t.add_(x.sum()); return x * float(t)",
    "t = torch.rand(1); return x * float(t)",
    "t = torch.empty(2); return x * t[0].item()",
    "return x * int(x.sum() > 0)",
])
def test_a_value_that_may_differ_between_calls_is_not_read(cli, tmp_path, body):
    result = run(cli, tmp_path, body, "--fullgraph")
    assert result.exit_code == 2
    assert "needs the tensor's values, which tracing does not have" in result.output
    # Without --fullgraph the read cuts the trace: the value is read for real, on every call
    # (uninitialised memory, read so, may differ from eager's).
    cut = run(cli, tmp_path, body)
    assert "segment 2 of 2" in cut.stdout, cut.output
    if "empty" not in body:
        assert cut.exit_code == 0, cut.output


def test_a_size_symbol_is_no_known_value(cli, tmp_path):
    # Not a constant of the trace: a value read, refused with --fullgraph, a cut without.
    result = run(cli, tmp_path, "return x * int(torch.tensor(x.shape[0]))", "--dynamic", "--fullgraph")
    assert result.exit_code == 2
    assert "needs the tensor's values" in result.output
    result = run(cli, tmp_path, "return x * int(torch.tensor(x.shape[0]))", "--dynamic")
    assert result.exit_code == 0, result.output
    assert "int() of a tensor reads its value" in result.output and "the call matches eager" in result.output
