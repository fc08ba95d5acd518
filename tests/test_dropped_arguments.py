"""torch.nn.functional calls whose __torch_function__ hand-off drops an argument: the
tracer restores each one, and a scan of torch's sources finds no other."""

import ast
import inspect
import textwrap

import torch
import torch.nn.functional as F

from tracecli.frontend.dropped_arguments import DROPPED
from tracecli.frontend.tracer import trace_callable


def _dropped_by_torch() -> dict:
    found = {}
    for name in dir(F):
        function = getattr(F, name)
        if not inspect.isfunction(function):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
        except (OSError, TypeError):
            continue
        definition = tree.body[0]
        if not isinstance(definition, ast.FunctionDef):
            continue
        params = [a.arg for a in definition.args.args + definition.args.kwonlyargs]
        for node in ast.walk(definition):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "handle_torch_function":
                passed = {a.id for a in node.args[2:] if isinstance(a, ast.Name)}
                passed |= {k.value.id for k in node.keywords if isinstance(k.value, ast.Name)}
                missing = tuple(p for p in params if p not in passed)
                if missing:
                    found[function] = missing
    return found


def test_every_argument_torch_drops_is_restored():
    assert _dropped_by_torch() == DROPPED


def test_a_weighted_l1_loss_keeps_its_weight():
    x, y, w = torch.rand(4), torch.rand(4), torch.rand(4)
    program = trace_callable(lambda x, y, w: F.l1_loss(x, y, weight=w), (x, y, w), name="f")
    (call,) = program.trace.bsyms
    assert call.symbol.name == "l1_loss" and any(getattr(v, "name", "") == "w" for v in call.arg_values())
