"""The model set: timm and torchvision image classifiers, random weights, eval mode, one
image at the model's own default size. Varied on purpose: plain and grouped convolutions,
squeeze-excitation, dense and multi-branch blocks, MLP mixers, and transformers with
every kind of attention these libraries have (torchvision's nn.MultiheadAttention,
shifted and multi-axis windows, relative position biases, registers, rotary embeddings,
and LeViT's and EfficientFormer's attention biases cached on their first eval call)."""

from __future__ import annotations

from benchmarks.reach.harness import Case

# (library, architecture, input side)
TORCHVISION = [
    ("resnet18", 224), ("resnext50_32x4d", 224), ("regnet_y_400mf", 224), ("densenet121", 224),
    ("efficientnet_b0", 224), ("mobilenet_v3_small", 224), ("convnext_tiny", 224), ("vgg11", 224),
    ("squeezenet1_1", 224), ("shufflenet_v2_x0_5", 224), ("googlenet", 224), ("mnasnet0_5", 224),
    ("vit_b_16", 224), ("swin_t", 224), ("maxvit_t", 224),
]
TIMM = [
    # convolutional
    ("resnet26d", 224), ("regnety_002", 224), ("dla34", 224), ("mobilenetv3_small_100", 224),
    ("mobilenetv4_conv_small", 224), ("convnext_atto", 224), ("ghostnet_100", 224), ("rexnet_100", 224),
    ("repvgg_a0", 224), ("hrnet_w18_small", 224), ("cspresnet50", 256), ("eca_nfnet_l0", 224),
    ("fastvit_t8", 256), ("inception_next_tiny", 224), ("edgenext_xx_small", 256), ("sequencer2d_s", 224),
    # transformers and hybrids
    ("deit_tiny_patch16_224", 224), ("beit_base_patch16_224", 224), ("vit_small_patch16_224", 224),
    ("vit_pwee_patch16_reg1_gap_256", 256), ("eva02_tiny_patch14_224", 224), ("swin_tiny_patch4_window7_224", 224),
    ("maxvit_nano_rw_256", 256), ("coatnet_nano_rw_224", 224), ("levit_128s", 224), ("efficientformer_l1", 224),
    ("efficientformerv2_s0", 224), ("poolformer_s12", 224), ("mixer_s16_224", 224), ("resmlp_12_224", 224),
    ("cait_xxs24_224", 224), ("xcit_nano_12_p16_224", 224), ("pit_ti_224", 224), ("crossvit_tiny_240", 240),
    ("mobilevit_xxs", 256), ("tiny_vit_5m_224", 224), ("efficientvit_b0", 224), ("volo_d1_224", 224),
    ("hiera_tiny_224", 224), ("botnet26t_256", 256), ("twins_svt_small", 224), ("mambaout_femto", 224),
]

BUILD = {
    "timm": 'timm.create_model("{arch}", pretrained=False)',
    "torchvision": 'torchvision.models.get_model("{arch}", weights=None)',
}

TEMPLATE = '''\
"""{library} {arch}: random weights, eval mode, one {side}x{side} image."""

import sys
import types

# torchvision's compiled detection ops do not load on a CPU build of torch: leave them out.
for name in ("torchvision._meta_registrations", "torchvision._autograd_registrations"):
    sys.modules.setdefault(name, types.ModuleType(name))

import torch  # noqa: E402
import {library}  # noqa: E402

torch.manual_seed(0)
model = {build}.eval()


def sample_inputs(device):
    return (torch.randn(1, 3, {side}, {side}, device=device),)
'''


def model_case(library: str, arch: str, side: int) -> Case:
    source = TEMPLATE.format(library=library, arch=arch, side=side, build=BUILD[library].format(arch=arch))
    return Case("models", f"{library}.{arch}", f"{arch}.py", source, "model", f"1x3x{side}x{side}")


def cases() -> list[Case]:
    return [model_case("torchvision", arch, side) for arch, side in TORCHVISION] + \
           [model_case("timm", arch, side) for arch, side in TIMM]
