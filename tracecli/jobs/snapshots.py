"""Golden traces: store a script's traces (`tracecli snapshot`) and compare a new run
with them up to renaming (`tracecli check`).

For each script and entry, DIR holds `<stem>.<entry>.trace`, the trace as `tracecli
trace` prints it (for a reader and for the diff), and `<stem>.<entry>.json`, what the
comparison needs: the settings it was traced with (passes, pass files, inputs, device,
seed, depth), tracecli's and torch's versions, and each trace's outline
(core/equivalence.py). A script whose main block calls its entry with several
signatures has one trace per distinct trace text, numbered in the order of their first
call: `<stem>.<entry>.1.trace`, `.2.trace`, ...
"""

from __future__ import annotations

import glob
import json
import math
import os
import tempfile
from dataclasses import dataclass, field, replace
from importlib import metadata

import torch

from tracecli.core.equivalence import Comparison, Outline, compare_traces, outline
from tracecli.core.errors import UserError
from tracecli.core.printing import format_backward, format_trace
from tracecli.core.trace import Trace
from tracecli.jobs.runner import split_target, trace_script
from tracecli.passes.pipeline import load_pass_file, parse_passes

FORMAT = 1


@dataclass(frozen=True)
class Settings:
    """How a snapshot's traces are made; `check` makes them again the same way."""

    passes: tuple[str, ...] = ()
    pass_files: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()  # --input specs; empty: sample_inputs() or the main block
    device: str = "cpu"
    seed: int = 0
    depth: str = "1"  # subsymbol levels in the stored text and in the comparison: a number or "all"

    @property
    def levels(self) -> float:
        return math.inf if self.depth == "all" else int(self.depth)

    def to_json(self) -> dict:
        return {"passes": list(self.passes), "pass_files": list(self.pass_files), "inputs": list(self.inputs),
                "device": self.device, "seed": self.seed, "depth": self.depth}

    @staticmethod
    def from_json(data: dict) -> Settings:
        return Settings(tuple(data["passes"]), tuple(data["pass_files"]), tuple(data["inputs"]), data["device"],
                        data["seed"], str(data["depth"]))


@dataclass
class Taken:
    """A script's distinct traces, made with `settings`."""

    script: str  # display path
    entry: str
    settings: Settings
    traces: list[Trace]

    @property
    def texts(self) -> list[str]:
        """Each trace as printed: a training step's backward follows it, as `trace` shows it."""
        return [_with_backward(format_trace(t, self.settings.levels), format_backward(t, self.settings.levels))
                for t in self.traces]


def _with_backward(text: str, backward: str) -> str:
    return text + "\n" + backward if backward else text


def versions() -> dict[str, str]:
    try:
        tracecli = metadata.version("tracecli")
    except metadata.PackageNotFoundError:
        tracecli = "unknown"
    return {"tracecli": tracecli, "torch": torch.__version__}


def expand(patterns: list[str]) -> list[str]:
    """Scripts (with their `:ENTRY`), globs expanded in sorted order; a pattern that
    matches nothing is bad input, not an empty success."""
    targets: list[str] = []
    for pattern in patterns:
        path, entry = split_target(pattern)
        if any(c in path for c in "*?["):
            found = sorted(glob.glob(path))
            if not found:
                raise UserError(f"{path}: no script matches")
            targets.extend(f"{p}:{entry}" if entry else p for p in found)
        else:
            targets.append(pattern)
    return targets


def take(target: str, settings: Settings) -> Taken:
    for path in settings.pass_files:
        load_pass_file(path)
    job = trace_script(target, device=settings.device, input_specs=list(settings.inputs) or None, seed=settings.seed,
                       execute=False, steps=parse_passes(list(settings.passes)))
    distinct: dict[str, Trace] = {}
    for call in job.calls:
        distinct.setdefault(format_trace(call.final, settings.levels), call.final)
    return Taken(job.script.display, job.entry, settings, list(distinct.values()))


def _stem(script: str) -> str:
    return os.path.basename(script).removesuffix(".py")


def trace_files(taken_or_stem: str, entry: str, count: int) -> list[str]:
    base = f"{taken_or_stem}.{entry}"
    return [f"{base}.trace"] if count == 1 else [f"{base}.{k}.trace" for k in range(1, count + 1)]


def _write(path: str, text: str) -> None:
    """Whole or not at all: a reader (or a failure halfway) never sees part of a file."""
    folder = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".snapshot")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _sidecar_text(sidecar: dict) -> str:
    """JSON with each bound symbol on a line of its own: a review reads the ops that changed."""
    lines = ["{"] + [f" {json.dumps(key)}: {json.dumps(value)}," for key, value in sidecar.items() if key != "traces"]
    lines.append(' "traces": [')
    for k, item in enumerate(sidecar["traces"]):
        body = {key: value for key, value in item["outline"].items() if key != "ops"}
        lines.append(f'  {{"file": {json.dumps(item["file"])}, "outline": {json.dumps(body)[:-1]}, "ops": [')
        lines.append(",\n".join("    " + json.dumps(op) for op in item["outline"]["ops"]))
        lines.append("  ]}}" + ("," if k < len(sidecar["traces"]) - 1 else ""))
    lines += [" ]", "}"]
    return "\n".join(line for line in lines if line) + "\n"


