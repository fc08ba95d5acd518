"""Training steps while tracing: `loss.backward()`, `.grad` and optimizers.

A tensor the entry gets (an input, a module's parameter, a captured tensor) is a leaf, and
one that requires grad is differentiated by a backward. The tracer keeps each leaf's
gradient as a value of the trace: `p.grad` reads it, `p.grad = g` and `opt.zero_grad()`
set it, and `loss.backward()` adds the backward's gradients to it, as autograd
accumulates them.

At `loss.backward()` the bound symbols recorded so far are differentiated
(frontend/autodiff.py) with respect to every leaf, and the backward is recorded as one
region at the backward() line: `(grad_w, grad_b) = autograd.backward0(loss, x, t3, ...)`,
its members the gradients' computation. An optimizer step then reads the gradients and
updates the parameters in place like any other code. When the entry returns, each leaf
whose gradient changed gets an `ltorch.set_grad(p, grad_p)`: the compiled trace leaves
`.grad` where eager does.

Values computed with autograd off (`torch.no_grad()`, an optimizer's step, a backward)
pass no gradient on, as in eager.

An optimizer's step is traced as the Python code it is. What it keeps between steps is
named for what it is (`adamw_exp_avg_fc1_weight`, a captured input written in place) and
found again where it lives (`opt.state[p]["exp_avg"]`): a later call reuses the trace
only while the same tensors are there, and only while each param group's settings (lr,
betas, ...) are as traced. On its first step an optimizer makes its state inside the
trace, which cannot store it back into the optimizer: such a trace is a first step
(`first_step`), valid while the state is still missing. Tracing must not leave traced
tensors in an optimizer either: `Training.optimizers()` puts every optimizer that stepped
back as it was.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook

from tracecli.core.pytree import tree_leaves
from tracecli.core.regions import BACKWARD, outside_arguments, region_symbol
from tracecli.core.symbol import BoundSymbol
from tracecli.core.values import TensorValue
from tracecli.frontend.autodiff import GradError, differentiate, flattened
from tracecli.frontend.custom_functions import keep_whole, run_forward
from tracecli.frontend.proxy import TensorProxy
from tracecli.frontend.source import location_of, user_frame
from tracecli.ops import ltorch
from tracecli.ops.grads.base import NO_GRADIENT

_UNSET = object()


class TrainingError(Exception):
    """A training-step construct tracing does not follow; the tracer puts it at the user's line."""


