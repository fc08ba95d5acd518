"""A custom `torch.autograd.Function` while tracing: its forward is traced as the ops it
runs (with autograd off, as in eager), and its own backward is traced once, there and
then, and kept as a recipe the grad transform replays in place of any rule:

    t3 = ltorch.clamp(x, -1, 1)        # ClampGrad.forward's ops
    t4 = ClampGrad_apply(x, t3)        # its output: t3 itself when run; gradients go
                                       # through ClampGrad.backward from here to x

The backward is traced with a stand-in `ctx` that keeps what the forward saved on it
(`save_for_backward`, attributes). A backward that cannot be traced leaves the function
without one: tracing goes on, and a `loss.backward()` it would reach is refused, naming
the function and why.
"""

from __future__ import annotations

import torch
from torch.autograd.function import _is_setup_context_defined

from tracecli.core.pytree import tree_leaves, values_in
from tracecli.core.symbol import BoundSymbol, Symbol
from tracecli.core.values import TensorType, TensorValue
from tracecli.frontend.autodiff import replay
from tracecli.frontend.proxy import TensorProxy
from tracecli.ops import ltorch
from tracecli.ops.grads import RULES


class UntracedBackward(Exception):
    """The function's backward could not be traced: the message says why."""


class _Context:
    """What `forward` (or `setup_context`) and `backward` get as `ctx`."""

    def __init__(self, needs_input_grad: tuple[bool, ...]):
        self.needs_input_grad = needs_input_grad
        self.saved_tensors: tuple = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors) -> None:
        self.saved_tensors = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value

    def mark_dirty(self, *tensors) -> None:
        raise UntracedBackward("it writes its inputs in place (ctx.mark_dirty), which is not traced")


def run_forward(cls, args: tuple, kwargs: dict) -> tuple[object, _Context]:
    """`cls.forward` on traced tensors, with autograd off as eager runs it."""
    ctx = _Context(tuple(isinstance(a, torch.Tensor) and a.dtype.is_floating_point for a in args))
    with torch.no_grad():
        if _is_setup_context_defined(cls.setup_context):
            out = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, out)
        else:
            out = cls.forward(ctx, *args, **kwargs)
    return out, ctx


def tie(tracer, cls, args: tuple, out, ctx: _Context) -> object:
    """Record the function's output as a call of its own whose rule is its traced
    backward; `out` with the user's tensors standing for the tied values."""
    outs = [leaf for leaf in tree_leaves(out) if isinstance(leaf, TensorProxy)]
    inputs = [tracer.value_of(a) for a in args if isinstance(a, torch.Tensor)]
    if not outs or not inputs or any(v is None for v in inputs):
        return out
    out_values = [proxy.value for proxy in outs]
    recipe, placeholders, grads = _traced_backward(tracer, cls, ctx, args, out_values)
    symbol = _tie_symbol(cls, len(inputs), out_values)
    RULES[symbol] = _replaying(recipe, placeholders, grads, len(inputs))
    tied = tracer.record_top(symbol, (*inputs, *out_values), {})
    for proxy, old, new in zip(outs, out_values, values_in(tied), strict=True):
        tracer.rebind(old, new)
        proxy.value = new
    return out


def _traced_backward(tracer, cls, ctx: _Context, args: tuple, outs: list[TensorValue]):
    """`cls.backward` traced on stand-in cotangents: its bound symbols (taken out of the
    trace), the stand-ins, and the gradient value (or None) per tensor argument."""
    recorder = tracer.recorder
    placeholders = [TensorValue(tracer.registry.fresh("t"), v.shape, v.dtype, v.device) for v in outs]
    start = len(recorder.bsyms)
    try:
        with recorder.grad_mode_internal(), torch.no_grad():
            grads = cls.backward(ctx, *(tracer.proxy(p) for p in placeholders))
    except UntracedBackward:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever stops it is the reason given
        raise UntracedBackward(f"tracing it failed: {type(exc).__name__}: {exc}") from exc
    finally:
        recipe = list(recorder.bsyms[start:])
        del recorder.bsyms[start:]
    grads = grads if isinstance(grads, tuple) else (grads,)
    tensor_grads = []
    for arg, grad in zip(args, grads, strict=False):
        if isinstance(arg, torch.Tensor):
            tensor_grads.append(tracer.value_of(grad) if isinstance(grad, torch.Tensor) else None)
    return recipe, placeholders, tensor_grads


def _tie_symbol(cls, n_inputs: int, outs: list[TensorValue]) -> Symbol:
    def impl(*values):
        tied = values[n_inputs:]
        return tied[0] if len(tied) == 1 else tied

    def meta(*values):
        types = [TensorType(v.shape, v.dtype, v.device) for v in values[n_inputs:]]
        return types[0] if len(types) == 1 else tuple(types)

    name = f"{cls.__name__}_apply"
    impl.__name__ = impl.__qualname__ = name
    return Symbol(name, "", impl=impl, meta=meta,
                  doc=f"{cls.__qualname__}'s output, its gradient {cls.__qualname__}.backward's (traced)")


def _replaying(recipe: list[BoundSymbol], placeholders: list[TensorValue], grads: list, n_inputs: int):
    """The rule of a tie: the traced backward recorded again with the cotangents given."""

    def rule(g, out, *args):
        given = g if isinstance(g, tuple) else (g,)
        outs = args[n_inputs:]
        cotangents = {placeholder.name: cotangent if cotangent is not None else ltorch.zeros_like(value)
                      for placeholder, cotangent, value in zip(placeholders, given, outs, strict=True)}
        now = replay(recipe, cotangents)
        return (*(None if grad is None else now.get(grad.name, grad) for grad in grads), *(None,) * len(outs))

    return rule
