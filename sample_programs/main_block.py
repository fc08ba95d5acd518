"""A script that calls its entry from its own main block, as people write them.

`tracecli run sample_programs/main_block.py` runs this script as usual; each call of
`normalize_rows` is traced once per input signature, compiled and executed, and the
compiled result is what the script gets back.
"""

import torch


def normalize_rows(x, eps=1e-6):
    centered = x - x.mean(dim=-1, keepdim=True)
    scale = torch.rsqrt(centered.pow(2).mean(dim=-1, keepdim=True) + eps)
    return centered * scale


if __name__ == "__main__":
    torch.manual_seed(0)
    for rows in (4, 4, 8):
        out = normalize_rows(torch.randn(rows, 16))
        print(f"rows={rows} mean={out.mean().abs().item():.1e} std={out.std().item():.3f}")
