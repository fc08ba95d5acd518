"""The fallback for torch callables that ltorch does not model.

The call becomes an opaque bound symbol named by the callable's dotted path
(`torch.linalg.vector_norm`, `torch.ops.aten.cumprod.default`, `torch._C._nn.gelu`,
see torch_paths.py); a callable with no path at all is bound in the generated code's
globals under a readable name instead. Its output types come from running the callable
on meta tensors (or, for what has only a fake kernel, such as torch.cond, on fake
tensors), and executors call the original callable.

Called under torch.autocast, an unmodelled callable is recorded as a call of its own
that runs under the same autocast (`conv_tbc_autocast_bf16(...)`): autocast may cast
what it reads or what the ops inside it read, so only running it so repeats eager. Its
types then come from fake tensors on the call's device, under that autocast.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import NamedTuple

import torch
from torch._subclasses.fake_tensor import DataDependentOutputException, DynamicOutputShapeException, FakeTensorMode

from tracecli.core.bindings import hint
from tracecli.core.dims import Dim, unbacked
from tracecli.core.dtypes import DType
from tracecli.core.pytree import built_as, rebuild_mapping, rebuild_tuple, tree_map
from tracecli.core.symbol import Symbol, Tag
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.forms import UnsupportedCall
from tracecli.ops.opaque_effects import draws_random, observe, opaque_aliases, opaque_mutates, writes_first_argument
from tracecli.ops.torch_bridge import FROM_TORCH, TO_TORCH, to_device
from tracecli.ops.torch_paths import torch_path


class OpaqueCallError(Exception):
    """An unmodelled torch callable whose output types cannot be computed. A call traced
    in segments runs it eagerly instead."""


class _DataDependent(Exception):
    """Fake tensors gave an output whose shape (or value) is a symbol: it depends on data."""


_cache: dict[object, Symbol] = {}

# (device type, dtype) of the torch.autocast an opaque call runs under.
AutocastState = tuple[str, DType]


def opaque_symbol(func: Callable, autocast: AutocastState | None = None) -> Symbol:
    """The opaque symbol calling `func`; with `autocast`, one calling it under that
    torch.autocast."""
    key = func if autocast is None else (func, autocast)
    try:
        sym = _cache.get(key)
    except TypeError:  # an unhashable callable object: a symbol of its own each call
        return _make_symbol(func, autocast)
    if sym is None:
        sym = _cache[key] = _make_symbol(func, autocast)
    return sym


def eager_symbol(func: Callable, result: object) -> Symbol:
    """The symbol of a call run eagerly where tracing could not follow it (a segment of
    its own in a call traced in segments): its outputs are what `result`, the real
    outputs of this call, are (each tensor on its own device). A symbol per call:
    another call's sizes may differ."""
    sym = _make_symbol(func)
    types = _from_meta(result, "cpu", sym.qualname)
    return replace(sym, meta=lambda *args, **kwargs: types, doc=f"{sym.doc}, run eagerly")


def _make_symbol(func: Callable, autocast: AutocastState | None = None) -> Symbol:
    path = torch_path(func)
    # An in-place op on its first argument is INPLACE: the tracer rebinds the user's
    # tensor to its result, and no pass drops or merges it. Another op whose schema
    # writes an argument is at least never dropped or merged.
    tags = {Tag.RANDOM} if draws_random(func) else set()
    if writes_first_argument(func):
        tags.add(Tag.INPLACE)
    elif opaque_mutates(func):
        tags.add(Tag.SIDE_EFFECT)
    elif opaque_aliases(func):
        tags.add(Tag.VIEW)  # a later write to it or its input reaches the other
    name = path or hint(func)
    meta = _meta_rule(func, name, autocast)
    if autocast is not None:
        return _under_autocast(func, name, meta, frozenset(tags), autocast)
    if path is None:
        # No dotted path reaches it: the printer binds it in the generated code's globals.
        where = f"{getattr(func, '__module__', None) or '?'}.{getattr(func, '__qualname__', name)}"
        return Symbol(name, "", impl=func, meta=meta, tags=frozenset(tags), doc=f"opaque call of {where}")
    return Symbol(path.removeprefix("torch."), "torch", impl=func, meta=meta, tags=frozenset(tags),
                  doc=f"opaque call of {path}")


def under_autocast(func: Callable, device_type: str, dtype: torch.dtype) -> Callable:
    """`func`, called under `torch.autocast(device_type, dtype=dtype)`: what the generated
    code calls for an unmodelled call the program made under autocast (a saved trace file
    builds it again with this)."""

    def impl(*args, **kwargs):
        with torch.autocast(device_type, dtype=dtype):
            return func(*args, **kwargs)

    name = getattr(func, "__name__", None) or hint(func)
    # Printed as a name the generated code's globals bind: `conv_tbc_autocast_bf16(...)`.
    impl.__name__ = impl.__qualname__ = f"{name}_autocast_{FROM_TORCH[dtype].short}"
    impl.tracecli_autocast = (func, device_type, dtype)
    return impl


