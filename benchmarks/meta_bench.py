"""Section 11 of the benchmarks: tracing what this machine cannot hold. The whole
`tracecli trace` command, each run a process of its own (benchmarks/processes.py): its CPU
time (user and system, all threads: what load on a shared machine does not inflate, and
what the targets are read against), its wall time, and its peak resident memory:

- a 40 GB input (`-i f32[100000,100000]`) against the same script on `-i f32[3,4]` and
  against `import torch`: tracing reads only metadata, so both traces should cost the same;
  and `tracecli run` on it, which must refuse before allocating;
- a Llama-style decoder of Llama-3-70B's shape built under `with torch.device("meta"):`
  (benchmarks/meta_llama.py), its ids on meta and on the CPU; and Hugging Face's own
  Llama at that shape from `AutoModelForCausalLM.from_config`, when transformers is here.

    .venv/bin/python benchmarks/run.py --only meta
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from processes import measure

HERE = Path(__file__).resolve().parent
TRACECLI = [sys.executable, "-m", "tracecli"]
HUGE = "f32[100000,100000]"  # 4 * 10**10 bytes

TARGET_HUGE_S = 1.0  # "traces in about a second": the command's time beyond `import torch`
TARGET_FLAT = 1.10  # "with flat memory": peak RSS at most 10% over the same trace on f32[3,4]
TARGET_70B_S = 60.0
TARGET_70B_BYTES = 4e9

_THREE_OPS = "import torch\n\n\ndef f(x):\n    return torch.relu(x * 2 + 1)\n"
_HF_LLAMA = '''import torch
from transformers import AutoModelForCausalLM, LlamaConfig

config = LlamaConfig(vocab_size=128256, hidden_size=8192, intermediate_size=28672, num_hidden_layers=80,
                     num_attention_heads=64, num_key_value_heads=8, max_position_embeddings=8192,
                     rope_theta=500000.0)
with torch.device("meta"):
    model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16).eval()


def sample_inputs(device):
    return (torch.randint(0, config.vocab_size, (1, 512)),), {"use_cache": False}


def forward(ids, **kwargs):
    return model(ids, **kwargs).logits
'''


@dataclass
class MetaRow:
    name: str
    seconds: float  # CPU time (user + system), median over the runs
    wall: float  # wall clock, median over the runs
    peak_bytes: int  # the largest peak RSS over the runs
    exit_code: int
    message: str = ""  # the last line on stderr, for a command that refuses


def _row(name: str, argv: list[str], reps: int, env: dict[str, str] | None = None, cwd: Path | None = None) -> MetaRow:
    runs = [measure(argv, env, cwd) for _ in range(reps)]
    last = runs[-1].stderr.strip().splitlines()
    return MetaRow(name, statistics.median(r.cpu for r in runs), statistics.median(r.wall for r in runs),
                   max(r.peak_rss for r in runs), runs[-1].exit_code, last[-1] if last else "")


def bench_meta(reps: int = 3, with_transformers: bool = True) -> list[MetaRow]:
    with tempfile.TemporaryDirectory(prefix="tracecli-bench-") as tmp:
        folder = Path(tmp)
        (folder / "three_ops.py").write_text(_THREE_OPS)
        rows = [
            _row("import torch", [sys.executable, "-c", "import torch"], reps),
            _row("trace -i f32[3,4]", [*TRACECLI, "trace", "three_ops.py", "-i", "f32[3,4]"], reps, cwd=folder),
            _row(f"trace -i {HUGE}", [*TRACECLI, "trace", "three_ops.py", "-i", HUGE], reps, cwd=folder),
            _row(f"run -i {HUGE}", [*TRACECLI, "run", "three_ops.py", "-i", HUGE], reps, cwd=folder),
        ]
        model = str(HERE / "meta_llama.py") + ":forward"
        rows.append(_row("Llama-3-70B shape, ids on meta", [*TRACECLI, "trace", model], 1,
                         env={"META_LLAMA_IDS": "meta"}, cwd=folder))
        rows.append(_row("Llama-3-70B shape, ids on cpu", [*TRACECLI, "trace", model], 1,
                         env={"META_LLAMA_IDS": "cpu"}, cwd=folder))
        if with_transformers and importlib.util.find_spec("transformers") is not None:
            (folder / "hf_llama_70b.py").write_text(_HF_LLAMA)
            rows.append(_row("HF Llama from_config, 70B shape, ids on cpu",
                             [*TRACECLI, "trace", "hf_llama_70b.py:forward"], 1, cwd=folder))
    return rows


def _mb(count: int) -> str:
    return f"{count / 1e6:.0f} MB"


def print_meta(rows: list[MetaRow]) -> None:
    print("11. Beyond this machine: `tracecli trace` of a 40 GB input and of a 70B model built on meta "
          "(one process per run)")
    print(f"   {'command':<46}{'cpu':>9}{'wall':>9}{'peak RSS':>11}{'exit':>6}")
    for r in rows:
        print(f"   {r.name:<46}{r.seconds:>7.2f} s{r.wall:>7.2f} s{_mb(r.peak_bytes):>11}{r.exit_code:>6}")
    refusal = next((r for r in rows if r.name.startswith("run -i")), None)
    if refusal is not None:
        print(f"   run says: {refusal.message}")
    print("   each a whole command, start-up included; `import torch` alone for reference; cpu = user + system time")
    print()


def meta_targets(rows: list[MetaRow]) -> list[tuple[str, str, str, bool]]:
    """The summary's lines: (what, measured, target, met)."""
    by_name = {r.name: r for r in rows}
    lines = []
    base, small, huge = by_name.get("import torch"), by_name.get("trace -i f32[3,4]"), by_name.get(f"trace -i {HUGE}")
    if base and small and huge:
        beyond = huge.seconds - base.seconds
        lines.append(("trace of a 40 GB input, cpu s beyond import torch", f"{beyond:.2f} s",
                      f"<= {TARGET_HUGE_S:.1f} s", huge.exit_code == 0 and beyond <= TARGET_HUGE_S))
        same = huge.seconds / small.seconds
        lines.append(("trace of a 40 GB input, cpu s / on f32[3,4]", f"{same:.2f}x", f"<= {TARGET_FLAT:.2f}x",
                      huge.exit_code == 0 and same <= TARGET_FLAT))
        flat = huge.peak_bytes / small.peak_bytes
        lines.append(("trace of a 40 GB input, peak RSS / on f32[3,4]", f"{flat:.2f}x", f"<= {TARGET_FLAT:.2f}x",
                      huge.exit_code == 0 and flat <= TARGET_FLAT))
    run = by_name.get(f"run -i {HUGE}")
    if run and small:
        lines.append(("run of a 40 GB input refuses, exit code", f"{run.exit_code}", "2, flat RSS",
                      run.exit_code == 2 and run.peak_bytes <= TARGET_FLAT * small.peak_bytes))
    for r in rows:
        if "70B" in r.name:
            ok = r.exit_code == 0
            lines.append((f"{r.name}: cpu", f"{r.seconds:.1f} s", f"<= {TARGET_70B_S:.0f} s",
                          ok and r.seconds <= TARGET_70B_S))
            lines.append((f"{r.name}: peak RSS", _mb(r.peak_bytes), f"<= {TARGET_70B_BYTES / 1e9:.0f} GB",
                          ok and r.peak_bytes <= TARGET_70B_BYTES))
    return lines
