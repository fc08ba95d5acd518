"""How a script's main block uses its possible entries: which it calls, how often, and
whether with tensors, read from its source (nothing runs).

What a user calls the model is what the program calls over and over with tensors: an
`Attention` module called in a loop, not the `precompute_freqs_cis(dim, end)` helper
called once with numbers before it; a `train_step(model, opt, x, y)` called for every
batch. The main blocks are walked, and the script's functions they call in turn (with
what they are given: a model passed to `train(model, data)` is the model inside it), and
each call of a candidate is counted, a call in a loop as `LOOP` calls. The variables are
followed far enough to tell what a call is given: a module built from a class
(`attn = Attention(...)`, `.eval()`, `.to(device)`), a tensor (made by torch, returned by
a module or by the script's own function, a loop's batch), or something else (numbers,
argparse's namespace). A tie between a function and what it calls (`train_step` and the
model it runs) goes to the function, which does more of the program's work.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass

import torch

LOOP = 10  # a call in a loop counts as this many calls: the loop is there to repeat it
_MOST_DESCENTS = 200  # how many function bodies one walk may enter (each call enters again)

TENSOR = "tensor"  # the kinds of value followed; a module is ("module", candidate name or None)
_RETURNS_SELF = frozenset({"eval", "train", "to", "cuda", "cpu", "float", "half", "double", "bfloat16",
                           "requires_grad_", "type", "to_empty"})


@dataclass
class Use:
    """How the main block uses one candidate."""

    calls: int = 0  # calls, each in a loop counting LOOP per loop
    with_tensors: bool = False  # some call gives it a tensor
    depth: int = 0  # fewest function calls between the main block and a call of it
    line: int = 0  # its first call
    inside: str = ""  # the function that makes that call ("" for the main block or main())
    in_loop: bool = False


def main_block_uses(namespace: dict, tree: ast.Module, main_blocks: list[ast.stmt],
                    candidates: set[str]) -> dict[str, Use]:
    """candidate name -> how the main blocks use it, for the candidates they call."""
    walker = _Walker(namespace, tree, candidates)
    walker.block(main_blocks, {}, 1, 0, "")
    return walker.uses


def describe(use: Use, file: str) -> str:
    how = "in a loop" if use.in_loop else ("once" if use.calls == 1 else f"{use.calls} times")
    return f"{how}{'' if use.with_tensors else ', without tensors'} ({os.path.basename(file)}:{use.line})"


class _Walker:
    def __init__(self, namespace: dict, tree: ast.Module, candidates: set[str]):
        self.namespace = namespace
        self.candidates = candidates
        self.uses: dict[str, Use] = {}
        # The script's own top-level functions, which a call walks into.
        self.functions = {node.name: node for node in tree.body
                          if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.entered: list[str] = []  # the functions being walked, innermost last
        self.descents = 0

    # -- statements ------------------------------------------------------------------

    def block(self, body: list[ast.stmt], env: dict, weight: int, depth: int, inside: str) -> list:
        """Walk `body`; the kinds of what its return statements return."""
        returns: list = []
        for stmt in body:
            returns += self.statement(stmt, env, weight, depth, inside)
        return returns

    def statement(self, stmt: ast.stmt, env: dict, weight: int, depth: int, inside: str) -> list:
        kind = lambda expr, w=weight: self.kind(expr, env, w, depth, inside)  # noqa: E731
        if isinstance(stmt, ast.Assign):
            value = kind(stmt.value)
            for target in stmt.targets:
                _bind(target, value, env)
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and stmt.value is not None:
            value = kind(stmt.value)
            if isinstance(stmt, ast.AnnAssign) or value == TENSOR:
                _bind(stmt.target, value, env)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            _bind(stmt.target, self.items_of(stmt.iter, env, weight, depth, inside), env)
            out = self.block(stmt.body, env, weight * LOOP, depth, inside)
            return out + self.block(stmt.orelse, env, weight, depth, inside)
        elif isinstance(stmt, ast.While):
            kind(stmt.test, weight * LOOP)
            return self.block(stmt.body, env, weight * LOOP, depth, inside) + self.block(
                stmt.orelse, env, weight, depth, inside)
        elif isinstance(stmt, ast.If):
            kind(stmt.test)
            return self.block(stmt.body, env, weight, depth, inside) + self.block(stmt.orelse, env, weight, depth,
                                                                                  inside)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                kind(item.context_expr)
            return self.block(stmt.body, env, weight, depth, inside)
        elif isinstance(stmt, ast.Try):
            return [r for part in (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody)
                    for r in self.block(part, env, weight, depth, inside)]
        elif isinstance(stmt, ast.Return) and stmt.value is not None:
            return [kind(stmt.value)]
        elif isinstance(stmt, ast.Expr):
            kind(stmt.value)
        return []

    def items_of(self, iterable: ast.expr, env: dict, weight: int, depth: int, inside: str):
        """The kind of what a loop over `iterable` gets each time round."""
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name):
            args = iterable.args
            if iterable.func.id == "range":
                for arg in args:
                    self.kind(arg, env, weight, depth, inside)
                return None
            if iterable.func.id == "enumerate" and args:
                return (None, self.items_of(args[0], env, weight, depth, inside))
            if iterable.func.id == "zip":
                return tuple(self.items_of(arg, env, weight, depth, inside) for arg in args)
        if isinstance(iterable, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) for e in iterable.elts):
            return None
        self.kind(iterable, env, weight, depth, inside)
        return TENSOR  # batches of a data loader, a list of inputs

    # -- expressions -----------------------------------------------------------------

    def kind(self, expr: ast.expr, env: dict, weight: int, depth: int, inside: str):
        """The kind of value `expr` makes, counting the candidate calls in it."""
        if isinstance(expr, ast.Call):
            return self.call(expr, env, weight, depth, inside)
        if isinstance(expr, ast.Name):
            if expr.id in env:
                return env[expr.id]
            return _kind_of_object(self.namespace.get(expr.id), expr.id)
        if isinstance(expr, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            local = dict(env)
            for comp in expr.generators:
                _bind(comp.target, self.items_of(comp.iter, local, weight, depth, inside), local)
            parts = [expr.key, expr.value] if isinstance(expr, ast.DictComp) else [expr.elt]
            kinds = [self.kind(part, local, weight * LOOP, depth, inside) for part in parts]
            return TENSOR if any(map(_holds_tensor, kinds)) else None
        if isinstance(expr, (ast.Tuple, ast.List)):
            return tuple(self.kind(e, env, weight, depth, inside) for e in expr.elts)
        if isinstance(expr, (ast.Lambda, ast.Constant)):
            return None
        kinds = [self.kind(child, env, weight, depth, inside) for child in ast.iter_child_nodes(expr)
                 if isinstance(child, ast.expr)]
        if isinstance(expr, ast.Attribute):
            return None  # `x.shape`, `args.dim`: not a tensor to count on
        if isinstance(expr, ast.Subscript):
            return kinds[0] if kinds[0] == TENSOR or isinstance(kinds[0], tuple) else None
        return TENSOR if TENSOR in kinds else None

    def call(self, node: ast.Call, env: dict, weight: int, depth: int, inside: str):
        given = [self.kind(arg.value if isinstance(arg, ast.Starred) else arg, env, weight, depth, inside)
                 for arg in node.args]
        named = {kw.arg: self.kind(kw.value, env, weight, depth, inside) for kw in node.keywords}
        tensors = any(_holds_tensor(k) for k in (*given, *named.values()))
        func = node.func
        if isinstance(func, ast.Attribute):
            owner = self.kind(func.value, env, weight, depth, inside)
            if _is_module(owner):
                if func.attr in ("forward", "__call__"):
                    self.count(owner[1], node, weight, depth, inside, tensors)
                    return TENSOR
                return owner if func.attr in _RETURNS_SELF else None
            if owner == TENSOR:
                return TENSOR  # a tensor method
            return _result_of(self._resolve(func))
        callee = env[func.id] if isinstance(func, ast.Name) and func.id in env else None
        if _is_module(callee):
            self.count(callee[1], node, weight, depth, inside, tensors)
            return TENSOR
        if not isinstance(func, ast.Name):
            self.kind(func, env, weight, depth, inside)
            return None
        name = func.id
        obj = self.namespace.get(name)
        if isinstance(obj, torch.nn.Module):
            self.count(name, node, weight, depth, inside, tensors)
            return TENSOR
        if name in self.functions:
            self.count(name, node, weight, depth, inside, tensors)
            return self.enter(name, given, named, weight, depth)
        return _result_of(obj, name)

    def count(self, name: str | None, node: ast.Call, weight: int, depth: int, inside: str, tensors: bool) -> None:
        if name is None or name not in self.candidates:
            return
        use = self.uses.get(name)
        if use is None:
            use = self.uses[name] = Use(depth=depth, line=node.lineno, inside=inside)
        elif depth < use.depth:
            use.depth, use.line, use.inside = depth, node.lineno, inside
        use.calls += weight
        use.with_tensors = use.with_tensors or tensors
        use.in_loop = use.in_loop or weight > 1

    def enter(self, name: str, given: list, named: dict, weight: int, depth: int):
        """Walk a script function called with arguments of these kinds: the kind it returns."""
        if name in self.entered or self.descents >= _MOST_DESCENTS:
            return None
        self.descents += 1
        node = self.functions[name]
        params = [*node.args.posonlyargs, *node.args.args]
        env = {p.arg: k for p, k in zip(params, given, strict=False)}
        env.update({p.arg: named[p.arg] for p in (*params, *node.args.kwonlyargs) if p.arg in named})
        self.entered.append(name)
        try:
            returns = self.block(node.body, env, weight, depth + 1, "" if name == "main" else name)
        finally:
            self.entered.pop()
        if TENSOR in returns:
            return TENSOR
        return next((r for r in returns if _is_module(r)), None)

    def _resolve(self, expr: ast.expr):
        """The object a dotted name (`torch.randn`, `nn.Linear`) is in the script's globals."""
        if isinstance(expr, ast.Name):
            return self.namespace.get(expr.id)
        if isinstance(expr, ast.Attribute):
            owner = self._resolve(expr.value)
            return None if owner is None else getattr(owner, expr.attr, None)
        return None


