"""The losses: nll_loss, cross_entropy (class targets and probabilities, weights,
ignore_index, label smoothing, every reduction) and mse_loss, as functions and
modules. They decompose into other families' prims and have none of their own."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from tests.ops.harness import FLOATS, Case, L, T, case_adder, check_case, module, refusal_tests

CASES: list[Case] = []
case = case_adder(CASES)

_TARGETS = L((0, 4, 2, 1), "i64")
_IGNORED = L((0, -100, 2, -100), "i64")
for _dtype in FLOATS:
    case("cross_entropy", "F", F.cross_entropy, T(_dtype, (4, 5)), _TARGETS)
    case("cross_entropy", "probabilities", F.cross_entropy, T(_dtype, (4, 5)), T(_dtype, (4, 5), "pos"))
    case("nll_loss", "F", F.nll_loss, T(_dtype, (4, 5)), _TARGETS)
    case("mse_loss", "F", F.mse_loss, T(_dtype, (3, 4)), T(_dtype, (3, 4)))
for _reduction in ("none", "sum", "mean"):
    case("cross_entropy", f"reduction-{_reduction}", lambda x, t, r=_reduction: F.cross_entropy(x, t, reduction=r),
         T("f32", (4, 5)), _IGNORED)
    case("cross_entropy", f"weight-{_reduction}", lambda x, t, w, r=_reduction: F.cross_entropy(x, t, w, reduction=r),
         T("f32", (4, 5)), _IGNORED, T("f32", (5,), "pos"))
    case("cross_entropy", f"smoothing-{_reduction}",
         lambda x, t, r=_reduction: F.cross_entropy(x, t, reduction=r, label_smoothing=0.1), T("f32", (4, 5)), _IGNORED)
    case("cross_entropy", f"smoothing-weight-{_reduction}",
         lambda x, t, w, r=_reduction: F.cross_entropy(x, t, w, reduction=r, label_smoothing=0.2), T("f64", (4, 5)),
         _IGNORED, T("f64", (5,), "pos"))
    case("cross_entropy", f"probabilities-{_reduction}",
         lambda x, t, w, r=_reduction: F.cross_entropy(x, t, w, reduction=r, label_smoothing=0.1), T("f32", (4, 5)),
         T("f32", (4, 5), "pos"), T("f32", (5,), "pos"))
    case("nll_loss", f"weight-{_reduction}", lambda x, t, w, r=_reduction: F.nll_loss(x, t, w, reduction=r),
         T("f32", (4, 5)), _IGNORED, T("f32", (5,), "pos"))
    case("mse_loss", f"reduction-{_reduction}", lambda x, t, r=_reduction: F.mse_loss(x, t, reduction=r),
         T("f32", (3, 4)), T("f32", (3, 4)))
    case("mse_loss", f"weight-{_reduction}", lambda x, t, w, r=_reduction: F.mse_loss(x, t, reduction=r, weight=w),
         T("f32", (3, 4)), T("f32", (3, 4)), T("f32", (3, 4), "pos"))
case("cross_entropy", "ignore_index", lambda x, t: F.cross_entropy(x, t, ignore_index=2), T("f32", (4, 5)), _TARGETS)
case("cross_entropy", "all-ignored", F.cross_entropy, T("f32", (2, 5)), L((-100, -100), "i64"))
case("cross_entropy", "1d", F.cross_entropy, T("f32", (5,)), L(3, "i64"))
case("cross_entropy", "k-dim", F.cross_entropy, T("f32", (2, 5, 3)), L(((0, 4, 1), (2, 2, -100)), "i64"))
case("cross_entropy", "k-dim-smoothing", lambda x, t: F.cross_entropy(x, t, label_smoothing=0.3),
     T("f32", (2, 5, 3, 2)), T("i64", (2, 3, 2), "small"))
case("cross_entropy", "u8-target", F.cross_entropy, T("f32", (4, 5)), L((0, 4, 2, 1), "u8"))
case("cross_entropy", "mixed-probabilities", F.cross_entropy, T("f32", (3, 4)), T("f64", (3, 4), "pos"))
case("cross_entropy", "legacy", lambda x, t: F.cross_entropy(x, t, size_average=False), T("f32", (4, 5)), _TARGETS)
case("cross_entropy", "large-logits", lambda x, t: F.cross_entropy(x * 100, t), T("f32", (4, 5)), _TARGETS)
case("cross_entropy", "module", module(lambda: nn.CrossEntropyLoss(label_smoothing=0.05)), T("f32", (4, 5)), _TARGETS)
case("cross_entropy", "module-weight", module(lambda: nn.CrossEntropyLoss(torch.rand(5) + 0.5, ignore_index=0)),
     T("f32", (4, 5)), _TARGETS)
case("nll_loss", "ignore_index-class", lambda x, t: F.nll_loss(x, t, ignore_index=0), L(((-math.inf, 0.0), (1.0, 2.0)),
     "f32"), L((0, 1), "i64"))
case("nll_loss", "k-dim", F.nll_loss, T("f64", (2, 4, 3)), T("i64", (2, 3), "small"))
case("nll_loss", "1d", F.nll_loss, T("f32", (4,)), L(1, "i64"))
case("nll_loss", "module", module(lambda: nn.NLLLoss(reduction="sum")), T("f32", (4, 5)), _TARGETS)
case(("nll_loss", "log_softmax"), "classifier", lambda x, t: F.nll_loss(F.log_softmax(x, -1), t), T("bf16", (4, 5)),
     _TARGETS)
case("mse_loss", "broadcast", F.mse_loss, T("f32", (3, 1)), T("f32", (4,)))
case("mse_loss", "mixed-dtypes", F.mse_loss, T("f32", (3,)), T("f64", (3,)))
case("mse_loss", "int-target", F.mse_loss, T("f32", (3, 4)), T("i64", (3, 4)))
case("mse_loss", "legacy", lambda x, t: F.mse_loss(x, t, reduce=False), T("f32", (3, 4)), T("f32", (3, 4)))
case("mse_loss", "module", module(lambda: nn.MSELoss(reduction="sum")), T("f32", (2, 3)), T("f32", (2, 3)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_op(case: Case):
    check_case(case)


REFUSED_CLEARLY = (
    ("cross_entropy-i32-target", F.cross_entropy, (torch.rand(3, 4), torch.tensor([0, 1, 2], dtype=torch.int32)),
     "int64 or uint8"),
    ("cross_entropy-target-shape", F.cross_entropy, (torch.rand(3, 4), torch.tensor([0, 1])), "target"),
    ("cross_entropy-weight-dtype", lambda x, t, w: F.cross_entropy(x, t, w),
     (torch.rand(3, 4), torch.tensor([0, 1, 2]), torch.rand(4).double()), "weight"),
    ("mse_loss-ints", F.mse_loss, (torch.ones(3, dtype=torch.int64), torch.ones(3, dtype=torch.int64)), "floating"),
)


test_refused_with_a_clear_error, test_eager_refuses_them_too = refusal_tests(REFUSED_CLEARLY)
