"""The tracer: runs the user's callable on proxies and builds a Trace.

Every torch call goes through one TorchFunctionMode handler: metadata reads are
answered from the proxy, modelled calls go through their ltorch adapter, anything
else becomes an opaque symbol. Symbol calls (ltorch/prims used directly, e.g. in a
saved trace traced again) reach the same recorder through the core's handler stack.
"""

from __future__ import annotations

import contextlib
import dis
import inspect
import linecache
import math
import random
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from types import FrameType, FunctionType
from typing import NamedTuple

import numpy
import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from tracecli.core.dims import Dim, DimEnv, SymBool, active, pop_unbacked_maker, push_unbacked_maker
from tracecli.core.errors import TracingError
from tracecli.core.gc_pause import gc_paused
from tracecli.core.names import NameRegistry, sanitize
from tracecli.core.pytree import tree_leaves, tree_map, values_in
from tracecli.core.symbol import Symbol, pop_handler, push_handler
from tracecli.core.trace import Trace, TraceInfo, substitute_sizes
from tracecli.core.values import NumberValue, TensorType, TensorValue
from tracecli.frontend.aliasing import AliasError, Aliasing
from tracecli.frontend.arguments import (
    argument_inputs,
    bind_entry,
    input_objects,
    module_tensors,
    swap_tensors,
    unique_module_tensors,
)
from tracecli.frontend.captured_names import CapturedNames
from tracecli.frontend.containers import hidden_tensor
from tracecli.frontend.custom_functions import returning_what_is_read
from tracecli.frontend.dropped_arguments import DROPPED, restore
from tracecli.frontend.hints import HintTracker
from tracecli.frontend.known import NOT_KNOWN, KnownValues
from tracecli.frontend.legacy import LEGACY_CALLS
from tracecli.frontend.numpy_arrays import TracedArray
from tracecli.frontend.numpy_calls import HANDLERS, NUMPY_LEAVES, UNHANDLED, array_output, numpy_leaf, numpy_overrides
from tracecli.frontend.overrides import (
    AUTOGRAD_BACKWARD,
    AUTOGRAD_GRAD,
    DEFAULT_DTYPE_REFUSAL,
    FUNCTION_APPLY,
    tracing_overrides,
)
from tracecli.frontend.placement import Placement
from tracecli.frontend.places import StateWrite, Written, hidden_traced, store_calls
from tracecli.frontend.proxy import TensorProxy
from tracecli.frontend.recorder import Recorder
from tracecli.frontend.scopes import ModuleScopes
from tracecli.frontend.segments import (
    BREAKING_READS,
    VALUE_READERS,
    EagerCallFailed,
    Runner,
    Segmenting,
    break_at_read,
    break_at_size,
    read_size,
    run_eagerly,
)
from tracecli.frontend.source import display_path, is_user_code, line_of, location_of, stop_search_at, user_frame
from tracecli.frontend.stand_ins import ValuesNeeded
from tracecli.frontend.state import StateWatch, watch_entry
from tracecli.frontend.symbolic import (
    DimHints,
    DimPolicy,
    IndexWatch,
    SymSize,
    bound_sizes,
    contiguous_strides,
    finish,
    locate,
    symbolic_inputs,
)
from tracecli.frontend.training import Training, TrainingError
from tracecli.ops import ltorch, prims, torch_map
from tracecli.ops.autocast import device_type
from tracecli.ops.forms import OPAQUE, UnsupportedCall
from tracecli.ops.opaque import FREEZE_ADVICE, OpaqueCallError, eager_symbol, opaque_symbol
from tracecli.ops.promotion import DataDependentShape, ShapeError, canonical_dim
from tracecli.ops.torch_bridge import FROM_TORCH, to_device
from tracecli.ops.torch_paths import torch_path


@dataclass
class TracedProgram:
    """A trace plus what running it needs: the real objects for each trace input."""

    trace: Trace
    inputs: list = field(default_factory=list)  # one per trace input, in order
    fn: Callable | None = None
    n_lifted: int = 0  # tensors captured from outside the function, last among the inputs
    n_state: int = 0  # the module's tensors and the captured ones: real state, last among the inputs
    # Each captured tensor with a way to look where it was found: a later call reads the
    # same tensor only while it is still there.
    homes: list = field(default_factory=list)
    # Captured tensors read afresh from where they were found on every call (a
    # parameter's .grad, a new tensor each step): (index among the captured inputs, how
    # to find it, its shape, dtype, device and contiguity when traced).
    rereads: list = field(default_factory=list)
    # Settings the trace took as constants that a later call must find unchanged:
    # (dict, key, value), an optimizer's param group's lr and kin.
    settings: list = field(default_factory=list)
    # An optimizer made its state inside the trace, which cannot store it back: the trace
    # is a first step, and the script goes on with eager's.
    first_step: bool = False
    # What the report says beside the comparison (Python state the entry changed).
    notes: list = field(default_factory=list)
    # Each optimizer state input (a momentum buffer) with its parameter's input name: its
    # update is judged with that parameter's gradients.
    state_params: dict = field(default_factory=dict)
    # The Python state the call changes (frontend/state.py): each place with what a later
    # call must find there for the trace, which replays the change, to serve it (a cache
    # filled since is read instead, not filled).
    writes: list = field(default_factory=list)
    # The arguments those places are reached through, by parameter: a call given another
    # object there writes elsewhere.
    written_through: dict = field(default_factory=dict)
    # Traced in segments (frontend/segments.py): each piece with the break before it, and
    # what the call returned, run (None while it was being traced, which runs nothing).
    segments: tuple = ()
    result: object = None

    @property
    def in_segments(self) -> bool:
        """Whether the call's Python read a traced value (cut there or not): then every call
        is traced again as it runs, since what it read may differ."""
        return len(self.segments) > 1 or any(segment.reads for segment in self.segments)

    def writes_same_places(self, args: tuple, kwargs: dict) -> bool:
        """Whether a call with these arguments finds the places the trace writes as the
        traced call did. (A program traced in segments is traced again on every call.)"""
        if self.in_segments:
            return True
        if self.written_through:
            given = bind_entry(self.fn, args, kwargs).arguments
            if any(given.get(name) is not obj for name, obj in self.written_through.items()):
                return False
        return all(written.as_expected() for written in self.writes)

    @property
    def state(self) -> list:
        """The real state the trace reads: the module's tensors and the captured ones."""
        return self.inputs[len(self.inputs) - self.n_state:] if self.n_state else []

    def inputs_for(self, args: tuple, kwargs: dict) -> list:
        """The compiled trace's arguments for a new call of the entry with `args`."""
        bound = bind_entry(self.fn, args, kwargs)
        objs = [obj for arg in bound.arguments.values() for obj in input_objects(arg)]
        if isinstance(self.fn, torch.nn.Module):
            objs.extend(unique_module_tensors(self.fn))
        lifted = self.inputs[len(self.inputs) - self.n_lifted :] if self.n_lifted else []
        if self.rereads:
            lifted = list(lifted)
            for index, home, _ in self.rereads:
                lifted[index] = home()
        return objs + lifted


class _Mode(TorchFunctionMode):
    def __init__(self, tracer: _Tracer):
        super().__init__()
        self.tracer = tracer

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return self.tracer.on_torch_call(func, args, kwargs or {})


_resolved: dict = {}


def _resolve(func):
    try:
        found = _resolved.get(func)
    except TypeError:
        # An unhashable callable object (one of the user's, calling handle_torch_function
        # with itself): no torch map can hold it as a key, so it is opaque.
        return "opaque", None
    if found is None:
        found = _resolved[func] = torch_map.resolve(func)
    return found


def call_kind(func) -> str:
    """What the tracer makes of a call of `func`: 'ltorch', 'composite', 'metadata',
    'data', 'opaque', or one of the training calls it answers itself."""
    return _resolve(func)[0]