def _bind(target: ast.expr, kind, env: dict) -> None:
    if isinstance(target, ast.Name):
        env[target.id] = kind
    elif isinstance(target, (ast.Tuple, ast.List)):
        parts = kind if isinstance(kind, tuple) and len(kind) == len(target.elts) else [kind] * len(target.elts)
        for element, part in zip(target.elts, parts, strict=True):
            _bind(element.value if isinstance(element, ast.Starred) else element, part, env)


def _is_module(kind) -> bool:
    return isinstance(kind, tuple) and len(kind) == 2 and kind[0] == "module"


def _holds_tensor(kind) -> bool:
    return kind == TENSOR or (isinstance(kind, tuple) and not _is_module(kind) and any(map(_holds_tensor, kind)))


def _kind_of_object(obj, name: str):
    if isinstance(obj, torch.Tensor):
        return TENSOR
    if isinstance(obj, torch.nn.Module):
        return ("module", name)
    return None


def _result_of(obj, name: str | None = None):
    """What calling `obj` makes: a module from a module class (a candidate when the
    script's own), a tensor from torch's functions."""
    if isinstance(obj, type):
        if issubclass(obj, torch.nn.Module):
            return ("module", name)
        return None
    module = getattr(obj, "__module__", None) or ""
    return TENSOR if callable(obj) and module.split(".")[0] == "torch" else None
