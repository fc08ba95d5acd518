"""Random chains of views and in-place writes, on an input and on fresh tensors, traced
and run through both executors and after pass pipelines: every tensor the program holds,
and the input it may write, end as in eager.

Each program is made statement by statement and kept only where eager runs it (a view
of a non-contiguous tensor may not exist, a write may overlap): what is traced is always
a valid PyTorch program. tracecli may refuse one with a clear error (a reshape torch may
have copied, a partly overlapping write), never trace it wrong.
"""

from __future__ import annotations

import textwrap

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracecli.core.errors import TracingError
from tracecli.executors import compile_for
from tracecli.frontend.tracer import trace_callable
from tracecli.passes.pipeline import parse_passes, run_pipeline

VIEWS = [
    "{0} = {1}[1:3]", "{0} = {1}[:, ::2]", "{0} = {1}[0]", "{0} = {1}.t()", "{0} = {1}.transpose(0, -1)",
    "{0} = {1}.reshape(-1)", "{0} = {1}.view(-1)", "{0} = {1}.select(0, 1)", "{0} = {1}.unsqueeze(0)",
    "{0} = {1}.narrow(0, 1, 2)", "{0} = {1}.split(2)[0]", "{0} = torch.diagonal({1})", "{0} = {1}.unbind(0)[1]",
    "{0} = {1}[..., 1:]", "{0} = {1}.squeeze(0)", "{0} = {1}.permute(1, 0)", "{0} = {1}.diagonal(1)",
    "{0} = {1}.movedim(0, -1)", "{0} = {1}.mT", "{0} = {1}.adjoint()", "{0} = {1}.ravel()",
    "{0} = torch.atleast_3d({1})", "{0} = {1}.tensor_split(3)[1]", "{0} = {1}.hsplit([1])[1]",
    "{0} = {1}.select(-1, 0)", "{0} = {1}.unfold(0, 2, 2)", "{0} = torch.meshgrid({1}[0], {1}[:, 0], indexing=\"ij\")[1]",
]
WRITES = [
    "{1}.add_(1.5)", "{1}.mul_(2)", "{1}.relu_()", "{1}.clamp_(-1, 1)", "{1}[0] += 1", "{1}[:, 1] = 3.0",
    "{1}[{1} > 0] = 0.0", "{1}[[0, 1]] = -1.0", "{1}.zero_()", "{1}.copy_({1} * 2)", "{1}.fill_(0.5)",
    "{1}[..., 0] *= 2", "{1}.sub_({1}.sum())", "{1}.exp_()", "{1}.asinh_()",
]
READS = ["{0} = {1} * 1", "{0} = {1}.sum(0)"]
FRESH = ["{0} = x.clone()", "{0} = torch.zeros(4, 6)", "{0} = x * 2"]


@st.composite
def programs(draw) -> str:
    """A program of views, writes and reads that eager runs."""
    namespace = {"torch": torch, "x": torch.randn(4, 6, generator=torch.Generator().manual_seed(0))}
    names, body = ["x"], []
    for i in range(draw(st.integers(2, 10))):
        template = draw(st.sampled_from(VIEWS + WRITES + READS + FRESH))
        statement = template.format(f"v{i}", draw(st.sampled_from(names)))
        try:
            exec(statement, namespace)  # noqa: S102 - our own generated statements
        except (RuntimeError, IndexError, ValueError):
            continue  # not a valid program step (a view torch refuses, an overlapping write)
        body.append(statement)
        if statement.startswith(f"v{i} ="):
            names.append(f"v{i}")
    returned = ", ".join(names) + ("," if len(names) == 1 else "")
    return "def f(x):\n" + textwrap.indent("\n".join(body) + f"\nreturn ({returned})", "    ") + "\n"


PIPELINES = [[], ["dce,cse,rename,renumber"], ["lower,dce,cse"]]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=programs())
def test_views_and_writes_match_eager(source):
    namespace: dict = {"torch": torch}
    exec(source, namespace)  # noqa: S102
    f = namespace["f"]
    x = torch.randn(4, 6, generator=torch.Generator().manual_seed(1))
    try:
        program = trace_callable(f, (x.clone(),))
    except TracingError as exc:
        assert any(reason in str(exc) for reason in REFUSALS), f"{exc}\n{source}"
        return
    eager_x = x.clone()
    expected = f(eager_x)
    for passes in PIPELINES:
        trace = run_pipeline(program.trace, parse_passes(passes))[-1].trace
        for executor in ("torch", "prims"):
            got_x = x.clone()
            actual = compile_for(trace, executor)(got_x)
            where = f"{executor}, passes {passes}:\n{source}"
            assert torch.allclose(got_x, eager_x, equal_nan=True), f"input differs, {where}"
            for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
                assert a.shape == e.shape and torch.allclose(a, e, equal_nan=True), f"value {i} differs, {where}"


# What tracecli may say instead of tracing: torch may have copied, or refuses the write.
REFUSALS = ("may not be contiguous", "may have copied", "partly overlapping", "repeats or mixes")
