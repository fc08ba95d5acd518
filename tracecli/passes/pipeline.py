"""The pipeline: parse `-p` specs, run passes in order, time and verify each, keep
every intermediate trace (for `diff --each` and `--save`)."""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field

from tracecli.core.errors import UserError
from tracecli.core.gc_pause import gc_paused
from tracecli.core.trace import Trace
from tracecli.core.verify import VerificationError, verify
from tracecli.frontend.loader import load_registering_file
from tracecli.frontend.source import display_path
from tracecli.passes.base import REGISTRATIONS, REGISTRY, Pass, PassResult


class PassBrokeTrace(VerificationError):
    """A pass returned a trace that fails verification: exit 1, naming the pass."""


def _pass_failed(step: Step, exc: Exception) -> PassBrokeTrace:
    """A pass that raised: named with the line of its own file where it did."""
    code = getattr(step.pass_.run, "__code__", None)
    where = ""
    if code is not None:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == code.co_filename]
        if frames:
            frame = frames[-1]
            where = f" at {display_path(frame.filename)}:{frame.lineno} (`{(frame.line or '').strip()}`)"
    return PassBrokeTrace(f"pass {step.label} raised {type(exc).__name__}: {exc}{where}")


@dataclass(frozen=True)
class Step:
    pass_: Pass
    options: dict = field(default_factory=dict)  # keyword arguments for the pass
    option_text: str = ""  # as written after `name:`, so the header shows what was asked

    @property
    def label(self) -> str:
        return f"{self.pass_.name}:{self.option_text}" if self.option_text else self.pass_.name


@dataclass(frozen=True)
class Stage:
    """The trace after one step (the first stage is the traced program itself)."""

    name: str
    trace: Trace
    changed: bool = False
    stats: dict = field(default_factory=dict)
    seconds: float = 0.0
    value_map: dict = field(default_factory=dict)


def known_passes() -> str:
    return ", ".join(sorted(REGISTRY))


def _options(pass_: Pass, text: str) -> dict:
    """The keyword arguments `-p name:TEXT` asks for, read by the parser the pass was
    registered with."""
    if pass_.options is None:
        raise UserError(f"pass {pass_.name} takes no options (got {pass_.name}:{text})")
    try:
        return dict(pass_.options(text))
    except ValueError as exc:
        raise UserError(f"bad option for {pass_.name}: {text!r} ({exc})") from exc


def parse_passes(specs: list[str] | None) -> list[Step]:
    """`-p dce,cse -p rename` -> steps in order; unknown names exit 2 listing the known ones,
    and so does an empty name (`-p dce,,cse`, a trailing comma): a typo, not a no-op."""
    steps: list[Step] = []
    for spec in specs or []:
        for item in spec.split(","):
            item = item.strip()
            name, colon, option = item.partition(":")
            if not name:
                raise UserError(f"empty pass name in -p {spec!r} (known passes: {known_passes()})")
            pass_ = REGISTRY.get(name)
            if pass_ is None:
                raise UserError(f"unknown pass {name!r} (known passes: {known_passes()})")
            if colon and not option:
                raise UserError(f"empty option in -p {spec!r}: write {name} or {name}:OPTION")
            steps.append(Step(pass_, _options(pass_, option), option) if option else Step(pass_))
    return steps


BUILTIN = frozenset(REGISTRY)


def load_pass_file(path: str) -> list[str]:
    """Run a user's Python file whose `@register(...)` calls add passes; return their names."""
    return load_registering_file(path, REGISTRY, REGISTRATIONS, BUILTIN, kind="pass",
                                 decorator="tracecli.passes.register")


def run_pipeline(trace: Trace, steps: list[Step], *, check: bool = True) -> list[Stage]:
    stages = [Stage("initial", trace)]
    for step in steps:
        start = time.perf_counter()
        try:
            with gc_paused():
                result = step.pass_.run(trace, **step.options)
        except Exception as exc:
            raise _pass_failed(step, exc) from exc
        seconds = time.perf_counter() - start
        if not isinstance(result, PassResult):
            raise UserError(f"pass {step.label} returned {type(result).__name__}, not a PassResult")
        if check:
            try:
                verify(result.trace)
            except VerificationError as exc:
                raise PassBrokeTrace(f"pass {step.label} broke the trace: {exc.problem}", exc.context) from exc
        # The pipeline, not the pass, stamps the header: it lists every pass that ran.
        trace = result.trace.with_pass(step.label)
        stages.append(Stage(step.label, trace, result.changed, dict(result.stats), seconds, dict(result.value_map)))
    return stages