class Training:
    """The leaves and their gradients while one entry is traced."""

    def __init__(self, tracer):
        self.tracer = tracer
        self.leaf_of: dict[str, str] = {}  # a leaf's value now -> the leaf (its input's name)
        self.now: dict[str, TensorValue] = {}  # leaf -> its value now
        self.inputs: dict[str, TensorValue] = {}  # leaf -> its input: the tensor object at run time
        self.objects: dict[str, torch.Tensor] = {}  # leaf -> the real tensor
        self.requires: list[str] = []  # the leaves that require grad, in input order
        self.grads: dict[str, TensorValue | None] = {}  # leaf -> its gradient now, once the trace set or read it
        self.initial: dict[str, TensorValue | None] = {}  # leaf -> its gradient when the call began
        self.set_at: dict[str, object] = {}  # leaf -> the line that last set its gradient
        self.grad_of: dict[str, str] = {}  # a gradient's value -> its leaf
        self.no_grad: set[str] = set()  # values computed with autograd off
        self.backwards = 0
        # What a later call of the entry needs to find as it was for the trace to serve it:
        # (object or None, how to look it up again); (dict, key, value) of optimizer settings.
        self.homes: list[tuple[object, Callable[[], object]]] = []
        self.settings: list[tuple[dict, str, object]] = []
        self.names: dict[int, tuple[str, Callable[[], object]]] = {}  # id(real tensor) -> its name and home
        self.state_of: dict[int, str] = {}  # id(an optimizer's state tensor) -> its parameter's input name
        self.first_step = False  # an optimizer made its state in the trace
        self.untraced: dict[str, str] = {}  # a custom Function's output -> why its backward is not traced
        self.changed_settings: list[str] = []  # optimizer settings the traced call changed

    # -- what the tracer tells it ------------------------------------------------------

    def input(self, value: TensorValue, tensor: torch.Tensor) -> None:
        self.leaf_of[value.name] = value.name
        self.now[value.name] = self.inputs[value.name] = value
        self.objects[value.name] = tensor
        if tensor.requires_grad and tensor.is_leaf:
            self.requires.append(value.name)

    def rebound(self, old: TensorValue, new: TensorValue) -> None:
        leaf = self.leaf_of.pop(old.name, None)
        if leaf is not None:
            self.leaf_of[new.name] = leaf
            self.now[leaf] = new
        # A gradient written in place (clip_grad_norm_ scales them): `.grad` is the new value.
        leaf = self.grad_of.pop(old.name, None)
        if leaf is not None:
            self._set(leaf, new)

    def recorded(self, bsyms: list[BoundSymbol]) -> None:
        if not torch.is_grad_enabled():
            for bsym in bsyms:
                self.no_grad.update(v.name for v in bsym.output_values())

    def requires_grad(self, value: TensorValue) -> bool:
        """Whether autograd would have `value` require grad (x.numpy() refuses such a tensor)."""
        return value.name in self._requiring_grad()

    def may_differentiate(self) -> bool:
        """Whether a backward may still come: autograd is on and a leaf requires grad.
        Then every value made so far is one a backward may read."""
        return torch.is_grad_enabled() and bool(self.requires)

    def expose_for_backward(self) -> None:
        """Before the trace is cut where a backward may still come: the ops on the
        gradient's path that have no rule are recorded as their decomposition, as that
        backward would have them, so the values it reads inside them exist when the
        segment runs. (An op whose gradient is refused stays: its backward is refused.)"""
        recorder = self.tracer.recorder
        leaves = [self.now[leaf] for leaf in self.requires]
        try:
            recorder.bsyms[:] = flattened(list(recorder.bsyms), leaves, stop=frozenset(self.no_grad))
        except GradError:
            return

    # -- the user's calls ----------------------------------------------------------------

    def leaf(self, tensor) -> str | None:
        """The leaf `tensor` is, or None. A real tensor the trace has not read yet (a
        parameter whose .grad `zero_grad()` reads first) becomes an input here."""
        value = self.tracer.value_of(tensor)
        if value is None and isinstance(tensor, torch.Tensor) and not isinstance(tensor, TensorProxy):
            value = self.tracer.lift(tensor)
        return None if value is None else self.leaf_of.get(value.name)

    def get_grad(self, tensor):
        leaf = self.leaf(tensor)
        if leaf is None:
            return None  # a tensor computed in the step: autograd keeps no .grad for it
        grad = self._grad(leaf)
        return None if grad is None else self.tracer.proxy(grad)

    def set_grad(self, tensor, grad) -> None:
        leaf = self.leaf(tensor)
        if leaf is None:
            raise TrainingError("setting .grad of a tensor computed in the traced step is not traced; "
                                "set the .grad of parameters and inputs that require grad")
        self._grad(leaf)  # what it was when the call began, before it is replaced
        value = None if grad is None else self.tracer.to_values(grad)
        if value is not None and not isinstance(value, TensorValue):
            raise TrainingError(f"assigned grad expected to be a Tensor or None, got {type(grad).__name__}")
        self._set(leaf, value)
        self.set_at[leaf] = _here()

    def backward(self, tensors, gradients, inputs=None) -> None:
        leaves = self.requires
        if inputs is not None:
            # Only these leaves' .grad accumulate (a GAN's generator step, say).
            given = [self.leaf(t) for t in (inputs if isinstance(inputs, (tuple, list)) else (inputs,))]
            if any(leaf is None or leaf not in self.requires for leaf in given):
                raise TrainingError("backward(inputs=...) is traced for leaves that require grad (parameters, "
                                    "inputs made with requires_grad=True); a tensor computed in the step keeps "
                                    "no .grad")
            leaves = list(dict.fromkeys(given))
        made, source = self._differentiated(tensors, gradients, [self.now[leaf] for leaf in leaves],
                                            {self.now[leaf].name: leaf for leaf in leaves}, "backward()")
        grads = dict(zip(leaves, made, strict=True))
        for leaf, grad in grads.items():
            if grad is None:
                continue  # no gradient reaches it: its .grad stays as it was, as in eager
            known = self._grad(leaf)
            if known is not None:
                # Into the .grad already there, in place, as autograd accumulates: a
                # `zero_grad(set_to_none=False)` step keeps the same .grad tensors.
                grad = self.tracer.record_top(ltorch.add_, (known, grad), {})
                self.no_grad.add(grad.name)
            self._set(leaf, grad)
            self.set_at[leaf] = source

    def grad(self, tensors, inputs, gradients, allow_unused: bool, materialize: bool) -> tuple:
        """`torch.autograd.grad(outputs, inputs)`: the gradients, returned, `.grad` untouched."""
        inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
        targets = [self.tracer.to_values(t) for t in inputs]
        if not all(isinstance(t, TensorValue) for t in targets):
            raise TrainingError("torch.autograd.grad: inputs must be tensors")
        requiring = self._requiring_grad()
        for target in targets:
            if target.name in self.no_grad or target.name not in requiring:
                raise TrainingError("torch.autograd.grad: one of the differentiated tensors does not require grad "
                                    "(nothing that requires grad reaches it), as eager refuses too")
        frame = user_frame(sys._getframe(2))
        names = {t.name: _variable_of(frame, obj) or self.leaf_of.get(t.name) or t.name
                 for t, obj in zip(targets, inputs, strict=True)}
        made, _ = self._differentiated(tensors, gradients, targets, names, "torch.autograd.grad")
        out = []
        for target, grad in zip(targets, made, strict=True):
            if grad is None and not (allow_unused or materialize):
                raise TrainingError(f"torch.autograd.grad: {names[target.name]} is not used in computing the outputs "
                                    "(one of the differentiated tensors appears to not have been used in the graph; "
                                    "pass allow_unused=True)")
            if grad is None and materialize:
                grad = self.tracer.record_top(ltorch.zeros_like, (target,), {})
            out.append(None if grad is None else self.tracer.proxy(grad))
        return tuple(out)

    def _differentiated(self, tensors, gradients, targets: list[TensorValue], target_names: dict[str, str],
                        call: str):
        """Differentiate what was recorded so far: `tensors` seeded with `gradients` (ones
        when None), with respect to `targets`. The backward is recorded as one region at
        the user's line; its gradient per target (None where none reaches), and the line."""
        tensors = list(tensors) if isinstance(tensors, (tuple, list)) else [tensors]
        if gradients is None or isinstance(gradients, torch.Tensor):
            gradients = [gradients] * len(tensors) if gradients is None else [gradients]
        outputs = [self.tracer.to_values(t) for t in tensors]
        seeds = [None if g is None else self.tracer.to_values(g) for g in gradients]
        requiring = self._requiring_grad()
        for output, seed in zip(outputs, seeds, strict=True):
            if not isinstance(output, TensorValue):
                raise TrainingError(f"{call} of something that is not a tensor")
            if seed is None and output.shape and any(d != 1 for d in output.shape):
                seed = "gradient=" if call == "backward()" else "grad_outputs="
                raise TrainingError(f"{call} of a {output.dtype.short}{list(output.shape)} tensor needs {seed}: a "
                                    "gradient can be implied only for a one-element output, as in eager")
            if output.name in self.no_grad or output.name not in requiring:
                untraced = self._untraced_on_the_way(output)
                if untraced:
                    raise TrainingError(f"{call} goes through a custom autograd.Function whose backward "
                                        f"is not traced ({untraced})")
                raise TrainingError(f"{call} of a tensor that does not require grad: no parameter or input "
                                    "that requires grad reaches it (element 0 of tensors does not require grad)")
        frame = user_frame(sys._getframe(3))
        names = [_variable_of(frame, t) for t in tensors]
        recorder = self.tracer.recorder
        try:
            made = differentiate(
                list(recorder.bsyms), outputs, seeds, targets, self.tracer.registry, stop=frozenset(self.no_grad),
                leaf_names=target_names,
                seed_names=[name or output.name for name, output in zip(names, outputs, strict=True)])
        except GradError as exc:
            raise TrainingError(f"{call}: {exc}") from exc
        done = self.tracer.segmenting.start if self.tracer.segmenting is not None else 0
        if any(a is not b for a, b in zip(recorder.bsyms[:done], made.forward[:done], strict=False)):
            # What an earlier segment ran has already run: the backward may not change it.
            raise TrainingError(f"{call} after the trace was cut where Python read a value would change what ran "
                                "before that read (a value it overwrites is kept for the backward); read the value "
                                "after the backward, or run with --fullgraph to see the read refused")
        recorder.bsyms[:] = made.forward
        source = location_of(frame) if frame is not None else None
        defined_at = {v.name: i for i, b in enumerate(made.forward) for v in b.output_values()}
        grads = dict(enumerate(made.gradients))
        region = _region(made.backward, self.backwards, grads, source, recorder.module_scope(), defined_at)
        self.backwards += 1
        if region is not None:
            recorder.bsyms.append(region)
            self.no_grad.update(v.name for v in region.output_values())
        return made.gradients, source

    def function_apply(self, cls, args: tuple, kwargs: dict):
        """`MyFunction.apply(...)` on traced tensors (frontend/custom_functions.py)."""
        # What it is given, before its forward writes any of it in place.
        given = [self.tracer.to_values(a) for a in args if isinstance(a, torch.Tensor)]
        start = len(self.tracer.recorder.bsyms)
        with self.tracer.recorder.grad_mode_internal():
            out, ctx = run_forward(cls, args, kwargs)
        # With autograd off there is no graph, as in eager: no backward to keep.
        out, refused = keep_whole(self.tracer, cls, args, given, out, ctx, start,
                                  differentiable=torch.is_grad_enabled())
        if refused is not None:
            for leaf in tree_leaves(out):
                if isinstance(leaf, torch.Tensor) and (value := self.tracer.value_of(leaf)) is not None:
                    self.untraced[value.name] = refused
        return out

    def finish(self) -> None:
        """Leave each changed `.grad` as the step left it: one `ltorch.set_grad` a leaf."""
        recorder = self.tracer.recorder
        for leaf, grad in self.grads.items():
            if grad is self.initial.get(leaf, _UNSET):
                continue
            start = len(recorder.bsyms)
            self.tracer.record_top(ltorch.set_grad, (self.inputs[leaf], grad), {})
            recorder.bsyms[start:] = [b.replace(source=self.set_at.get(leaf), scope="") for b in recorder.bsyms[start:]]

    @contextmanager
    def optimizers(self) -> Iterator[None]:
        """While the entry is traced: each optimizer's first step names its state and
        notes its settings; afterwards, what the trace made in its state is noted as
        missing (a later call with that state there needs a trace of its own) and the
        state is put back as it was."""
        seen: list[tuple[torch.optim.Optimizer, dict]] = []

        def stepping(optimizer, states) -> None:
            seen.append((optimizer, {p: set(s) for p, s in states.items()}))
            self._name_state(optimizer)

        with optimizer_state_kept(on_first_step=stepping):
            yield
            for optimizer, before in seen:
                for param, state in list(optimizer.state.items()):
                    for key in set(state) - before.get(param, set()):
                        self.first_step = True
                        self.homes.append((None, _state_home(optimizer, param, key)))
            # A setting the step itself changes (an LR scheduler stepping inside it) is
            # a Python side effect no trace repeats: noted, and put back as it was.
            for group, key, value in self.settings:
                if group.get(key) != value:
                    self.changed_settings.append(f"{key} {value!r} -> {group.get(key)!r}")
                    group[key] = value

    def _name_state(self, optimizer) -> None:
        kind = type(optimizer).__name__.lower()
        for param, state in optimizer.state.items():
            leaf = self.leaf(param) or "param"
            for key, value in state.items():
                if isinstance(value, torch.Tensor):
                    self.tracer.placement.optimizer_state(optimizer, param, key, value)
                    self.names[id(value)] = (f"{kind}_{key}_{leaf}", _state_home(optimizer, param, key))
                    self.state_of[id(value)] = leaf
        for group in optimizer.param_groups:
            for key, value in group.items():
                if isinstance(value, (bool, int, float, str, type(None))) or (
                        isinstance(value, tuple) and all(isinstance(v, (int, float)) for v in value)):
                    self.settings.append((group, key, value))

    # -- helpers ---------------------------------------------------------------------------

    def _grad(self, leaf: str) -> TensorValue | None:
        """The leaf's gradient now: the real tensor's own .grad (a captured input) until
        the trace sets it."""
        if leaf not in self.grads:
            real = _real_grad(self.objects[leaf])
            home = lambda t=self.objects[leaf]: t.grad  # noqa: E731
            # A step leaves a new .grad tensor each time: a later call reads the one there
            # then, of the same kind; one that found none needs none there.
            value = None if real is None else self.tracer.lift(real, hint=f"{leaf}_grad", home=home, reread=True)
            if real is None:
                self.homes.append((None, home))
            self._set(leaf, value)
            self.initial[leaf] = value
        return self.grads[leaf]

    def _set(self, leaf: str, grad: TensorValue | None) -> None:
        old = self.grads.get(leaf)
        if old is not None:
            self.grad_of.pop(old.name, None)
        self.grads[leaf] = grad
        if grad is not None:
            self.grad_of[grad.name] = leaf

    def _untraced_on_the_way(self, output: TensorValue) -> str:
        """Why a custom Function whose output leads to `output` has no traced backward ('')."""
        if not self.untraced:
            return ""
        leads = {output.name}
        for bsym in reversed(self.tracer.recorder.bsyms):
            if any(v.name in leads for v in bsym.output_values()):
                leads.update(v.name for v in bsym.arg_values())
        return next((why for name, why in self.untraced.items() if name in leads), "")

    def _requiring_grad(self) -> set[str]:
        """The values recorded so far that require grad, as autograd would have it: the
        leaves that do, and what is computed from them with autograd on."""
        reach = {self.now[leaf].name for leaf in self.requires}
        for bsym in self.tracer.recorder.bsyms:
            outs = bsym.output_values()
            if bsym.symbol in NO_GRADIENT:  # x.detach()
                continue
            if any(v.name in reach for v in bsym.arg_values()):
                # Each output on its own: a custom Function's may be marked non-differentiable;
                # integers and bools never require grad (a comparison, an argmax).
                reach.update(v.name for v in outs if v.name not in self.no_grad and (
                    not isinstance(v, TensorValue) or v.dtype.is_float or v.dtype.is_complex))
        return reach


