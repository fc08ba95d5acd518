"""Generated user programs: whenever `trace` accepts one, `run` agrees with eager.

Each program is a script as a user might write it: an entry taking a tensor and a
container of tensors, a global tensor it may read or write, a global module, and a random
mix of modelled ops, opaque ops, random draws (torch's, and Python's), in-place writes
(through views too), factories, autocast, control flow on values, calls whose arguments
come in each form torch takes (sizes as varargs, tuples, lists, a torch.Size; types as
dtypes, names or classes), and a container returned. tracecli may refuse a program (one
clear error, exit 2), but a program it traces must run through the compiled trace exactly as eager runs it: same
outputs, same inputs written in place, also after passes and through the prims executor.

Programs that break (Python reads a value: a branch on it, `.item()`, `.tolist()`, numpy,
a log line, a size, a helper's read, reads in loops, twice over and one right after
another, under no_grad and autocast, a size the data decides) are traced in segments as
`run` and `trace` do by default, through every pass and executor and with --dynamic;
called from a main block several times, with inputs that send the Python down the other
side of a branch on some calls. Such a program may be refused too, but not in words of
tracecli's own failure (INTERNAL). KNOWN_BUGS lists what tracecli gets wrong today, left
out of the sample. The same programs come from a seed (`program_for_seed`) for the
command line: `python -m tests.test_fuzz_programs 0 300 DIR` runs each through `tracecli
run` and `tracecli trace` and keeps each failure in DIR. `make test` checks a sample;
TRACECLI_FUZZ_EXAMPLES=N checks N programs per test (`make fuzz-programs`), and
TRACECLI_FUZZ_KNOWN_BUGS=1 makes the known bugs' constructs too.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import textwrap
from collections.abc import Callable, Sequence

import pytest
import torch
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tracecli.core.errors import UserError
from tracecli.jobs.runner import trace_script
from tracecli.passes.pipeline import parse_passes

# Views eager refuses on a transposed tensor (KNOWN_BUGS).
VIEW_TWICE = "{0} = {1}.view(<2x8>).view(<4x4>)"
VIEW_FLAT = "{0} = {1}.view(-1); {0}[0] = 7.0"
VIEW_BEFORE_READ = "{0} = {1}.view(2, 8).view(4, 4)\n{0}_s = {2}.sum().item()\n{0}[0, 0] = {0}_s"
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
    VIEW_FLAT, "{0} = {1}[0]; {1}.add_(1.0); {0} = {0} * 2",
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
    VIEW_TWICE, "{0} = {1}.reshape(<2x8>).reshape(<4x4>)", "{0} = {1}.permute(<1, 0>) + {2}",
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

# Constructs the generator makes that tracecli gets wrong today, each with its bug, the
# templates that make it and the words of a refusal it causes: `make test` leaves those
# templates out and lets such a refusal pass, so that main stays green, and an xfail test
# below holds each bug's smallest program. TRACECLI_FUZZ_KNOWN_BUGS=1
# (and the command line's --known-bugs) makes them again: when a bug is fixed, its xfail
# passes (XPASS) and its entry here goes.
KNOWN_BUGS: dict[str, tuple[str, list[str], str | None]] = {
    "view-of-a-transposed-tensor": ("`x.t().view(2, 8)`, which eager refuses (its sizes and strides admit no view), "
                                    "is traced as a reshape: trace exits 0 and run says eager failed (exit 2). "
                                    "tracecli follows whether a value is contiguous, not its strides",
                                    [VIEW_TWICE, VIEW_FLAT, VIEW_BEFORE_READ], None),
}

# Statements whose Python reads a tensor's value (a graph break: run and trace cut the
# trace there unless --fullgraph). Templates may span lines; {0}_x names are the
# statement's own temporaries. Each defines {0} as a 4x4 float tensor.
BRANCHES = [
    "if {1}.sum() > 0:\n    {0} = {1} * 2\nelse:\n    {0} = {2} - 1",
    "if {1}.mean() > {2}.mean():\n    {0} = {1} - {2}\nelse:\n    {0} = {2} - {1}",
    "if ({1} > 1.0).any():\n    {0} = {1}.clamp(-1.0, 1.0)\nelse:\n    {0} = {1} + {2}",
    "if not torch.isfinite({1}).all():\n    {0} = torch.nan_to_num({1})\nelse:\n    {0} = {1} * 1.5",
    "{0} = {1} if bool(({2} > 0).any()) else -{1}",
    "if {1}.max().item() > 1.5:\n    {0} = {1} / {1}.max()\nelif {1}.min().item() < -1.5:\n    {0} = {1} / -{1}.min()\n"
    "else:\n    {0} = {1}",
    "{0} = {1} + (1.0 if {2}[0, 0] > 0 else -1.0)",
    "{0} = {1} * (2.0 if 0.0 in {2} else 1.0)",
]
TOLIST = [
    "{0} = {2}.clone()\nfor {0}_v in {1}[0].tolist():\n    {0} = {0} + {0}_v",
    "{0} = {2} * sum(sum(row) for row in {1}.tolist())",
    "{0} = {2} + torch.tensor({1}.tolist()).flip(0)",
    "{0}_acc = 0.0\nfor {0}_row in {1}.tolist():\n    {0}_acc = {0}_acc + max({0}_row)\n{0} = {2} * {0}_acc",
]
NUMPY = [
    "{0}_a = {1}.detach().numpy()\n{0} = torch.from_numpy(np.tanh({0}_a))",
    "{0} = {2} / (1.0 + float(np.abs({1}.detach().numpy()).max()))",
    "{0} = {2} * float(np.abs({1}.numpy()).max())",
    "{0} = torch.as_tensor(np.clip(np.asarray({1}.detach()), -1.0, 1.0)) + {2}",
    "{0}_a = {1}.detach().numpy()\n{0} = {2} * float({0}_a.mean()) + float({0}_a.std())",
    "{0} = torch.from_numpy({1}.detach().numpy() * 2.0) - {2}",
]
LOGGING = [
    'print(f"{{{1}.sum().item():.3f}}")\n{0} = {1} * {2}',
    'logger.info("%s", {1})\n{0} = {1} - {2}',
    'logger.info("mean %.4f", {1}.mean())\n{0} = {1} * 2',
    'print("step", {1}.sum())\n{0} = {1} + {2}',
    '{0}_msg = "{{:.2f}}".format({1}.mean())\n{0} = {2} * len({0}_msg)',
    '{0}_msg = f"{{{1}.max()}}"\n{0} = {2} + len({0}_msg)',
]
SIZES = [
    "{0}_n = int(({1} > 0).sum())\n{0} = torch.cat([{1}.flatten()[:{0}_n], {2}.flatten()[{0}_n:]]).reshape(4, 4)",
    "{0}_n = int(({1} > 0).sum())\n{0} = {2} + torch.ones({0}_n).sum()",
    "{0} = {2}.clone()\nfor _ in range(int(({1} > 0).sum()) % 4):\n    {0} = {0} * 0.5 + {1}",
    "{0}_n = int({1}.abs().argmax()) % 4\n{0} = {2}.roll({0}_n, 0)",
    "{0} = {1} + {1}[{2}.argmax() % 4]",
    "{0}_n = max(1, int(({1} > 0).sum()))\n{0} = {2} * {1}.flatten().topk({0}_n).values.mean()",
]
REREADS = [  # the same value read twice, a read right after another, reads of inputs with no op between
    "{0}_m = {1}.mean()\n{0} = {2} * {0}_m.item() + {0}_m.item()",
    "{0}_p = {1}.max().item()\n{0}_q = {2}.min().item()\n{0} = {1} * {0}_p - {0}_q",
    "{0} = {1} * float({1}.sum()) + float({1}.sum())",
    "{0}_l = {1}.tolist()\n{0}_k = {2}.tolist()\n{0} = {1} + torch.tensor({0}_l) * {0}_k[0][0]",
    "{0}_s = {1}.sum()\nif {0}_s > 0 and {0}_s.item() < 100:\n    {0} = {2} + {0}_s\nelse:\n    {0} = {2} - {0}_s",
    "{0} = {1}.clamp(min={2}.min().item(), max={2}.max().item())",
]
LOOPS = [
    "{0} = {1}\nfor _ in range(3):\n    if {0}.sum() > 0:\n        {0} = {0} - 1.0\n    else:\n        {0} = {0} + 0.5",
    "{0} = {1}.clone()\n{0}_k = 0\nwhile {0}.abs().max() > 1.0 and {0}_k < 6:\n    {0} = {0} * 0.5\n    {0}_k += 1",
    "{0} = {2}\nfor {0}_i in range(3):\n    {0} = {0} + {1}[{0}_i].sum().item()",
]
HELPERS = [  # a read in a function the entry calls
    "{0} = scale_by_max({1})", "{0} = clip_norm({1}) + {2}", "{0} = log_stats({1}) * 2",
]
STATEFUL = [  # reads after in-place writes, of a global, of a global the call writes
    "{1}.add_(1.0)\n{0} = {2} * {1}.mean().item()", "{0} = {1} * G.mean().item()",
    "G.mul_(0.9)\nif G.sum() > 8:\n    {0} = {1} + G\nelse:\n    {0} = {1} - G",
    "{0} = {1}.clone()\n{0}[int({2}.argmax()) // 4] = {2}.max().item()",
]
CONTEXTS = [  # reads under no_grad, autocast, in a comprehension, raising, in assert, training
    "with torch.no_grad():\n    {0}_s = {1}.max().item()\n{0} = {2} * {0}_s",
    "with torch.autocast('cpu', dtype=torch.bfloat16):\n    {0} = {1} @ {2}\n    if {0}.sum() > 0:\n"
    "        {0} = {0} @ {2}\n{0} = {0}.float()",
    "{0} = torch.stack([{0}_r * (1.0 if {0}_r.sum() > 0 else -1.0) for {0}_r in {1}])",
    "{0} = [{1}, {2}][int({1}.argmax()) % 2] * 1",
    "{0} = {1}.clone()\nif {2}.abs().max() > 2.0:\n    {0}.mul_(0.5)",
    "try:\n    if {1}.min() < -1.0:\n        raise ValueError('low')\n    {0} = {1} * 2\nexcept ValueError:\n    {0} = {1} - 1",
    "assert torch.isfinite({1}).all() or torch.isnan({1}).any()\n{0} = {1} + {2}",
    "{0}_loss = (LIN({1}) * {2}).pow(2).mean()\n{0}_loss.backward()\n{0} = {1} * {0}_loss.item()",
    "{0} = {1} * LIN.weight.sum().item()",
]
DATA = [  # sizes the data decides; numpy writing a tensor's storage; Python state a read decides
    "{0}_n = len({1}[{1} > 0.5])\n{0} = {2} + {0}_n",
    "{0} = {2} + {1}[{1} > 0].sum()",
    "{0}_nz = torch.nonzero({1} > 0)\n{0} = {2} * {0}_nz.shape[0]",
    "{0} = {2} * torch.unique(({1} * 2).round()).numel()",
    "{0} = {2} + torch.masked_select({1}, {1} > 0).sum()",
    "{0}_n = int({1}.argmax())\n{0} = {2} * torch.arange({0}_n + 1).float().mean()",
    "{0}_a = {1}.detach().numpy()\n{0}_a[0, 0] = 5.0\n{0} = {1} * 2",
    "{0}_a = {1}.detach().numpy()\n{0}_a[1:3] *= 2.0\n{0} = {2} + float({0}_a.sum())",
    "{0} = torch.from_numpy({1}.detach().numpy())\n{0}.add_(1.0)", VIEW_BEFORE_READ,
    "HIST.append({1}.mean().item())\n{0} = {2} * len(HIST)",
    # Written only on the side of a branch that some calls take.
    "COUNTS[bool({1}.sum() > 0)] += 1\n{0} = {2} * COUNTS[True]",
    "if {1}.sum() > 0:\n    HIST.append({1}.max().item())\n{0} = {2} * len(HIST)",
]
BREAKS = BRANCHES + TOLIST + NUMPY + LOGGING + SIZES + REREADS + LOOPS + HELPERS + STATEFUL + CONTEXTS + DATA
STATEMENTS = MODELLED + OPAQUE + RANDOM + INPLACE + FACTORY + CALLS + ARGUMENT_FORMS
RETURNS = [
    "return {0}", "return {0}, {1}", "return {{'a': {0}, 'b': [{1}]}}", "return Out({0}, {1})", "return Pair({0}, {1})",
]
# {s}: nothing, or `* sign` where the main block flips the inputs' signs between calls.
CONTAINERS = ["(torch.randn(4, 4){s}, torch.randn(4, 4){s})", "{{'p': torch.randn(4, 4){s}, 'q': torch.randn(4, 4){s}}}"]
# How a main block calls the entry: with new inputs each time, their signs flipped on some
# calls (a branch on a value takes its other side), or with the same inputs again.
MAIN_CALLS = [
    "for sign in [1.0, 1.0, 1.0, 1.0]:\n        f(*inputs('cpu', sign))",
    "for sign in [1.0, -1.0, 1.0, -1.0]:\n        f(*inputs('cpu', sign))",
    "for sign in [1.0, 1.0, -1.0, -1.0, 1.0]:\n        f(*inputs('cpu', sign))",
    "for sign in [-1.0, 1.0, 1.0]:\n        f(*inputs('cpu', sign))",
    "args = inputs('cpu')\n    for _ in range(3):\n        f(*args)",
    "for sign in [1.0, 0.0, -1.0, 1.0]:\n        f(*inputs('cpu', sign))",
    "for sign in [1.0, float('nan'), 1.0]:\n        f(*inputs('cpu', sign))",
    "for sign in [1.0, 1.0 + 1e-6, 1.0 - 1e-6]:\n        torch.manual_seed(0)\n        f(*inputs('cpu', sign))",
    "for sign in [1.0, -1.0, 1.0]:\n        f(*inputs('cpu', sign))\n        LIN(torch.ones(4)).sum().backward()",
]

HEADER = """\
import dataclasses
import logging
import random
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F

