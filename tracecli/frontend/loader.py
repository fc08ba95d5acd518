"""Loading a user script and choosing its entry.

The script runs as a module, except its `if __name__ == "__main__":` blocks, which are
kept aside: a script without sample_inputs that calls its entry from such a block is
run through that block, with the entry replaced by a tracing wrapper.
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
import random
import re
import sys
import traceback
import types
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy
import torch

from tracecli.core.errors import UserError
from tracecli.frontend.entry_usage import Use, describe, main_block_uses
from tracecli.frontend.source import display_path, is_user_path


@dataclass
class Script:
    path: str  # as the user gave it, for messages
    display: str  # relative to the working directory, for traces
    module: types.ModuleType
    source: str

    @property
    def namespace(self) -> dict:
        return self.module.__dict__

    @functools.cached_property
    def tree(self) -> ast.Module:
        """The script's syntax tree, parsed when first asked for: building a Python object
        for every node of a long script costs more than tracing it (tens of µs a line),
        and a script without main blocks or decorators never needs them."""
        return ast.parse(self.source, filename=self.module.__file__)

    @functools.cached_property
    def main_blocks(self) -> list[ast.stmt]:
        if "__main__" not in self.source:
            return []
        return [node for node in self.tree.body if _is_main_guard(node)]

    @property
    def sample_inputs(self):
        fn = self.namespace.get("sample_inputs")
        return fn if callable(fn) else None

    @property
    def sample_grads(self):
        """`sample_grads(device)`: the cotangents `--grad` seeds the outputs with."""
        fn = self.namespace.get("sample_grads")
        return fn if callable(fn) else None


# The start of a line that may be a decorator: a script with none needs no syntax tree
# to know that none of its functions is one.
_MAY_DECORATE = re.compile(r"^[ \t]*@", re.MULTILINE)


def exception_at_user_line(exc: BaseException, path: str | None = None, prefix: str = "") -> UserError:
    """One UserError naming the innermost frame of user code (preferably `path`)."""
    frames = traceback.extract_tb(exc.__traceback__)
    chosen = None
    for frame in frames:
        if path and os.path.abspath(frame.filename) == os.path.abspath(path):
            chosen = frame
    if chosen is None:
        user = [f for f in frames if is_user_path(f.filename)]
        chosen = user[-1] if user else None
    # The user's code holds what it knows as tensors: Python's own messages name the stand-in.
    message = f"{prefix}{type(exc).__name__}: {exc}".replace("'TensorProxy' object", "'Tensor' object")
    if chosen is None:
        return UserError(message)
    return UserError(message, file=display_path(chosen.filename), line=chosen.lineno, source=(chosen.line or "").strip())


def _is_main_guard(node: ast.stmt) -> bool:
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    operands = [test.left, *test.comparators]
    names = {o.id for o in operands if isinstance(o, ast.Name)}
    consts = {o.value for o in operands if isinstance(o, ast.Constant)}
    return names == {"__name__"} and consts == {"__main__"} and isinstance(test.ops[0], ast.Eq)


def load_script(path: str) -> Script:
    if not os.path.exists(path):
        raise UserError(f"{path}: no such file")
    if os.path.isdir(path):
        raise UserError(f"{path}: is a directory, not a Python script")
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read: {exc}") from None
    abs_path = os.path.abspath(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    module = types.ModuleType(f"tracecli_script_{stem}")
    module.__file__ = abs_path
    script = Script(path, display_path(abs_path), module, source)
    try:
        code = _module_code(script, abs_path)
    except SyntaxError as exc:
        raise UserError(
            f"syntax error: {exc.msg}", file=display_path(abs_path), line=exc.lineno, source=(exc.text or "").strip(),
        ) from None
    # Classes defined in the script (dataclasses, nn.Modules) look their module up here.
    sys.modules[module.__name__] = module
    script_dir = os.path.dirname(abs_path)
    if script_dir not in sys.path:
        sys.path.insert(0, script_dir)
    try:
        exec(code, module.__dict__)  # noqa: S102 - running the user's script is the point
    except SystemExit as exc:
        raise UserError(f"{path}: the script exited while loading (status {exc.code}), before any entry ran") from None
    except Exception as exc:
        raise exception_at_user_line(exc, abs_path, prefix="the script failed while loading: ") from exc
    return script


def _module_code(script: Script, abs_path: str) -> types.CodeType:
    """The script's code without its main blocks, which run only as `run_main_blocks`
    says. A script without any is compiled from its text, as Python would."""
    if not script.main_blocks:
        return compile(script.source, abs_path, "exec")
    body = [node for node in script.tree.body if not _is_main_guard(node)]
    return compile(ast.Module(body=body, type_ignores=[]), abs_path, "exec")


def load_registering_file(path: str, registry: dict, registrations: list[str], builtin: frozenset[str], *,
                          kind: str, decorator: str) -> list[str]:
    """Run a user's Python file that registers `kind`s (passes, executors) in `registry`,
    noting each name in `registrations`; return the names it added. A built-in name is
    refused and left as it was; a file registering nothing is refused too."""
    before = dict(registry)
    start = len(registrations)
    load_script(path)
    added = sorted(set(registrations[start:]))
    clashes = [name for name in added if name in builtin]
    if clashes:
        registry.update({name: before[name] for name in clashes})
        raise UserError(f"{path}: registers {', '.join(clashes)}, a built-in {kind} name; choose another name")
    if not added:
        raise UserError(f"{path}: registers no {kind} (decorate a function with {decorator})")
    return added


@contextmanager
def script_argv(path: str, args: list[str]) -> Iterator[None]:
    """sys.argv as the script would see it run by python: its own path, then its arguments."""
    saved = sys.argv
    sys.argv = [path, *args]
    try:
        yield
    finally:
        sys.argv = saved


def seed_everything(seed: int) -> None:
    """Seed the generators a script draws from: torch's, Python's and numpy's."""
    torch.manual_seed(seed)
    random.seed(seed)
    numpy.random.seed(seed % 2**32)