class _Tracer:
    def __init__(self, registry: NameRegistry, placement: Placement, scopes: ModuleScopes, env: DimEnv | None = None):
        self.registry = registry
        self.env: DimEnv | None = None  # symbolic shapes: the size symbols and what tracing assumed of them
        self.watch: IndexWatch | None = None
        self.dim_hints: DimHints | None = None
        self.env_made_here = False  # made for a size the data decide, in a trace otherwise static
        self.unbacked_made = 0
        self.calling = None  # the program's torch call being traced (ltorch), outermost
        self.calling_reads = None  # and its arguments, as values
        if env is not None:
            self._attach(env)
        self.placement = placement
        self.proxies: dict[str, TensorProxy] = {}
        self.hints = HintTracker(self.proxies.get)  # the dict's own get: no Python frame per lookup
        self.recorder = Recorder(registry, scopes.current, self.hints)
        self.lifted: list[tuple[TensorValue, torch.Tensor]] = []  # captured tensors: (input value, tensor)
        self.known: dict[int, TensorValue] = {}  # id(real tensor) -> the value it holds now
        self.real_of: dict[str, torch.Tensor] = {}  # value name -> the real tensor holding it
        self.homes: list[tuple[torch.Tensor, Callable]] = []  # captured tensor, how to find where it was found
        self.state_params: dict[str, str] = {}  # optimizer state input -> its parameter's input name
        self.rereads: list[tuple[int, Callable, tuple]] = []  # see TracedProgram.rereads
        self.in_torch_call = 0
        self.through: list[str] = []  # the torch functions written in Python being traced through, innermost last
        self.aliasing = Aliasing()
        self.training = Training(self)
        self.known_values = KnownValues()  # values of tensors made from constants: read as numbers
        self.captured_names = CapturedNames()
        self.root = None  # the frame that calls the traced function: where user code starts
        self.state: StateWatch | None = None  # the Python state the call can reach, as it found it
        self.input_of: dict[int, NumberValue] = {}  # id(an argument that is no tensor) -> its input
        self.segmenting: Segmenting | None = None  # cutting the trace where Python reads a value

    # -- proxies and values ----------------------------------------------------

    def proxy(self, value: TensorValue) -> TensorProxy:
        proxy = self.proxies.get(value.name)
        if proxy is None:
            sizes = None
            if self.env is not None and any(isinstance(d, Dim) for d in value.shape):
                sizes = tuple(self.env.example(d) for d in value.shape)
            proxy = self.proxies[value.name] = TensorProxy(value, sizes)
        return proxy

    def to_values(self, obj):
        """Replace proxies by their values, torch dtypes/devices/sizes by the IR's, and
        lift real tensors captured from outside the function into trace inputs."""
        return tree_map(self._leaf_value, obj, is_leaf=_to_values_leaf)

    def _positional_values(self, args: tuple) -> tuple:
        """`to_values(args)`, leaf by leaf when the arguments are proxies and plain numbers
        (`torch.sin(x)`, `x * 1.5`: most calls), without the tree walk's per-node checks."""
        out = []
        for arg in args:
            kind = type(arg)
            if kind is TensorProxy:
                out.append(self._leaf_value(arg))
            elif kind in _PLAIN_LEAVES:
                out.append(arg)
            else:
                return self.to_values(args)
        return tuple(out)

    def _leaf_value(self, obj):
        if isinstance(obj, TensorProxy):
            value = obj.value
            if self.aliasing.stale(value):
                # A view read after its base was written: taken again from the base, here.
                value = self._refreshed(obj)
            return value
        if isinstance(obj, torch.Tensor):
            return self.known.get(id(obj)) or self.lift(obj)
        if isinstance(obj, torch.dtype):
            return FROM_TORCH[obj]
        if isinstance(obj, torch.device):
            return to_device(obj)
        if isinstance(obj, (torch.Size, SymSize)):
            return tuple(obj)
        if isinstance(obj, NUMPY_LEAVES):
            return numpy_leaf(obj)
        return obj

    def output_values(self, result):
        """What the entry returns, or an unmodelled call reads, as values: as `to_values`,
        but a torch.Size stays one (a symbolic one holds size symbols, and the trace
        builds the torch.Size), and so does a torch.device; a numpy array is one
        (frontend/numpy_calls.py)."""
        return tree_map(self._form_value, result, is_leaf=_slice)

    def _form_value(self, obj):
        if isinstance(obj, torch.device):
            return obj
        if type(obj) is TracedArray:
            return array_output(obj, self._leaf_value(obj.tensor))
        return self._leaf_value(obj)

    def to_proxies(self, obj):
        if type(obj) is TensorValue:  # most ops return one tensor: no tree to walk
            return self.proxy(obj)
        return tree_map(self._leaf_proxy, obj)

    def _leaf_proxy(self, obj):
        return self.proxy(obj) if isinstance(obj, TensorValue) else obj

    def value_of(self, obj) -> TensorValue | None:
        """The value a tensor the user's code holds stands for now (None: a real tensor
        the trace has not read)."""
        if isinstance(obj, TensorProxy):
            return self._leaf_value(obj)
        return self.known.get(id(obj)) if isinstance(obj, torch.Tensor) else None

    def lift(self, tensor: torch.Tensor, hint: str | None = None, home: Callable | None = None,
             reread: bool = False) -> TensorValue:
        """A real tensor the entry reads from outside itself (a global, a closure, the
        weights of a module it did not get as its entry): an input of the trace. `hint`
        and `home`: its name and where to find it again, when the caller knows them;
        `reread`: a later call reads whatever tensor is there then, of the same kind."""
        if hint is None:
            hint, home = self.training.names.get(id(tensor)) or self.captured_names.name(
                tensor, user_frame(sys._getframe(1)), self.state)
        unstrided = _unstrided(tensor, f"the captured tensor `{hint}`")
        if unstrided:
            raise _error_at_user_line(unstrided)
        name = self.registry.take(hint)
        if id(tensor) in self.training.state_of:
            self.state_params[name] = self.training.state_of[id(tensor)]
        if reread:
            self.rereads.append((len(self.lifted), home, tensor_kind(tensor)))
        elif home is not None:
            self.homes.append((tensor, home))
        value = self.placement.value(name, tensor)
        if self.segmenting is not None:
            self.segmenting.hold(value, tensor)
        self.lifted.append((value, tensor))
        self.stand_for(tensor, value)
        self.training.input(value, tensor)
        return value

    def stand_for(self, tensor: torch.Tensor, value: TensorValue) -> None:
        """`value` is what the real `tensor` holds from now on, wherever code reaches it
        (a module's `_flat_weights` list holds its parameters outside `_parameters`)."""
        self.known[id(tensor)] = value
        self.real_of[value.name] = tensor
        self.aliasing.input(value, tensor.is_contiguous())

    # -- handlers ----------------------------------------------------------------

    def _constructing(self) -> bool:
        """Whether the call comes from an nn.Module's __init__ run by the traced code (a
        `main()` that builds its model): construction is not part of the trace."""
        frame = sys._getframe(2)
        while frame is not None and frame is not self.root:
            if frame.f_code.co_name == "__init__" and isinstance(frame.f_locals.get("self"), torch.nn.Module):
                return True
            frame = frame.f_back
        return False

    def on_symbol_call(self, sym: Symbol, args: tuple, kwargs: dict):
        # Called by user code directly (a saved trace traced again): it holds proxies.
        if len(self.recorder.scopes) == 1 and not self.in_torch_call:
            vargs, vkwargs = self.to_values(args), self.to_values(kwargs)
            if sym is ltorch.setitem_ and _puts_back(self.aliasing, vargs):
                # `t8 = ltorch.setitem_(t0, 0, t4)` with t4 the view t0[0] written in place
                # (`x[0] += 1` traced): the write already reached t0, which this stands for.
                return args[0]
            if sym is prims.shape:
                # `(s0, s1) = prims.shape(x)`: the sizes the tracer gave x (numbers, or its
                # own size symbols, which its trace binds itself).
                return tuple(vargs[0].shape)
            start = len(self.recorder.bsyms)
            out = self._record(sym, vargs, vkwargs)
            self._after_top_level(start)
            return self.to_proxies(out)
        # Inside a traced torch call (the op its adapter calls, the prims of that op's
        # decomposition): `_record`'s work without its frame, as this runs for each of them.
        try:
            return self.recorder.record(sym, args, kwargs)
        except DataDependentShape as exc:
            if self.in_torch_call == 1 and self.segmenting is not None:
                raise  # the program's call runs eagerly, whole, where it may (on_torch_call decides)
            raise _error_at_user_line(str(exc)) from exc
        except (ShapeError, OpaqueCallError, UnsupportedCall, TypeError) as exc:
            raise _error_at_user_line(str(exc)) from exc

    def _refreshed(self, proxy: TensorProxy) -> TensorValue:
        try:
            value = self.aliasing.refreshed(proxy.value, self.record_top)
        except AliasError as exc:
            raise _error_at_user_line(str(exc)) from exc
        self.rebind(proxy.value, value)
        return value

    def record_top(self, sym: Symbol, args: tuple, kwargs: dict):
        """Record a call of our own at the top level (a write back into a base, a view
        taken again), following the views and writes it makes as the user's are."""
        start = len(self.recorder.bsyms)
        out = self._record(sym, args, kwargs)
        self._after_top_level(start)
        return out

    def _after_top_level(self, start: int) -> None:
        """Follow views and in-place writes among the bound symbols just recorded (the
        writes back into bases that those make are recorded and followed on the way)."""
        self.training.recorded(self.recorder.bsyms[start:])
        self.known_values.recorded(self.recorder.bsyms[start:])
        for bsym in self.recorder.bsyms[start:]:
            try:
                written = self.aliasing.note(bsym)
                if written is not None:
                    self.rebind(*written)
                    self.aliasing.written(*written, self.record_top)
            except AliasError as exc:
                raise _error_at_user_line(str(exc)) from exc

    def rebind(self, old: TensorValue, new: TensorValue) -> None:
        self.training.rebound(old, new)
        proxy = self.proxies.pop(old.name, None)
        if proxy is not None:
            # The user's tensor object now stands for the new value.
            proxy.value = new
            self.proxies[new.name] = proxy
            self.hints.rebound(user_frame(sys._getframe(2)), new, proxy)
        real = self.real_of.get(old.name)
        if real is not None:
            # A captured tensor written in place (a global counter): later reads of it
            # see the new value, and the compiled trace writes the real one as eager does.
            self.stand_for(real, new)

    def printed(self, proxy: TensorProxy) -> str:
        """`print(x)` of a traced tensor while segmenting: its value, read as a break."""
        func = torch.Tensor.__repr__
        if not self._may_cut(func, (proxy,)):
            v = proxy.value
            return f"TensorProxy({v.name}: {v.device} {v.dtype.short}{list(v.shape)})"
        frame = user_frame(sys._getframe(1))
        return break_at_read(self, func, (proxy,), {}, location_of(frame) if frame is not None else None)

    def _may_cut(self, func, args: tuple) -> bool:
        """Whether a read of a value cuts the trace here: segmenting, the program's own
        read of a traced tensor, and nothing traced in between (a decomposition, a custom
        Function's backward traced while its forward runs). Library code the program
        calls (an optimizer's step, GradScaler.step) reads at the user's line that calls it."""
        return (getattr(func, "__name__", "") in BREAKING_READS and type(args[0]) is TensorProxy
                and self._may_segment(inside_call=False))

    def _may_segment(self, inside_call: bool, nested: bool = False) -> bool:
        """Whether the trace may be cut here: segmenting, at the top level of the recorded
        calls (`inside_call`: or asked from inside the program's own call; `nested`: from
        inside its decomposition, which is dropped before the cut), and not while
        tracecli itself turns autograd off."""
        return (self.segmenting is not None and (nested or len(self.recorder.scopes) == 1)
                and (inside_call or not self.in_torch_call) and not self.recorder.internal_grad_mode)

    def store_state(self, writes: list[StateWrite]) -> None:
        """Each slot of Python state the call set to a traced value, stored again by the
        trace at its end (frontend/state.py), in the order the values were made, at the
        line that made each. A container the entry got as an argument is written through
        that argument: whichever a later call passes."""
        if not writes:
            return  # most calls: no index of what each bound symbol made is needed
        bsyms = self.recorder.bsyms
        made_at = {v.name: i for i, b in enumerate(bsyms) for v in b.output_values()}
        calls = []
        for write, (sym, args) in zip(writes, store_calls(writes), strict=True):
            # Only the tensors become values: the rest is stored as the program stored it (a
            # torch.device stays one, where an op's argument becomes the IR's device name).
            values = tree_map(self._tensor_value, args)
            argument = self.input_of.get(id(write.place.owner))
            if argument is not None:
                values = (argument, *values[1:])
            made = [made_at[v.name] for v in values_in(values[1:]) if v.name in made_at]
            calls.append((max(made) if made else -1, write, sym, values))
        calls.sort(key=lambda call: call[0])
        for made, write, sym, values in calls:
            producer = bsyms[made] if made >= 0 else None
            hidden = hidden_traced(write.after)
            if hidden is not None:
                kind, traced = hidden
                where = next((b.source for b in bsyms if traced.value in b.output_values()), None)
                raise TracingError(
                    f"a traced tensor is kept in a {kind} object at `{write.place.path}`, which the trace cannot "
                    "make again on every call; keep it in a dict, a list, a dataclass or an attribute of its own",
                    file=where.file if where else None, line=where.line if where else None,
                    source=where.text if where else "")
            start = len(bsyms)
            self.record_top(sym, values, {})
            if producer is not None:
                bsyms[start] = bsyms[start].replace(source=producer.source, scope=producer.scope)

    def _tensor_value(self, leaf):
        return self._leaf_value(leaf) if isinstance(leaf, torch.Tensor) else leaf

    def _record(self, sym: Symbol, args, kwargs):
        try:
            return self.recorder.record(sym, args, kwargs)
        except (ShapeError, OpaqueCallError, UnsupportedCall, TypeError) as exc:
            problem = str(exc).rstrip(".")
            if isinstance(exc, OpaqueCallError) and self.through:
                # The user called the torch function whose body makes this call: it is named.
                problem += f" (called inside {self.through[-1]})"
            elif isinstance(exc, OpaqueCallError) and (reader := _library_reader(
                    sys._getframe(1), handing_off=getattr(sym.impl, "__code__", None))) is not None:
                # The call is library code's (torch.optim's foreach=True path): what to
                # change is how that code is used, not the user's line.
                problem += (f"; it is called by {reader}, which is library code: use it in a form that calls "
                            "modelled ops (an optimizer's foreach=False), or outside the traced function")
            raise _error_at_user_line(problem) from exc

    def _attach(self, env: DimEnv) -> None:
        self.env = env
        self.watch = IndexWatch(env)
        self.dim_hints = DimHints()
        env.locate = locate
        env.foreign = self.on_dim_arith
        env.on_index = self.watch.on_index
        env.on_open = self.on_open_size
        env.on_read = self.on_read_size

    def make_unbacked(self, made_by: str, upper) -> Dim:
        """A size the data decide (`u0`, `u1`, ...), made by a rule being traced: a trace
        with static inputs gets its environment of sizes here, at the first one."""
        if self.env is None:
            self._attach(DimEnv())
            self.env_made_here = True
            self.env.__enter__()  # left by _unbacked_sizes, with the block it was made in
            if self.calling is not None:
                self.env.context = _call_name(self.calling)
            if self.segmenting is not None and self.segmenting.bind_sizes is None:
                env = self.env
                self.segmenting.bind_sizes = lambda piece, kept: bound_sizes(piece, env, {}, kept)
        name = self.registry.take(f"u{self.unbacked_made}")
        self.unbacked_made += 1
        context = self.env.context
        return self.env.new_unbacked(name, f"{made_by}, in {context}" if context else made_by, upper, locate())

    def on_open_size(self, open_: SymBool) -> bool:
        """A branch on sizes the data decide that no fact settles: in the program's own
        Python while segmenting, a graph break that gets the real sizes; inside a torch
        call of the program's own while segmenting (`for c in x.unique()` unbinds u0 rows),
        that call runs eagerly on the real values, where it may (on_torch_call decides, as
        for a call of a shape the data decide); inside an op's rule otherwise, or with
        --fullgraph, refused at the line."""
        if self.in_torch_call == 1 and self._may_run_eagerly(inside_call=True, nested=True, reads=self.calling_reads):
            sizes = ", ".join(info.describe() for info in self.env.unbacked_in((open_.lhs, open_.rhs)))
            raise DataDependentShape(f"{self.env.context or 'the call'} needs to know whether {open_.text()}, "
                                     f"which the data decide: {sizes}")
        if not self._may_segment(inside_call=False):
            error = self.env.open_error(open_)
            if self.in_torch_call == 1 and self.segmenting is not None:
                raise DataDependentShape(error.message)
            raise error
        frame = user_frame(sys._getframe(1))
        return break_at_size(self, open_, location_of(frame) if frame is not None else None)

    def on_read_size(self, size: Dim) -> int:
        """A size the data decide used as a plain int (`len(x[mask])`, `range(n)`): as a
        branch on one, a graph break in the program's own Python, the call run eagerly
        inside a call of the program's, else refused at the line."""
        if self.in_torch_call == 1 and self._may_run_eagerly(inside_call=True, nested=True, reads=self.calling_reads):
            sizes = ", ".join(info.describe() for info in self.env.unbacked_in(size))
            raise DataDependentShape(f"{self.env.context or 'the call'} needs {size.text()} as a plain int, which "
                                     f"the data decide: {sizes}")
        if not self._may_segment(inside_call=False):
            error = self.env.read_error(size)
            if self.in_torch_call == 1 and self.segmenting is not None:
                raise DataDependentShape(error.message)
            raise error
        frame = user_frame(sys._getframe(1))
        return read_size(self, self.env, size, location_of(frame) if frame is not None else None,
                         lambda: self.env.read_error(size))

    def on_dim_arith(self, op: str, dim: Dim, other, reflected: bool):
        """`x + n`, `n * x`, ... with n a size: the tensor's operator with the symbol as its
        number (torch's own operators refuse an object that is not a number)."""
        if not isinstance(other, TensorProxy):
            return NotImplemented
        method = getattr(torch.Tensor, f"__{op}__" if reflected else f"__r{op}__", None)
        if method is None:
            return NotImplemented
        return self.on_torch_call(method, (other, dim), {})

    def _check_layout_known(self, proxy: TensorProxy, name: str) -> None:
        """`x.is_contiguous()`, `x.stride()`: the proxy answers for a C-contiguous tensor,
        which is right only where the tensor is one in eager; tracing follows that much of
        the layout (views, contiguous(), what ops make of contiguous inputs), not more."""
        if name != "storage_offset" and self.aliasing.contiguous.get(self._leaf_value(proxy).name, False):
            return  # (a slice of a contiguous tensor may be contiguous, but it starts further on)
        raise _error_at_user_line(
            f"Tensor.{name} asks for the memory layout of a tensor that may not be contiguous (a transpose, a "
            "slice, or what an op made of one), which tracing does not follow; call .contiguous() first, "
            "or leave the layout to torch (reshape instead of view)"
        )

    def _symbolic_metadata(self, func, args: tuple, kwargs: dict):
        """`x.shape`, `x.size(d)`, `x.numel()`, `len(x)`, `x.stride()` of a tensor with
        symbolic dims: answered with the symbols, never with the example's ints."""
        name = getattr(func, "__name__", "")
        if name == "__get__":
            name = getattr(getattr(func, "__self__", None), "__name__", "")
        if name not in _SIZE_READS or not args or type(args[0]) is not TensorProxy:
            return _NOT_SYMBOLIC
        shape = args[0].value.shape
        if not any(isinstance(d, Dim) for d in shape):
            return _NOT_SYMBOLIC
        if name in ("numel", "nelement"):
            return math.prod(shape)
        if name == "__len__":
            if not shape:
                raise TypeError("len() of a 0-d tensor")
            return shape[0]
        sizes = contiguous_strides(shape) if name == "stride" else shape
        dim = args[1] if len(args) > 1 else kwargs.get("dim")
        if name == "shape" or dim is None:
            return SymSize(sizes)
        return sizes[canonical_dim(dim, len(shape))]

    def on_torch_call(self, func, args: tuple, kwargs: dict):
        if type(func) is FunctionType and func in DROPPED:  # a user's callable may be unhashable
            kwargs = restore(func, kwargs)
        if self.watch is not None:
            self.watch.calling(sys._getframe(2))
            self.dim_hints.look()
        kind, adapter = _resolve(func)
        first = _FIRST_HANDLERS.get(kind)
        while first is not None:
            # A call with a handler of its own, declared beside what it handles: it answers
            # the call, or hands it on as the call it means, which may have one in turn
            # (frontend/legacy.py, frontend/numpy_calls.py: `x.new([5, 8])` is a
            # `torch.tensor` of a list, not of an array).
            out = first(self, adapter, func, args, kwargs)
            if type(out) is not HandedOn:
                return out
            func, args, kwargs, kind, adapter = out
            first = _FIRST_HANDLERS.get(kind)
        if kind == "requires-grad-set" and (_holds_proxy(args, kwargs) or not self._constructing()):
            wanted = bool(args[1] if len(args) > 1 else kwargs.get("requires_grad", True))
            if args[0].requires_grad == wanted:
                return args[0]  # as it is already (zero_grad's `p.grad.requires_grad_(False)`)
            raise _error_at_user_line(f"changing requires_grad is not traced: {FREEZE_ADVICE}")
        if kind in _TRAINING_CALLS:
            return self._training_call(kind, args, kwargs)
        if kind == "metadata" and self.placement.device and (placed := self.placement.device_read(func, args)):
            args = placed  # `w.device` of a weight standing for one on the traced device
        if kind == "metadata" and args and type(args[0]) is TensorProxy and _layout_read(func):
            self._check_layout_known(args[0], _layout_read(func))
        if kind == "metadata" and self.env is not None:
            answer = self._symbolic_metadata(func, args, kwargs)
            if answer is not _NOT_SYMBOLIC:
                self.dim_hints.read_in(user_frame(sys._getframe(2)))
                return answer
        if kind == "metadata" or (not _holds_proxy(args, kwargs) and (kind == "data" or self._constructing())):
            # Metadata, values of real tensors, and building an nn.Module (its weights are
            # made and initialised for real): nothing to trace.
            with torch._C.DisableTorchFunctionSubclass():
                return func(*args, **kwargs)
        if kind == "data" and type(args[0]) is TensorProxy:
            known = self.known_values.read(func, self.value_of(args[0]), args, kwargs)
            if known is not NOT_KNOWN:
                return known
        handler = _KIND_HANDLERS.get(kind)
        if handler is not None:
            return handler(self, adapter, args, kwargs)
        if kind == "data" and self._may_cut(func, args):
            frame = user_frame(sys._getframe(2))
            return break_at_read(self, func, args, kwargs, location_of(frame) if frame is not None else None,
                                 inside=_library_reader(sys._getframe(2)))
        if kind == "data":
            name = getattr(func, "__name__", str(func))
            advice = _DATA_ADVICE.get(name, _READ_OUT_ADVICE)
            reader = _library_reader(sys._getframe(2))
            if _called_from("torch/distributions/"):
                advice = ("torch.distributions checks its arguments' values: pass validate_args=False, or call "
                          "torch.distributions.Distribution.set_default_validate_args(False)")
            elif reader is not None:
                # Not the user's own line (torch.optim.RAdam's step, GradScaler.step): the
                # advice about their code would not apply.
                advice = (f"{reader} reads it, which is library code: it runs only outside the traced "
                          "function; call it where the traced function is called")
            raise _error_at_user_line(f"Tensor.{name} needs the tensor's values, which tracing does not have "
                                      f"({advice})")
        if kind == "unsupported-inplace":
            name = getattr(func, "__name__", str(func))
            raise _error_at_user_line(f"in-place Tensor.{name} is not traced yet; write it out of place")
        if func is F.embedding:
            arguments = _bound(func, args, kwargs)
            if arguments.get("max_norm") is not None:
                return self._renormed_embedding(arguments)
        # Most calls have no keyword arguments: skip walking an empty dict.
        vargs, vkwargs = self._positional_values(args), self.to_values(kwargs) if kwargs else kwargs
        start = len(self.recorder.bsyms)
        if kind == "ltorch" and "out" in vkwargs:
            # Without an `out=` tensor, the call is the plain form, which the adapter need
            # not know about.
            if vkwargs["out"] is not None:
                return self._into_out(func, args, kwargs)
            vkwargs = {k: v for k, v in vkwargs.items() if k != "out"}
        if kind == "ltorch" and ("axis" in vkwargs or "keepdims" in vkwargs):
            vkwargs = torch_map.torch_keywords(vkwargs)
        if kind == "ltorch" and adapter is ltorch.setitem_ and _puts_back(self.aliasing, vargs):
            return None  # `t[k] = v` with v the view t[k] itself: the write already reached t
        if kind == "ltorch":
            self.in_torch_call += 1
            # What this call records is at the line of the frame that made it: the search
            # for user code starts there, not at the recorder, below tracecli's own frames.
            outer_caller, self.recorder.caller = self.recorder.caller, sys._getframe(2)
            env = self.env  # (an environment the call makes, for a size the data decide, starts with it)
            if env is not None:
                outer, env.context = env.context, _call_name(func)
            outer_func, self.calling = self.calling, func
            asked = len(self.watch.pending) if self.watch is not None else 0
            outer_reads, self.calling_reads = self.calling_reads, (vargs, vkwargs)
            data_dependent = None
            try:
                out = adapter(*vargs, **vkwargs)
            except DataDependentShape as exc:
                if not self._may_run_eagerly(inside_call=True, reads=(vargs, vkwargs)):
                    raise _error_at_user_line(str(exc)) from exc
                data_dependent = str(exc)
            except (ShapeError, UnsupportedCall, TypeError) as exc:
                raise _error_at_user_line(str(exc)) from exc
            finally:
                self.in_torch_call -= 1
                self.recorder.caller = outer_caller
                self.calling, self.calling_reads = outer_func, outer_reads
                if env is not None:
                    env.context = outer
                elif self.env is not None:
                    self.env.context = ""
            if data_dependent is not None:
                del self.recorder.bsyms[start:]  # what the adapter recorded before it gave up
                if self.watch is not None:
                    del self.watch.pending[asked:]  # and the sizes it read as ints, which pin nothing now
                return self._eagerly(func, args, kwargs, data_dependent)
            if out is not OPAQUE:
                self._after_top_level(start)
                return self.to_proxies(out)
        # An unmodelled call gets its arguments in eager's forms: torch tells a torch.Size
        # from a tuple (`x.new(torch.Size([5, 8]))` is 5x8, `x.new((5, 8))` holds 5 and 8).
        vargs, vkwargs = self.output_values(args), self.output_values(kwargs)
        # What the call reads matters only to calls no ltorch symbol took: asked here, not
        # of every call.
        read = values_in((vargs, vkwargs))
        if not any(isinstance(v, TensorValue) for v in read) and not _makes_tensors(func, vargs, vkwargs):
            # Utility calls with no traced tensor involved (torch.is_grad_enabled, ...).
            with torch._C.DisableTorchFunctionSubclass():
                return func(*args, **kwargs)
        # A tensor made inside the entry (torch.randperm, torch.tensor([...]), torch.eye) is
        # an op at its line, run on every call, never a value frozen into an input.
        sym = opaque_symbol(func, _autocast_around(read))
        if self._may_run_eagerly():
            try:
                out = self.recorder.record(sym, vargs, vkwargs)
            except OpaqueCallError as exc:
                return self._eagerly(func, args, kwargs, str(exc).rstrip("."))
            except (ShapeError, UnsupportedCall, TypeError):
                out = self._record(sym, vargs, vkwargs)  # refused as any call is
        else:
            out = self._record(sym, vargs, vkwargs)
        self._after_top_level(start)
        return self.to_proxies(out)

    def _may_run_eagerly(self, inside_call: bool = False, nested: bool = False, reads=None) -> bool:
        """Whether a call tracing cannot follow runs eagerly, a segment of its own: the
        program's own call (`inside_call`: asked from inside it), traced in segments,
        outside any other traced call, and with no backward to come through it (autograd
        would need its derivative): none may come, or the call reads no floating tensor
        (`reads`, its arguments where known: an index, a mask, a count of the routing)."""
        if not self._may_segment(inside_call, nested):
            return False
        return not self.training.may_differentiate() or (reads is not None and not any(
            isinstance(v, TensorValue) and v.dtype.is_inexact for v in values_in(reads)))

    def _eagerly(self, func, args: tuple, kwargs: dict, refusal: str):
        """`func` run eagerly on the real values (frontend/segments.py `run_eagerly`), or,
        where eager refuses its arguments too, `refusal` at the user's line."""
        frame = user_frame(sys._getframe(2))
        vargs, vkwargs = self.output_values(args), self.output_values(kwargs)
        if self.watch is not None:
            # The sizes the attempt to trace it asked for as ints (`range(n)` in a
            # decomposition, a meta kernel's): the call runs on real values instead.
            self.watch.pending.clear()

        def record(got):
            return self.recorder.record(eager_symbol(func, got), vargs, vkwargs)

        where = location_of(frame) if frame is not None else None
        try:
            out = run_eagerly(self, func, vargs, vkwargs, where, refusal.split(";")[0], record)
        except EagerCallFailed as exc:
            raise _error_at_user_line(refusal) from exc
        self._after_top_level(len(self.recorder.bsyms) - 1)
        return self.to_proxies(out)


    def _rewritten(self, rewrite: Callable, func, args: tuple, kwargs: dict) -> HandedOn:
        """The call `x.new(...)`, `torch.Tensor(2, 3)` and kin mean, or the call itself,
        unmodelled, where torch's own parsing is left to refuse it."""
        try:
            rewritten = rewrite(*args, **kwargs)
        except TypeError as exc:
            raise _error_at_user_line(str(exc)) from exc
        if rewritten is None:
            return HandedOn(func, args, kwargs, "opaque", None)
        return HandedOn(*rewritten, *_resolve(rewritten[0]))

    def _numpy_call(self, handler: Callable, func, args: tuple, kwargs: dict):
        """x.numpy(), torch.tensor(array), ...: answered by numpy's handler, or the torch
        call it is where the handler leaves it (frontend/numpy_calls.py)."""
        out = handler(self, func, args, kwargs)
        return HandedOn(func, args, kwargs, *_resolve_plain(func)) if out is UNHANDLED else out

    def _trace_through(self, body: Callable, args: tuple, kwargs: dict):
        """A torch function written in Python that handed itself whole to the mode
        (ops/composites.py): its body, with the ops inside traced at the user's line.
        Torch leaves the mode while it hands a call over: the body runs under it again."""
        func = body.__wrapped__
        self.through.append(torch_path(func) or f"{func.__module__}.{func.__qualname__}")
        env = self.env
        if env is not None:  # a size compared inside is assumed by that function, not by the script
            outer, env.context = env.context, self.through[-1]
        try:
            with _Mode(self):
                return body(*args, **kwargs)
        finally:
            self.through.pop()
            if env is not None:
                env.context = outer

    def _renormed_embedding(self, arguments: dict):
        """`F.embedding(ids, w, max_norm=m)`: as torch does it, the rows the lookup picks
        renormalised in place in `w` (through a detached view of it), then the lookup."""
        weight, ids = arguments["weight"], arguments["input"]
        padding_idx = arguments.get("padding_idx")
        if padding_idx is None:
            padding_idx = -1
        elif padding_idx < 0:
            padding_idx += weight.shape[0]
        with _Mode(self):
            torch.embedding_renorm_(weight.detach(), ids.contiguous(), arguments["max_norm"],
                                    arguments.get("norm_type", 2.0))
            return torch.embedding(weight, ids, padding_idx)

    def _into_out(self, func, args: tuple, kwargs: dict):
        """`torch.maximum(a, b, out=c)` (torch's own Adam with amsgrad=True does it): the
        plain call, then its result written into `out` in place, as torch writes it."""
        name = getattr(func, "__name__", str(func))
        out = kwargs["out"]
        plain = {k: v for k, v in kwargs.items() if k != "out"}
        with _Mode(self):
            result = func(*args, **plain)
            targets = tuple(out) if isinstance(out, (tuple, list)) else (out,)
            results = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            if len(targets) != len(results):
                raise _error_at_user_line(f"{name}(..., out=...) is given {len(targets)} tensors for "
                                          f"{len(results)} results")
            for target, value in zip(targets, results, strict=True):
                if target.shape != value.shape:
                    # torch resizes `out` then: the trace would have to change a tensor's shape.
                    raise _error_at_user_line(
                        f"{name}(..., out=...) writes a result of shape {list(value.shape)} into a tensor of shape "
                        f"{list(target.shape)}, which torch resizes; assign the result instead")
                if not torch.can_cast(value.dtype, target.dtype):
                    raise _error_at_user_line(f"{name}(..., out=...): result type {value.dtype} can't be cast to "
                                              f"the desired output type {target.dtype}")
                target.copy_(value)
        return out

    def _training_call(self, kind: str, args: tuple, kwargs: dict):
        """`p.grad`, `p.grad = g`, `loss.backward()` (frontend/training.py)."""
        try:
            if kind == "grad-get":
                return self.training.get_grad(args[0])
            if kind == "grad-set":
                return self.training.set_grad(args[0], args[1])
            if kind == "function-apply":
                # torch leaves the mode while it handles a call: the user's forward and
                # backward run under it again, so their torch calls are traced.
                with _Mode(self):
                    return self.training.function_apply(args[0], args[1:], kwargs)
            if kwargs.get("create_graph"):
                raise TrainingError("create_graph=True is not traced: the backward's own gradients "
                                    "(higher-order derivatives, gradient penalties) are not modelled")
            if kind == "autograd-grad":
                if kwargs.get("is_grads_batched"):
                    raise TrainingError("torch.autograd.grad(is_grads_batched=True) is not traced")
                return self.training.grad(args[0], args[1], args[2] if len(args) > 2 else None,
                                          bool(kwargs.get("allow_unused")), bool(kwargs.get("materialize_grads")))
            gradient = args[1] if len(args) > 1 else kwargs.get("gradient", kwargs.get("grad_tensors"))
            return self.training.backward(args[0], gradient, kwargs.get("inputs"))
        except TrainingError as exc:
            raise _error_at_user_line(str(exc)) from exc