G = torch.ones(4, 4)
LIN = torch.nn.Linear(4, 4)
HIST = []
COUNTS = {True: 0, False: 0}


class Echo(logging.Handler):
    def emit(self, record):
        print(self.format(record))


logger = logging.getLogger("fuzz")
logger.setLevel(logging.INFO)
logger.propagate = False
logger.handlers[:] = [Echo()]


def scale_by_max(t):
    return t / (1.0 + float(t.abs().max()))


def clip_norm(t, limit=4.0):
    norm = t.norm()
    if norm > limit:
        return t * (limit / norm)
    return t


def log_stats(t):
    logger.info("mean=%.4f max=%.4f", t.mean().item(), t.max().item())
    return t


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


Pick = Callable[[Sequence], object]  # one of a sequence, as drawn from hypothesis or a seeded RNG

AVOIDED = frozenset() if os.environ.get("TRACECLI_FUZZ_KNOWN_BUGS") == "1" else frozenset(KNOWN_BUGS)


def build_program(pick: Pick, *, breaks: bool, main: bool, avoid: frozenset = frozenset()) -> str:
    """A program: its entry `f(x, pair)` of up to seven statements (half of them reading a
    value when `breaks`), and `sample_inputs`, or with `main` a main block calling it
    several times (MAIN_CALLS). `avoid`: the KNOWN_BUGS whose templates it leaves out."""
    container = pick(CONTAINERS)
    unpack = "a, b = pair" if container.startswith("(") else "a, b = pair['p'], pair['q']"
    names = ["x", "a", "b"]
    body = [unpack]
    left_out = {template for bug in avoid for template in KNOWN_BUGS[bug][1]}
    breaking = [template for template in BREAKS if template not in left_out]
    statements = [template for template in STATEMENTS if template not in left_out]
    for i in range(pick(range(1, 8))):
        template = pick(pick([statements, breaking]) if breaks else statements)
        for placeholder, forms in FORMS.items():
            while placeholder in template:
                template = template.replace(placeholder, pick(forms), 1)
        first, second = pick(names), pick(names)
        body.extend(template.format(f"v{i}", first, second).split("\n"))
        names.append(f"v{i}")
    chosen = [names[-1] if breaks else pick(names[3:] or names), pick(names[3:] or names)]
    body.append(pick(RETURNS).format(*chosen))
    lines = "\n".join("    " + stmt for stmt in body)
    source = HEADER + f"def f(x, pair):\n{lines}\n\n\n"
    if not main:
        return source + f"def sample_inputs(device):\n    return torch.randn(4, 4), {container.format(s='')}\n"
    return source + (f"def inputs(device, sign=1.0):\n    return torch.randn(4, 4) * sign, {container.format(s=' * sign')}\n"
                     f"\n\nif __name__ == '__main__':\n    {pick(MAIN_CALLS)}\n")


