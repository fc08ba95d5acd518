"""Symbolic shapes while tracing: which input dims are symbols, what user code sees of
them, and the trace that comes out (symbols made one where the trace assumed them
equal, each bound by one `prims.shape` where the code first uses it as a value).

A dim the parser of a torch call turns into an int right before the call reaches the
tracer (`x.view(n, -1)` calls `n.__index__()`) is not a specialisation: the call gets
the symbol itself. Any other `__index__` (`range(n)`, `len(x)`) is, and pins the dim
with a guard. The two are told apart by the instruction that asked: the parser asks at
the instruction that makes the call.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field, replace

import torch

from tracecli.core.dims import Dim, DimEnv, DimError, DimInfo, symbols_in
from tracecli.core.names import NameRegistry
from tracecli.core.pytree import build_as, values_in
from tracecli.core.symbol import BoundSymbol
from tracecli.core.trace import Trace, sizes_read, substitute_sizes
from tracecli.core.values import NumberValue, TensorValue
from tracecli.frontend.index_asks import asked_for_a_torch_call
from tracecli.frontend.source import location_of, user_frame
from tracecli.ops import prims

_DIMS_FILE = Dim.__index__.__code__.co_filename


@dataclass(frozen=True)
class DimPolicy:
    """Which dims of the entry's tensor inputs are symbols."""

    dynamic: bool = False  # every dim of every tensor argument (--dynamic)
    # Per argument input, in order: a name (or None) for each of its dims (-i 'f32[n,4]').
    named: tuple[tuple[str | None, ...] | None, ...] = ()

    @property
    def has_named(self) -> bool:
        """Whether the user named any dim (then the calls' sizes are theirs to give)."""
        return any(names and any(names) for names in self.named)

    @property
    def symbolic(self) -> bool:
        return self.dynamic or self.has_named


def symbolic_inputs(policy: DimPolicy, env: DimEnv, registry: NameRegistry, values: list) -> list:
    """The argument inputs with their symbolic dims: named ones as declared, and with
    `dynamic` every other dim `s0, s1, ...` in input order. Sizes 0 and 1 stay static,
    as code often treats them apart (broadcasting, squeezing)."""
    out = []
    counter = 0
    for index, value in enumerate(values):
        if not isinstance(value, TensorValue):
            out.append(value)
            continue
        names = policy.named[index] if index < len(policy.named) and policy.named[index] else ()
        shape = []
        for axis, size in enumerate(value.shape):
            name = names[axis] if axis < len(names) else None
            origin = f"{value.name}.shape[{axis}]"
            if name is not None:
                shape.append(_named_dim(env, registry, name, size, origin))
            elif policy.dynamic and size >= 2:
                auto = registry.take(f"s{counter}")
                counter += 1
                shape.append(env.new_symbol(auto, size, origin, named=False))
            else:
                shape.append(size)
        out.append(replace(value, shape=tuple(shape)) if any(isinstance(d, Dim) for d in shape) else value)
    return out


def _named_dim(env: DimEnv, registry: NameRegistry, name: str, size: int, origin: str) -> int | Dim:
    info = env.dims.get(name)
    if info is not None:
        if info.example != size:
            raise DimError(f"dim {name} is {info.example} in {info.origin} but {size} in {origin}")
        return Dim.symbol(name)
    if size < 2:
        raise DimError(f"dim {name} is {size} in {origin}; a symbolic dim is traced for sizes of at least 2 "
                       "(0 and 1 are shapes of their own): give it a number")
    if registry.take(name) != name:
        raise DimError(f"dim name {name} is already the name of an input; choose another")
    return env.new_symbol(name, size, origin, named=True)


@dataclass
class _Pending:
    dim: Dim
    frame: object
    lasti: int
    where: tuple[str, int, str] | None


@dataclass
class IndexWatch:
    """`__index__` of a dim: pinned unless the call it was asked for reaches the tracer."""

    env: DimEnv
    pending: list[_Pending] = field(default_factory=list)

    def on_index(self, dim: Dim) -> int:
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename == _DIMS_FILE:
            frame = frame.f_back
        if self.env.unbacked_in(dim) and not asked_for_a_torch_call(frame):
            return self.env.read(dim)  # Python goes on with the int: the real count, now
        self.pending.append(_Pending(dim, frame, frame.f_lasti if frame is not None else -1, locate()))
        return self.env.example(dim)

    def calling(self, frame) -> None:
        """A torch call reached the tracer from `frame`: the parser's asks at that very
        instruction were for it; every other ask pins its dim."""
        if not self.pending:
            return
        lasti = frame.f_lasti if frame is not None else -2
        self.pending = [p for p in self.pending if not (p.frame is frame and p.lasti == lasti)]
        self.settle()

    def settle(self) -> None:
        pending, self.pending = self.pending, []
        for p in pending:
            self.env.locate = lambda p=p: p.where
            try:
                if self.env.unbacked_in(p.dim):
                    # A torch call that took it as an int without reaching the tracer
                    # (`torch.Size([n])`): what it made from the example is no value.
                    raise self.env.read_error(p.dim)
                self.env.specialize(p.dim, "the size is used as a plain int")
            finally:
                self.env.locate = locate


