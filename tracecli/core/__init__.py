"""The IR: values, symbols, bound symbols, traces, names, the printer and the verifier."""
