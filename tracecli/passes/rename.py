"""rename: give values the names of the user's variables they were stored into.

Before:                               After:
    t0 = ltorch.mul(x, y)  # a            a = ltorch.mul(x, y)
    t7 = ltorch.rand(...)  # a again      a_1 = ltorch.rand(...)

- The first value stored in a variable gets the variable's name exactly, even when it
  looks generated (`t7` stays `t7`); later values stored in it get `a_1`, `a_2`, ...
- A user name is never skipped: a generated name in its way moves to a fresh `t<N>`.
- Inputs keep their names (parameter names, module qualified names); a variable that
  reassigns an input (`x = x + 1`) is versioned: `x_1`.
- A variable that would shadow a name the generated code needs (`torch`, `inf`) is
  spelled as the name registry spells it: `torch_`.
- In a symbolic trace, a size symbol takes the name of the variable that held it
  (`b, t = x.shape`: `s0` -> `b` in every type, size argument, dim and guard), before
  any value does.
- A size the data decide that no variable held is named after the first tensor with a
  user's name that has it as a dim, by where: the length of a vector (`vals = x[mask]`:
  `vals_len`), the rows of anything more (`idx = mask.nonzero()`: `idx_rows`), the
  columns of a matrix (`_cols`), else `_dim2` and so on. The tensor's name is its name
  after this pass (`idx_1_rows` for the second value stored in `idx`); a size with no
  such tensor keeps its `u<N>`. The header lines and facts follow.
"""

from __future__ import annotations

from tracecli.core.dims import Dim
from tracecli.core.names import GENERATED, NameRegistry, sanitize
from tracecli.core.pytree import values_in
from tracecli.core.regions import flatten_regions
from tracecli.core.rewrite import map_trace, renamer
from tracecli.core.trace import Trace, walk
from tracecli.core.values import TensorValue
from tracecli.passes.base import PassResult, register


def _plan(trace: Trace) -> dict[str, str]:
    """old name -> new name for every value whose name changes."""
    fixed = {v.name for v in trace.inputs}
    # A variable may be named like something the generated code needs (`torch`, `inf`):
    # the value gets the legal spelling the name registry would give it. Programs reuse a
    # few variable names many times: each is spelled once.
    spelled: dict[str, str] = {}
    final: dict[str, str] = {}  # only names that change: it is the plan
    kept: set[str] = set()  # values whose user name is their own name already (`t7` stays `t7`)
    claimed = set(fixed)
    versions: dict[str, list[str]] = {}  # variable -> the later values stored in it, in order

    def take(value: str, var: str) -> None:
        """The value stored in `var`: the variable's name if it is still free, else a
        version of it, numbered below."""
        legal = spelled.get(var)
        if legal is None:
            legal = spelled[var] = sanitize(var)
        if legal in claimed:
            later = versions.get(legal)
            if later is None:
                versions[legal] = [value]
            else:
                later.append(value)
        else:
            claimed.add(legal)
            if legal != value:
                final[value] = legal
            else:
                kept.add(value)

    # Values in the order they are taken: sizes first (bound before anything reads them),
    # then values in definition order; each value once, with the first hint for it. A
    # value is defined by one call, so only a call with several hints (cse merged its
    # duplicates into it) or a size a call also binds could repeat one.
    sized = set()
    for info in trace.dims:
        if info.hint:
            sized.add(info.name)
            take(info.name, info.hint)
    # A fusion region's members keep the hints of the lines that made them.
    for bsym in flatten_regions(trace.bsyms):
        hints = bsym.name_hints
        if not hints:
            continue
        output = bsym.output
        if type(output) is TensorValue and len(hints) == 1:
            # One output and one hint for it, as most calls have: no tree to walk.
            value, var = hints[0]
            if value == output.name and value not in sized:
                take(value, var)
        else:
            outputs = {o.name for o in values_in(output)}
            named = set(sized)
            for value, var in hints:
                if value in outputs and value not in named:
                    named.add(value)
                    take(value, var)

    # Versioned names are chosen only after every exact user name is claimed, so a
    # user's own `a_1` is never taken by the second version of `a`. Two versions never
    # clash: `a_<k>` splits at its last `_` into one variable and one number. So each
    # variable's versions are numbered on their own, checked against the names claimed
    # before them and the user's names (a few dozen, usually: one small set), and claimed
    # all at once afterwards.
    taken = claimed | set(spelled.values())
    version_names: list[str] = []
    for var, later in versions.items():
        prefix = var + "_"
        k = 0
        for value in later:
            k += 1
            name = prefix + str(k)
            while name in taken:
                k += 1
                name = prefix + str(k)
            version_names.append(name)
            if name != value:
                final[value] = name
            else:
                kept.add(value)
    claimed.update(version_names)
    _name_counts(trace, final, claimed)

    # Every other name stays unless a user name now needs it.
    in_the_way = {n for n in claimed & trace.names if n not in final and n not in kept and n not in fixed}
    if in_the_way:
        registry = NameRegistry(claimed | trace.names)
        for _, bsym in walk(trace.bsyms):  # in definition order, so the fresh names are deterministic
            for out in bsym.iter_outputs():
                if out.name in in_the_way and out.name not in final:
                    final[out.name] = registry.fresh(out.name[0] if out.name[0] in "tifbs" else "t")
    return final


def _where(axis: int, ndim: int) -> str:
    if ndim == 1:
        return "len"
    if axis == 0:
        return "rows"
    return "cols" if ndim == 2 else f"dim{axis}"


def _name_counts(trace: Trace, final: dict[str, str], claimed: set[str]) -> None:
    """Plan a name for each size the data decide that no variable held, after the first
    tensor with a user's name that has it as a dim (named as it will be): `idx_rows`."""
    unnamed = {info.name for info in trace.dims if info.unbacked and not info.hint}
    if not unnamed:
        return
    registry = None
    for value, named in _carriers(trace):
        if not unnamed:
            break
        for axis, size in enumerate(value.shape):
            symbol = size.as_symbol() if isinstance(size, Dim) else None
            if symbol not in unnamed:
                continue
            unnamed.discard(symbol)
            base = f"{final.get(value.name, value.name) if named else value.name}_{_where(axis, len(value.shape))}"
            if base == symbol:
                continue  # named so already (a second rename)
            if registry is None:
                registry = NameRegistry(claimed | trace.names | set(final.values()))
            name = registry.take(base)
            final[symbol] = name
            claimed.add(name)


def _carriers(trace: Trace):
    """(tensor, whether a hint names it) in definition order, for those a user named: the
    inputs with names of their own (a piece after a graph break is handed such tensors),
    then each value a variable held."""
    for value in trace.inputs:
        if type(value) is TensorValue and not GENERATED.match(value.name):
            yield value, False
    for bsym in flatten_regions(trace.bsyms):
        if bsym.name_hints:
            outputs = {o.name: o for o in bsym.output_values() if type(o) is TensorValue}
            for name, _ in bsym.name_hints:
                if name in outputs:
                    yield outputs[name], True


@register("rename", "name values after the user's variables they were stored into")
def rename(trace: Trace) -> PassResult:
    names = _plan(trace)
    if not names:
        return PassResult(trace, False, {"renamed": 0})
    return PassResult(map_trace(trace, renamer(names)), True, {"renamed": len(names)}, names)
