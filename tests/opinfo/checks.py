"""The checks a traced sample goes through past tracing (tests/opinfo/harness.py runs
them): each raises `Found` with the sample's class and why at the first failure."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch.testing._internal.common_device_type import precisionOverride, toleranceOverride
from torch.testing._internal.opinfo.core import OpInfo

from tracecli.core.dims import Dim, evaluate, shape_matches
from tracecli.core.dtypes import DType
from tracecli.core.pytree import TreeSpec, tree_flatten, tree_leaves, tree_map
from tracecli.core.trace import Trace
from tracecli.core.values import NumberValue, TensorValue
from tracecli.jobs.compare import TOLERANCES, quiet
from tracecli.ops.torch_bridge import TO_TORCH


class Found(Exception):
    """A sample's class, found by one of its checks."""

    def __init__(self, kind: str, detail: str):
        super().__init__(detail)
        self.kind, self.detail = kind, detail


def fresh(tensors) -> tuple:
    # Every run gets its own copies: the op may write its inputs.
    return tuple(t.clone() if isinstance(t, torch.Tensor) else t for t in tensors)


def stage(what: str, fn: Callable, *args):
    """fn(*args); an exception from it is a crash of tracecli's, at this stage."""
    try:
        with quiet():
            return fn(*args)
    except Found:
        raise
    except Exception as exc:
        raise Found("crash", f"{what} raised {describe(exc)}") from exc


def declared_as_eager(trace: Trace, expected) -> None:
    """The trace's outputs are declared as what eager returns."""
    declared, got = tree_leaves(trace.output), tree_leaves(expected)
    if len(declared) != len(got):
        raise Found("wrong", f"the trace declares {len(declared)} outputs, eager returns {len(got)}")
    sizes: dict[str, int] = {}  # what each size the data decide is in eager's results
    for value, e in zip(declared, got, strict=True):
        if isinstance(value, TensorValue) and isinstance(e, torch.Tensor):
            if not shape_matches(value.shape, tuple(e.shape), sizes) or TO_TORCH[value.dtype] != e.dtype:
                raise Found("wrong", f"output {value.name} declared {_type(value)}, eager gives "
                                     f"{_shown(tuple(e.shape), e.dtype)}")
        elif isinstance(value, TensorValue) or isinstance(e, torch.Tensor):
            raise Found("wrong", f"output {getattr(value, 'name', value)!r} is a "
                                 f"{type(value).__name__} in the trace, eager gives a {type(e).__name__}")


def recorded_types(level: str, trace: Trace, inputs: list, seed: int) -> None:
    """Run the trace one bound symbol at a time: each declared output type must be what
    the symbol's implementation returns (a wrong rule can hide behind later ops)."""
    env = {v.name: obj for v, obj in zip(trace.inputs, fresh(inputs), strict=True)}

    def executed(leaf):
        if isinstance(leaf, (TensorValue, NumberValue)):
            return env[leaf.name]
        if isinstance(leaf, Dim):  # a size read where it was bound (`(u0,) = prims.shape(t7)`)
            return evaluate(leaf, {name: v for name, v in env.items() if isinstance(v, int)})
        return TO_TORCH[leaf] if isinstance(leaf, DType) else leaf

    torch.manual_seed(seed)
    sizes: dict[str, int] = {}  # what each size the data decide is in this run
    for bsym in trace.bsyms:
        name = bsym.symbol.qualname
        args = tree_map(executed, bsym.args)
        kwargs = {k: tree_map(executed, v) for k, v in bsym.kwargs}
        out = stage(f"{name} (run alone, {level} level)", _no_grad, bsym.symbol.impl, args, kwargs)
        declared, got = tree_leaves(bsym.output), tree_leaves(out)
        if len(declared) != len(got):
            raise Found("wrong", f"{level} level: {name} declares {len(declared)} outputs, its impl gives {len(got)}")
        for value, obj in zip(declared, got, strict=True):
            if isinstance(value, TensorValue):
                if not isinstance(obj, torch.Tensor):
                    raise Found("wrong", f"{level} level: {name} declares {value.name} a tensor, its impl "
                                         f"gives a {type(obj).__name__}")
                if not shape_matches(value.shape, tuple(obj.shape), sizes) or TO_TORCH[value.dtype] != obj.dtype:
                    raise Found("wrong", f"{level} level: {name} declares {value.name} {_type(value)}, its impl "
                                         f"gives {_shown(tuple(obj.shape), obj.dtype)}")
            if isinstance(value, (TensorValue, NumberValue)):
                env[value.name] = obj