def _under_autocast(func: Callable, name: str, meta: Callable, tags: frozenset[Tag],
                    autocast: AutocastState) -> Symbol:
    device_type, dtype = autocast
    impl = under_autocast(func, device_type, TO_TORCH[dtype])
    return Symbol(impl.__name__, "", impl=impl, meta=meta, tags=tags,
                  doc=f"opaque call of {name} under torch.autocast({device_type!r}, dtype=torch.{dtype.name})")


# Walkers over an opaque call's arguments and results (tuples, lists, dicts).


def _to_meta(obj, devices: list[str], tensors: list[torch.Tensor], on_device: bool = False):
    """Meta tensors for the values in `obj`; `on_device`: tensors on each value's own
    device instead (fake ones, made inside a FakeTensorMode)."""
    if isinstance(obj, TensorValue):
        devices.append(obj.device)
        tensor = torch.empty(obj.shape, dtype=TO_TORCH[obj.dtype], device=obj.device if on_device else "meta")
        tensors.append(tensor)
        return tensor
    if isinstance(obj, list):
        return [_to_meta(o, devices, tensors, on_device) for o in obj]
    if isinstance(obj, tuple):
        items = [_to_meta(o, devices, tensors, on_device) for o in obj]
        # A torch.Size is one to the kernel too (a symbolic one: of its example sizes).
        return torch.Size(items) if built_as(type(obj)) is torch.Size else rebuild_tuple(obj, items)
    if isinstance(obj, dict):
        return rebuild_mapping(obj, {k: _to_meta(v, devices, tensors, on_device) for k, v in obj.items()})
    if isinstance(obj, DType):
        return TO_TORCH[obj]
    return obj


def _from_meta(obj, device: str, name: str):
    if type(obj) is _Sized:
        return TensorType(obj.shape, FROM_TORCH[obj.dtype], device if obj.device.type == "meta" else to_device(obj.device))
    if isinstance(obj, torch.Tensor):
        if obj.layout != torch.strided:
            # Values in the IR are dense: the modelled ops after it would treat it as one.
            layout = str(obj.layout).removeprefix("torch.")
            what = "sparse tensors are" if layout.startswith("sparse") else f"tensors of layout {layout} are"
            raise UnsupportedCall(f"{name} makes a {layout} tensor: {what} not traced")
        # A tensor the kernel put on a device of its own (`x.cpu()`, run on fake tensors) is there.
        return TensorType(tuple(obj.shape), FROM_TORCH[obj.dtype], device if obj.is_meta else to_device(obj.device))
    if isinstance(obj, tuple):
        return rebuild_tuple(obj, [_from_meta(o, device, name) for o in obj])
    if isinstance(obj, list):
        return [_from_meta(o, device, name) for o in obj]
    if isinstance(obj, dict):
        if any(isinstance(leaf, torch.Tensor) for leaf in _leaves(list(obj.values()))):
            # A call's results are named by unpacking them (`(t0, t1) = ...`): a dict has no such syntax.
            raise UnsupportedCall(f"{name} returns tensors in a dict, which a traced call cannot name; return them "
                                  "in a tuple or list")
        return {k: _from_meta(v, device, name) for k, v in obj.items()}
    if isinstance(obj, torch.device) and obj.type == "meta":
        return torch.device(device)  # the call's device, which the meta tensors stood in for
    if isinstance(obj, _MEMORY):
        # A storage is the memory itself (its address, its bytes): a trace has none to hand on.
        raise UnsupportedCall(
            f"{name} returns the storage of a traced tensor (torch.{type(obj).__qualname__}), its memory, which the "
            "trace does not hold; ask the tensor itself (x.numel() * x.element_size() bytes), or call it outside "
            "the traced function")
    return obj


# What opaque calls may return that a trace cannot hold.
_MEMORY = (torch.UntypedStorage, torch.TypedStorage)


def _leaves(obj) -> list:
    if isinstance(obj, (tuple, list)):
        return [leaf for o in obj for leaf in _leaves(o)]
    return [obj]


def _training_flag(args: tuple, kwargs: dict) -> bool | None:
    """batch norm's `training`: the first bool among the arguments (the running stats before
    it are tensors or None)."""
    if "training" in kwargs:
        return bool(kwargs["training"])
    return next((a for a in args if isinstance(a, bool)), None)


