"""Python state the function writes while it runs (globals, a module's cache, a list it
appends tensors to, an object's attributes), custom torch.autograd.Functions, and torch's
own Python-level layers (nn.MultiheadAttention, nn.Transformer*Layer) called from a
function."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def case(inputs, kwargs=dict):
    """Marks a case: `inputs()` makes its positional arguments, `kwargs()` its keyword ones."""
    def mark(fn):
        fn.case_inputs = lambda: (inputs(), kwargs())
        return fn
    return mark


def randn(*shape, **options):
    return torch.randn(*shape, **options)


# -- Python state written --------------------------------------------------------------

calls = 0
history = []
cache = {}


@case(lambda: (randn(3),))
def global_counter(x):
    """a global int incremented, its value used"""
    global calls
    calls += 1
    return x * calls


@case(lambda: (randn(3),))
def global_list_append_tensor(x):
    """a tensor appended to a global list"""
    y = x * 2
    history.append(y)
    return y + len(history)


@case(lambda: (randn(3),))
def global_dict_cache(x):
    """a global dict caching a tensor keyed by shape, filled on the first call"""
    key = tuple(x.shape)
    if key not in cache:
        cache[key] = torch.arange(x.shape[0], dtype=x.dtype) * 0.5
    return x + cache[key]


@case(lambda: (randn(3), []))
def append_to_argument_list(x, out):
    """a tensor appended to a list passed in"""
    out.append(x.exp())
    return x + 1


class BiasCache(nn.Module):
    """Caches its attention bias in a dict on the first eval call, as LeViT does."""

    def __init__(self):
        super().__init__()
        self.biases = nn.Parameter(torch.randn(4, 6))
        self.register_buffer("idx", torch.tensor([0, 2, 4, 5]), persistent=False)
        self.bias_cache = {}

    def get_bias(self, device):
        if self.training:
            return self.biases[:, self.idx]
        key = str(device)
        if key not in self.bias_cache:
            self.bias_cache[key] = self.biases[:, self.idx]
        return self.bias_cache[key]

    def forward(self, x):
        return x @ self.get_bias(x.device).T


class LastOutput(nn.Module):
    """Keeps its last output on an attribute."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)
        self.last = None

    def forward(self, x):
        self.last = self.linear(x)
        return self.last.relu()


class RunningSum(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(4))
        self.steps = 0

    def forward(self, x):
        self.total.add_(x.sum(0))
        self.steps += 1
        return self.total / self.steps


torch.manual_seed(0)
BIAS_CACHE = BiasCache().eval()
LAST_OUTPUT = LastOutput()
RUNNING = RunningSum()


@case(lambda: (randn(2, 4),))
def module_caches_tensor_in_dict(x):
    """a module caching a slice of its parameter in a dict on its first eval call"""
    return BIAS_CACHE(x) + BIAS_CACHE(x * 2)


@case(lambda: (randn(2, 4),))
def module_attribute_set_to_tensor(x):
    """a module storing its output on self.last"""
    out = LAST_OUTPUT(x)
    return out + LAST_OUTPUT.last


@case(lambda: (randn(3, 4),))
def buffer_updated_in_place(x):
    """a buffer updated in place and a Python counter on the module"""
    return RUNNING(x)


class Tracker:
    def __init__(self):
        self.peak = None
        self.names = []


TRACKER = Tracker()


@case(lambda: (randn(3),))
def object_attributes_written(x):
    """an instance's attributes set to a tensor and a list appended to"""
    TRACKER.peak = x.abs().max()
    TRACKER.names.append("step")
    return x / TRACKER.peak


# -- custom autograd.Function ----------------------------------------------------------

class ScaledReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x.clamp(min=0) * scale

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (x > 0) * ctx.scale, None


class GeLUFunction(torch.autograd.Function):
    """The tanh GeLU as BLOOM writes it."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        tanh_out = torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x))
        ff = 0.5 * x * ((1 - tanh_out * tanh_out) * (0.79788456 + 0.1070322243 * x * x)) + 0.5 * (1 + tanh_out)
        return ff * grad


class SquareSetup(torch.autograd.Function):
    """The forward/setup_context form."""

    @staticmethod
    def forward(x):
        return x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


@case(lambda: (randn(4),))
def autograd_function_inference(x):
    """Function.apply with a non-tensor argument, inputs not requiring grad"""
    return ScaledReLU.apply(x, 3.0) + 1


@case(lambda: (randn(4),))
def autograd_function_gelu(x):
    """BLOOM's GeLUFunction.apply in inference"""
    return GeLUFunction.apply(x)


@case(lambda: (randn(4, requires_grad=True),))
def autograd_function_with_grad_input(x):
    """Function.apply on an input that requires grad"""
    return ScaledReLU.apply(x, 0.5).sum()


@case(lambda: (randn(4),))
def autograd_function_setup_context(x):
    """a Function written with setup_context"""
    return SquareSetup.apply(x) - x


# -- torch's Python-level layers ----------------------------------------------------------

torch.manual_seed(0)
ATTENTION = nn.MultiheadAttention(16, 4, batch_first=True).eval()
ATTENTION_SEQ_FIRST = nn.MultiheadAttention(16, 2, kdim=8, vdim=8).eval()
ENCODER_LAYER = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.0, batch_first=True).eval()
DECODER_LAYER = nn.TransformerDecoderLayer(16, 4, dim_feedforward=32, dropout=0.0, batch_first=True).eval()
ENCODER = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 2, 32, 0.0, batch_first=True), 2,
                                enable_nested_tensor=False).eval()


@case(lambda: (randn(2, 5, 16),))
def multihead_self_attention(x):
    """nn.MultiheadAttention self-attention, weights not needed"""
    out, _ = ATTENTION(x, x, x, need_weights=False)
    return out


@case(lambda: (randn(2, 5, 16), randn(2, 7, 16)))
def multihead_attention_weights(q, kv):
    """nn.MultiheadAttention returning the averaged attention weights"""
    return ATTENTION(q, kv, kv)


@case(lambda: (randn(2, 5, 16), torch.tensor([[False] * 4 + [True], [False] * 5])))
def multihead_attention_padding_mask(x, padding):
    """nn.MultiheadAttention with a key padding mask"""
    return ATTENTION(x, x, x, key_padding_mask=padding, need_weights=False)[0]


@case(lambda: (randn(5, 2, 16), randn(6, 2, 8)))
def multihead_attention_kdim(q, kv):
    """nn.MultiheadAttention with kdim/vdim, sequence first"""
    return ATTENTION_SEQ_FIRST(q, kv, kv)[0]


@case(lambda: (randn(2, 5, 16),))
def transformer_encoder_layer(x):
    """nn.TransformerEncoderLayer with a causal mask"""
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    return ENCODER_LAYER(x, src_mask=mask, is_causal=True)


@case(lambda: (randn(2, 5, 16), randn(2, 3, 16)))
def transformer_decoder_layer(tgt, memory):
    """nn.TransformerDecoderLayer"""
    return DECODER_LAYER(tgt, memory)


@case(lambda: (randn(2, 5, 16),))
def transformer_encoder_stack(x):
    """nn.TransformerEncoder of two layers"""
    return ENCODER(x)


@case(lambda: (randn(2, 4, 5, 8), randn(2, 4, 5, 8), randn(2, 4, 5, 8)))
def scaled_dot_product_attention(q, k, v):
    """F.scaled_dot_product_attention, causal"""
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)