# Calls about autograd's state that the tracer answers itself (frontend/training.py).
_resolved[torch.Tensor.grad.__get__] = ("grad-get", None)
_resolved[torch.Tensor.grad.__set__] = ("grad-set", None)
_resolved[torch.Tensor.backward] = ("backward", None)
_resolved[AUTOGRAD_BACKWARD] = ("backward", None)
_resolved[FUNCTION_APPLY] = ("function-apply", None)
_resolved[AUTOGRAD_GRAD] = ("autograd-grad", None)
_resolved[torch.Tensor.requires_grad.__set__] = ("requires-grad-set", None)
_resolved[torch.Tensor.requires_grad_] = ("requires-grad-set", None)
_resolved.update((func, ("rewrite", rewrite)) for func, rewrite in LEGACY_CALLS.items())
_TRAINING_CALLS = frozenset({"grad-get", "grad-set", "backward", "function-apply", "autograd-grad"})
# Kinds of call (torch_map.resolve) with a handler of their own: (tracer, adapter, args, kwargs).
_KIND_HANDLERS = {"composite": _Tracer._trace_through}


class HandedOn(NamedTuple):
    """A call a first handler leaves to the tracer, as the call it means."""

    func: Callable
    args: tuple
    kwargs: dict
    kind: str
    adapter: Callable | None


