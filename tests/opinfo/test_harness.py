"""The OpInfo harness tells the classes apart: on OpInfos of its own (ops whose class
cannot change as tracecli grows: custom ops, a data-dependent op), on the comparisons
it makes, and on how a result is held to the reviewed table."""

from __future__ import annotations

import pytest
import torch
from torch.testing._internal.opinfo.core import OpInfo, SampleInput

from tests.opinfo import coverage
from tests.opinfo.checks import differences
from tests.opinfo.harness import OpResult, run_opinfo, split


@torch.library.custom_op("opinfo_test::halve", mutates_args=())
def halve(x: torch.Tensor) -> torch.Tensor:
    return x / 2


@halve.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op("opinfo_test::misdeclared", mutates_args=())
def misdeclared(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@misdeclared.register_fake
def _(x):
    # One element more than the kernel returns: the trace declares a wrong type.
    return x.new_empty((x.numel() + 1,))


def _opinfo(name: str, op, samples) -> OpInfo:
    def sample_inputs(op_info, device, dtype, requires_grad, **kwargs):
        return [SampleInput(make(dtype)) if callable(make) else make for make in samples]

    return OpInfo(name, op=op, dtypes=(torch.float32,), sample_inputs_func=sample_inputs)


def _vector(dtype):
    return torch.arange(6, dtype=dtype) - 2.0


@pytest.mark.parametrize(("op", "kind", "detail"), [
    (lambda x: torch.tanh(x) + 1, "modeled", ""),
    (lambda x: halve(x), "opaque", "torch.ops.opinfo_test.halve.default"),
    (lambda x: misdeclared(x), "wrong", "declared float32[7], eager gives float32[6]"),
    (lambda x: x.sum().item(), "refused", "needs the tensor's values"),
])
def test_each_class_is_told_apart(op, kind, detail):
    result = run_opinfo(_opinfo("probe", op, [_vector]))
    assert (result.kind, result.samples) == (kind, 1)
    assert detail in result.detail


def test_samples_eager_refuses_are_skipped():
    mismatched = SampleInput(torch.ones(3), args=(torch.ones(4),))
    result = run_opinfo(_opinfo("probe", torch.add, [mismatched]))
    assert (result.kind, result.samples) == ("skipped", 0)


def test_tensors_in_lists_and_keywords_are_inputs_and_the_rest_constants():
    sample = SampleInput([torch.ones(2), torch.zeros(2)], args=(0,), kwargs={"out": None})
    fn, tensors = split(OpInfo("cat", op=torch.cat, dtypes=(torch.float32,)), sample)
    assert len(tensors) == 2 and all(a is b for a, b in zip(tensors, sample.input, strict=True))
    assert torch.equal(fn(torch.full((2,), 3.0), torch.full((2,), 4.0)), torch.tensor([3.0, 3.0, 4.0, 4.0]))
    result = run_opinfo(_opinfo("cat", torch.cat, [sample]))
    assert result.kind == "modeled", result.detail


def test_differences_name_values_types_and_structure():
    x = torch.ones(3)
    assert differences((x, x), (x, x), {}) == []
    assert "Mismatched elements" in differences(x, x + 1e-3, {})[0]
    assert differences(x, x + 1e-3, {torch.float32: (0.0, 1e-2)}) == []  # the OpInfo's own tolerance
    assert differences(x, x.double(), {}) == ["output 0: float64[3], eager float32[3]"]
    assert differences((x,), [x], {}) == ["structure: eager tuple(_), the trace list(_)"]
    assert differences(x, x + 1, {}, values=False) == []  # uninitialised memory: types only


@pytest.mark.parametrize(("name", "kind", "complaint"), [
    ("expected_modeled", "modeled", ""),
    ("expected_modeled", "opaque", "is expected modeled"),
    ("listed_opaque", "refused", ""),
    ("listed_opaque", "modeled", "move it from NOT_MODELED to MODELED"),
    ("listed_opaque", "wrong", "does not list as a known defect"),
    ("listed_crash", "crash", ""),
    ("listed_crash", "opaque", "update its line"),
    ("unlisted", "opaque", "is in neither table"),
])
def test_a_result_is_held_to_the_table(monkeypatch, name, kind, complaint):
    monkeypatch.setattr(coverage, "MODELED", frozenset({"expected_modeled"}))
    monkeypatch.setattr(coverage, "NOT_MODELED", {"listed_opaque": ("opaque", "torch.foo"),
                                                  "listed_crash": ("crash", "a known defect")})
    found = coverage.against_table(OpResult(name, kind, "why"))
    assert (complaint in found) if complaint else found == ""
