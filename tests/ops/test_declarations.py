"""What an op is, is declared once: its torch forms, tags and family sit with its ltorch
declaration, and the torch map is generated from the declarations."""

import pytest
import torch
import torch.nn.functional as F

from tracecli.core.symbol import Tag
from tracecli.core.trace import walk
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable
from tracecli.ops import ltorch, prims, torch_map
from tracecli.ops.forms import FORMS, DuplicateForm, FormTable
from tracecli.ops.ltorch._base import symbol, torch_form


def test_a_torch_callable_claimed_twice_raises():
    table = FormTable()
    table.claim(ltorch.add, "ltorch.add", functions=(torch.add,), methods=("add",))
    with pytest.raises(DuplicateForm, match=r"torch.*add is declared twice: by ltorch.add and by ltorch.other"):
        table.claim(ltorch.sub, "ltorch.other", functions=(torch.add,))
    with pytest.raises(DuplicateForm, match="Tensor.add is declared twice"):
        table.claim(ltorch.sub, "ltorch.other", methods=("add",))


def test_a_second_declaration_of_a_claimed_form_is_refused_whole():
    before = (dict(FORMS.functions), dict(FORMS.methods), dict(ltorch.ALL))
    with pytest.raises(DuplicateForm, match=r"is declared twice: by ltorch.maximum"):
        # torch.max's two-tensor form is ltorch.maximum's: a new op may not take it silently.
        @symbol(torch.maximum, methods=("fresh_method_name",))
        def my_maximum(a, b):
            return a

    with pytest.raises(DuplicateForm, match="Tensor.view is declared twice"):
        torch_form(methods=("view",))(lambda self, *shape: self)
    assert (dict(FORMS.functions), dict(FORMS.methods), dict(ltorch.ALL)) == before


def test_the_torch_map_is_the_declarations():
    # torch.max and Tensor.max go through ltorch.max's adapter, which picks maximum for two tensors.
    assert torch_map.resolve(torch.max) == ("ltorch", FORMS.functions[torch.max].adapter)
    assert FORMS.functions[torch.max].declared_by == "ltorch.max"
    assert FORMS.methods["max"].declared_by == "ltorch.max"
    assert FORMS.functions[torch.subtract].adapter is ltorch.sub
    assert FORMS.functions[F.relu].declared_by == "ltorch.activations._relu"
    assert torch_map.resolve(torch.Tensor.size) == ("metadata", None)
    assert torch_map.resolve(torch.Tensor.item) == ("data", None)


def test_max_of_two_tensors_is_maximum_and_along_a_dim_is_max():
    def f(a, b):
        return torch.max(a, b), a.max(b), torch.max(a, 1), a.max(dim=0)

    trace = trace_callable(f, (torch.randn(3, 4), torch.randn(3, 4))).trace
    assert [b.symbol.qualname for b in trace.bsyms] == ["ltorch.maximum", "ltorch.maximum", "ltorch.max", "ltorch.max"]


def test_every_symbol_names_its_family_module():
    for sym in ltorch.ALL.values():
        assert sym.decomposition.__module__ == f"tracecli.ops.ltorch.{sym.family}", sym
    ltorch_families = {sym.family for sym in ltorch.ALL.values()}
    for sym in prims.ALL.values():
        # A prim lives in the family of the ltorch ops that need it, under the same module name.
        assert sym.family in ltorch_families, f"prims.{sym.name} is in {sym.family}, which ltorch does not have"


def test_views_are_declared_on_their_ops():
    views = {name for name, sym in ltorch.ALL.items() if Tag.VIEW in sym.tags}
    assert views == {
        "reshape", "permute", "transpose", "unsqueeze", "squeeze", "expand", "getitem", "narrow", "split", "chunk",
        "unbind", "unflatten", "einsum", "select", "diagonal", "unfold", "ravel", "contiguous", "linalg_diagonal", "detach",
    }


def test_a_view_read_after_its_base_is_written_is_taken_again():
    # The tracker reads VIEW from the declarations: flatten is a reshape, a view.
    def f(x):
        y = x.flatten()
        x.add_(1)
        return y * 2

    x = torch.randn(2, 3)
    trace = trace_callable(f, (x.clone(),)).trace
    assert [b.symbol.qualname for b in trace.bsyms] == ["ltorch.reshape", "ltorch.add_", "ltorch.reshape", "ltorch.mul"]
    torch.testing.assert_close(compile_trace(trace)(x.clone()), f(x.clone()))


@pytest.mark.parametrize(
    ("fn", "symbols"),
    [
        (lambda x, y: torch.ops.aten.add.Tensor(x, y, alpha=2), ["ltorch.add"]),
        (lambda x, y: torch.ops.aten.mul(x, y), ["ltorch.mul"]),
        (lambda x, y: torch.ops.aten.sum.dim_IntList(x, [0], keepdim=True), ["ltorch.sum"]),
        (lambda x, y: torch.ops.aten.view.default(x, [12]), ["ltorch.reshape"]),
        (lambda x, y: torch.ops.aten.where.self(x > 0, x, y), ["ltorch.gt", "ltorch.where"]),
        (lambda x, y: torch.ops.aten.sort.stable(x, stable=True, dim=0)[0], ["ltorch.sort"]),
        (lambda x, y: torch.ops.aten.transpose.int(x, 0, 1), ["ltorch.transpose"]),
    ],
    ids=["add.Tensor", "mul-packet", "sum.dim_IntList", "view", "where.self", "sort.stable", "transpose.int"],
)
def test_aten_overloads_are_modelled_where_ltorch_has_the_op(fn, symbols):
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    program = trace_callable(fn, (x, y), name="fn")
    assert [b.symbol.qualname for b in program.trace.bsyms] == symbols
    assert not [b for _, b in walk(program.trace.bsyms) if b.symbol.namespace == "torch"]
    torch.testing.assert_close(compile_trace(program.trace)(x, y), fn(x, y))