@st.composite
def programs(draw, breaks: bool = False, main: bool = False) -> str:
    return build_program(lambda options: draw(st.sampled_from(options)), breaks=breaks, main=main, avoid=AVOIDED)


PASSES = [[], ["dce,cse,rename"], ["lower,dce"]]
BREAK_PASSES = [*PASSES, ["fuse"], ["lower,cse,dce,rename,renumber"]]
# Programs that break run with --dynamic a third of the time (its segments symbolic).
DYNAMIC = [False, False, True]
EXECUTORS = ["torch", "prims"]


def program_for_seed(seed: int, avoid: frozenset = AVOIDED) -> tuple[str, list[str], str, bool]:
    """The command line's program for `seed`: one that breaks, from sample_inputs or a
    main block; the passes, the executor and whether --dynamic to run it with."""
    rng = random.Random(seed)
    source = build_program(rng.choice, breaks=True, main=rng.random() < 0.5, avoid=avoid)
    dynamic = rng.choice(DYNAMIC)
    return source, rng.choice(BREAK_PASSES), rng.choice(EXECUTORS), dynamic


def _examples(default: int) -> int:
    """`make test`'s sample, or TRACECLI_FUZZ_EXAMPLES programs per test."""
    return int(os.environ.get("TRACECLI_FUZZ_EXAMPLES") or default)