def write(folder: str, taken: Taken) -> list[str]:
    """The snapshot files of one script and entry; stale numbered traces are removed.
    Returns the paths written."""
    os.makedirs(folder, exist_ok=True)
    stem = _stem(taken.script)
    names = trace_files(stem, taken.entry, len(taken.traces))
    levels = taken.settings.levels
    sidecar = {
        "format": FORMAT, "script": taken.script, "entry": taken.entry, **versions(),
        "settings": taken.settings.to_json(),
        "traces": [{"file": name, "outline": outline(trace, levels).to_json()}
                   for name, trace in zip(names, taken.traces, strict=True)],
    }
    written = []
    for name, text in zip(names, taken.texts, strict=True):
        _write(os.path.join(folder, name), text)
        written.append(os.path.join(folder, name))
    json_path = os.path.join(folder, f"{stem}.{taken.entry}.json")
    _write(json_path, _sidecar_text(sidecar))
    written.append(json_path)
    for stale in glob.glob(os.path.join(glob.escape(folder), f"{glob.escape(stem)}.{taken.entry}*.trace")):
        if os.path.basename(stale) not in names:
            os.unlink(stale)
    return written


def snapshot(targets: list[str], folder: str, settings: Settings) -> list[Taken]:
    """Trace every script first, then write: a script that fails leaves DIR as it was."""
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise UserError(f"--dir {folder}: exists and is not a directory")
    made = [take(target, settings) for target in expand(targets)]
    seen: dict[tuple[str, str], str] = {}
    for taken in made:
        key = (_stem(taken.script), taken.entry)
        if key in seen and seen[key] != taken.script:
            raise UserError(f"{taken.script} and {seen[key]} would share the snapshot {key[0]}.{key[1]}: "
                            "snapshot them into different --dir")
        seen[key] = taken.script
    for taken in made:
        write(folder, taken)
    return made


# -- check ---------------------------------------------------------------------------------


@dataclass
class Stored:
    path: str  # the sidecar
    script: str
    entry: str
    settings: Settings
    versions: dict[str, str]
    outlines: list[Outline]
    texts: list[str]


def _load(path: str) -> Stored:
    try:
        with open(path) as f:
            data = json.load(f)
        if data.get("format") != FORMAT:
            raise UserError(f"{path}: snapshot format {data.get('format')!r}, this tracecli reads {FORMAT}")
        folder = os.path.dirname(path)
        texts = []
        for item in data["traces"]:
            with open(os.path.join(folder, item["file"])) as f:
                texts.append(f.read())
        return Stored(path, data["script"], data["entry"], Settings.from_json(data["settings"]),
                      {k: data.get(k, "unknown") for k in ("tracecli", "torch")},
                      [Outline.from_json(item["outline"]) for item in data["traces"]], texts)
    except OSError as exc:
        raise UserError(f"{path}: cannot read the snapshot: {exc.strerror}: {exc.filename}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise UserError(f"{path}: not a tracecli snapshot ({type(exc).__name__}: {exc}); "
                        "rewrite it with `tracecli snapshot` or `tracecli check --update`") from None


def find(folder: str, target: str) -> list[Stored]:
    """The snapshots of a script (of its named entry, or of every entry snapshotted)."""
    path, entry = split_target(target)
    pattern = f"{glob.escape(_stem(path))}.{entry or '*'}.json"
    found = [_load(p) for p in sorted(glob.glob(os.path.join(glob.escape(folder), pattern)))]
    return [s for s in found if os.path.realpath(s.script) == os.path.realpath(path)]


@dataclass
class Checked:
    """One script and entry: `equal`, `different`, `missing` (no snapshot), or `updated`."""

    target: str
    status: str
    entry: str = ""
    stored: Stored | None = None
    taken: Taken | None = None
    comparisons: list[Comparison] = field(default_factory=list)  # per trace, in order
    outlines: list[Outline] = field(default_factory=list)  # the new traces', as compared
    notes: list[str] = field(default_factory=list)


def _compare(stored: Stored, taken: Taken, strict_lines: bool) -> Checked:
    outlines = [outline(new, taken.settings.levels) for new in taken.traces]
    comparisons = [compare_traces(old, new, strict_lines=strict_lines)
                   for old, new in zip(stored.outlines, outlines, strict=False)]
    notes = []
    if len(stored.outlines) != len(taken.traces):
        notes.append(f"the script now makes {len(taken.traces)} distinct traces; the snapshot has {len(stored.outlines)}")
    now = versions()
    moved = [f"{k} {stored.versions[k]} -> {now[k]}" for k in ("tracecli", "torch") if stored.versions[k] != now[k]]
    different = bool(notes) or any(not c.equal for c in comparisons)
    if moved and different:
        notes.append("made with other versions: " + ", ".join(moved))
    return Checked(stored.script, "different" if different else "equal", taken.entry, stored, taken, comparisons,
                   outlines, notes)


def check(targets: list[str], folder: str, *, strict_lines: bool = False, update: bool = False,
          overrides: dict | None = None) -> list[Checked]:
    """Each script traced again as its snapshot says (options in `overrides` win) and
    compared with it. With `update`, what differs or is missing is written anew."""
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise UserError(f"--dir {folder}: exists and is not a directory")
    overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
    results: list[Checked] = []
    for target in expand(targets):
        stored = find(folder, target) if os.path.isdir(folder) else []
        if not stored:
            if update:
                taken = take(target, replace(Settings(), **overrides))
                results.append(Checked(target, "updated", taken.entry, taken=taken))
            else:
                results.append(Checked(target, "missing"))
            continue
        for snap in stored:
            entry = split_target(target)[1] or snap.entry
            taken = take(f"{split_target(target)[0]}:{entry}", replace(snap.settings, **overrides))
            checked = _compare(snap, taken, strict_lines)
            if update and checked.status == "different":
                checked.status = "updated"
            results.append(checked)
    if update:  # after every script traced: a failure leaves DIR as it was
        for checked in results:
            if checked.status == "updated":
                write(folder, checked.taken)
    return results
