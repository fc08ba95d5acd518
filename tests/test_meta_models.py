"""Models bigger than this machine, built under `with torch.device("meta"):`: tracing
needs only their metadata, so `trace`, `examine`, `diff`, `snapshot` and `check` work on
them; `run`, which needs values, says so. Eager's device rules for meta tensors hold in
traces: a CPU index into a meta tensor reads it there, as eager's meta kernels do."""

import json

import pytest
import torch
import torch.nn.functional as F

from tests.test_cli import assert_user_error, write
from tracecli.core.errors import TracingError
from tracecli.core.values import TensorValue
from tracecli.frontend.tracer import trace_callable
from tracecli.ops.torch_bridge import FROM_TORCH


def _meta(*shape, dtype=torch.float32):
    return torch.empty(shape, dtype=dtype, device="meta")


_INDEX = torch.tensor([[1, 2, 0]])
_ROWS = torch.tensor([0, 2])
_SPREAD = torch.zeros(2, 6, dtype=torch.long)

# Calls eager runs with a CPU index into a meta tensor, giving a meta result.
ACCEPTED = {
    "embedding": (lambda ids, w: F.embedding(ids, w), (_INDEX, _meta(10, 6))),
    "getitem": (lambda w, i: w[i], (_meta(10, 6), _INDEX)),
    "getitem on dim 1": (lambda w, i: w[:, i], (_meta(4, 10), _ROWS)),
    "index_select": (lambda w, i: torch.index_select(w, 0, i), (_meta(10, 6), _ROWS)),
    "gather": (lambda w, i: torch.gather(w, 0, i), (_meta(10, 6), _SPREAD)),
    "take": (lambda w, i: torch.take(w, i), (_meta(10, 6), _ROWS)),
    "scatter": (lambda w, i, s: w.scatter(0, i, s), (_meta(10, 6), _SPREAD, _meta(2, 6))),
    "scatter of a number": (lambda w, i: w.scatter(0, i, 1.0), (_meta(10, 6), _SPREAD)),
    "scatter_add": (lambda w, i, s: w.scatter_add(0, i, s), (_meta(10, 6), _SPREAD, _meta(2, 6))),
    "scatter_reduce": (lambda w, i, s: w.scatter_reduce(0, i, s, "amax"), (_meta(10, 6), _SPREAD, _meta(2, 6))),
    "histc of integers": (lambda x: torch.histc(x, bins=4, min=0, max=3), (_meta(8, dtype=torch.int32),)),
}

# Calls eager refuses with a CPU tensor beside a meta one: refused in the trace too.
REFUSED = {
    "add": (lambda a, b: a + b, (_meta(4, 6), torch.ones(4, 6))),
    "cat": (lambda a, b: torch.cat([a, b]), (_meta(4, 6), torch.ones(4, 6))),
    "where": (lambda m, a, b: torch.where(m, a, b), (torch.ones(4, 6, dtype=torch.bool), _meta(4, 6), _meta(4, 6))),
    "index_add": (lambda w, i, s: w.index_add(0, i, s), (_meta(10, 6), _ROWS, _meta(2, 6))),
    "histc of integers on the cpu": (lambda x: torch.histc(x, bins=4, min=0, max=3), (torch.zeros(8, dtype=torch.int32),)),
}


@pytest.mark.parametrize("name", ACCEPTED)
def test_a_cpu_index_into_a_meta_tensor_traces_as_eager_runs_it(name):
    fn, args = ACCEPTED[name]
    expected = fn(*args)
    out = trace_callable(fn, args).trace.output
    assert isinstance(out, TensorValue) and expected.is_meta
    assert (out.device, out.shape, out.dtype) == ("meta", tuple(expected.shape), FROM_TORCH[expected.dtype])


@pytest.mark.parametrize("name", REFUSED)
def test_what_eager_refuses_beside_a_meta_tensor_is_refused(name):
    fn, args = REFUSED[name]
    with pytest.raises(RuntimeError):
        fn(*args)
    with pytest.raises(TracingError):
        trace_callable(fn, args)


