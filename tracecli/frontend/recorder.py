"""The recorder: turns Symbol calls into bound symbols while tracing.

It sits on the core's handler stack. An ltorch symbol runs its decomposition with a
fresh subsymbol scope, so the prims it calls become its subsymbols; a prim or opaque
symbol runs its meta rule and gets fresh names for its outputs. Decompositions see
values, never proxies.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable

import torch

from tracecli.core.names import NameRegistry
from tracecli.core.pytree import tree_map
from tracecli.core.symbol import BoundSymbol, Symbol
from tracecli.core.values import TensorType, TensorValue
from tracecli.frontend.hints import HintTracker
from tracecli.frontend.source import location_of, user_frame
from tracecli.ops.autocast import cast_arguments, policy_for
from tracecli.ops.ltorch import to as ltorch_to
from tracecli.ops.torch_bridge import FROM_TORCH

_EMPTY = inspect.Parameter.empty


class _CallSpec:
    """How to print a call of an ltorch symbol in one canonical form: required
    parameters positionally, optional ones by keyword and only when not default."""

    def __init__(self, fn: Callable):
        self.signature = inspect.signature(fn)
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

    def normalize(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        if not kwargs and len(args) == self.required:
            return args, {}
        bound = self.signature.bind(*args, **kwargs)
        out_args: list = []
        out_kwargs: dict = {}
        for p in self.params:
            if p.name not in bound.arguments:
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
        return tuple(out_args), out_kwargs


def _is_default(value, default) -> bool:
    return type(value) is type(default) and value == default


_specs: dict[Symbol, _CallSpec] = {}


def _spec(sym: Symbol) -> _CallSpec:
    spec = _specs.get(sym)
    if spec is None:
        spec = _specs[sym] = _CallSpec(sym.decomposition)
    return spec


class Recorder:
    def __init__(self, registry: NameRegistry, module_scope: Callable[[], str], hints: HintTracker):
        self.registry = registry
        self.module_scope = module_scope
        self.hints = hints
        self.scopes: list[list[BoundSymbol]] = [[]]
        self.autocast_applied = False
        self.autocast_casts = 0  # casts recorded so far, to see whether a decomposition made any

    @property
    def bsyms(self) -> list[BoundSymbol]:
        return self.scopes[0]

    def record(self, sym: Symbol, args: tuple, kwargs: dict):
        """Record one call made with values; return its output values."""
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
            out = tree_map(self._new_output, sym.meta(*args, **kwargs))
            subsymbols = []
        source, scope = None, ""
        if len(self.scopes) == 1:
            frame = user_frame(sys._getframe(1))
            if frame is not None:
                source = location_of(frame)
                self.hints.note(frame, out)
            scope = self.module_scope()
        bsym = BoundSymbol(sym, args, tuple(kwargs.items()), out, tuple(subsymbols), source, scope=scope)
        self.scopes[-1].append(bsym)
        return out

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
