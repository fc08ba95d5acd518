"""The forward/backward contract of a pair made by the grad transform: everything the
backward reads is one of its own inputs (a value the forward saves, under the forward's
name and type, or a cotangent), every saved value is defined by the forward and
returned by it, and every gradient the backward returns has its input's type."""

from __future__ import annotations

from tracecli.core.pytree import values_in
from tracecli.core.trace import Trace
from tracecli.core.values import TensorValue
from tracecli.core.verify import VerificationError


def verify_grad_contract(forward: Trace, backward: Trace) -> None:
    """Raise VerificationError naming the first value the pair disagrees on. The forward
    returns (outputs, saved); the backward takes (*saved, *cotangents)."""
    if not (isinstance(forward.output, tuple) and len(forward.output) == 2):
        raise VerificationError(f"the forward {forward.name} does not return (outputs, saved values)")
    saved = values_in(forward.output[1])
    defined = {v.name: v for v in forward.inputs}
    for bsym in forward.bsyms:
        defined.update((v.name, v) for v in bsym.output_values())
    for value in saved:
        if defined.get(value.name) != value:
            raise VerificationError(f"the forward saves {value.name}, which it does not define as {value}")
    n_saved = len(saved)
    if [v.name for v in backward.inputs[:n_saved]] != [v.name for v in saved]:
        raise VerificationError(f"the backward {backward.name} takes {[v.name for v in backward.inputs[:n_saved]]} "
                                f"where the forward saves {[v.name for v in saved]}")
    for mine, theirs in zip(backward.inputs, saved, strict=False):
        if mine != theirs:
            raise VerificationError(f"the backward reads {mine.name} as {mine}, the forward saves {theirs}")
    for value in backward.inputs[n_saved:]:
        if value.name in defined:
            raise VerificationError(f"the backward takes {value.name} from the forward, which does not save it")
    readable = {v.name for v in backward.inputs}
    for bsym in backward.bsyms:
        for value in bsym.arg_values():
            if value.name not in readable:
                source = "a forward value it was not given" if value.name in defined else "a value nothing defines"
                raise VerificationError(f"the backward reads {value.name}, {source}")
        readable.update(v.name for v in bsym.output_values())
    inputs = {v.name: v for v in forward.inputs}
    for grad in values_in(backward.output):
        if grad.name not in readable:
            raise VerificationError(f"the backward returns {grad.name}, which it does not define")
        if isinstance(grad, TensorValue) and grad.name.startswith("grad_"):
            target = inputs.get(grad.name.removeprefix("grad_"))
            if isinstance(target, TensorValue) and (target.shape, target.dtype) != (grad.shape, grad.dtype):
                raise VerificationError(f"{grad.name} is {grad.dtype.short}{list(grad.shape)}, its input "
                                        f"{target.dtype.short}{list(target.shape)}")