# Kinds of call met before any other is looked at: (tracer, adapter, func, args, kwargs),
# answering the call or handing it on (HandedOn).
_FIRST_HANDLERS = {"rewrite": _Tracer._rewritten, "numpy": _Tracer._numpy_call}
# numpy met by torch calls: x.numpy(), torch.tensor(a), ... (frontend/numpy_calls.py).
_resolved.update({func: ("numpy", handler) for func, handler in HANDLERS.items()})


def _resolve_plain(func) -> tuple[str, Callable | None]:
    """What a call with a handler of its own is as a torch call, where the handler leaves it."""
    found = _plain.get(func)
    if found is None:
        found = _plain[func] = torch_map.resolve(func)
    return found


_plain: dict = {}


def _call_name(func) -> str:
    """How the user wrote a torch call, near enough: `torch.reshape`, `Tensor.view`, `*`."""
    name = getattr(func, "__name__", "") or type(func).__name__
    if name in _OPERATORS:
        return f"`{_OPERATORS[name]}`"
    qualname = getattr(func, "__qualname__", "")
    if qualname.startswith(("Tensor.", "TensorBase.")):
        return f"Tensor.{name}"
    module = getattr(func, "__module__", "") or "torch"
    return f"{'torch' if module.startswith('torch._C') else module}.{name}"


