"""The generated code frees what is dead: each tensor after its last use, so a compiled
trace holds about what eager holds, not every intermediate until it returns."""

import importlib.util
from pathlib import Path

import torch

from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable

_spec = importlib.util.spec_from_file_location(
    "memory", Path(__file__).resolve().parent.parent / "benchmarks" / "memory.py")
memory = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(memory)


def _chain(x):
    for i in range(40):
        x = x * 1.01 + 0.5 if i % 2 else torch.sin(x)
    return x


def test_a_long_chain_holds_what_eager_holds():
    x = torch.randn(256, 256)
    compiled = compile_trace(trace_callable(_chain, (x,), name="chain").trace)
    eager, traced = memory.peak_bytes(lambda: _chain(x)), memory.peak_bytes(lambda: compiled(x))
    assert traced <= 1.2 * eager, (traced, eager)
    torch.testing.assert_close(compiled(x), _chain(x))


def _pieces(x, y):
    a = x * y
    first, second = a.chunk(2)
    return first.exp() + 1, y


def test_dead_values_are_deleted_after_their_last_use_and_outputs_and_inputs_kept():
    source = compile_trace(trace_callable(_pieces, (torch.randn(4, 3), torch.randn(4, 3)), name="f").trace
                           ).__tracecli_source__
    lines = [line.strip() for line in source.splitlines()]
    # the unused half of the chunk goes at once, the product after the chunk reads it
    assert lines[lines.index(next(line for line in lines if "ltorch.chunk" in line)) + 1] == "del t0, t2"
    freed = {name for line in lines if line.startswith("del ") for name in line[4:].split(", ")}
    assert freed == {"t0", "t1", "t2", "t3"}  # not the inputs, not the output t4
    assert lines[-1] == "return (t4, y)"