# Callables whose meta kernel declares other shapes than the device kernel returns, and
# when: a trace built on the meta kernel's word would declare the wrong types.
_META_DISAGREES: dict[Callable, tuple[Callable[[tuple, dict], bool], str]] = {
    func: (lambda args, kwargs: _training_flag(args, kwargs) is False,
           "with training=False its meta kernel declares save_mean and save_invstd of the channel count, "
           "where the CPU kernel returns them empty; call torch.nn.functional.batch_norm instead")
    for func in (torch.native_batch_norm, torch._native_batch_norm_legit, torch.ops.aten.native_batch_norm.default,
                 torch.ops.aten._native_batch_norm_legit.default, torch.ops.aten._native_batch_norm_legit.no_stats)
}


FREEZE_ADVICE = ("which tensors need gradients is settled when the function is called, and the trace "
                  "differentiates what it found; freeze or unfreeze before calling it "
                  "(`w.requires_grad_(False)` where the traced function is called)")
# Autograd's own machinery on a tensor: the meta kernel's refusal (the meta tensor needs
# no gradient) would blame the user's tensor, which does.
_AUTOGRAD_ONLY = {
    "torch.Tensor.register_hook": "a gradient hook runs inside autograd's backward, which the trace spells out "
                                  "as ops of its own; change the gradient where it is used instead (after "
                                  "loss.backward(): p.grad.mul_(2))",
    "torch.Tensor.register_post_accumulate_grad_hook": "a gradient hook runs inside autograd's backward, which "
                                                       "the trace spells out as ops of its own",
    "torch.Tensor.retain_grad": "a traced step keeps the .grad of leaves only; ask for this gradient with "
                                "torch.autograd.grad(loss, h)",
}


def _meta_rule(func: Callable, name: str, autocast: AutocastState | None = None) -> Callable:
    try:
        disagrees = _META_DISAGREES.get(func)
    except TypeError:  # an unhashable callable object
        disagrees = None
    if autocast is not None:
        plain = _meta_rule(func, name)

        def under_autocast(*args, **kwargs):
            plain(*args, **kwargs)  # what a plain call refuses, this one refuses too
            return _autocast_types(func, name, autocast, args, kwargs)

        return under_autocast

    def meta(*args, **kwargs):
        if name in _AUTOGRAD_ONLY:
            raise UnsupportedCall(f"{name} is not traced: {_AUTOGRAD_ONLY[name]}")
        if any(isinstance(leaf, torch.Generator) for leaf in _leaves((args, tuple(kwargs.values())))):
            # The trace would hold this generator object and draw on from its state at each
            # call, where eager code that makes and seeds its generator repeats its numbers.
            raise UnsupportedCall(f"{name}(..., generator=...) draws from a torch.Generator, which is not traced; "
                                  "seed torch's own generator with torch.manual_seed instead")
        if disagrees is not None and disagrees[0](args, kwargs):
            raise OpaqueCallError(f"{name} cannot be traced: {disagrees[1]}")
        devices: list[str] = []
        tensors: list[torch.Tensor] = []
        margs, mkwargs = _to_meta(args, devices, tensors), _to_meta(kwargs, devices, tensors)
        if kwargs.get("device") is not None:
            devices.insert(0, to_device(kwargs["device"]))
        device = devices[0] if devices else "cpu"
        if "device" in mkwargs:
            mkwargs["device"] = "meta"
        versions = [t._version for t in tensors]
        if tensors:
            out = _run(func, name, margs, mkwargs)
        else:
            # A factory with no device= makes its tensors on the default device: meta, here.
            with torch.device("meta"):
                out = _run(func, name, margs, mkwargs)
        observe(func, tensors, versions, _leaves(out))
        if any(isinstance(t, torch.Tensor) and t._version for t in _leaves(mkwargs.get("out"))):
            # The trace would go on reading the `out=` tensor's old value.
            raise UnsupportedCall(f"{name}(..., out=...) writes its result into `out`, which is not traced; "
                                  "assign the result instead")
        return _from_meta(out, device, name)

    return meta


def _autocast_types(func: Callable, name: str, autocast: AutocastState, args: tuple, kwargs: dict):
    device_type, dtype = autocast
    if device_type == "cuda" and not torch.cuda.is_available():
        # Fake CUDA tensors on a machine without CUDA: autocast leaves them as they are.
        raise OpaqueCallError(f"{name} is not modelled and runs under torch.autocast('cuda'): the dtypes it "
                              "returns there are known only on a machine with CUDA")
    devices: list[str] = []
    with _fake_mode():
        fargs, fkwargs = _to_meta(args, devices, [], True), _to_meta(kwargs, devices, [], True)
        with torch.autocast(device_type, dtype=TO_TORCH[dtype]):
            try:
                out = func(*fargs, **fkwargs)
            except Exception as exc:
                reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise OpaqueCallError(f"{name} cannot be traced under torch.autocast: {reason}") from exc
    return _from_meta(out, devices[0] if devices else "cpu", name)