_OPERATORS = {
    "__add__": "+", "__radd__": "+", "__sub__": "-", "__rsub__": "-", "__mul__": "*", "__rmul__": "*",
    "__truediv__": "/", "__rtruediv__": "/", "__floordiv__": "//", "__rfloordiv__": "//", "__mod__": "%",
    "__pow__": "**", "__rpow__": "**", "__matmul__": "@", "__rmatmul__": "@", "__getitem__": "indexing",
    "__setitem__": "item assignment", "__and__": "&", "__or__": "|", "__xor__": "^", "__eq__": "==",
    "__ne__": "!=", "__lt__": "<", "__le__": "<=", "__gt__": ">", "__ge__": ">=",
}
# Leaves `to_values` hands on as they are.
_PLAIN_LEAVES = frozenset({int, float, bool, complex, str, type(None)})
_SIZE_READS = frozenset({"size", "shape", "numel", "nelement", "__len__", "stride"})
_NOT_SYMBOLIC = object()


# What to do instead of reading a traced tensor's values, by what reads them.
_READ_OUT_ADVICE = ("a number read out of a traced tensor: keep it a tensor (`x * x.max()`; return "
                    "`loss.detach()`) and read it where the traced function is called")
_DATA_ADVICE = {
    "__bool__": "a data-dependent branch: compute both sides and pick with torch.where, "
                "or move the branch out of the traced function",
    "data_ptr": "a tensor's memory address: the traced code has none to read",
    "__contains__": "`v in x` tests the values: keep it a tensor, `(x == v).any()`",
}