def _region(members: tuple[BoundSymbol, ...], index: int, grads: dict, source, scope: str,
            defined_at: dict[str, int]) -> BoundSymbol | None:
    """The backward as one region: its arguments the values its members read from
    outside (inputs first, then in the order the forward made them), its outputs the
    gradients they make."""
    if not members:
        return None
    args = outside_arguments(members)
    produced = {o.name for member in members for o in member.output_values()}
    args = dict(sorted(args.items(), key=lambda item: defined_at.get(item[0], -1)))
    outputs = list({g.name: g for g in grads.values() if g is not None and g.name in produced}.values())
    if not outputs:
        return None
    output = outputs[0] if len(outputs) == 1 else tuple(outputs)
    return BoundSymbol(region_symbol(f"backward{index}", BACKWARD), tuple(args.values()), (), output,
                       members, source=source, scope=scope)


def _state_home(optimizer, param, key) -> Callable[[], object]:
    return lambda: optimizer.state[param].get(key) if param in optimizer.state else None


def _variable_of(frame, tensor) -> str | None:
    """The name of the user's variable holding `tensor` at the backward() line."""
    if frame is None:
        return None
    for name, obj in frame.f_locals.items():
        if obj is tensor and name.isidentifier():
            return name
    return None


def _here():
    frame = user_frame(sys._getframe(2))
    return location_of(frame) if frame is not None else None


