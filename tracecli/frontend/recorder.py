"""The recorder: turns Symbol calls into bound symbols while tracing.

It sits on the core's handler stack. An ltorch symbol runs its decomposition with a
fresh subsymbol scope, so the prims it calls become its subsymbols; a prim or opaque
symbol runs its meta rule and gets fresh names for its outputs. Decompositions see
values, never proxies.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

import torch

from tracecli.core.names import NameRegistry
from tracecli.core.pytree import tree_map
from tracecli.core.symbol import BoundSymbol, Symbol, new_bound_symbol, restates
from tracecli.core.values import TensorType, TensorValue
from tracecli.frontend.call_forms import accepts, form_key
from tracecli.frontend.hints import HintTracker
from tracecli.frontend.source import location_of, user_frame
from tracecli.ops.autocast import cast_arguments, policy_for
from tracecli.ops.ltorch import restore_grad_enabled, set_grad_enabled
from tracecli.ops.ltorch import to as ltorch_to
from tracecli.ops.torch_bridge import FROM_TORCH

_EMPTY = inspect.Parameter.empty


class _CallSpec:
    """How to print a call of an ltorch symbol in one canonical form: required
    parameters positionally, optional ones by keyword and only when not default, as far
    as torch accepts the call so (the generated code runs the printed call)."""

    def __init__(self, sym: Symbol):
        self.impl = sym.impl
        self.signature = inspect.signature(sym.decomposition)
        self.params = list(self.signature.parameters.values())
        # Leading parameters without defaults: a call giving exactly these positionally
        # is already canonical, and binding (about 5 µs) can be skipped.
        self.required = 0
        for p in self.params:
            if p.kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.POSITIONAL_ONLY):
                break
            if p.default is not _EMPTY:
                break
            self.required += 1
        # No sizes for a `*sizes` parameter is a call torch may refuse: never skipped.
        self.varargs = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in self.params)
        self.forms: dict[tuple, Callable] = {}  # per form of call: how torch takes it

    def normalize(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        if not kwargs and len(args) == self.required and not self.varargs:
            return args, {}
        bound = self.signature.bind(*args, **kwargs)
        out_args: list = []
        out_kwargs: dict = {}
        left_out = False
        for p in self.params:
            if p.name not in bound.arguments:
                left_out = left_out or p.default is not _EMPTY or p.kind is inspect.Parameter.VAR_POSITIONAL
                continue
            value = bound.arguments[p.name]
            if p.kind is inspect.Parameter.VAR_POSITIONAL:
                out_args.extend(value)
            elif p.kind is inspect.Parameter.VAR_KEYWORD:
                out_kwargs.update(value)
            elif p.default is _EMPTY and p.kind is not inspect.Parameter.KEYWORD_ONLY:
                out_args.append(value)
            elif not _is_default(value, p.default):
                out_kwargs[p.name] = value
            else:
                left_out = True
        if not left_out or self.impl is None:
            return tuple(out_args), out_kwargs
        key = form_key(tuple(out_args), out_kwargs)
        form = self.forms.get(key)
        if form is None:
            form = self.forms[key] = self._form_torch_takes(tuple(out_args), out_kwargs)
        return form(tuple(out_args), out_kwargs)

    def _form_torch_takes(self, args: tuple, kwargs: dict) -> Callable:
        """How to complete a call that leaves arguments out so that torch takes it: as it
        is; with the defaults before the last argument given (`torch.sum(x, dim=None,
        keepdim=True)`); with every default; each also with empty sizes given as `()`
        (`Tensor.repeat(x, ())`). As it is when torch takes none of these."""
        given = {p.name for p in self.params if p.name in kwargs}
        last = max((i for i, p in enumerate(self.params) if p.name in given), default=-1)
        earlier = [p for p in self.params[:last] if p.name not in given and _restorable(p)]
        every = [p for p in self.params if p.name not in given and _restorable(p)]
        empty_sizes = self.varargs and len(args) == sum(1 for p in self.params if p.default is _EMPTY and p.kind in (
            inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD))
        candidates = [_with_defaults(restored, self.params) for restored in ([], earlier, every)]
        if empty_sizes:
            candidates += [_with_empty_sizes(c) for c in candidates]
        for candidate in candidates:
            if accepts(self.impl, *candidate(args, kwargs)):
                return candidate
        return candidates[0]


def _restorable(p: inspect.Parameter) -> bool:
    return p.default is not _EMPTY and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                   inspect.Parameter.KEYWORD_ONLY)


def _with_defaults(restored: list[inspect.Parameter], params: list[inspect.Parameter]) -> Callable:
    """A completion giving `restored` their defaults by keyword, in signature order."""
    if not restored:
        return lambda args, kwargs: (args, kwargs)
    order = {p.name: i for i, p in enumerate(params)}

    def complete(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        given = {**{p.name: p.default for p in restored}, **kwargs}
        return args, dict(sorted(given.items(), key=lambda item: order.get(item[0], len(order))))

    return complete


def _with_empty_sizes(complete: Callable) -> Callable:
    """torch's sizes are varargs or one sequence; no sizes at all is the empty one."""
    return lambda args, kwargs: complete((*args, ()), kwargs)


def _is_default(value, default) -> bool:
    return type(value) is type(default) and value == default


_specs: dict[Symbol, _CallSpec] = {}


def _spec(sym: Symbol) -> _CallSpec:
    spec = _specs.get(sym)
    if spec is None:
        spec = _specs[sym] = _CallSpec(sym)
    return spec