# Reads of a tensor's memory layout, which tracing knows only for C-contiguous tensors.
_LAYOUT_READS = frozenset({"is_contiguous", "stride", "storage_offset"})


def _layout_read(func) -> str | None:
    name = getattr(func, "__name__", "")
    return name if name in _LAYOUT_READS else None


def _library_reader(frame: FrameType | None, handing_off=None) -> str | None:
    """Where library code (not the user's, not a Tensor method they called) reads a
    tensor's value: `torch.optim.radam._single_tensor_radam (torch/optim/radam.py:420)`,
    or None when the user's own code reads it. `handing_off`: the code of a function that
    handed its own call to the tracer (F.gaussian_nll_loss), which is the user's call."""
    while frame is not None and (_OWN_FILES.search(frame.f_code.co_filename.replace("\\", "/"))
                                 or frame.f_code is handing_off):
        frame = frame.f_back
    if frame is None or is_user_code(frame.f_code):
        return None
    module = frame.f_globals.get("__name__", "")
    return f"{module}.{frame.f_code.co_qualname} ({display_path(frame.f_code.co_filename)}:{line_of(frame)})"


# Frames between a torch call and the code that made it: tracecli's own, torch's
# dispatch, Tensor's Python methods (`f"{loss:.3f}"` reads the value in
# Tensor.__format__, at the user's request), and torch's numpy layer (`np.nonzero(a)`).
_OWN_FILES = re.compile(r"/tracecli/|torch/overrides\.py$|torch/_tensor\.py$|torch/utils/_device\.py$|torch/_numpy/")


