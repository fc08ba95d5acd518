"""Generated user programs: whenever `trace` accepts one, `run` agrees with eager.

Each program is a script as a user might write it: an entry taking a tensor and a
container of tensors, a global tensor it may read or write, a global module, and a random
mix of modelled ops, opaque ops, random draws (torch's, and Python's), in-place writes
(through views too), factories, autocast, control flow on values, calls whose arguments
come in each form torch takes (sizes as varargs, tuples, lists, a torch.Size; types as
dtypes, names or classes), and a container returned. tracecli may refuse a program (one
clear error, exit 2), but a program it traces must run through the compiled trace exactly as eager runs it: same
outputs, same inputs written in place, also after passes and through the prims executor.
"""

from __future__ import annotations

import textwrap

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracecli.core.errors import UserError
from tracecli.jobs.runner import trace_script
from tracecli.passes.pipeline import parse_passes

# Statements over 4x4 float tensors; {0} is the new variable, {1} and {2} existing ones.
MODELLED = [
    "{0} = {1} + {2}", "{0} = {1} * {2} - 1.5", "{0} = torch.maximum({1}, {2})", "{0} = torch.where({1} > 0, {1}, {2})",
    "{0} = torch.relu({1})", "{0} = {1}.exp().clamp(max=10.0)", "{0} = torch.tanh({1})",
    "{0} = {1}.sum(0, keepdim=True) + {2}", "{0} = {1}.transpose(0, 1)", "{0} = {1} @ {2}",
    "{0} = torch.softmax({1}, dim=-1)", "{0} = {1}.reshape(2, 8).reshape(4, 4)", "{0} = torch.cat([{1}, {2}])[:4]",
]
OPAQUE = [
    "{0} = torch.frexp({1}).mantissa", "{0} = F.logsigmoid({1})", "{0} = torch.flip({1}, [0])",
    "{0} = torch.sinc({1})", "{0} = torch.linalg.svdvals({1}).unsqueeze(1) * {2}",
]
RANDOM = [
    "{0} = torch.rand_like({1})", "{0} = {1} + torch.randn(4, 4)", "{0} = F.dropout({1}, 0.5)",
    "{0} = {1} + torch.randint(0, 5, (4, 4)).float()", "{0} = {1}[torch.randperm(4)]",
]
INPLACE = [
    "{1}.add_(1.0); {0} = {1} * 1", "{1}.mul_({2}); {0} = {1}", "{1}[0] = 3.0; {0} = {1} + 0",
    "{1}.clamp_(-1.0, 1.0); {0} = {1}", "{0} = {1}.clone(); {0}[1:3] += {2}[1:3]",
    "{0} = {1}.view(-1); {0}[0] = 7.0", "{0} = {1}[0]; {1}.add_(1.0); {0} = {0} * 2",
    "G.add_(0.5); {0} = {1} * G",
]
CALLS = [
    "{0} = LIN({1})", "{0} = amp_mm({1}, {2})", "{0} = {1} * float({2}.shape[0])", "{0} = {1} if {2}.sum() > 0 else {2}",
    "{0} = {1} * random.random()",
]
FACTORY = [
    "{0} = {1} + torch.eye(4)", "{0} = {1} * torch.ones(4, 4)", "{0} = {1} + torch.tensor([1.0, 2.0, 3.0, 4.0])",
    "{0} = {1} - torch.linspace(0, 1, 16).reshape(4, 4)", "{0} = {1} * G",
]
# Calls whose arguments come in the forms torch takes (<...> is drawn from FORMS below):
# sizes as varargs, tuples, lists, a torch.Size or a tensor's shape, by keyword too;
# types as dtypes, type names or typed classes. Each value stays 4x4 float32.
ARGUMENT_FORMS = [
    "{0} = {1} + torch.zeros(<4x4>)", "{0} = {1} * torch.ones(<4x4>, dtype=torch.float32)",
    "{0} = {1} - torch.full(<4x4 seq>, 0.5)", "{0} = {1} + {2}.new_zeros(<4x4>)", "{0} = {2}.new_ones(<4x4>) * {1}",
    "{0} = {1} + {2}.new_full(<4x4 seq>, 2.0)", "{0} = {1} + {2}.new(<4x4 shape>).fill_(1.0)",
    "{0} = {1} + torch.Tensor(<4x4 shape>).fill_(0.5)", "{0} = {1} * {2}.new(<4 shape>).fill_(1.0).cumsum(0)", "{0} = {1} * {2}.new(<data>)", "{0} = {1} - torch.Tensor(<data>)",
    "{0} = {1}.view(<2x8>).view(<4x4>)", "{0} = {1}.reshape(<2x8>).reshape(<4x4>)", "{0} = {1}.permute(<1, 0>) + {2}",
    "{0} = {1}[:1].expand(<4x4>) * {2}", "{0} = {1}.repeat(<1, 1>)", "{0} = {1}.tile(<1, 1>) - {2}",
    "{0} = {1}.flatten().unflatten(0, <4x4 seq>)", "{0} = {1}.type(<f64>).type({2}.type())",
    "{0} = {1}.to(<device>) + {2}.new_tensor(<data>)",
]
FORMS = {
    "<4x4>": ["4, 4", "(4, 4)", "[4, 4]", "torch.Size([4, 4])", "{1}.shape", "*{1}.shape", "{2}.size()", "size=(4, 4)"],
    "<4x4 seq>": ["(4, 4)", "[4, 4]", "torch.Size([4, 4])", "{1}.shape", "tuple({2}.shape)", "list({1}.size())"],
    # A legacy constructor reads one tuple or list as data: its shapes are integers or a torch.Size.
    "<4x4 shape>": ["4, 4", "torch.Size([4, 4])", "{1}.shape", "*{1}.shape", "{2}.size()"],
    "<4 shape>": ["4", "torch.Size([4])", "{1}.shape[1:]", "{2}.size()[:1]"],
    "<data>": ["[1.0, 2.0, 3.0, 4.0]", "(1.0, 2.0, 3.0, 4.0)", "[1, 2, 3, 4]", "range(4)"],
    "<2x8>": ["2, 8", "(2, 8)", "[2, 8]", "torch.Size([2, 8])", "-1, 8", "(2, -1)"],
    "<1, 0>": ["1, 0", "(1, 0)", "[1, 0]", "torch.Size([1, 0])", "dims=(1, 0)", "dims=[1, 0]"],
    "<1, 1>": ["1, 1", "(1, 1)", "[1, 1]", "torch.Size([1, 1])"],
    "<f64>": ["torch.float64", "'torch.DoubleTensor'", "torch.DoubleTensor", "dtype=torch.float64"],
    "<device>": ["'cpu'", "torch.device('cpu')", "{2}.device", "device={1}.device"],
}
STATEMENTS = MODELLED + OPAQUE + RANDOM + INPLACE + FACTORY + CALLS + ARGUMENT_FORMS
RETURNS = [
    "return {0}", "return {0}, {1}", "return {{'a': {0}, 'b': [{1}]}}", "return Out({0}, {1})", "return Pair({0}, {1})",
]
CONTAINERS = ["(torch.randn(4, 4), torch.randn(4, 4))", "{'p': torch.randn(4, 4), 'q': torch.randn(4, 4)}"]