MODEL_ON_META = """
    import torch

    with torch.device("meta"):
        model = torch.nn.Sequential(torch.nn.Embedding(100, 16), torch.nn.Linear(16, 4))


    def sample_inputs(device):
        return (torch.randint(0, 100, (2, 5)),)


    def forward(ids):
        y = model(ids)
        {read}return y.softmax(-1)
"""


def test_run_on_meta_weights_says_they_have_no_values(cli, tmp_path):
    path = write(tmp_path, "on_meta.py", MODEL_ON_META.format(read=""))
    traced = cli("trace", f"{path}:forward", "--color", "never")
    assert traced.exit_code == 0, traced.output
    assert 'ids: "cpu i64[2, 5]"' in traced.stdout and '"meta f32[2, 5, 4]"' in traced.stdout
    assert_user_error(cli("run", f"{path}:forward"), "the program reads tensors on meta (model_0_weight and 2 more)",
                      "meta tensors have no values", "`tracecli trace`, `examine` and `diff` show its trace")


def test_a_read_of_a_value_on_meta_is_refused_at_its_line(cli, tmp_path):
    path = write(tmp_path, "reads_meta.py", MODEL_ON_META.format(read="if y.sum() > 0:\n            y = -y\n        "))
    assert_user_error(cli("trace", f"{path}:forward"), "reads_meta.py:14", "on meta: meta tensors have no values",
                      "`if y.sum() > 0:`")


TINY_LLAMA = """
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig

    config = LlamaConfig(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, hidden_size=64,
                         intermediate_size=128, vocab_size=256, max_position_embeddings=64,
                         bos_token_id=0, eos_token_id=0, pad_token_id=0)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config).eval()


    def sample_inputs(device):
        return (torch.randint(0, config.vocab_size, (2, 8), device=device),), {"use_cache": False}
"""


@pytest.fixture
def tiny_llama(tmp_path):
    pytest.importorskip("transformers")
    return write(tmp_path, "tiny_llama.py", TINY_LLAMA)


def test_a_hugging_face_model_built_on_meta_traces_like_its_real_twin(cli, tmp_path, tiny_llama):
    # Ids on the CPU, weights on meta: the embedding reads them on meta, as eager does.
    traced = cli("trace", tiny_llama, "--color", "never")
    assert traced.exit_code == 0, traced.output
    assert 'input_ids: "cpu i64[2, 8]"' in traced.stdout and '"meta f32[2, 8, 256]"' in traced.stdout
    # All on meta: the very trace of the same model with real weights, traced for meta.
    real = write(tmp_path, "tiny_real.py", TINY_LLAMA.replace('with torch.device("meta"):', "if True:"))
    on_meta, twin = (cli("trace", path, "--device", "meta", "--color", "never") for path in (tiny_llama, real))
    assert on_meta.exit_code == 0 and twin.exit_code == 0, on_meta.output
    assert on_meta.stdout.replace("tiny_llama.py", "tiny_real.py") == twin.stdout


def test_examine_diff_snapshot_and_check_work_on_a_model_built_on_meta(cli, tmp_path, tiny_llama):
    examined = cli("examine", tiny_llama, "--strict", "--format", "json")
    assert examined.exit_code == 0, examined.output
    assert not [op for op in json.loads(examined.stdout)["ops"] if not op["modeled"]]
    diffed = cli("diff", tiny_llama, "-p", "dce,cse,rename", "--color", "never")
    assert diffed.exit_code == 0, diffed.output
    assert "logits = ltorch.linear(" in diffed.stdout
    snapshots = str(tmp_path / "snapshots")
    stored = cli("snapshot", tiny_llama, "--dir", snapshots, "-p", "dce,rename")
    assert stored.exit_code == 0, stored.output
    checked = cli("check", tiny_llama, "--dir", snapshots)
    assert checked.exit_code == 0 and "1 equal" in checked.stdout, checked.output
    assert_user_error(cli("run", tiny_llama), "meta tensors have no values", "`tracecli trace`, `examine` and `diff`")
