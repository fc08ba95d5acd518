"""Inputs for a call at new sizes: the example call's arguments with each symbolic dim
resized, values drawn like the example's (same dtype and device; integers among the
example's own values, so token ids and class targets, -100 included, stay valid)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from tracecli.core.dims import Dim, evaluate
from tracecli.core.errors import UserError
from tracecli.core.trace import Trace
from tracecli.core.values import TensorValue
from tracecli.frontend.arguments import bind_entry, input_objects, swap_tensors


def dim_sizes(trace: Trace, given: dict[str, int]) -> dict[str, int]:
    """Every size symbol of `trace` at a call: as given, else as what tracing found it
    equal to, else as the first given symbol that had its size in the example (a mask's
    batch follows the ids' batch: inputs stay alike), else as in the example. Unknown
    names are bad usage. A symbol may be given by the variable that held it (`rows` for
    `s0` after `rows, cols = x.shape`): the name `rename` prints."""
    known = [d.name for d in trace.dims if not d.unbacked]  # a size the data decide is no call's to give
    by_variable = {d.hint: d.name for d in trace.dims if d.hint and d.hint not in known}
    given = {by_variable.get(name, name): size for name, size in given.items()}
    unknown = sorted(set(given) - set(known))
    if unknown:
        spelled = [f"{d.name} ({d.hint})" if d.hint in by_variable else d.name for d in trace.dims]
        raise UserError(f"--sizes names {', '.join(unknown)}, not a dim of the trace "
                        f"(its dims: {', '.join(spelled) or 'none'})")
    sizes: dict[str, int] = {}
    for info in trace.dims:  # in order: a symbol is only ever made equal to older ones
        if info.unbacked:
            continue
        if info.name in given:
            sizes[info.name] = given[info.name]
        elif info.same_as is not None:
            sizes[info.name] = evaluate(info.same_as, sizes)
        else:
            alike = next((d.name for d in trace.dims if d.name in given and d.example == info.example), None)
            sizes[info.name] = given[alike] if alike is not None else info.example
    return sizes


def resized_arguments(fn: Callable, args: tuple, kwargs: dict, trace: Trace, sizes: dict[str, int],
                      generator: torch.Generator) -> tuple[tuple, dict]:
    """The example's arguments with each tensor whose dims are symbols remade at `sizes`."""
    where: dict[tuple[str, int], str] = {}
    for info in trace.dims:
        if info.unbacked:
            continue  # the data's, not the call's
        tensor, _, axis = info.origin.partition(".shape[")
        where[(tensor, int(axis.rstrip("]")))] = info.name
    objects = [obj for arg in bind_entry(fn, args, kwargs).arguments.values() for obj in input_objects(arg)]
    swap: dict[int, torch.Tensor] = {}
    for value, obj in zip(trace.inputs, objects, strict=False):
        if not isinstance(obj, torch.Tensor) or not isinstance(value, TensorValue):
            continue
        shape = []
        for axis, size in enumerate(value.shape):
            name = where.get((value.name, axis))
            if name is not None:  # where the size is read: as asked
                shape.append(sizes[name])
            elif isinstance(size, Dim):  # a dim shared with another input, or found equal to one
                shape.append(evaluate(size, sizes))
            else:
                shape.append(obj.shape[axis])
        if list(obj.shape) != shape:
            swap[id(obj)] = like(obj, tuple(shape), generator)
    new_args = tuple(swap_tensors(a, swap) for a in args)
    new_kwargs = {k: swap_tensors(v, swap) for k, v in kwargs.items()}
    return new_args, new_kwargs


def like(example: torch.Tensor, shape: tuple[int, ...], generator: torch.Generator) -> torch.Tensor:
    """A tensor of `shape` whose values are drawn as the example's could be."""
    dtype, device = example.dtype, example.device
    if dtype == torch.bool:
        out = torch.rand(shape, generator=generator) < 0.5
    elif dtype.is_floating_point or dtype.is_complex:
        out = torch.randn(shape, generator=generator, dtype=dtype if dtype.is_complex else torch.float32)
    else:
        # Drawn from the example's own values: class targets with an ignore_index (-100)
        # and token ids stay valid, where a number between the two would not be.
        seen = example.detach().flatten().cpu().to(torch.int64)
        if not seen.numel():
            seen = torch.tensor([0, 1])
        out = seen[torch.randint(0, seen.numel(), shape, generator=generator)]
    out = out.to(dtype=dtype, device=device)
    return out.requires_grad_(example.requires_grad) if out.is_floating_point() else out
