"""Where eager's fast path gives other values than the code a trace follows.

Traced, torch's modules take their slow paths: the fused kernels of their fast paths
(`torch._native_multi_head_attention`, `torch._transformer_encoder_layer_fwd`) refuse
tensors with a `__torch_function__`, and tracing answers `torch.compiler.is_compiling()`.
Those kernels compute what the slow path computes, but one does not:

`nn.TransformerEncoder` in eval under no_grad, given a `src_key_padding_mask` whose
padding sits at the end of each row, runs its layers on a nested tensor and pads the
result back with zeros: eager's output is zero at every padded position (and after the
encoder's final norm, that norm of zero). The padded slow path computes values there,
as torch.compile does. The stand-in below makes the trace's values eager's: after the
last layer it zeroes the padded positions wherever eager would have taken that path
(the check that the padding is left aligned reads values, so the trace computes it).
"""

from __future__ import annotations

import torch
from torch import nn

_ENCODER_FORWARD = nn.TransformerEncoder.forward


def encoder_forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
    if not _runs_nested(self, src, mask, src_key_padding_mask):
        return _ENCODER_FORWARD(self, src, mask, src_key_padding_mask, is_causal)
    mask_check = getattr(self, "mask_check", True)

    def zero_padded(module, args, output):
        return _zero_padded(output, src_key_padding_mask, mask_check)

    hook = self.layers[-1].register_forward_hook(zero_padded)
    try:
        return _ENCODER_FORWARD(self, src, mask, src_key_padding_mask, is_causal)
    finally:
        hook.remove()


def _runs_nested(encoder: nn.TransformerEncoder, src, mask, src_key_padding_mask) -> bool:
    """Whether eager's TransformerEncoder.forward (torch 2.13) turns `src` into a nested
    tensor, but for the left-aligned check, which reads values. With grad enabled, eager
    does so only if no weight requires grad; that is not followed: never emulated then."""
    if not isinstance(src, torch.Tensor) or src_key_padding_mask is None or mask is not None:
        return False
    return (torch.backends.mha.get_fastpath_enabled() and getattr(encoder, "use_nested_tensor", False)
            and not encoder.layers[0].training and src.dim() == 3 and not src.is_nested
            and not torch.is_autocast_enabled() and not torch.is_grad_enabled()
            and src.device.type in ("cpu", "cuda", "xpu", torch.utils.backend_registration._privateuse1_backend_name))


def _zero_padded(output, padding, mask_check: bool):
    padded = padding.unsqueeze(-1)
    if mask_check:
        # Eager nests only when every row's padding is at its end (kept positions first).
        kept = padding.logical_not()
        padded = padded & (kept[:, 1:] <= kept[:, :-1]).all()
    return output.masked_fill(padded, 0.0)


__all__ = ["encoder_forward"]
