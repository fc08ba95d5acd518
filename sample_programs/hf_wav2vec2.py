"""Hugging Face Wav2Vec2 (an audio front end: strided convolutions over the raw waveform,
then a transformer whose positional embedding is a grouped convolution with weight
norm), built from a small config with random weights (no download).

The positional convolution is parametrized with
`torch.nn.utils.parametrizations.weight_norm`: the trace computes its weight on every
call from the stored magnitude and direction (`ltorch.weight_norm`: the norm of the
direction, the magnitude divided by it, the product).
"""

import torch
from transformers import Wav2Vec2Config, Wav2Vec2Model

torch.manual_seed(0)
config = Wav2Vec2Config(
    hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
    conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3),
    num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
)
model = Wav2Vec2Model(config).eval()


def sample_inputs(device):
    waveform = torch.randn(2, 400, device=device)  # two clips of 400 samples
    return (waveform,), {}