HEADER = """\
import dataclasses
import random
from typing import NamedTuple

import torch
import torch.nn.functional as F

G = torch.ones(4, 4)
LIN = torch.nn.Linear(4, 4)


def amp_mm(p, q):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return (p @ q).float()


@dataclasses.dataclass
class Out:
    first: torch.Tensor
    second: torch.Tensor


class Pair(NamedTuple):
    first: torch.Tensor
    second: torch.Tensor


"""


@st.composite
def programs(draw) -> str:
    container = draw(st.sampled_from(CONTAINERS))
    unpack = "a, b = pair" if container.startswith("(") else "a, b = pair['p'], pair['q']"
    names = ["x", "a", "b"]
    body = [unpack]
    for i in range(draw(st.integers(1, 7))):
        template = draw(st.sampled_from(STATEMENTS))
        for placeholder, forms in FORMS.items():
            while placeholder in template:
                template = template.replace(placeholder, draw(st.sampled_from(forms)), 1)
        first, second = draw(st.sampled_from(names)), draw(st.sampled_from(names))
        body.append(template.format(f"v{i}", first, second))
        names.append(f"v{i}")
    chosen = draw(st.lists(st.sampled_from(names[3:] or names), min_size=2, max_size=2))
    body.append(draw(st.sampled_from(RETURNS)).format(*chosen))
    lines = "\n".join("    " + stmt for stmt in body)
    return (
        HEADER + f"def f(x, pair):\n{lines}\n\n\n"
        f"def sample_inputs(device):\n    return torch.randn(4, 4), {container}\n"
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=programs(), passes=st.sampled_from([[], ["dce,cse,rename"], ["lower,dce"]]),
       executor=st.sampled_from(["torch", "prims"]))
def test_what_trace_accepts_run_matches(tmp_path, source, passes, executor):
    script = tmp_path / "program.py"
    script.write_text(source)
    try:
        trace_script(f"{script}:f", execute=False, steps=parse_passes(passes))
    except UserError:
        return  # refused with a clear error: allowed, never wrong
    job = trace_script(f"{script}:f", steps=parse_passes(passes), executor=executor, repeat=0)
    problems = [
        f"{check.name}: {check.problem}"
        for call in job.calls for check in (*call.report.outputs, *call.report.written) if not check.match
    ]
    assert job.match, "traced, but run disagrees with eager:\n" + "\n".join(problems) + "\n" + textwrap.indent(
        source, "    "
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=programs())
def test_a_main_block_calling_it_again_matches_on_every_call_compared(tmp_path, source):
    # The same programs called four times from their main block with new inputs: the
    # first call of each trace and the later calls it serves are compared with eager.
    body = source.replace("def sample_inputs(device):", "def inputs(device):")
    body += "\n\nif __name__ == '__main__':\n    for _ in range(4):\n        f(*inputs('cpu'))\n"
    script = tmp_path / "program.py"
    script.write_text(body)
    try:
        job = trace_script(f"{script}:f", repeat=0)
    except UserError:
        return  # refused with a clear error: allowed, never wrong
    reports = [r for call in job.calls for r in ([call.report] if call.report else []) + list(call.rechecks.values())]
    problems = [f"{check.name}: {check.problem}" for r in reports for check in (*r.outputs, *r.written)
                if not check.match]
    assert job.match, "traced, but a call disagrees with eager:\n" + "\n".join(problems) + "\n" + textwrap.indent(
        body, "    ")
    assert sum(len(call.served) for call in job.calls) == 4