def _no_grad(fn: Callable, args: tuple, kwargs: dict):
    with torch.no_grad():
        return fn(*args, **kwargs)


def differences(expected, actual, tolerances: dict, working: list | None = None, values: bool = True) -> list[str]:
    """How `actual` differs from eager's `expected`: structure, then each leaf's type and
    values, floating point within the loosest of the dtype's default tolerance, the
    OpInfo's own and that of the least precise dtype the value was computed through."""
    (want, want_spec), (got, got_spec) = tree_flatten(expected), tree_flatten(actual)
    if want_spec != got_spec:
        return [f"structure: eager {_structure(want_spec)}, the trace {_structure(got_spec)}"]
    problems = []
    for i, (e, a) in enumerate(zip(want, got, strict=True)):
        if not isinstance(e, torch.Tensor) or not isinstance(a, torch.Tensor):
            if not (type(e) is type(a) and (e == a or (e != e and a != a))):
                problems.append(f"output {i}: {a!r}, eager {e!r}")
            continue
        if (tuple(a.shape), a.dtype) != (tuple(e.shape), e.dtype):
            problems.append(f"output {i}: {_shown(tuple(a.shape), a.dtype)}, eager {_shown(tuple(e.shape), e.dtype)}")
            continue
        if not values or e.numel() == 0:
            continue
        rtol, atol = _tolerance(e.dtype, tolerances, working[i] if working and i < len(working) else None)
        try:
            torch.testing.assert_close(a, e, rtol=rtol, atol=atol, equal_nan=True, check_stride=False)
        except AssertionError as exc:
            problems.append(f"output {i}: {_mismatch(exc)}")
    return problems


def _tolerance(dtype: torch.dtype, tolerances: dict, working: torch.dtype | None) -> tuple[float, float]:
    if not (dtype.is_floating_point or dtype.is_complex):
        return 0.0, 0.0
    candidates = [TOLERANCES.get(dtype, (1e-5, 1e-8)), tolerances.get(dtype, (0.0, 0.0))]
    if working is not None:
        candidates.append(TOLERANCES.get(working, (0.0, 0.0)))
    return max(c[0] for c in candidates), max(c[1] for c in candidates)


def op_tolerances(op: OpInfo) -> dict[torch.dtype, tuple[float, float]]:
    """dtype -> (rtol, atol): the loosest the OpInfo's own decorators allow any of torch's
    tests (toleranceOverride, precisionOverride): how far torch lets the op's kernels
    differ from each other."""
    found: dict[torch.dtype, tuple[float, float]] = {}
    for info in op.decorators:
        for decorator in getattr(info, "decorators", [info]):
            if isinstance(decorator, toleranceOverride):
                pairs = {d: (t.rtol, t.atol) for d, t in decorator.d.items()}
            elif isinstance(decorator, precisionOverride):
                pairs = {d: (0.0, atol) for d, atol in decorator.d.items()}
            else:
                continue
            for dtype, (rtol, atol) in pairs.items():
                old = found.get(dtype, (0.0, 0.0))
                found[dtype] = (max(old[0], rtol), max(old[1], atol))
    return found


def _mismatch(exc: AssertionError) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return "; ".join(lines[:3])


def _structure(spec: TreeSpec) -> str:
    """The containers of a result by type, its leaves as `_`: `Size(_, _)` vs `tuple(_, _)`."""
    if spec.kind is None:
        return "_"
    return f"{spec.kind.__name__}({', '.join(_structure(child) for child in spec.children)})"


def _type(value: TensorValue) -> str:
    return _shown(value.shape, TO_TORCH[value.dtype])


def _shown(shape: tuple, dtype: torch.dtype) -> str:
    return f"{str(dtype).removeprefix('torch.')}{list(shape)}"


def describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {one_line(str(exc))}"


def one_line(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= 300 else first[:297] + "..."