class Recorder:
    def __init__(self, registry: NameRegistry, module_scope: Callable[[], str], hints: HintTracker):
        self.registry = registry
        self.module_scope = module_scope
        self.hints = hints
        self.scopes: list[list[BoundSymbol]] = [[]]
        self.autocast_applied = False
        self.autocast_casts = 0  # casts recorded so far, to see whether a decomposition made any
        # The grad mode the entry was called in, and the one the calls recorded last ran
        # in: where the program changed it (`with torch.no_grad():`), the trace does too,
        # so that what the calls make needs a gradient or not, and may write a parameter
        # in place, as in eager. Not while tracecli itself turns autograd off
        # (`grad_mode_internal`).
        self.entry_grad_mode = torch.is_grad_enabled()
        self.grad_mode = self.entry_grad_mode
        self.internal_grad_mode = 0
        # The frame that made the torch call being recorded, while its adapter runs: user
        # code is looked for from there (None: from the recorder's caller up).
        self.caller: FrameType | None = None

    @property
    def bsyms(self) -> list[BoundSymbol]:
        return self.scopes[0]

    def record(self, sym: Symbol, args: tuple, kwargs: dict):
        """Record one call made with values; return its output values."""
        if len(self.scopes) == 1 and not self.internal_grad_mode and torch.is_grad_enabled() is not self.grad_mode:
            self.follow_grad_mode()
        if sym.decomposition is not None:
            args, kwargs = _spec(sym).normalize(args, kwargs)
            autocasting = self._autocast(sym, args, kwargs)
            if autocasting is not None:
                args, kwargs = autocasting
            casts_before = self.autocast_casts
            self.scopes.append([])
            try:
                out = sym.decomposition(*args, **kwargs)
            finally:
                subsymbols = self.scopes.pop()
                if autocasting is not None:
                    self.autocast_applied = False
            if not subsymbols:
                # The decomposition returned (part of) its input untouched: nothing happened.
                return out
            if self.autocast_casts != casts_before and autocasting is None:
                # Autocast reached the ops this one is made of: torch runs it as those ops
                # (a composite decomposes before autocast), and so does the trace.
                return self._inline(subsymbols, out)
        else:
            types = sym.meta(*args, **kwargs)
            # Most prims make one tensor: no tree to walk.
            out = self._new_output(types) if type(types) is TensorType else tree_map(self._new_output, types)
            subsymbols = []
        source, scope, hints = None, "", ()
        if len(self.scopes) == 1:
            frame = user_frame(self.caller or sys._getframe(1))
            if frame is not None:
                source = location_of(frame)
                # The variables the outputs are being stored into: the tracer settles them
                # once tracing ends, and keeps this bound symbol as it is when they held.
                hints = self.hints.note(frame, out)
            scope = self.module_scope()
        # A call one primitive restates (most are) keeps the primitive, not its record.
        parts = subsymbols[0].symbol if len(subsymbols) == 1 and restates(subsymbols[0], args, out) else tuple(subsymbols)
        # Two per traced op: the quick builder, not the constructor.
        bsym = new_bound_symbol(sym, args, tuple(kwargs.items()), out, parts, source, hints, scope)
        self.scopes[-1].append(bsym)
        return out

    def follow_grad_mode(self) -> None:
        """Record the change of grad mode since the last call recorded, if any: the mode
        set, or the entry's own mode restored."""
        mode = torch.is_grad_enabled()
        if mode is self.grad_mode or self.internal_grad_mode:
            return
        self.grad_mode = mode  # first: the calls below are recorded in it
        if mode is self.entry_grad_mode:
            self.record(restore_grad_enabled, (), {})
        else:
            self.record(set_grad_enabled, (mode,), {})

    @contextmanager
    def grad_mode_internal(self) -> Iterator[None]:
        """While tracecli turns autograd off itself (a custom Function's forward, traced
        as eager runs it): the calls recorded keep the program's grad mode."""
        self.internal_grad_mode += 1
        try:
            yield
        finally:
            self.internal_grad_mode -= 1

    def _autocast(self, sym: Symbol, args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
        """The call's arguments with torch.autocast's casts recorded before it (at the
        user's line, as ops of their own), when autocast is on for its device type."""
        if self.autocast_applied:
            return None  # inside an op that applied a policy: its decomposition runs as written
        found = policy_for(sym, args, kwargs)
        if found is None or not torch.is_autocast_enabled(found[0]):
            return None
        device, policy = found
        fast_dtype = FROM_TORCH[torch.get_autocast_dtype(device)]
        cast = cast_arguments(policy, device, fast_dtype, args, kwargs, self._record_cast)
        self.autocast_applied = True
        return cast

    def _record_cast(self, x: TensorValue, dtype) -> TensorValue:
        self.autocast_casts += 1
        return self.record(ltorch_to, (x,), {"dtype": dtype})

    def _inline(self, subsymbols: list[BoundSymbol], out):
        if len(self.scopes) == 1:
            frame = user_frame(sys._getframe(2))
            source = location_of(frame) if frame is not None else None
            scope = self.module_scope()
            subsymbols = [b.replace(source=source, scope=scope) for b in subsymbols]
            if frame is not None:
                self.hints.note(frame, out)
        self.scopes[-1].extend(subsymbols)
        return out

    def _new_output(self, t):
        if isinstance(t, TensorType):
            return TensorValue(self.registry.fresh("t"), t.shape, t.dtype, t.device)
        return t  # a constant: nothing to name
