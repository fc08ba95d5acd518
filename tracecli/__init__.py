"""tracecli: see what a trace compiler does to your PyTorch code."""

__version__ = "0.1.0"
