"""Hugging Face GPT-2, built from a small config with random weights (no download)."""

import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
config = GPT2Config(
    n_layer=2, n_head=4, n_embd=64, vocab_size=256, n_positions=64, bos_token_id=0, eos_token_id=0,
)
model = GPT2LMHeadModel(config).eval()


def sample_inputs(device):
    input_ids = torch.randint(0, config.vocab_size, (2, 16), device=device)
    return (input_ids,), {"use_cache": False}
