"""`tracecli bisect`: which pass, and which bound symbol inside it, breaks the result.

First the passes: the pipeline cut after each pass in turn, from the first, is run and
compared with eager; the first cut that disagrees names the pass. Then inside that
pass, as LLVM's `-opt-bisect-limit` limits passes but judged by numerics: the pass is
applied to the first N top-level bound symbols of its input trace only, the rest
spliced back as they were (reading the values the pass made of theirs), and N is
bisected between 0 (the pass sees nothing: the result matched, as before the pass)
and all of them (the pass as run: it did not). The answer is an N whose prefix of N-1
bound symbols matches and of N does not: the N-th bound symbol is the one whose
rewriting breaks the result. Every candidate is traced, compiled and compared anew
with the same seed, so the answer is the same on every run.

A program traced in segments (a graph break) is refused, at the line where Python reads
a value: the bound symbols counted are one trace's, and a pass that changes a value the
Python reads may change where, and how often, the program is cut.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tracecli.core.errors import UserError
from tracecli.core.names import NameRegistry
from tracecli.core.pytree import values_in
from tracecli.core.rewrite import map_trace
from tracecli.core.trace import Trace, collect_names
from tracecli.core.verify import VerificationError
from tracecli.executors import CompiledRunError
from tracecli.jobs.compare import quiet
from tracecli.jobs.runner import JobResult, trace_script
from tracecli.passes.base import Pass, PassResult
from tracecli.passes.pipeline import Step


def apply_to_prefix(pass_: Pass, trace: Trace, limit: int, options: dict) -> PassResult:
    """`pass_` applied to the first `limit` top-level bound symbols of `trace`; the rest
    follows unchanged, reading what the pass made of the values it reads."""
    if limit >= len(trace.bsyms):
        return pass_.run(trace, **options)
    head, rest = trace.bsyms[:limit], trace.bsyms[limit:]
    read_later = {v.name for b in rest for v in b.arg_values()} | {v.name for v in values_in(trace.output)}
    # What the head hands on: its outputs the rest or the return reads. They are the
    # prefix's return, so the pass keeps them (dce) and says what became of each.
    handed = list({v.name: v for b in head for v in b.output_values() if v.name in read_later}.values())
    result = pass_.run(trace.replace(bsyms=head, output=tuple(handed)), **options)
    new_head = result.trace.bsyms
    env = {old.name: new for old, new in zip(handed, values_in(result.trace.output), strict=False)}
    # A name the pass gave in the head that the rest defines too moves out of the rest's way.
    head_names = collect_names(trace.inputs, new_head)
    rest_names = collect_names((), rest)
    registry = NameRegistry(head_names | rest_names | trace.names)
    moved = {name: registry.fresh() for name in sorted(head_names & rest_names)}

    def fix(value):
        if value.name in env:
            return env[value.name]
        if value.name in moved:
            return value.renamed(moved[value.name])
        return value

    spliced = map_trace(trace.replace(bsyms=rest), fix)
    final = result.trace.replace(bsyms=(*new_head, *spliced.bsyms), output=spliced.output)
    value_map = {**result.value_map, **{k: v.name for k, v in env.items() if k != v.name}, **moved}
    return PassResult(final, result.changed, dict(result.stats), value_map)


def limited(step: Step, limit: int) -> Step:
    """`step` with its pass applied to the first `limit` bound symbols only."""

    def run(trace: Trace, **options) -> PassResult:
        return apply_to_prefix(step.pass_, trace, limit, options)

    return Step(Pass(step.pass_.name, step.pass_.description, run, step.pass_.options), step.options,
                step.option_text)


@dataclass
class Attempt:
    """One candidate pipeline, traced, compiled and compared with eager."""

    job: JobResult | None
    error: str = ""  # the pipeline or the compiled trace failed: why

    @property
    def broken(self) -> bool:
        return self.job is None or not self.job.match


@dataclass
class Bisection:
    target: str
    passes: list[str]
    verdicts: list[tuple[str, bool]] = field(default_factory=list)  # (after which pass, broken), initial first
    culprit: str | None = None  # the first pass after which the result is wrong
    before_pass: Trace | None = None  # the culprit's input trace (the call that broke)
    index: int | None = None  # 0-based: the bound symbol of `before_pass` whose rewriting breaks it
    good: Attempt | None = None  # the culprit limited to the bound symbols before it
    bad: Attempt | None = None  # ... and to that one too
    broken_before_passes: bool = False
    script: str = ""
    entry: str = ""

    @property
    def found(self) -> bool:
        return self.culprit is not None or self.broken_before_passes


def _call(job: JobResult | None, broken: bool = True) -> int:
    """The first call of the job that disagrees with eager (0 when none does)."""
    if job is None:
        return 0
    for k, call in enumerate(job.calls):
        if call.report is not None and call.report.match != broken:
            return k
    return 0


def refuse_segments(job: JobResult) -> None:
    """Bisection searches one trace: a call traced in segments is refused at its first read."""
    for call in job.calls:
        if not call.segments:
            continue
        cut = next((s.after for s in call.segments if s.after is not None), None)
        source = cut.source if cut is not None else next(s.reads[0][0] for s in call.segments if s.reads)
        why = f" ({cut.reason})" if cut is not None else ""
        raise UserError(f"bisect searches one trace, and {job.entry} is traced in segments: Python reads a value "
                        f"here{why}; keep it a tensor (torch.where for a branch) to bisect {job.entry}, or use "
                        "--fullgraph to see each such read refused",
                        file=source.file if source else None, line=source.line if source else None,
                        source=source.text if source else "")


def bisect(target: str, steps: list[Step], *, device: str = "cpu", input_specs: list[str] | None = None,
           seed: int = 0, script_args: list[str] | None = None, fullgraph: bool = False) -> Bisection:
    def attempt(candidate: list[Step]) -> Attempt:
        try:
            with quiet():  # the script runs once per candidate: its output would repeat
                job = trace_script(target, device=device, input_specs=input_specs, seed=seed, execute=True,
                                   steps=candidate, repeat=0, script_args=script_args, fullgraph=fullgraph)
        except (VerificationError, CompiledRunError) as exc:
            return Attempt(None, str(exc))
        refuse_segments(job)
        return Attempt(job)

    result = Bisection(target, [s.label for s in steps])
    whole = attempt(steps)
    if whole.job is not None:
        result.script, result.entry = whole.job.script.display, whole.job.entry
    if not whole.broken:
        result.verdicts.append((", ".join(result.passes) or "initial", False))
        return result
    previous = attempt([])
    result.verdicts.append(("initial", previous.broken))
    if previous.broken:
        result.broken_before_passes, result.bad = True, previous
        return result
    for k, step in enumerate(steps, start=1):
        current = whole if k == len(steps) else attempt(steps[:k])
        result.verdicts.append((step.label, current.broken))
        if current.broken:
            result.culprit = step.label
            break
        previous = current
    # Inside the culprit: its input is what the passes before it made (the trace of the
    # first call that breaks).
    before = steps[: len(result.verdicts) - 2]
    step = steps[len(result.verdicts) - 2]
    call = _call(current.job)
    source = previous.job.calls[min(call, len(previous.job.calls) - 1)]
    result.before_pass = source.final
    low, high = 0, max(len(c.final.bsyms) for c in previous.job.calls)
    good, bad = attempt([*before, limited(step, low)]), current
    if good.broken:  # broken with nothing to rewrite: no bound symbol is to blame
        result.bad = good
        return result
    while high - low > 1:
        middle = (low + high) // 2
        trial = attempt([*before, limited(step, middle)])
        if trial.broken:
            high, bad = middle, trial
        else:
            low, good = middle, trial
    result.index, result.good, result.bad = high - 1, good, bad
    return result