def locate() -> tuple[str, int, str] | None:
    frame = user_frame(sys._getframe(1))
    if frame is None:
        return None
    loc = location_of(frame)
    return loc.file, loc.line, loc.text


class SymSize(tuple):
    """`x.shape` / `x.size()` of a tensor with symbolic dims: a tuple of ints and dims."""

    def numel(self):
        return math.prod(self)

    # A torch.Size sliced, joined or repeated is a torch.Size.
    def __getitem__(self, key):
        item = tuple.__getitem__(self, key)
        return SymSize(item) if isinstance(key, slice) else item

    def __add__(self, other):
        return SymSize(tuple(self) + tuple(other)) if isinstance(other, tuple) else NotImplemented

    def __radd__(self, other):
        return SymSize(tuple(other) + tuple(self)) if isinstance(other, tuple) else NotImplemented

    def __mul__(self, count):
        return SymSize(tuple(self) * count)

    __rmul__ = __mul__


# Returned by the entry, it is the torch.Size eager returns.
build_as(SymSize, torch.Size)


def contiguous_strides(shape: tuple) -> tuple:
    strides = []
    step: int | Dim = 1
    for size in reversed(shape):
        strides.append(step)
        step = step * size
    return tuple(reversed(strides))


# -- the trace that comes out -------------------------------------------------------------


class DimHints:
    """Which user variable held each size symbol (`rows, cols = x.shape`): frames that
    read sizes are looked at when they next call torch (the read has been stored by
    then), and at the end."""

    def __init__(self):
        self.hints: dict[str, str] = {}
        self._frames: dict[int, object] = {}

    def read_in(self, frame) -> None:
        if frame is not None:
            self._frames[id(frame)] = frame

    def look(self) -> None:
        frames, self._frames = self._frames, {}
        for frame in frames.values():
            for var, held in frame.f_locals.items():
                name = held.as_symbol() if isinstance(held, Dim) else None
                if name is not None and not var.startswith("_"):
                    self.hints.setdefault(name, var)


def finish(trace: Trace, env: DimEnv, registry: NameRegistry, hints: dict[str, str] | None = None) -> Trace:
    """The trace with the symbols the tracing found equal made one, each symbol the body
    reads bound by a `prims.shape` of the input it comes from, and the dims and guards."""
    if env.replacements:
        trace = substitute_sizes(trace, env.replacements)
    bsyms = _bound(trace, env)
    hints = hints or {}
    dims = tuple(replace(info, same_as=env.replacements.get(info.name), hint=hints.get(info.name))
                 for info in env.dims.values())
    return trace.replace(bsyms=bsyms, dims=dims, guards=tuple(env.guards), facts=tuple(env.assumed))


def _bound(trace: Trace, env: DimEnv) -> tuple[BoundSymbol, ...]:
    """The body with a `prims.shape` before the first use of each symbol it reads."""
    origin_of: dict[str, tuple[str, int]] = {}
    unbacked: set[str] = set()
    for info in env.dims.values():
        if info.unbacked:
            unbacked.add(info.name)
            continue
        tensor, _, axis = info.origin.partition(".shape[")
        origin_of[info.name] = (tensor, int(axis.rstrip("]")))
    inputs = {v.name: v for v in trace.inputs if isinstance(v, TensorValue)}
    bound: set[str] = set()
    out: list[BoundSymbol] = []

    def carry(values) -> None:
        """A size the data decide is read from the first value whose type has it as a dim."""
        for value in values:
            if type(value) is TensorValue and unbacked:
                for axis, size in enumerate(value.shape):
                    name = size.as_symbol() if isinstance(size, Dim) else None
                    if name in unbacked and name not in origin_of:
                        origin_of[name] = (value.name, axis)
                        inputs[value.name] = value

    carry(trace.inputs)  # a piece after a graph break is handed values of such sizes

    def bind(needed: set[str], before: BoundSymbol | None) -> None:
        for tensor in sorted({origin_of[name][0] for name in needed - bound if name in origin_of}):
            x = inputs[tensor]
            targets = []
            for axis, size in enumerate(x.shape):
                name = size.as_symbol() if isinstance(size, Dim) else None
                mine = name is not None and origin_of.get(name) == (tensor, axis) and name not in bound
                targets.append(NumberValue(name, size) if mine else None)
                if mine:
                    bound.add(name)
            source = before.source if before is not None else None
            out.append(BoundSymbol(prims.shape, (x,), (), tuple(targets), (), source))

    for bsym in trace.bsyms:
        needed = sizes_read(bsym)
        if needed - bound:
            bind(needed, bsym)
        out.append(bsym)
        carry(bsym.output_values())
    returned = {v.name for v in values_in(trace.output) if isinstance(v, NumberValue) and v.is_size}
    if returned - bound:
        bind(returned, None)
    return tuple(out)


