"""Hugging Face Llama (RMSNorm, rotary embeddings, grouped-query attention, SiLU MLP),
built from a small config with random weights (no download)."""

import torch
from transformers import LlamaConfig, LlamaForCausalLM

torch.manual_seed(0)
config = LlamaConfig(
    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, hidden_size=64, intermediate_size=128,
    vocab_size=256, max_position_embeddings=64, bos_token_id=0, eos_token_id=0, pad_token_id=0,
)
model = LlamaForCausalLM(config).eval()


def sample_inputs(device):
    input_ids = torch.randint(0, config.vocab_size, (2, 16), device=device)
    return (input_ids,), {"use_cache": False}