@contextlib.contextmanager
def _grad_mode_kept():
    """Grad mode as it was, whatever the program left (a cut inside no_grad left it off
    before 70f8f61): one example's leftover must not change the next, nor the tests after
    this file."""
    enabled = torch.is_grad_enabled()
    try:
        yield
    finally:
        torch.set_grad_enabled(enabled)


# A refusal in tracecli's own words (its internals failing), not a clear error about the program.
INTERNAL = (r"internal error|PassBrokeTrace|broke the trace|nothing before it kept|name 't\d+' is not defined|"
            r"KeyError: 't\d+'|object has no attribute|_\d+\(\) (takes|missing)|refuses its recorded arguments")


def _refused(exc: UserError) -> None:
    """A program tracecli refuses, allowed with one clear error: not one that says tracecli
    itself failed, unless a known bug (one of AVOIDED) says it."""
    message = str(exc)
    event(f"refused: {_why(exc)}")
    if re.search(INTERNAL, message):
        assert _known(message), f"refused in tracecli's own words: {message}"


def _known(message: str) -> list[str]:
    """The known bugs (of AVOIDED) whose words `message` has."""
    known = [bug for bug in AVOIDED if KNOWN_BUGS[bug][2] and re.search(KNOWN_BUGS[bug][2], message)]
    for bug in known:
        event(f"known bug: {bug}")
    return known


