"""Golden traces: store a script's traces (`tracecli snapshot`) and compare a new run
with them up to renaming (`tracecli check`).

For each script and entry, DIR holds `<stem>.<entry>.trace`, the trace as `tracecli
trace` prints it (for a reader and for the diff), and `<stem>.<entry>.json`, what the
comparison needs: the settings it was traced with (passes, pass files, inputs, device,
seed, depth), tracecli's and torch's versions, and each trace's outline
(core/equivalence.py). A script whose main block calls its entry with several
signatures has one trace per distinct trace text, numbered in the order of their first
call: `<stem>.<entry>.1.trace`, `.2.trace`, ...

A call traced in segments (a graph break) is one trace file holding its segments as
`trace` prints them, each headed by where the trace was cut; its outline is per segment,
with that cut. `check` compares segment with segment, and where the trace is cut.
"""

from __future__ import annotations

import glob
import json
import math
import os
import tempfile
from dataclasses import dataclass, field, replace

import torch

from tracecli.core.equivalence import Comparison, Outline, outline
from tracecli.core.errors import UserError
from tracecli.core.printing import format_backward, format_trace
from tracecli.core.trace import Trace
from tracecli.jobs.runner import split_target, trace_script
from tracecli.jobs.segment_text import segments_text
from tracecli.jobs.snapshot_segments import Compared, Cut, Segmented, StoredSegments, compare_item
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
    """A script's distinct traces, made with `settings`: each a trace, or the segments of
    a call traced in segments; `texts`, each as `tracecli trace` prints it."""

    script: str  # display path
    entry: str
    settings: Settings
    traces: list[Trace | Segmented]
    texts: list[str] = field(default_factory=list)


def _with_backward(text: str, backward: str) -> str:
    return text + "\n" + backward if backward else text


def versions() -> dict[str, str]:
    # Deferred: importlib.metadata costs every command's start-up some 30 ms, and only
    # snapshots and --version read it.
    from importlib import metadata

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


def take(target: str, settings: Settings, fullgraph: bool = False) -> Taken:
    """`fullgraph`: a read of a tensor's value is refused at its line (exit 2), where it
    would cut the trace into segments."""
    for path in settings.pass_files:
        load_pass_file(path)
    job = trace_script(target, device=settings.device, input_specs=list(settings.inputs) or None, seed=settings.seed,
                       execute=False, steps=parse_passes(list(settings.passes)), fullgraph=fullgraph)
    levels = settings.levels
    distinct: dict[str, Trace | Segmented] = {}
    texts: dict[str, str] = {}
    for call in job.calls:
        if call.segments:
            text = segments_text(call.segments, {v.name for v in call.program.trace.inputs}, levels)
            traced: Trace | Segmented = [(Cut.of(segment.after), segment.stages[-1].trace) for segment in call.segments]
            key = text
        else:
            # A training step's backward follows its trace, as `trace` shows it.
            key, traced = format_trace(call.final, levels), call.final
            text = _with_backward(key, format_backward(call.final, levels))
        distinct.setdefault(key, traced)
        texts.setdefault(key, text)
    return Taken(job.script.display, job.entry, settings, list(distinct.values()), list(texts.values()))


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
        comma = "," if k < len(sidecar["traces"]) - 1 else ""
        if "segments" not in item:
            lines += _outline_lines(f'  {{"file": {json.dumps(item["file"])}, ', item["outline"], "    ", "  ]}}" + comma)
            continue
        lines.append(f'  {{"file": {json.dumps(item["file"])}, "segments": [')
        for m, segment in enumerate(item["segments"]):
            end = "   ]}}" + ("," if m < len(item["segments"]) - 1 else "")
            lines += _outline_lines(f'   {{"break": {json.dumps(segment["break"])}, ', segment["outline"], "    ", end)
        lines.append("  ]}" + comma)
    lines += [" ]", "}"]
    return "\n".join(line for line in lines if line) + "\n"


