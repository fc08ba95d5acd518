"""Real model code nobody here wrote: Hugging Face models from small configs with random
weights. Each traces with no opaque op and matches eager through both executors."""

import json

import pytest

pytest.importorskip("transformers")

MODELS = ["hf_gpt2.py", "hf_llama.py", "hf_bert.py", "hf_mixtral.py", "hf_wav2vec2.py"]

# Batch and length of the example and of three more calls: token ids of any length from
# 2; audio long enough for the feature extractor's strided kernels (10 and 3).
TOKENS = ((2, 16), (3, 5), (2, 2), (4, 33))
SYMBOLIC_SIZES = {"hf_wav2vec2.py": ((2, 400), (3, 321), (2, 250), (4, 555))}


@pytest.mark.parametrize("script", MODELS)
def test_model_has_no_opaque_ops(cli, script):
    result = cli("examine", f"sample_programs/{script}", "--strict", "--format", "json")
    report = json.loads(result.stdout)
    opaque = {op["name"]: op["lines"] for op in report["ops"] if not op["modeled"]}
    assert result.exit_code == 0 and not opaque, opaque
    assert report["untraceable"] == []


@pytest.mark.parametrize("executor", ["torch", "prims"])
@pytest.mark.parametrize("script", MODELS)
def test_model_matches_eager(cli, script, executor):
    result = cli("run", f"sample_programs/{script}", "--executor", executor, "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["match"] and report["executor"] == executor
    for output in report["calls"][0]["result"]["outputs"]:
        assert output["match"], output


def test_module_scopes_keep_a_model_readable(cli):
    result = cli("trace", "sample_programs/hf_gpt2.py", "--depth", "0", "--color", "never")
    text = result.stdout
    for scope in ("transformer.h.0.attn", "transformer.h.0.mlp.c_fc", "transformer.h.1.attn"):
        assert f"  # ── {scope}\n" in text


@pytest.mark.parametrize("executor", ["torch", "prims"])
@pytest.mark.parametrize("script", MODELS)
def test_one_symbolic_trace_serves_every_batch_and_length(cli, script, executor):
    # Batch and length of 2 or more (audio: long enough) use the example's trace.
    example, *calls = SYMBOLIC_SIZES.get(script, TOKENS)
    sizes = [arg for batch, length in calls for arg in ("--sizes", f"s0={batch},s1={length}")]
    result = cli("run", f"sample_programs/{script}", "--dynamic", *sizes, "--executor", executor,
                 "--no-timing", "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["traces"] == 1 and report["match"]
    assert [c["reused"] for c in report["calls"]] == [False, True, True, True]
    assert [c["sizes"]["s1"] for c in report["calls"]] == [example[1]] + [length for _, length in calls]
