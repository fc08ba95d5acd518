"""The key a served call looks its segments up by (jobs/segments.py `_key`): a structure,
not the generated text, so it must tell apart every pair of segments whose code differs,
and find the same segment again on every call."""

import torch

from tracecli.core.printing import format_trace
from tracecli.frontend.tracer import trace_callable
from tracecli.jobs import segments
from tracecli.jobs.segments import SegmentRunner, _key, replay


def _keyed(fn):
    trace = trace_callable(fn, (torch.ones(3),)).trace
    return _key(trace), format_trace(trace, codegen=True)


def test_constants_that_compare_equal_but_print_apart_key_apart():
    # 1 == 1.0 == True and 0.0 == -0.0 in Python, and each is other code.
    made = [_keyed(lambda x, c=c: x * c) for c in (1, 1.0, True, 0.0, -0.0)]
    assert len({text for _, text in made}) == len(made)
    assert len({key for key, _ in made}) == len(made)


def test_a_nan_constant_keys_alike_on_every_trace():
    # nan != nan: keyed by its value, a segment holding one would never be found again.
    first, _ = _keyed(lambda x: x + float("nan"))
    again, _ = _keyed(lambda x: x + float("nan"))
    assert first == again


def test_served_calls_find_their_segments_again():
    def f(x):
        y = torch.sin(x) * 2
        if y.sum() > 0:  # a cut
            y = y + 1
        return y * 0.5, y.sum().item()  # another

    x = torch.randn(4).abs()
    runner = SegmentRunner("torch", [], check=False, shadow=True)
    program = trace_callable(f, (x,), segments=runner)
    runner.traced(program.segments)
    made = len(runner.compiled)
    for _ in range(3):
        got = replay(f, (x,), {}, runner, name="f", info=program.trace.info)
        torch.testing.assert_close(got[0], f(x)[0])
    assert len(runner.compiled) == made  # nothing compiled again: every key found


def test_a_number_read_every_call_makes_code_of_its_own_and_old_code_goes(monkeypatch):
    # `x / s` with s read from x: a constant of the segment after the read, so each call
    # makes new code; the least recently run goes once there are MAX_COMPILED.
    monkeypatch.setattr(segments, "MAX_COMPILED", 4)

    def f(x):
        s = x.abs().max().item()
        return torch.tanh(x / s) * 3

    runner = SegmentRunner("torch", [], check=False, shadow=True)
    program = trace_callable(f, (torch.ones(3),), segments=runner)
    runner.traced(program.segments)
    for k in range(10):
        x = torch.arange(3.0) + k
        assert torch.allclose(replay(f, (x,), {}, runner), f(x))
        assert len(runner.compiled) <= 4