def _bound(func: Callable, args: tuple, kwargs: dict) -> dict:
    """The arguments of a call of `func` by parameter name."""
    return inspect.signature(func).bind(*args, **kwargs).arguments


def _called_from(path_part: str) -> bool:
    """Whether a frame on the stack runs code from a file whose path contains `path_part`."""
    frame = sys._getframe(2)
    while frame is not None:
        if path_part in frame.f_code.co_filename.replace("\\", "/"):
            return True
        frame = frame.f_back
    return False


def _puts_back(aliasing: Aliasing, vargs: tuple) -> bool:
    """Whether `target[key] = value` puts a view back where it is (`t[k] += 1` ends so)."""
    return len(vargs) == 3 and isinstance(vargs[2], TensorValue) and aliasing.same_place(*vargs)


def _autocast_around(read: list) -> tuple[str, object] | None:
    """(device type, dtype) of the torch.autocast an unmodelled call reading `read` runs
    under in eager: the one on for the device type of the tensors it reads."""
    for value in read:
        if isinstance(value, TensorValue):
            kind = device_type(value.device)
            if kind in ("cpu", "cuda") and torch.is_autocast_enabled(kind):
                return kind, FROM_TORCH[torch.get_autocast_dtype(kind)]
            return None
    return None


def _makes_tensors(func, vargs, vkwargs) -> bool:
    """Whether a call reading no tensor makes one: a factory torch has and tracecli does
    not model. Asked of its meta rule, so nothing runs for real."""
    try:
        types = opaque_symbol(func).meta(*vargs, **vkwargs)
    except UnsupportedCall as exc:  # a form tracing refuses, whatever it reads
        raise _error_at_user_line(str(exc)) from exc
    except Exception:  # not meta-able: a utility the call itself will show
        return False
    return any(isinstance(t, TensorType) for t in tree_leaves(types))


def _holds_proxy(args: tuple, kwargs: dict) -> bool:
    # Most calls name a traced tensor among their positional arguments: look there first.
    for arg in args:
        if type(arg) is TensorProxy:
            return True
    return any(isinstance(leaf, TensorProxy) for leaf in tree_leaves((args, kwargs)))


def _to_values_leaf(container) -> bool:
    # A torch.Size becomes a plain tuple, as every shape in the IR. A slice is handed on
    # as written: indexing refuses a tensor bound itself, naming the problem.
    return isinstance(container, (torch.Size, SymSize, slice))


def _slice(container) -> bool:
    return isinstance(container, slice)


def _python_rng_states() -> tuple:
    return random.getstate(), numpy.random.get_state()


def _python_rng_drawn(before: tuple) -> str:
    """Which of Python's and numpy's generators moved since `before` ('' if neither)."""
    python, np = _python_rng_states()
    moved = []
    if python != before[0]:
        moved.append("Python's random module")
    if any(not numpy.array_equal(a, b) for a, b in zip(np[1:], before[1][1:], strict=True)):
        moved.append("numpy.random")
    return " and ".join(moved)


def _error_at_entry(fn: Callable, message: str) -> TracingError:
    """An error about what the entry returns: at its return statement when it has one,
    else at its `def` line."""
    code = getattr(inspect.unwrap(fn.forward if isinstance(fn, torch.nn.Module) else fn), "__code__", None)
    if code is None:
        return TracingError(message)
    line = _return_line(code) or code.co_firstlineno
    text = linecache.getline(code.co_filename, line).strip()
    return TracingError(message, file=display_path(code.co_filename), line=line, source=text)


def _return_line(code) -> int | None:
    """The line of the function's one return statement (None when it has several)."""
    lines = {line for offset, line in _return_offsets(code)}
    return lines.pop() if len(lines) == 1 else None


def _return_offsets(code):
    for instruction in dis.get_instructions(code):
        if instruction.opname in ("RETURN_VALUE", "RETURN_CONST") and instruction.positions is not None:
            yield instruction.offset, instruction.positions.lineno


def _unstrided(obj, what: str) -> str:
    """Why a tensor cannot be traced ('' when it can): values in the IR are dense, strided
    tensors, and a sparse one has no strides or contiguity to follow."""
    if not isinstance(obj, torch.Tensor) or obj.layout == torch.strided:
        return ""
    layout = str(obj.layout).removeprefix("torch.")
    if layout.startswith("sparse"):
        return f"{what} is a sparse tensor ({layout}): sparse tensors are not traced; make it dense with .to_dense()"
    return f"{what} has layout {layout}: only dense (strided) tensors are traced"


def error_at_definition(fn: Callable, message: str) -> TracingError:
    """An error about the entry's inputs: at its `def` line."""
    code = getattr(inspect.unwrap(fn.forward if isinstance(fn, torch.nn.Module) else fn), "__code__", None)
    if code is None:
        return TracingError(message)
    text = linecache.getline(code.co_filename, code.co_firstlineno).strip()
    return TracingError(message, file=display_path(code.co_filename), line=code.co_firstlineno, source=text)


def _error_at_user_line(message: str) -> TracingError:
    frame = user_frame(sys._getframe(1))
    if frame is None:
        return TracingError(message)
    loc = location_of(frame)
    return TracingError(message, file=loc.file, line=loc.line, source=loc.text)


# -- entry point -------------------------------------------------------------------


