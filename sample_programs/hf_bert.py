"""Hugging Face BERT (bidirectional attention with a padding mask, token types, GELU),
built from a small config with random weights (no download)."""

import torch
from transformers import BertConfig, BertModel

torch.manual_seed(0)
config = BertConfig(
    num_hidden_layers=2, num_attention_heads=4, hidden_size=64, intermediate_size=128, vocab_size=256,
    max_position_embeddings=64, type_vocab_size=2, pad_token_id=0,
)
model = BertModel(config).eval()


def sample_inputs(device):
    input_ids = torch.randint(1, config.vocab_size, (2, 16), device=device)
    attention_mask = torch.ones(2, 16, dtype=torch.long, device=device)
    attention_mask[1, 12:] = 0  # the second sequence is padded
    token_type_ids = torch.zeros(2, 16, dtype=torch.long, device=device)
    return (input_ids,), {"attention_mask": attention_mask, "token_type_ids": token_type_ids}
