"""The main jobs: target and entry, device policy, the main-block takeover, the pass
pipeline, execution and the comparison with eager, and examine."""