def trace_callable(
    fn: Callable, args: tuple = (), kwargs: dict | None = None, *, device: str | None = None,
    info: TraceInfo | None = None, name: str | None = None, dims: DimPolicy | None = None,
    segments: Runner | None = None,
) -> TracedProgram:
    """Trace `fn(*args, **kwargs)`. With `device`, tensor inputs are traced as if they
    lived there (the device need not exist here). With `dims`, the dims it names are
    symbols: one trace for every size its guards accept. With `segments`, a read of a
    tensor's value cuts the trace there, and `segments` runs each piece (frontend/segments.py);
    without, such a read is refused at its line."""
    kwargs = kwargs or {}
    if torch.get_default_dtype() is not torch.float32:
        raise error_at_definition(fn, DEFAULT_DTYPE_REFUSAL.format(torch.get_default_dtype()))
    registry = NameRegistry()
    placement = Placement(device)
    input_values, input_objs = argument_inputs(registry, fn, args, kwargs, placement)
    for value, obj in zip(input_values, input_objs, strict=True):
        unstrided = _unstrided(obj, f"input `{value.name}`")
        if unstrided:
            raise error_at_definition(fn, unstrided)
    env = DimEnv() if dims is not None and dims.symbolic else None
    if env is not None:
        input_values = symbolic_inputs(dims, env, registry, input_values)
    scopes = ModuleScopes(fn if isinstance(fn, torch.nn.Module) else None)
    tracer = _Tracer(registry, placement, scopes, env)
    # The printed function is Python: `<lambda>` becomes `_lambda_`.
    trace_name = sanitize(name or getattr(fn, "__name__", None) or type(fn).__name__)
    if segments is not None:
        mode = tracer.recorder.entry_grad_mode
        tracer.segmenting = Segmenting(segments, trace_name, entry_grad_mode=mode, start_grad_mode=mode)
        for value, obj in zip(input_values, input_objs, strict=True):
            tracer.segmenting.hold(value, obj)
        if env is not None:
            by_name = {v.name: v for v in input_values if isinstance(v, TensorValue)}
            tracer.segmenting.bind_sizes = lambda piece, kept: bound_sizes(piece, env, by_name, kept)
    for value, obj in zip(input_values, input_objs, strict=True):
        if isinstance(value, TensorValue):
            tracer.aliasing.input(value, obj.is_contiguous())
            tracer.training.input(value, obj)
    # The entry is called exactly as the user's inputs would call it (defaults stay
    # implicit: decorators that inject keyword arguments must still see them missing),
    # with each input tensor replaced by its proxy.
    proxy_for = {
        id(obj): tracer.proxy(value)
        for value, obj in zip(input_values, input_objs, strict=True)
        if isinstance(value, TensorValue)
    }
    call_args = tuple(swap_tensors(a, proxy_for) for a in args)
    call_kwargs = {k: swap_tensors(v, proxy_for) for k, v in kwargs.items()}

    module_state: list[tuple[dict, str, object, TensorProxy]] = []
    if isinstance(fn, torch.nn.Module):
        by_id: dict[int, TensorValue] = {}
        for qualname, tensor, owner_dict, key in module_tensors(fn):
            value = by_id.get(id(tensor))
            unstrided = _unstrided(tensor, f"`{qualname}` of {type(fn).__name__}")
            if unstrided:
                raise error_at_definition(fn, unstrided)
            if value is None:  # tied weights are one input, swapped everywhere they appear
                value = placement.value(registry.take(qualname), tensor)
                by_id[id(tensor)] = value
                input_values.append(value)
                input_objs.append(tensor)
                if tracer.segmenting is not None:
                    tracer.segmenting.hold(value, tensor)
                tracer.stand_for(tensor, value)
                tracer.training.input(value, tensor)
            module_state.append((owner_dict, key, tensor, tracer.proxy(value)))
            owner_dict[key] = module_state[-1][3]

    # What Python state the call writes, seen with the module's tensors as it sees them.
    watch = watch_entry(fn, args, kwargs, call_args, call_kwargs)
    tracer.state = watch
    tracer.input_of = {id(obj): value for value, obj in zip(input_values, input_objs, strict=False)
                       if isinstance(value, NumberValue)}
    writes: list[StateWrite] = []
    push_handler(tracer.on_symbol_call)
    if tracer.segmenting is not None:
        VALUE_READERS.append(tracer.printed)
    try:
        drawn_before = _python_rng_states()
        sizes = env if env is not None else contextlib.nullcontext()
        # gc_paused first: a collection while the overrides are set up would count as theirs.
        with (gc_paused(), _Mode(tracer), scopes, tracing_overrides(), numpy_overrides(), sizes,
              tracer.training.optimizers(), _unbacked_sizes(tracer)):
            tracer.root = sys._getframe()
            result = fn(*call_args, **call_kwargs)
            tracer.training.finish()
        writes = watch.writes()
        tracer.store_state(writes)
        if tracer.training.changed_settings:
            raise _error_at_entry(
                fn, f"{getattr(fn, '__name__', 'the entry')} changes its optimizer's settings "
                f"({', '.join(tracer.training.changed_settings)}), as an LR scheduler stepping inside it does: the "
                "trace would keep this call's values as constants; step the scheduler outside the traced function"
            )
        drawn = _python_rng_drawn(drawn_before)
        if drawn:
            raise _error_at_entry(
                fn, f"{getattr(fn, '__name__', 'the entry')} draws from {drawn} while traced: the trace would keep "
                "the numbers drawn now as constants, the same on every call; draw with torch instead "
                "(torch.rand, torch.randint, torch.randperm), which the trace runs on every call"
            )
        env = tracer.env
        sizes = env if env is not None else contextlib.nullcontext()
        try:
            with sizes, _unbacked_sizes(tracer):
                output = tracer.output_values(result)  # views of tensors written since are taken again
                tracer.recorder.follow_grad_mode()  # a decorator's torch.no_grad() ends with the entry
                if tracer.watch is not None:
                    tracer.watch.settle()
                    tracer.dim_hints.look()
        except TracingError as exc:
            if exc.line is not None:
                raise
            raise _error_at_entry(fn, f"{exc.message} (in what the entry returns)") from exc
        entry_name = getattr(fn, "__name__", type(fn).__name__)
        hidden = hidden_tensor(output)
        if hidden is not None:
            raise _error_at_entry(
                fn, f"{entry_name} returns a {type(hidden).__qualname__} holding traced tensors, which the trace "
                "cannot build again; return tensors in tuples, lists, dicts, dataclasses or named tuples, or "
                f"register {type(hidden).__qualname__} with torch.utils._pytree.register_pytree_node"
            )
        hints = tracer.hints.finish()
    except ValuesNeeded:
        # Traced again on real inputs: that call must find the state as this one did (a
        # counter it adds to, a log it appends to, before the read that stopped it).
        writes = watch.writes()
        raise
    finally:
        pop_handler()
        # The frame holds the tracer and the tracer the frame: a cycle only a collection
        # would free, with everything the call made (a served call traces every time).
        tracer.root = None
        if tracer.segmenting is not None:
            VALUE_READERS.pop()
        watch.rollback(writes)
        for owner_dict, key, tensor, proxy in module_state:
            # A slot the entry set anew, to something with no traced tensor in it, stays as it set it.
            if owner_dict.get(key) is proxy:
                owner_dict[key] = tensor

    for value, tensor in tracer.lifted:
        input_values.append(value)
        input_objs.append(tensor)
    n_lifted = len(tracer.lifted)
    captured = tuple(value.name for value, _ in tracer.lifted)
    bsyms = returning_what_is_read(tuple(_with_hints(b, hints) for b in tracer.recorder.bsyms), output)
    trace = Trace(
        name=trace_name,
        inputs=tuple(input_values), bsyms=bsyms, output=output,
        info=replace(info or TraceInfo(entry=trace_name, device=device or "cpu"), captured=captured),
    )
    unbound = trace  # the bound symbols as recorded: where each cut fell among them
    if env is not None:
        trace = finish(trace, env, registry, tracer.dim_hints.hints)
        unbound = substitute_sizes(unbound, env.replacements) if env.replacements else unbound
    n_module = len({id(t) for _, t, _, _ in module_tensors(fn)}) if isinstance(fn, torch.nn.Module) else 0
    given = bind_entry(fn, args, kwargs).arguments
    cut, result = (), None
    if tracer.segmenting is not None:
        cut = tuple(tracer.segmenting.segments(unbound.bsyms, unbound.output, trace.info))
        result = tracer.segmenting.finish(cut[-1])
    return TracedProgram(trace, input_objs, fn, n_lifted, n_module + n_lifted, tracer.homes + tracer.training.homes,
                         tracer.rereads, tracer.training.settings, tracer.training.first_step,
                         state_params=tracer.state_params,
                         writes=[Written.of(w) for w in writes],
                         written_through={w.place.argument: given[w.place.argument] for w in writes
                                          if w.place.argument is not None and id(w.place.owner) not in tracer.input_of},
                         segments=cut, result=result)


@contextlib.contextmanager
def _unbacked_sizes(tracer: _Tracer):
    """While the entry runs: rules that make a size the data decide make it the tracer's
    (`u0`), and an environment made for the first leaves with the entry."""
    made_before = tracer.env
    push_unbacked_maker(tracer.make_unbacked)
    try:
        yield
    finally:
        pop_unbacked_maker()
        if made_before is None and tracer.env is not None and active() is tracer.env:
            tracer.env.__exit__(None, None, None)


def tensor_kind(tensor: object) -> tuple | None:
    """What a trace assumed of a tensor it reads afresh on every call."""
    if not isinstance(tensor, torch.Tensor):
        return None
    return tuple(tensor.shape), tensor.dtype, tensor.device, tensor.is_contiguous()


stop_search_at(trace_callable.__code__)


def _with_hints(bsym, hints: dict[str, str]):
    """`bsym` with the confirmed variable of each output as its name hints. It was
    recorded with the variables its outputs were being stored into, which most often
    held: then it is kept as it is, not built again."""
    output = bsym.output
    if type(output) is TensorValue:  # one output, as most ops have: no tree to walk
        var = hints.get(output.name)
        pairs = ((output.name, var),) if var is not None else ()
    else:
        pairs = tuple((o.name, hints[o.name]) for o in bsym.iter_outputs() if o.name in hints)
    return bsym if pairs == bsym.name_hints else bsym.replace(name_hints=pairs)


__all__ = ["TracedProgram", "trace_callable"]
