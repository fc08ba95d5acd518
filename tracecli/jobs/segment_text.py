"""A call traced in segments, as text: each segment's trace in order, and between two,
where and why the trace was cut, what Python read there, and what it hands on:

    # ── segment 2 of 2 · cut at train.py:14:  if loss.item() > 10:  (Tensor.item reads its value)
    # Python read t5.item() = 0.7342; it hands on t3, t5
    # train.py:step · device cpu
    def step_2(t3, t5, w):
      ...

`diff`, `--save` and snapshots head each segment the same way, from `heading` and
`later_reads`, so a segment reads alike wherever it is shown. (Here, not in render:
a snapshot stores this text and `check` cuts it back into segments.)
"""

from __future__ import annotations

from tracecli.core.printing import format_trace

# Every segment's text begins with this: a saved or stored text splits into segments here.
MARK = "# ── segment "


def cut_where(after) -> str:
    """`br.py:5:  if y.sum() > 0:`: the user's line a break cut the trace at ("" when unknown)."""
    if after is None or after.source is None:
        return ""
    return f"{after.source.file.rsplit('/', 1)[-1]}:{after.source.line}:  {after.source.text}"


def heading(segment, number: int, total: int, whole_inputs: set[str]) -> list[str]:
    """The comment lines above a segment: which of how many, where and why the trace was
    cut before it, what Python read there and which values earlier segments hand it."""
    after, stages = segment.after, segment.stages
    if after is None:
        return [f"{MARK}1 of {total}"]
    where = cut_where(after)
    lines = [f"{MARK}{number} of {total} · cut{' at ' + where if where else ''}  ({after.reason})"]
    handed = [v.name for v in stages[0].trace.inputs if v.name not in whole_inputs]
    said = []
    if after.reads:
        said.append(f"Python read {', '.join(after.read_texts())}")
    said.append(f"it hands on {', '.join(handed)}" if handed else "it hands on no tensor")
    lines.append("# " + "; ".join(said))
    return lines


def later_reads(segment) -> list[str]:
    """The lines after a segment: what its Python read of values an earlier one made."""
    lines = []
    for source, how, name, got in segment.reads:
        where = f" ({source.file.rsplit('/', 1)[-1]}:{source.line})" if source is not None else ""
        lines.append(f"# and Python read {how.format(name)} = {got}{where}, which an earlier segment made")
    return lines


def segments_text(segments: list, whole_inputs: set[str], depth: float) -> str:
    """`segments`: SegmentShown per segment (jobs/segments.py); `whole_inputs`: the
    names of the call's own inputs (arguments and captured tensors), which a segment
    reads but no earlier segment hands on."""
    texts = []
    total = len(segments)
    for number, segment in enumerate(segments, 1):
        text = "\n".join(heading(segment, number, total, whole_inputs)) + "\n"
        text += format_trace(segment.stages[-1].trace, depth)
        text += "".join(line + "\n" for line in later_reads(segment))
        texts.append(text)
    return "\n".join(texts)


def split_segments(text: str) -> list[str]:
    """A call's text (`segments_text`'s) cut back into its segments' texts, each from its
    heading on, without the blank line that joins them."""
    pieces: list[list[str]] = []
    for line in text.splitlines(keepends=True):
        if line.startswith(MARK) or not pieces:
            pieces.append([])
        pieces[-1].append(line)
    texts = ["".join(piece) for piece in pieces]
    return [t[:-1] if t.endswith("\n\n") else t for t in texts]


__all__ = ["MARK", "cut_where", "heading", "later_reads", "segments_text", "split_segments"]