def _run(func: Callable, name: str, args: tuple, kwargs: dict):
    try:
        return func(*args, **kwargs)
    except Exception as meta_error:
        # Some callables have no meta kernel but a fake one (torch.cond and the other
        # higher-order ops); fake tensors also tell data-dependent outputs apart.
        try:
            return _run_fake(func, args, kwargs, name)
        except (DynamicOutputShapeException, DataDependentOutputException, _DataDependent) as exc:
            raise OpaqueCallError(
                f"{name} cannot be traced: its output depends on the values in its input tensors, "
                "which tracing does not have"
            ) from exc
        except Exception:  # noqa: S110 - the meta kernel's own words say best why
            pass
        reason = str(meta_error).strip().splitlines()[0] if str(meta_error).strip() else type(meta_error).__name__
        raise OpaqueCallError(f"{name} cannot be traced: {reason}") from meta_error


def _run_fake(func: Callable, args: tuple, kwargs: dict, name: str = ""):
    # A shape environment lets fake kernels that need one run (while_loop); what depends
    # on data then comes back as a symbol rather than an error.
    # Deferred: symbolic shapes import sympy, a fifth of a second of every command's
    # start-up, which only a call without a meta kernel needs.
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

    try:
        with _fake_mode() as mode:
            out = func(*_to_fake(args, mode), **_to_fake(kwargs, mode))
    except GuardOnDataDependentSymNode as exc:
        raise _DataDependent from exc
    # A size the kernel gives as a plain symbol of its own (the length of a unique's
    # values) is a size the data decide: one of the trace's, made here. Anything else
    # symbolic (an expression of such sizes, a number the data decide) is not traced.
    ours: dict[str, Dim] = {}
    for leaf in _leaves(out):
        symbolic = leaf.shape if isinstance(leaf, torch.Tensor) else (leaf,)
        for d in symbolic:
            if not isinstance(d, (torch.SymInt, torch.SymFloat, torch.SymBool)):
                continue
            if not isinstance(leaf, torch.Tensor) or not isinstance(d, torch.SymInt) or not d.node.expr.is_Symbol:
                raise _DataDependent
            key = str(d.node.expr)
            if key not in ours:
                ours[key] = unbacked(f"a size of the output of {name or 'an opaque call'}", None)
    return _with_sizes(out, ours) if ours else out


def _with_sizes(out, sizes: dict[str, Dim]):
    """The fake kernel's results as types, each of its own size symbols one of the trace's."""
    def typed(leaf):
        if isinstance(leaf, torch.Tensor):
            shape = tuple(sizes[str(d.node.expr)] if isinstance(d, torch.SymInt) else int(d) for d in leaf.shape)
            return _Sized(shape, leaf.dtype, leaf.device)
        return leaf

    return tree_map(typed, out)


class _Sized(NamedTuple):
    """A tensor result whose shape holds sizes the data decide: its type, for _from_meta."""

    shape: tuple
    dtype: torch.dtype
    device: torch.device


_FAKE_LOG = logging.getLogger("torch._subclasses.fake_tensor")


@contextmanager
def _fake_mode() -> Iterator[FakeTensorMode]:
    """Fake tensors with a shape environment. A kernel refusing its arguments is said once,
    by tracecli at the user's line: torch's own log of it (an ERROR with a traceback) is
    held back."""
    # Deferred for start-up, as in _run_fake: sympy comes with it.
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    level = _FAKE_LOG.level
    _FAKE_LOG.setLevel(logging.CRITICAL)
    try:
        with FakeTensorMode(shape_env=ShapeEnv(allow_dynamic_output_shape_ops=True), static_shapes=True) as mode:
            yield mode
    finally:
        _FAKE_LOG.setLevel(level)


def _to_fake(obj, mode: FakeTensorMode):
    if isinstance(obj, torch.Tensor):
        return mode.from_tensor(obj)
    if isinstance(obj, list):
        return [_to_fake(o, mode) for o in obj]
    if isinstance(obj, tuple):
        return rebuild_tuple(obj, [_to_fake(o, mode) for o in obj])
    if isinstance(obj, dict):
        return rebuild_mapping(obj, {k: _to_fake(v, mode) for k, v in obj.items()})
    return obj


__all__ = ["OpaqueCallError", "eager_symbol", "opaque_aliases", "opaque_mutates", "opaque_symbol", "under_autocast"]