def bound_unbacked(trace: Trace) -> Trace:
    """`trace` with each size the data decide that it reads as a number bound by a
    `prims.shape` of the first value whose type has it (a backward broadcasting the
    cotangent of `x[mask].sum()` to u0 reads it off the positions it saved)."""
    # (one it is handed as a number, which the forward bound, is bound already)
    defined = {v.name for v in (*trace.inputs, *(v for b in trace.bsyms for v in b.output_values()))
               if isinstance(v, NumberValue)}
    unbacked = {info.name: info for info in trace.dims if info.unbacked and info.name not in defined}
    if not unbacked:
        return trace
    return trace.replace(bsyms=_bound(trace, DimEnv(dims=unbacked)))


def bound_sizes(piece: Trace, env: DimEnv, call_inputs: dict[str, TensorValue], kept: tuple = ()) -> Trace:
    """A piece of a call's trace (a segment, cut where Python read a value) with each
    size symbol it reads bound by a `prims.shape` of the call's input it comes from, as
    `finish` binds them in a whole trace; that input is handed to the piece too. A size
    the data decide that an earlier piece made is read off a value of that size the
    earlier pieces `kept` (`x * len(pos)` after a break, with pos not read again)."""
    needed: set[str] = set()
    for bsym in piece.bsyms:
        needed |= sizes_read(bsym)
    needed |= {v.name for v in values_in(piece.output) if isinstance(v, NumberValue) and v.is_size}
    have = {v.name for v in piece.inputs}
    extra: dict[str, TensorValue] = {}
    for name in sorted(needed):
        info = env.dims.get(name)
        if info is not None and info.unbacked:
            continue
        origin = info.origin.partition(".shape[")[0] if info is not None else None
        if origin is not None and origin not in have and origin in call_inputs:
            extra[origin] = call_inputs[origin]
    carried = set()
    for value in (*piece.inputs, *(v for b in piece.bsyms for v in b.output_values())):
        if isinstance(value, TensorValue):
            carried |= symbols_in(tuple(env.canonical(d) for d in value.shape))
    for name in sorted(needed - carried):
        info = env.dims.get(name)
        if info is None or not info.unbacked:
            continue
        carrier = next((v for v in kept if isinstance(v, TensorValue)
                        and any(isinstance(d, Dim) and env.canonical(d) == Dim.symbol(name) for d in v.shape)), None)
        if carrier is not None and carrier.name not in have:
            extra[carrier.name] = carrier
            carried |= symbols_in(carrier.shape)
    piece = piece.replace(inputs=piece.inputs + tuple(extra.values())) if extra else piece
    # The dims its values' types use, as a whole trace lists them: passes keep the
    # bindings of those it reads by them, and the verifier knows each.
    used = set(needed)
    for value in (*piece.inputs, *(v for b in piece.bsyms for v in b.output_values())):
        if isinstance(value, TensorValue):
            used |= symbols_in(value.shape)
    # (with the sizes a count's bound is made of: `0 <= u0 <= s0*s1`)
    used |= {name for info in env.unbacked_in(tuple(Dim.symbol(n) for n in used)) for name in symbols_in(info.upper)}
    dims = tuple(replace(env.dims[name], same_as=env.replacements.get(name)) for name in sorted(used)
                 if name in env.dims)
    # And the guards on them: what the ops in it were traced assuming (`s0*s1 >= 8`).
    known = {info.name for info in dims}
    guards = tuple(g for g in env.guards if symbols_in((g.lhs, g.rhs)) <= known)
    facts = tuple(g for g in env.assumed if symbols_in((g.lhs, g.rhs)) <= known)
    return piece.replace(bsyms=_bound(piece, env), dims=dims, guards=guards, facts=facts)


__all__ = ["DimError", "DimInfo", "DimPolicy", "IndexWatch", "SymSize", "bound_sizes", "bound_unbacked", "finish",
           "symbolic_inputs"]

