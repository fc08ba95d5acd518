"""One AdamW training step of a small Hugging Face causal language model with random
weights (no download): GPT-2 by default, Llama with `-- --llama`. `tracecli run` shows
the step and its backward, and checks the loss, every parameter after the update and
the optimizer's work against eager PyTorch."""

import argparse

import torch
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

parser = argparse.ArgumentParser()
parser.add_argument("--llama", action="store_true", help="a Llama model instead of GPT-2")
args, _ = parser.parse_known_args()

torch.manual_seed(0)
if args.llama:
    config = LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, vocab_size=256, max_position_embeddings=64)
    model = LlamaForCausalLM(config)
else:
    config = GPT2Config(n_layer=2, n_head=4, n_embd=64, vocab_size=256, n_positions=64, bos_token_id=0,
                        eos_token_id=0, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    model = GPT2LMHeadModel(config)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)


def train_step(input_ids):
    loss = model(input_ids, labels=input_ids, use_cache=False).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss


def sample_inputs(device):
    return (torch.randint(0, config.vocab_size, (2, 16), device=device),)