def _real_grad(tensor: torch.Tensor):
    with torch._C.DisableTorchFunction():
        return tensor.grad


@contextmanager
def optimizer_state_kept(copy: Callable = lambda obj: obj, on_first_step: Callable | None = None,
                         optimizers: Iterable = ()) -> Iterator[None]:
    """Put each optimizer that steps inside back as it was before its first step: its
    per-parameter state dicts (`copy` makes what is kept of each value: tensors are
    copied when the steps inside really run). `on_first_step(optimizer, states)` is told
    of each optimizer as it first steps. `optimizers`: kept as they are on entering,
    for a call traced as it runs, whose tracer stands its stand-ins in for their state
    before they step."""
    kept: dict[int, tuple] = {}

    def keep(optimizer) -> None:
        states = {param: {k: (v, copy(v)) for k, v in state.items()} for param, state in optimizer.state.items()}
        kept[id(optimizer)] = (optimizer, states)

    for optimizer in optimizers:
        keep(optimizer)

    def before_step(optimizer, args, kwargs) -> None:
        if id(optimizer) not in kept:
            keep(optimizer)
            if on_first_step is not None:
                on_first_step(optimizer, optimizer.state)

    handle = register_optimizer_step_pre_hook(before_step)
    try:
        yield
    finally:
        handle.remove()
        for optimizer, states in kept.values():
            optimizer.state.clear()
            for param, state in states.items():
                optimizer.state[param] = {k: _put_back(v, c) for k, (v, c) in state.items()}


def _put_back(original, saved):
    if isinstance(original, torch.Tensor) and saved is not original:
        with torch.no_grad(), torch._C.DisableTorchFunction():
            original.copy_(saved)
    return original


__all__ = ["Training", "TrainingError", "optimizer_state_kept"]
