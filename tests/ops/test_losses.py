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

# --- elementwise losses ------------------------------------------------------------------------

for _dtype in FLOATS:
    case("l1_loss", "F", F.l1_loss, T(_dtype, (3, 4)), T(_dtype, (3, 4)))
    case("smooth_l1_loss", "F", lambda x, t: F.smooth_l1_loss(x, t, beta=0.7), T(_dtype, (3, 4)), T(_dtype, (3, 4)))
    case("huber_loss", "F", lambda x, t: F.huber_loss(x, t, delta=1.3), T(_dtype, (3, 4)), T(_dtype, (3, 4)))
    case("binary_cross_entropy_with_logits", "F", F.binary_cross_entropy_with_logits, T(_dtype, (3, 4)),
         T(_dtype, (3, 4), "pos"))
for _reduction in ("none", "sum", "mean"):
    case("l1_loss", _reduction, lambda x, t, r=_reduction: F.l1_loss(x, t, reduction=r), T("f32", (2, 3)),
         T("f32", (2, 3)))
    case("kl_div", _reduction, lambda x, t, r=_reduction: F.kl_div(x, t, reduction=r), T("f32", (2, 3)),
         T("f32", (2, 3), "pos"))
case("l1_loss", "broadcast-weight", lambda x, t, w: F.l1_loss(x, t, weight=w), T("f32", (3, 4)), T("f32", (3, 4)),
     T("f32", (3, 4), "pos"))
case("l1_loss", "int-target", F.l1_loss, T("f32", (3, 4)), T("i64", (3, 4)))
case("l1_loss", "module", module(lambda: nn.L1Loss(reduction="sum")), T("f32", (2, 3)), T("f32", (2, 3)))
case("smooth_l1_loss", "beta-0", lambda x, t: F.smooth_l1_loss(x, t, beta=0.0), T("f32", (3, 4)), T("f32", (3, 4)))
case("smooth_l1_loss", "module", module(lambda: nn.SmoothL1Loss(reduction="none")), T("f64", (5,)), T("f64", (5,)))
case("huber_loss", "weight", lambda x, t, w: F.huber_loss(x, t, weight=w), T("f32", (3, 4)), T("f32", (3, 4)),
     T("f32", (3, 4), "pos"))
case("huber_loss", "module", module(lambda: nn.HuberLoss(reduction="sum", delta=0.5)), T("f32", (4,)), T("f32", (4,)))
case(("binary_cross_entropy", "sigmoid"), "F", lambda x, t: F.binary_cross_entropy(x.sigmoid(), t.sigmoid()),
     T("f32", (3, 4)), T("f32", (3, 4)))
case(("binary_cross_entropy", "sigmoid"), "weight-none",
     lambda x, t, w: F.binary_cross_entropy(x.sigmoid(), t.sigmoid(), w, reduction="none"), T("f64", (3, 4)),
     T("f64", (3, 4)), T("f64", (4,), "pos"))
case("binary_cross_entropy", "saturated", lambda x, t: F.binary_cross_entropy(x, t),
     L((0.0, 1.0, 0.5), "f32"), L((1.0, 0.0, 0.5), "f32"))
case("binary_cross_entropy_with_logits", "pos_weight",
     lambda x, t, p: F.binary_cross_entropy_with_logits(x, t, pos_weight=p), T("f32", (3, 4)), T("f32", (3, 4), "pos"),
     T("f32", (4,), "pos"))
case("binary_cross_entropy_with_logits", "module", module(lambda: nn.BCEWithLogitsLoss(reduction="sum")),
     T("f32", (2, 3)), T("f32", (2, 3), "pos"))
case("kl_div", "batchmean", lambda x, t: F.kl_div(x, t, reduction="batchmean"), T("f32", (2, 3)), T("f32", (2, 3), "pos"))
case("kl_div", "log-target", lambda x, t: F.kl_div(x, t, reduction="sum", log_target=True), T("f32", (2, 3)),
     T("f32", (2, 3)))
case("kl_div", "zero-target", lambda x, t: F.kl_div(x, t, reduction="none"), T("f32", (3,)), L((0.0, 0.5, 1.0), "f32"))
case("soft_margin_loss", "F", F.soft_margin_loss, T("f32", (3, 4)), L(((1.0, -1.0, 1.0, -1.0),), "f32"))
case("margin_ranking_loss", "F", lambda a, b, t: F.margin_ranking_loss(a, b, t, margin=0.3), T("f32", (5,)),
     T("f32", (5,)), L((1.0, -1.0, 1.0, -1.0, 1.0), "f32"))
case("hinge_embedding_loss", "F", lambda x, t: F.hinge_embedding_loss(x, t, margin=0.5, reduction="none"),
     T("f32", (4,)), L((1.0, -1.0, 1.0, -1.0), "f32"))
case("poisson_nll_loss", "log-input", F.poisson_nll_loss, T("f32", (3, 4)), T("f32", (3, 4), "pos"))
case("poisson_nll_loss", "full", lambda x, t: F.poisson_nll_loss(x, t, log_input=False, full=True, reduction="sum"),
     T("f64", (3, 4), "pos"), T("f64", (3, 4), "pos"))


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
