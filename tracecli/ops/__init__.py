"""Operations: prims (meta rule + torch implementation), ltorch (torch-level symbols
that decompose into prims), the torch-callable map and the opaque fallback."""

# The printer (in core, which imports no torch) learns here how torch objects are
# spelled: whatever prints or compiles a trace has imported this package.
from tracecli.ops import torch_paths  # noqa: E402, F401
