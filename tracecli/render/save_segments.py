"""`--save DIR` of a call traced in segments: each stage file holds every segment, in
order, each headed as `trace` heads it, then a function named after the entry that
runs them one after the other, a `sample_inputs(device)` and a main block:

    # ── segment 2 of 2 · cut at br.py:5:  if y.sum() > 0:  (bool() of a tensor: a branch on its value)
    # Python read bool(t3) = False; it hands on y
    # br.py:f · device cpu · passes: dce
    def f_2(y):
      ...


    def f(x):
        made = {'x': x}
        made.update(zip(('t1', 't3'), f_1(made['x'])))
        return f_2(made['t1'])

The function runs the path the traced call took: the Python between the segments is not
in the file, so `tracecli run DIR/01-dce.py` checks that path's ops against eager.
"""

from __future__ import annotations

from tracecli.core.printing import format_trace
from tracecli.core.pytree import values_in
from tracecli.core.regions import is_region, region_symbol
from tracecli.core.trace import Trace
from tracecli.executors.codegen import script_header
from tracecli.jobs.segment_text import heading, later_reads
from tracecli.render.save import check_saveable, helpers, sample_inputs_lines, write_stage_files


def distinct_regions(traces: list[Trace]) -> list[Trace]:
    """The segments with a region named as one of an earlier segment's renamed after its
    segment (`inductor.fusion0_2`): each segment fuses on its own, and one file holds them."""
    taken: set[tuple[str, str]] = set()
    out = []
    for number, trace in enumerate(traces, 1):
        bsyms = []
        for bsym in trace.bsyms:
            if is_region(bsym):
                key = (bsym.symbol.namespace, bsym.symbol.name)
                if key in taken:
                    name = f"{bsym.symbol.name}_{number}"
                    bsym = bsym.replace(symbol=region_symbol(name, bsym.symbol.namespace))
                    key = (bsym.symbol.namespace, name)
                taken.add(key)
            bsyms.append(bsym)
        out.append(trace.replace(bsyms=tuple(bsyms)))
    return out


def _free(name: str, used: set[str]) -> str:
    while name in used:
        name += "_"
    return name


def _chain(entry: str, whole, cut: tuple, traces: list[Trace]) -> list[str]:
    """The function that runs the segments in order, each given what the call's inputs
    and the earlier segments made. `cut`: the segments as traced (frontend/segments.py),
    whose names for the values handed on are unique across the call, where the passes
    name each segment on its own; a stage's inputs and outputs keep their places."""
    params = [v.name for v in whole]
    made = _free("made", set(params) | {t.name for t in traces})
    lines = [f"def {entry}({', '.join(params)}):",
             "    # The segments in order: the path the traced call took (the Python between them,",
             "    # which read the values their headings show, is not here).",
             f"    {made} = {{{', '.join(f'{p!r}: {p}' for p in params)}}}"]
    for number, (segment, trace) in enumerate(zip(cut, traces, strict=True), 1):
        reads = ", ".join(f"{made}[{v.name!r}]" for v in segment.trace.inputs)
        call = f"{trace.name}({reads})"
        if number == len(traces):
            lines.append(f"    return {call}")
            break
        names = [v.name for v in values_in(segment.trace.output)]
        lines.append(f"    {made}.update(zip({tuple(names)!r}, {call}))")
    return lines


def segments_file(entry: str, whole, segments: list, cut: tuple, stage: int, depth: float,
                  examples: list | None) -> str:
    """Stage `stage` of every segment (`segments`: SegmentShown, `cut`: the same as
    traced) as one runnable file. `whole`: the call's own input values (what the entry's
    function takes); `examples`: the objects it was called with."""
    traces = distinct_regions([segment.stages[stage].trace for segment in segments])
    names = {v.name for v in whole}
    lines = [script_header(), "", *helpers(traces)]
    for number, (segment, trace) in enumerate(zip(segments, traces, strict=True), 1):
        lines += heading(segment, number, len(segments), names)
        lines.append(format_trace(trace, depth).rstrip("\n"))
        lines += [*later_reads(segment), "", ""]
    lines += [*_chain(entry, whole, cut, traces), "", ""]
    lines += sample_inputs_lines(whole, examples)
    device = traces[0].info.device
    lines += ["", "", 'if __name__ == "__main__":', f"    print({entry}(*sample_inputs({device!r})))", ""]
    return "\n".join(lines)


def check_segments_saveable(call) -> None:
    """Refuse, naming the segment and what it refers to, before anything is written."""
    for number, segment in enumerate(call.segments, 1):
        check_saveable(segment.stages, f" of segment {number} of {len(call.segments)}")


def save_segments(directory: str, call, depth: float, report: dict) -> list[str]:
    """`00-initial.py`, `01-<pass>.py`, ... with every segment of `call` at that stage,
    and `report.json`; nothing is written when a segment cannot be saved."""
    check_segments_saveable(call)
    program = call.program
    whole = program.trace.inputs
    stages = call.segments[0].stages  # every segment went through the same passes
    texts = [segments_file(program.trace.name, whole, call.segments, program.segments, k, depth, list(program.inputs))
             for k in range(len(stages))]
    return write_stage_files(directory, [stage.name for stage in stages], texts, report)


__all__ = ["check_segments_saveable", "distinct_regions", "save_segments", "segments_file"]