def run_main_blocks(script: Script) -> None:
    """Run the script's `if __name__ == "__main__":` blocks as the script itself would."""
    script.namespace["__name__"] = "__main__"
    code = compile(ast.Module(body=script.main_blocks, type_ignores=[]), script.module.__file__, "exec")
    try:
        exec(code, script.namespace)  # noqa: S102
    finally:
        script.namespace["__name__"] = script.module.__name__


# -- entries -----------------------------------------------------------------------

_NOT_ENTRIES = {"sample_inputs", "sample_grads", "main"}


def unwrapped(obj):
    """The function a decorated one wraps (`functools.wraps`, `@torch.no_grad()`)."""
    return inspect.unwrap(obj) if isinstance(obj, types.FunctionType) else obj


def _defined_here(obj, script: Script) -> bool:
    code = getattr(unwrapped(obj), "__code__", None)
    return code is not None and os.path.abspath(code.co_filename) == script.module.__file__


def is_module_class(obj, script: Script) -> bool:
    """An nn.Module subclass the script defines: its instances are the entry."""
    return (
        isinstance(obj, type) and issubclass(obj, torch.nn.Module)
        and getattr(obj, "__module__", None) == script.module.__name__
    )


def referenced_names(code: types.CodeType) -> set[str]:
    """The global (and attribute) names a function's code reads, nested functions included."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= referenced_names(const)
    return names


def _decorator_names(script: Script) -> set[str]:
    """Functions the script uses as decorators: they make entries, they are not one."""
    names: set[str] = set()
    if not _MAY_DECORATE.search(script.source):
        return names
    for node in ast.walk(script.tree):
        for deco in getattr(node, "decorator_list", ()):
            target = deco.func if isinstance(deco, ast.Call) else deco
            if isinstance(target, ast.Name):
                names.add(target.id)
    return names


def entry_candidates(script: Script) -> dict[str, object]:
    out = {}
    decorators = _decorator_names(script)
    for name, obj in script.namespace.items():
        if name.startswith("_") or name in _NOT_ENTRIES or name in decorators:
            continue
        if isinstance(obj, types.FunctionType) and _defined_here(obj, script):
            out[name] = obj
        elif isinstance(obj, torch.nn.Module):
            out[name] = obj
    return out


def _helpers(script: Script, candidates: dict[str, object]) -> set[str]:
    """Functions that other code of the script calls: helpers, not entries. Also the
    modules a candidate function uses (a training step's model): parts of it."""
    referenced: set[str] = set()
    used_by_candidates: set[str] = set()
    for name, obj in script.namespace.items():
        if name in _NOT_ENTRIES:
            continue
        if isinstance(obj, types.FunctionType) and _defined_here(obj, script):
            names = referenced_names(unwrapped(obj).__code__) - {name}
            referenced |= names
            if name in candidates:
                used_by_candidates |= names
        elif isinstance(obj, type):
            for attr in vars(obj).values():
                if isinstance(attr, types.FunctionType) and _defined_here(attr, script):
                    referenced |= referenced_names(attr.__code__)
    helpers = {n for n, obj in candidates.items() if n in referenced and isinstance(obj, types.FunctionType)}
    return helpers | {n for n, obj in candidates.items()
                      if n in used_by_candidates and isinstance(obj, torch.nn.Module)}


def _called_names(nodes) -> list[str]:
    names: list[str] = []
    for root in nodes:
        for node in ast.walk(root):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id not in names:
                names.append(node.func.id)
    return names


def called_from_main(script: Script) -> list[str]:
    """What the main blocks call, and what the script's own functions they call call in
    turn (a `main()` that builds a model and runs it): names in the order first met."""
    functions = {node.name: node for node in script.tree.body if isinstance(node, ast.FunctionDef)}
    order = _called_names(script.main_blocks)
    seen = set(order)
    i = 0
    while i < len(order):
        node = functions.get(order[i])
        i += 1
        if node is None:
            continue
        for name in _called_names(node.body):
            if name not in seen:
                seen.add(name)
                order.append(name)
    return order


def _main_mode_candidates(script: Script) -> dict[str, object]:
    candidates = entry_candidates(script)
    out = {}
    for name in called_from_main(script):
        obj = script.namespace.get(name)
        if name in candidates or is_module_class(obj, script):
            out[name] = obj
    return out


def _most_used(script: Script, pool: list[str]) -> tuple[str, object, str] | None:
    """The candidate the main block calls most with tensors (frontend/entry_usage.py),
    with why; None when that does not single one out."""
    uses = main_block_uses(script.namespace, script.tree, script.main_blocks, set(pool))

    def rank(use: Use, name: str) -> tuple:
        # Called as often: the caller first (a train step, over the model it runs), then
        # a module over a function beside it (the model, over the preprocessing).
        obj = script.namespace[name]
        return (not use.with_tensors, -use.calls, use.depth,
                not (is_module_class(obj, script) or isinstance(obj, torch.nn.Module)))

    ranked = sorted(uses.items(), key=lambda item: rank(item[1], item[0]))
    if not ranked or not ranked[0][1].with_tensors:
        return None
    (name, use), rest = ranked[0], ranked[1:]
    if rest and rank(rest[0][1], rest[0][0]) == rank(use, name):
        return None
    obj = script.namespace[name]
    kind = ("nn.Module class" if is_module_class(obj, script) else
            "nn.Module" if isinstance(obj, torch.nn.Module) else "function")
    why = f"the {kind} the script's main block calls most with tensors: {describe(use, script.display)}"
    if rest:
        other, other_use = rest[0]
        if rank(other_use, other)[:2] == rank(use, name)[:2] and other_use.depth > use.depth and other_use.inside:
            why += f"; {other} as often, inside {other_use.inside}"
        else:
            why += f"; {other} {describe(other_use, script.display)}"
    return name, obj, why


def choose_entry(script: Script, name: str | None, *, main_mode: bool) -> tuple[str, object, str]:
    """(entry name, callable or nn.Module class, why it was chosen)."""
    if name is not None:
        obj = script.namespace.get(name)
        if obj is None or not callable(obj):
            listing = ", ".join(sorted(entry_candidates(script))) or "none"
            raise UserError(f"{script.path}: no entry named {name!r} (candidates: {listing})")
        return name, obj, "given"
    if main_mode:
        pool = list(_main_mode_candidates(script))
        chosen = _most_used(script, pool) if len(pool) > 1 else None
        if chosen is not None:
            return chosen
        functions = [n for n in pool if not is_module_class(script.namespace[n], script)]
        if len(functions) == 1 and len(pool) > 1:
            # A training loop builds its model and calls a step function with it: the step
            # runs the model, and is what the user wants to see.
            return functions[0], script.namespace[functions[0]], ("the function the script's main block calls "
                                                                  "with the modules it builds")
        if len(pool) == 1:
            obj = script.namespace[pool[0]]
            if is_module_class(obj, script):
                return pool[0], obj, "the nn.Module class the script's main block runs"
            return pool[0], obj, "the function the script's main block calls"
        why = "the script's main block calls several candidates"
    else:
        candidates = entry_candidates(script)
        helpers = _helpers(script, candidates)
        pool = [n for n in candidates if n not in helpers]
        if len(pool) == 1:
            kind = "nn.Module instance" if isinstance(candidates[pool[0]], torch.nn.Module) else "function"
            return pool[0], candidates[pool[0]], f"the only top-level {kind} in the script"
        why = "the script has several possible entries"
    if not pool:
        raise UserError(f"{script.path}: no entry found: define a function or an nn.Module instance to trace")
    listing = ", ".join(sorted(pool))
    raise UserError(f"{script.path}: {why}: {listing}; choose one with {script.path}:ENTRY")
