"""A call traced in segments, as text: each segment's trace in order, and between two,
where and why the trace was cut, what Python read there, and what it hands on:

    # ── segment 2 of 2 · cut at train.py:14:  if loss.item() > 10:  (Tensor.item reads its value)
    # Python read t5.item() = 0.7342; it hands on t3, t5
    # train.py:step · device cpu
    def step_2(t3, t5, w):
      ...
"""

from __future__ import annotations

from tracecli.core.printing import format_trace


def segments_text(segments: list, whole_inputs: set[str], depth: float) -> str:
    """`segments`: SegmentShown per segment (jobs/segments.py); `whole_inputs`: the
    names of the call's own inputs (arguments and captured tensors), which a segment
    reads but no earlier segment hands on."""
    texts = []
    total = len(segments)
    for number, segment in enumerate(segments, 1):
        after, stages = segment.after, segment.stages
        trace = stages[-1].trace
        lines = []
        if after is None:
            lines.append(f"# ── segment 1 of {total}")
        else:
            where = ""
            if after.source is not None:
                where = f" at {after.source.file.rsplit('/', 1)[-1]}:{after.source.line}:  {after.source.text}"
            lines.append(f"# ── segment {number} of {total} · cut{where}  ({after.reason})")
            handed = [v.name for v in stages[0].trace.inputs if v.name not in whole_inputs]
            said = []
            if after.reads:
                said.append(f"Python read {', '.join(after.read_texts())}")
            said.append(f"it hands on {', '.join(handed)}" if handed else "it hands on no tensor")
            lines.append("# " + "; ".join(said))
        text = "\n".join(lines) + "\n" + format_trace(trace, depth)
        for source, how, name, got in segment.reads:
            where = f" ({source.file.rsplit('/', 1)[-1]}:{source.line})" if source is not None else ""
            text += f"# and Python read {how.format(name)} = {got}{where}, which an earlier segment made\n"
        texts.append(text)
    return "\n".join(texts)


__all__ = ["segments_text"]