def _outline_lines(start: str, outline_json: dict, indent: str, end: str) -> list[str]:
    """`start` then `"outline": {...` with its ops one a line, closed by `end`."""
    body = {key: value for key, value in outline_json.items() if key != "ops"}
    return [f'{start}"outline": {json.dumps(body)[:-1]}, "ops": [',
            ",\n".join(indent + json.dumps(op) for op in outline_json["ops"]), end]


def _item(name: str, traced: Trace | Segmented, levels: float) -> dict:
    """A trace's entry in the sidecar: its file and outline, or per segment the cut
    before it and its outline."""
    if isinstance(traced, Trace):
        return {"file": name, "outline": outline(traced, levels).to_json()}
    return {"file": name, "segments": [{"break": cut.to_json() if cut else None, "outline": outline(trace, levels).to_json()}
                                       for cut, trace in traced]}


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
        "traces": [_item(name, traced, levels) for name, traced in zip(names, taken.traces, strict=True)],
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


def snapshot(targets: list[str], folder: str, settings: Settings, fullgraph: bool = False) -> list[Taken]:
    """Trace every script first, then write: a script that fails leaves DIR as it was."""
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise UserError(f"--dir {folder}: exists and is not a directory")
    made = [take(target, settings, fullgraph) for target in expand(targets)]
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
    outlines: list[Outline | StoredSegments]
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
                      [_stored(item) for item in data["traces"]], texts)
    except OSError as exc:
        raise UserError(f"{path}: cannot read the snapshot: {exc.strerror}: {exc.filename}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise UserError(f"{path}: not a tracecli snapshot ({type(exc).__name__}: {exc}); "
                        "rewrite it with `tracecli snapshot` or `tracecli check --update`") from None


def _stored(item: dict) -> Outline | StoredSegments:
    if "segments" in item:  # a call traced in segments
        return [(Cut.from_json(part["break"]), Outline.from_json(part["outline"])) for part in item["segments"]]
    return Outline.from_json(item["outline"])


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
    compared: list[Compared] = field(default_factory=list)  # per trace (per segment of one cut), in order
    notes: list[str] = field(default_factory=list)

    @property
    def comparisons(self) -> list[Comparison]:
        return [c.comparison for c in self.compared]


def _compare(stored: Stored, taken: Taken, strict_lines: bool) -> Checked:
    compared, notes = [], []
    count = len(taken.traces)
    for k, (old, new) in enumerate(zip(stored.outlines, taken.traces, strict=False)):
        label = f"trace {k + 1} of {count}" if count > 1 else ""
        items, said = compare_item(k, label, old, new, stored.texts[k], taken.texts[k], taken.settings.levels,
                                   strict_lines)
        compared += items
        notes += said
    if len(stored.outlines) != len(taken.traces):
        notes.append(f"the script now makes {len(taken.traces)} distinct traces; the snapshot has {len(stored.outlines)}")
    now = versions()
    moved = [f"{k} {stored.versions[k]} -> {now[k]}" for k in ("tracecli", "torch") if stored.versions[k] != now[k]]
    different = bool(notes) or any(not c.comparison.equal for c in compared)
    if moved and different:
        notes.append("made with other versions: " + ", ".join(moved))
    return Checked(stored.script, "different" if different else "equal", taken.entry, stored, taken, compared, notes)


def check(targets: list[str], folder: str, *, strict_lines: bool = False, update: bool = False,
          overrides: dict | None = None, fullgraph: bool = False) -> list[Checked]:
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
                taken = take(target, replace(Settings(), **overrides), fullgraph)
                results.append(Checked(target, "updated", taken.entry, taken=taken))
            else:
                results.append(Checked(target, "missing"))
            continue
        for snap in stored:
            entry = split_target(target)[1] or snap.entry
            taken = take(f"{split_target(target)[0]}:{entry}", replace(snap.settings, **overrides), fullgraph)
            checked = _compare(snap, taken, strict_lines)
            if update and checked.status == "different":
                checked.status = "updated"
            results.append(checked)
    if update:  # after every script traced: a failure leaves DIR as it was
        for checked in results:
            if checked.status == "updated":
                write(folder, checked.taken)
    return results