def _why(exc: UserError) -> str:
    """A refusal's message without its file and line, for hypothesis's statistics."""
    return re.sub(r"^\S+:\d+: ", "", str(exc))[:90]


def _problems(job) -> str:
    reports = [r for call in job.calls for r in ([call.report] if call.report else []) + list(call.rechecks.values())]
    return "\n".join(f"{check.name}: {check.problem}" for r in reports
                     for check in (*r.outputs, *r.written, *r.state, *r.gradients) if not check.match)


@settings(max_examples=_examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=programs(), passes=st.sampled_from(PASSES), executor=st.sampled_from(EXECUTORS))
def test_what_trace_accepts_run_matches(tmp_path, source, passes, executor):
    script = tmp_path / "program.py"
    script.write_text(source)
    try:
        trace_script(f"{script}:f", execute=False, steps=parse_passes(passes))
    except UserError as exc:
        event(f"refused: {_why(exc)}")
        return  # refused with a clear error: allowed, never wrong
    job = trace_script(f"{script}:f", steps=parse_passes(passes), executor=executor, repeat=0)
    assert job.match, "traced, but run disagrees with eager:\n" + _problems(job) + "\n" + textwrap.indent(
        source, "    "
    )


@settings(max_examples=_examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
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
    except UserError as exc:
        event(f"refused: {_why(exc)}")
        return  # refused with a clear error: allowed, never wrong
    assert job.match, "traced, but a call disagrees with eager:\n" + _problems(job) + "\n" + textwrap.indent(
        body, "    ")
    assert sum(len(call.served) for call in job.calls) == 4


def _check_in_segments(tmp_path, source: str, *, passes: list[str], **options) -> None:
    """`trace` and `run` as they are by default (cut where the Python reads a value): a
    program trace accepts runs as eager, on every call compared."""
    script = tmp_path / "program.py"
    script.write_text(source)
    steps = parse_passes(passes)
    with _grad_mode_kept():
        try:
            trace_script(f"{script}:f", execute=False, steps=steps, fullgraph=False, dynamic=options.get("dynamic", False))
        except UserError as exc:
            _refused(exc)
            return  # refused with a clear error: allowed, never wrong
    with _grad_mode_kept():
        try:
            job = trace_script(f"{script}:f", steps=steps, repeat=0, fullgraph=False, **options)
        except UserError as exc:  # traced, so run must not refuse it, but for a known bug's words
            if not _known(str(exc)):
                raise
            return
    assert job.match, "traced in segments, but run disagrees with eager:\n" + _problems(job) + "\n" + (
        textwrap.indent(source, "    "))


@settings(max_examples=_examples(20), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=programs(breaks=True), passes=st.sampled_from(BREAK_PASSES), executor=st.sampled_from(EXECUTORS),
       dynamic=st.sampled_from(DYNAMIC))
def test_a_program_that_breaks_runs_in_segments_as_eager(tmp_path, source, passes, executor, dynamic):
    _check_in_segments(tmp_path, source, passes=passes, executor=executor, dynamic=dynamic)


@settings(max_examples=_examples(12), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=programs(breaks=True, main=True), dynamic=st.sampled_from(DYNAMIC))
def test_a_main_block_calling_a_program_that_breaks_matches_on_every_call(tmp_path, source, dynamic):
    # Later calls are served by the segments the first made (traced again as they run);
    # inputs of the other sign send some calls down the other side of a branch.
    _check_in_segments(tmp_path, source, passes=[], dynamic=dynamic)


# The smallest programs of each of KNOWN_BUGS, with the options that show it: xfail while
# the bug is there.
_ENTRY = """\
import torch


def f(x):
{}


def sample_inputs(device):
    return (torch.randn(4, 4),)
"""
KNOWN_BUG_PROGRAMS: dict[str, list[tuple[str, dict]]] = {
    "view-of-a-transposed-tensor": [(_ENTRY.format("    v = x.transpose(0, 1).view(2, 8)\n    return x + x"),
                                     {"refused": "view"})],
}


@pytest.mark.parametrize("bug, number", [
    pytest.param(bug, number, marks=pytest.mark.xfail(reason=f"{bug}: {KNOWN_BUGS[bug][0]}", strict=False))
    for bug, programs in KNOWN_BUG_PROGRAMS.items() for number in range(len(programs))])
def test_known_bug(tmp_path, bug, number):
    source, options = KNOWN_BUG_PROGRAMS[bug][number]
    script = tmp_path / "program.py"
    script.write_text(source)
    if options.get("fresh"):  # as the command line meets it: in a process that traced nothing before
        import subprocess
        import sys

        passes = [arg for p in options.get("passes", []) for arg in ("-p", p)]
        done = subprocess.run([sys.executable, "-m", "tracecli", "run", f"{script}:f", "--no-timing", *passes],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return
    steps = parse_passes(options.get("passes", []))
    if options.get("refused"):  # eager refuses it: so must tracing, at its line
        with pytest.raises(UserError, match=options["refused"]), _grad_mode_kept():
            trace_script(f"{script}:f", repeat=0, fullgraph=False, execute=False, steps=steps)
        return
    with _grad_mode_kept():
        job = trace_script(f"{script}:f", repeat=0, fullgraph=False, dynamic=options.get("dynamic", False), steps=steps)
    assert job.match, _problems(job)


def _command_line(first: int, last: int, keep: str, avoid: frozenset) -> int:
    """Each seed's program through `tracecli run`, and where run does not exit 0, `tracecli
    trace`: a program trace accepts (exit 0) whose run exits otherwise, raises or hangs is
    kept in `keep` with both outputs. The count of those."""
    import pathlib
    import subprocess
    import sys
    import tempfile

    tracecli = str(pathlib.Path(sys.executable).with_name("tracecli"))
    out = pathlib.Path(keep)
    out.mkdir(parents=True, exist_ok=True)
    failed = 0

    def call(*argv: str) -> tuple[int, str]:
        try:
            done = subprocess.run([tracecli, *argv, "--debug"], capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            return -1, "timed out after 300 s"
        return done.returncode, done.stdout[-4000:] + "\n--- stderr ---\n" + done.stderr[-8000:]

    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(first, last):
            source, passes, executor, dynamic = program_for_seed(seed, avoid)
            script = pathlib.Path(tmp) / f"seed{seed}.py"
            script.write_text(source)
            options = [arg for p in passes for arg in ("-p", p)] + ["--dynamic"] * dynamic + ["--executor", executor]
            timing = ["--repeat", "2"] if seed % 4 == 0 else ["--no-timing"]  # timed calls serve it too
            code, output = call("run", f"{script}:f", *timing, *options)
            verdict = "ok"
            if code != 0:
                traced, trace_output = call("trace", f"{script}:f", *options[:-2])
                verdict = "FAILED" if traced != 2 else "refused"
                if traced != 0:
                    output = f"trace exit {traced}\n{trace_output}"
                if traced == 2 and re.search(INTERNAL, trace_output.split("--- stderr ---")[-1]):
                    verdict = "REFUSED-INTERNAL"  # exit 2, but in words of tracecli's own failure
            if verdict != "ok" and verdict != "refused":
                failed += 1
                (out / f"seed{seed}.py").write_text(source)
                (out / f"seed{seed}.txt").write_text(f"tracecli run {script.name}:f {' '.join(timing + options)}\n"
                                                     f"exit {code}\n{output}")
            why = output.strip().splitlines()[-1][:160] if code != 0 and output.strip() else ""
            print(f"seed {seed}: {verdict} (run exit {code}; {' '.join(timing + options)}) {why}", flush=True)
    print(f"{failed} of {last - first} programs failed; kept in {out}")
    return failed


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Programs that break, through tracecli trace and run, by seed.")
    parser.add_argument("first", type=int)
    parser.add_argument("last", type=int, help="one past the last seed")
    parser.add_argument("keep", nargs="?", default="fuzz-failures", help="where failing programs are kept")
    parser.add_argument("--known-bugs", action="store_true", help="make the KNOWN_BUGS constructs too")
    options = parser.parse_args()
    raise SystemExit(1 if _command_line(options.first, options.last, options.keep,
                                        frozenset() if options.known_bugs else AVOIDED) else 0)
