"""The conversions: `to` in all its spellings (float(), long(), type_as, to(dtype),
to(device, dtype), ...) and clone, and their prims (convert_element_type,
device_put, clone). device_put has no case a CPU-only machine can run (a move to
another device), so its meta rule is checked here directly against its
implementation, moving to the meta device."""

from __future__ import annotations

import math

import pytest
import torch

from tests.ops.harness import DT, Case, L, T, case_adder, check_case, tensor_value
from tracecli.core import dtypes
from tracecli.core.values import TensorType
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.tracer import trace_callable
from tracecli.ops import prims
from tracecli.ops.promotion import ShapeError
from tracecli.passes.lower import lower

CASES: list[Case] = []
case = case_adder(CASES)

CONVERSIONS = {
    "float": lambda x: x.float(), "double": lambda x: x.double(), "half": lambda x: x.half(),
    "bfloat16": lambda x: x.bfloat16(), "long": lambda x: x.long(), "int": lambda x: x.int(),
    "short": lambda x: x.short(), "bool": lambda x: x.bool(),
    "to-dtype": lambda x: x.to(torch.float16), "to-kw": lambda x: x.to(dtype=torch.float64),
    "to-device-dtype": lambda x: x.to("cpu", torch.bfloat16),
    "to-device-obj": lambda x: x.to(torch.device("cpu"), dtype=torch.int64),
}
for _form, _fn in CONVERSIONS.items():
    for _src in ("f32", "i64", "bool", "f16"):
        if _fn(torch.zeros((), dtype=DT[_src])).dtype != DT[_src]:  # same dtype: nothing to record
            case("to", _form, _fn, T(_src, (3, 4)))
case("to", "to-tensor", lambda x, y: x.to(y), T("f32", (3, 4)), T("i64", (2,)))
case("to", "type_as", lambda x, y: x.type_as(y), T("i64", (3, 4)), T("f16", (2,)))
case("to", "0d", lambda x: x.double(), T("f32", ()))
case("to", "negative-to-int", lambda x: x.long(), L((-2.5, -0.5, 0.5, 2.5, 3.99), "f32"))
case("to", "byte", lambda x: x.byte(), T("i64", (3, 4), "pos"))
case("to", "char", lambda x: x.char(), T("f32", (3, 4)))
case("to", "type", lambda x: x.type(torch.float16), T("f32", (3, 4)))
case("to", "float-to-bool", lambda x: x.bool(), L((0.0, -0.0, 0.1, math.nan), "f32"))
case("clone", "function", torch.clone, T("f32", (3,)))
case(("clone", "to"), "torch.tensor-of-a-tensor", lambda x: torch.tensor(x, dtype=torch.float64), T("f32", (3,)))
case("clone", "torch.tensor-copies", lambda x: torch.tensor(x), T("i64", (2, 3)))
case("contiguous", "already", lambda x: x.contiguous(), T("f32", (3, 4)))
case(("detach", "mul"), "method", lambda x: x.detach() * 2, T("f32", (3, 4)))
case(("detach", "add"), "data", lambda x: x.data + 1, T("f32", (3, 4)))

case(("contiguous", "transpose"), "copied", lambda x: x.t().contiguous(), T("f32", (3, 4)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_device_put_meta_matches_impl(device):
    got = prims.device_put.impl(torch.rand(2, 3, dtype=torch.float16), device)
    want = prims.device_put.meta(tensor_value((2, 3), dtypes.float16), device)
    assert want == TensorType(tuple(got.shape), dtypes.float16, str(got.device))
    assert want == TensorType((2, 3), dtypes.float16, device)


def test_copy_to_meta_matches_impl():
    # No output: the prim writes its source into its destination, of the same type.
    dst, src = torch.zeros(2, 3), torch.rand(2, 3)
    assert prims.copy_to.impl(dst, src) is None and torch.equal(dst, src)
    assert prims.copy_to.meta(tensor_value((2, 3)), tensor_value((2, 3), name="w")) is None
    with pytest.raises(ShapeError, match="of its own shape"):
        prims.copy_to.meta(tensor_value((2, 3)), tensor_value((3, 2), name="w"))


def test_lowering_an_inplace_write_of_an_input_writes_it_back():
    def f(x, y):
        x.mul_(2)
        x.add_(y)
        return y * 2

    x, y = torch.randn(3), torch.randn(3)
    lowered = lower(trace_callable(f, (x, y)).trace).trace
    write_back = lowered.bsyms[-1]
    assert write_back.symbol is prims.copy_to and write_back.args[0].name == "x"
    got, want = x.clone(), x.clone()
    compile_trace(lowered)(got, y)
    f(want, y)
    assert torch.equal(got, want)
