"""Reach: the share of real models and of compiler-test-style functions that tracecli
traces and matches, next to what torch.compile(fullgraph=True) captures (run.py)."""
