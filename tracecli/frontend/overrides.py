"""What torch's Python-level helpers answer while a trace is being made.

- `torch.compiler.is_compiling()` is True, as under torch.compile: libraries then take
  their compiler-friendly paths (transformers builds attention masks without reading
  tensor values) instead of data-dependent shortcuts a trace cannot follow.
- `torch.compiler.is_dynamo_compiling()` is True as well: torch's higher-order ops
  (`torch.cond`, `while_loop`, `flex_attention`) otherwise run eagerly by compiling
  themselves with dynamo, which cannot follow the tracer's mode; told dynamo is already
  compiling, they call their operator (`torch.ops.higher_order.cond`) directly, and that
  reaches the tracer as one opaque call.
- `torch._check_tensor_all(cond)` on a traced tensor becomes an `ltorch.check_all` in
  the trace (tagged CHECK, kept by every pass) rather than a data-dependent `bool()`.
- `torch._check(n > 0)` of sizes the data decide (`n = idx.shape[0]` after a nonzero)
  is a fact from then on, printed with the trace and checked where the trace runs
  (`ltorch.check_size`); `torch._check_is_size(n)` is the fact `n >= 0`.
- `torch.manual_seed(n)` (also `torch.random.manual_seed`) seeds for real, as it did,
  since modules built while tracing draw their weights from it, and is recorded as
  `ltorch.manual_seed`: torch runs it below any mode, and the compiled trace must seed
  where the program did for its random ops to draw eager's numbers.
- torch's `associative_scan` runs its generic algorithm unrolled (frontend/scans.py):
  eager batches the combine function with `torch.vmap`, which proxies cannot enter.
- `torch.Tensor(...)` and the typed classes (`torch.FloatTensor(...)`) reach the tracer,
  which traces them as the factories they stand for (frontend/legacy.py).
- `nn.Transformer*`'s `_detect_is_causal_mask(mask)` compares a traced mask with a causal
  one, reading values, to hint a faster kernel: it answers False, so the layers apply
  the mask itself, which gives the same values.
- `nn.TransformerEncoder.forward` zeroes padded positions where eager's nested-tensor
  fast path does (frontend/fast_paths.py).
- Factories taking numbers (`torch.arange(n)`, `torch.full(shape, n)`, `torch.tensor(n)`)
  with a symbolic size among them reach the tracer with the symbol: torch's argument
  parser would refuse an object that is not a number before any mode sees the call.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch
from torch.overrides import handle_torch_function

from tracecli.core.dims import Dim, SymBool, active, dims_in
from tracecli.core.errors import TracingError
from tracecli.core.pytree import tree_leaves
from tracecli.frontend.fast_paths import encoder_forward
from tracecli.frontend.legacy import legacy_constructors
from tracecli.frontend.proxy import TensorProxy
from tracecli.frontend.scans import traced_generic_scan
from tracecli.frontend.source import location_of, user_frame
from tracecli.ops import ltorch, torch_paths


def _is_compiling() -> bool:
    return True


def _as_subclass(self, cls):
    """`x.as_subclass(cls)` of a traced tensor is the same value: torch runs it below the
    tracer's reach (it ignores __torch_function__), so it is answered here. A class that
    changes what ops do (its own __torch_function__) is refused, not silently dropped."""
    if not isinstance(self, TensorProxy):
        return _BASE_AS_SUBCLASS(self, cls)
    if getattr(cls.__torch_function__, "__func__", None) is not torch.Tensor.__torch_function__.__func__:
        frame = user_frame(sys._getframe(1))
        where = location_of(frame) if frame is not None else None
        raise TracingError(
            f"as_subclass({cls.__qualname__}): a tensor class with its own __torch_function__ changes what ops do, "
            "which the trace would not show",
            file=where.file if where else None, line=where.line if where else None, source=where.text if where else "",
        )
    return self


_BASE_AS_SUBCLASS = torch._C.TensorBase.as_subclass
_SET_DEFAULT_DTYPE = torch.set_default_dtype

# ltorch's factories and type promotion take float32 as torch's default dtype; under another
# default the trace would declare float32 where eager makes float64.
DEFAULT_DTYPE_REFUSAL = ("tracecli models torch's default dtype as float32; under torch.set_default_dtype({}) "
                         "its traces would declare the wrong dtypes. Pass dtype= to the factories instead")


def _refuse_at_caller(message: str) -> TracingError:
    frame = user_frame(sys._getframe(2))
    where = location_of(frame) if frame is not None else None
    return TracingError(message, file=where.file if where else None, line=where.line if where else None,
                        source=where.text if where else "")


_RNG_STATE = (torch.random.get_rng_state, torch.random.set_rng_state, torch.cuda.set_rng_state)


def _get_rng_state():
    # Torch reads the generator below any mode: handed to the tracer, it is an op. Below
    # the tracer (a segment run while the call is traced, compiled by inductor), it is torch's.
    if not torch._C._is_torch_function_mode_enabled():
        return _RNG_STATE[0]()
    return handle_torch_function(_RNG_STATE[0], ())


def _set_rng_state(new_state):
    if not torch._C._is_torch_function_mode_enabled():
        return _RNG_STATE[1](new_state)
    return handle_torch_function(_RNG_STATE[1], (), new_state)


def _set_cuda_rng_state(*args, **kwargs):
    # Restoring a state makes eager draw the same numbers again; the trace, which does not
    # model CUDA's generator, would draw fresh ones.
    raise _refuse_at_caller("setting the CUDA generator's state inside the entry (torch.cuda.set_rng_state, "
                            "torch.random.fork_rng on a CUDA machine) is not traced: the trace would draw fresh "
                            "numbers where eager repeats them")


def _refusing_traced(message: str, original: Callable) -> Callable:
    """`original`, refused at the user's line with `message` when a traced tensor is
    among its arguments (and itself otherwise)."""

    def call(*args, **kwargs):
        if any(isinstance(leaf, TensorProxy) for leaf in tree_leaves((args, kwargs))):
            raise _refuse_at_caller(message)
        return original(*args, **kwargs)

    return call


# torch.func's transforms run their function below the tracer (vmap batches it, grad
# differentiates it), where a traced tensor cannot go: refused by name at the user's line.
_FUNCTION_TRANSFORMS = {name: getattr(torch.func, name) for name in (
    "vmap", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "vjp", "linearize", "functionalize")}


def _refusing_transform(name: str, original: Callable) -> Callable:
    message = (f"torch.func.{name} is not traced: it runs its function below the tracer, where traced tensors "
               "cannot go; write the computation without it (batched ops over a batch dim instead of vmap)")

    def transform(*targs, **tkwargs):
        transformed = original(*targs, **tkwargs)
        call = _refusing_traced(message, transformed)
        call.transformed = transformed  # what torch made: associative_scan's tracing reads vmap's
        return call

    return transform


_REFUSING_TRANSFORMS = {name: _refusing_transform(name, fn) for name, fn in _FUNCTION_TRANSFORMS.items()}

# `loss.backward()` reaches the tracer's mode by itself (frontend/training.py);
# torch.autograd.backward does not ask for __torch_function__: its stand-in does.
AUTOGRAD_BACKWARD = torch.autograd.backward


def _autograd_backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None,
                       inputs=None):
    relevant = tuple(tensors) if isinstance(tensors, (tuple, list)) else (tensors,)
    return handle_torch_function(AUTOGRAD_BACKWARD, relevant, tensors, grad_tensors, retain_graph=retain_graph,
                                 create_graph=create_graph, inputs=inputs)


# A custom autograd.Function runs its forward below any mode (torch's C++ apply): its
# stand-in hands calls on traced tensors to the tracer (frontend/training.py), which
# traces the forward and the function's own backward.
_FUNCTION_APPLY = vars(torch.autograd.Function)["apply"]


def FUNCTION_APPLY(cls, *args, **kwargs):  # noqa: N802 - the marker the tracer knows the call by
    return _FUNCTION_APPLY.__func__(cls, *args, **kwargs)


def _function_apply(cls, *args, **kwargs):
    traced = tuple(leaf for leaf in tree_leaves((args, kwargs)) if isinstance(leaf, TensorProxy))
    if not traced:
        return _FUNCTION_APPLY.__func__(cls, *args, **kwargs)
    return handle_torch_function(FUNCTION_APPLY, traced, cls, *args, **kwargs)


# torch.autograd.grad, the same: its stand-in hands traced calls to the tracer, which
# returns the gradients instead of accumulating them.
AUTOGRAD_GRAD = torch.autograd.grad


def _autograd_grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
                   allow_unused=None, is_grads_batched=False, materialize_grads=False):
    relevant = tuple(outputs) if isinstance(outputs, (tuple, list)) else (outputs,)
    return handle_torch_function(AUTOGRAD_GRAD, relevant, outputs, inputs, grad_outputs, create_graph=create_graph,
                                 allow_unused=allow_unused, is_grads_batched=is_grads_batched,
                                 materialize_grads=materialize_grads)


_AUTOGRAD = [(torch.autograd, "grad", _autograd_grad), (torch.autograd, "backward", _autograd_backward)]


def _set_default_dtype(dtype):
    if dtype is not torch.float32:
        raise _refuse_at_caller(DEFAULT_DTYPE_REFUSAL.format(dtype))
    _SET_DEFAULT_DTYPE(dtype)


def _false(*args, **kwargs) -> bool:
    return False


def _true(*args, **kwargs) -> bool:
    return True


# Callables whose number parameters torch's parser checks before dispatch: a size read
# from a tensor (`torch.hann_window(x.shape[-1])`) would be refused there.
_NUMBER_FACTORIES = (
    (torch, ("arange", "linspace", "logspace", "full", "scalar_tensor", "tensor", "as_tensor", "hann_window",
             "hamming_window", "bartlett_window", "blackman_window", "kaiser_window")),
    (torch.nn.functional, ("one_hot",)),
)


def _size_taking(original: Callable) -> Callable:
    def factory(*args, **kwargs):
        if any(True for _ in dims_in((args, kwargs))):
            return handle_torch_function(original, (), *args, **kwargs)
        return original(*args, **kwargs)

    factory.__wrapped__ = original
    return factory


_CHECK = torch._check
_CHECK_IS_SIZE = torch._check_is_size


def _check(cond, message=None):
    if isinstance(cond, SymBool):
        cond.env.assume(cond)
        ltorch.check_size(cond.lhs, cond.op, cond.rhs)
    elif message is None:
        _CHECK(cond)
    else:
        _CHECK(cond, message)


def _check_is_size(i, message=None, *, max=None):  # noqa: A002 - torch's name
    env = active()
    if isinstance(i, Dim) and env is not None:
        # Every size is >= 0 already (an op's count, or an input's dim): a fact to print,
        # with nothing to check when the trace runs.
        env.assume(SymBool(env, ">=", i, 0), "torch._check_is_size")
        if max is not None:
            _check(i <= max)
        return
    _CHECK_IS_SIZE(i, message, max=max)


_MANUAL_SEED = torch.random.manual_seed
# The package attribute of this name is the function: the module is reached by its path.
associative_scan_module = importlib.import_module("torch._higher_order_ops.associative_scan")
_GENERIC_SCAN = associative_scan_module.generic_associative_scan
_TRACED_SCAN = traced_generic_scan(_GENERIC_SCAN)


transformer_module = importlib.import_module("torch.nn.modules.transformer")
_DETECT_IS_CAUSAL = transformer_module._detect_is_causal_mask


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    if is_causal is None and isinstance(mask, TensorProxy):
        return False
    return _DETECT_IS_CAUSAL(mask, is_causal, size)


def _manual_seed(seed):
    generator = _MANUAL_SEED(seed)
    ltorch.manual_seed(seed)
    return generator


@contextmanager
def tracing_overrides() -> Iterator[None]:
    original_check_all = torch._check_tensor_all

    def check_tensor_all(cond, message=None):
        if isinstance(cond, TensorProxy):
            ltorch.check_all(cond)
        else:
            original_check_all(cond, message)

    # (owner, attribute, stand-in): each set while tracing, and put back as it was after.
    patches = [
        (torch, "_check", _check),
        (torch, "_check_is_size", _check_is_size),
        (torch.compiler, "is_compiling", _is_compiling),
        (torch.compiler, "is_dynamo_compiling", _is_compiling),
        (torch, "_check_tensor_all", check_tensor_all),
        # A trace for cuda:0 is made on machines without CUDA too: torch.autocast("cuda") must
        # then stay on (not disable itself with a warning), so the trace shows CUDA's casts.
        (torch.cuda.amp.common, "amp_definitely_not_available", _false),
        (torch.cuda, "is_bf16_supported", _true),
        (torch, "manual_seed", _manual_seed),
        (torch.random, "manual_seed", _manual_seed),
        (torch, "set_default_dtype", _set_default_dtype),
        *((torch.func, name, transform) for name, transform in _REFUSING_TRANSFORMS.items()),
        (torch, "vmap", _REFUSING_TRANSFORMS["vmap"]),
        *_AUTOGRAD,
        (torch, "get_rng_state", _get_rng_state),
        (torch.random, "get_rng_state", _get_rng_state),
        (torch, "set_rng_state", _set_rng_state),
        (torch.random, "set_rng_state", _set_rng_state),
        (torch.cuda, "set_rng_state", _set_cuda_rng_state),
        (associative_scan_module, "generic_associative_scan", _TRACED_SCAN),
        (transformer_module, "_detect_is_causal_mask", _detect_is_causal_mask),
        (torch.nn.TransformerEncoder, "forward", encoder_forward),
    ]
    # A size symbol given to a factory (`torch.arange(n)`, n symbolic or decided by the
    # data) reaches the tracer: torch's own parser would take its example as an int.
    torch_paths.index()  # public paths name the factories themselves, not these stand-ins
    patches += [(space, name, _size_taking(getattr(space, name))) for space, names in _NUMBER_FACTORIES for name in names]
    originals = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    for owner, name, stand_in in patches:
        setattr(owner, name, stand_in)
    # Set on Tensor over TensorBase's own: deleting it uncovers that one again.
    torch.Tensor.as_subclass = _as_subclass
    # A classmethod is set and put back as the descriptor it is (getattr would bind it).
    torch.autograd.Function.apply = classmethod(_function_apply)
    try:
        with legacy_constructors():
            yield
    finally:
        torch.autograd.Function.apply = _FUNCTION_APPLY
        del torch.Tensor.as_subclass
        for owner, name, original in reversed(originals):
            setattr(owner, name, original)
