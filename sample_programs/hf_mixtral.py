"""Hugging Face Mixtral (mixture of experts: a router picks 2 of 4 SiLU experts per token,
with Llama's attention), built from a small config with random weights (no download).

`experts_implementation="batched_mm"` is transformers' compiler-friendly way to run the
experts: each token's chosen experts' weights are gathered and applied in one batched
matmul, with no shape that depends on the routing. Its default under torch.compile
("grouped_mm") groups the tokens by expert with offsets read back from the routing
(a `.tolist()` inside transformers' own custom op, which stays an opaque call), and
"eager" loops over the experts that were hit (`nonzero()`), which tracing refuses at
that line.
"""

import torch
from transformers import MixtralConfig, MixtralForCausalLM

torch.manual_seed(0)
config = MixtralConfig(
    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, hidden_size=64, intermediate_size=128,
    num_local_experts=4, num_experts_per_tok=2, vocab_size=256, max_position_embeddings=64,
    bos_token_id=0, eos_token_id=0, pad_token_id=0, experts_implementation="batched_mm",
)
model = MixtralForCausalLM(config).eval()


def sample_inputs(device):
    input_ids = torch.randint(0, config.vocab_size, (2, 16), device=device)
    return (input_ids,), {"use_cache": False}
