"""The census of torch functions written in Python that hand themselves whole to
__torch_function__ (tracecli/frontend/composite_census.py): how many are modelled, traced
through, answered by the tracer, run as Python, or stay opaque, as the README says; and
each one traced through, traced on a sample: never recorded as an opaque call of itself,
agreeing with eager, with what stays opaque inside it named here."""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F

from tests.conftest import ROOT
from tests.ops.harness import assert_matches
from tracecli.core.errors import TracingError
from tracecli.core.trace import walk
from tracecli.core.verify import verify
from tracecli.executors.codegen import compile_trace
from tracecli.frontend.composite_census import (
    ANSWERED,
    MODELLED,
    ON_NUMBERS,
    OPAQUE,
    TRACED_THROUGH,
    census,
    counts,
)
from tracecli.frontend.tracer import trace_callable

CENSUS = census()
COUNTS = {MODELLED: 97, TRACED_THROUGH: 31, ANSWERED: 7, ON_NUMBERS: 18, OPAQUE: 19}


def test_the_census_counts_each_outcome():
    assert dict(counts(CENSUS)) == COUNTS
    assert len({entry.name for entry in CENSUS}) == len(CENSUS) == sum(COUNTS.values())


def test_the_readme_gives_the_censuss_counts():
    readme = " ".join((ROOT / "README.md").read_text().split())
    found = re.search(r"Of the (\d+) callables torch's Python functions hand whole to `__torch_function__`.*?"
                      r"(\d+) are modelled.*?(\d+) are traced through, (\d+) are answered by the tracer.*?"
                      r"(\d+) run as Python.*?(\d+) stay opaque", readme)
    assert found, "README's What is modelled section lost the census sentence"
    total, *outcomes = (int(n) for n in found.groups())
    assert (total, *outcomes) == (len(CENSUS), *(COUNTS[k] for k in (MODELLED, TRACED_THROUGH, ANSWERED, ON_NUMBERS,
                                                                      OPAQUE)))


def test_each_that_is_not_traced_says_why():
    for entry in CENSUS:
        assert bool(entry.why) == (entry.outcome not in (MODELLED, TRACED_THROUGH)), entry


def test_multi_head_attention_and_the_losses_people_use_are_traced_through():
    outcome = {entry.name: entry.outcome for entry in CENSUS}
    for name in ("torch.nn.functional.multi_head_attention_forward", "torch.nn.functional.grid_sample",
                 "torch.nn.functional.triplet_margin_loss", "torch.nn.functional.lp_pool2d"):
        assert outcome[name] == TRACED_THROUGH


def test_one_that_stays_opaque_and_reads_values_is_refused_at_the_users_line():
    # Not blamed on the library code that handed the call over: the user called it.
    with pytest.raises(TracingError) as info:
        trace_callable(lambda x, v: F.gaussian_nll_loss(x, x, v), (randn(4, 3), randn(4, 3).exp()), name="fn")
    assert info.value.message == ("torch.nn.functional.gaussian_nll_loss cannot be traced: its output depends on the "
                                  "values in its input tensors, which tracing does not have")
    assert info.value.source.startswith("trace_callable(lambda x, v: F.gaussian_nll_loss(x, x, v)")


# -- each one traced through, on a sample -------------------------------------------------


def randn(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape)))


def _pooled(dims: int):
    pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[dims - 1]
    return pool(randn(1, 2, *([4] * dims)), 2, return_indices=True)


_WINDOW = torch.hann_window(8)

# name -> (call, its arguments, the opaque torch callables left inside it). A string for
# the last: tracing stops there, at the user's line, naming that op (not the composite).
SAMPLES = {
    "torch.Tensor.__reversed__": (lambda x: x.__reversed__(), lambda: (randn(3, 4),), ()),
    "torch.Tensor.dim_order": (lambda x: x * len(x.dim_order()), lambda: (randn(3, 4),), ()),
    "torch.Tensor.istft": (lambda x: x.istft(8, window=_WINDOW),
                           lambda: (torch.stft(randn(32), 8, window=_WINDOW, return_complex=True),), "torch.istft"),
    "torch.Tensor.resize": (lambda x: x.resize(2, 6) * 1, lambda: (randn(3, 4),), ("Resize_apply",)),
    "torch.Tensor.resize_as": (lambda x, y: x.resize_as(y) * 1, lambda: (randn(3, 4), randn(2, 6)),
                               ("Resize_apply",)),
    "torch.nn.functional.affine_grid": (lambda t: F.affine_grid(t, [2, 3, 4, 5], align_corners=False),
                                        lambda: (randn(2, 2, 3),), ("torch.affine_grid_generator",)),
    "torch.nn.functional.cosine_embedding_loss": (F.cosine_embedding_loss,
                                                  lambda: (randn(4, 5), randn(4, 5), torch.tensor([1, -1, 1, -1])),
                                                  ("torch.cosine_embedding_loss",)),
    "torch.nn.functional.ctc_loss": (lambda lp, t: F.ctc_loss(lp, t, (6, 6), (3, 2)),
                                     lambda: (randn(6, 2, 4).log_softmax(2), torch.tensor([[1, 2, 3], [2, 3, 0]])),
                                     ("torch.ctc_loss",)),
    "torch.nn.functional.fold": (lambda x: F.fold(x, (4, 4), 2), lambda: (randn(1, 12, 9),), ("torch._C._nn.col2im",)),
    "torch.nn.functional.fractional_max_pool2d": (lambda x: F.fractional_max_pool2d(x, 2, output_size=(4, 4)),
                                                  lambda: (randn(1, 2, 8, 8),), ("torch._C._nn.fractional_max_pool2d",)),
    "torch.nn.functional.fractional_max_pool2d_with_indices": (
        lambda x: F.fractional_max_pool2d_with_indices(x, 2, output_size=(4, 4)), lambda: (randn(1, 2, 8, 8),),
        ("torch._C._nn.fractional_max_pool2d",)),
    "torch.nn.functional.fractional_max_pool3d": (lambda x: F.fractional_max_pool3d(x, 2, output_size=(2, 2, 2)),
                                                  lambda: (randn(1, 2, 4, 4, 4),),
                                                  ("torch._C._nn.fractional_max_pool3d",)),
    "torch.nn.functional.fractional_max_pool3d_with_indices": (
        lambda x: F.fractional_max_pool3d_with_indices(x, 2, output_size=(2, 2, 2)), lambda: (randn(1, 2, 4, 4, 4),),
        ("torch._C._nn.fractional_max_pool3d",)),
    "torch.nn.functional.grid_sample": (lambda x, grid: F.grid_sample(x, grid, align_corners=False),
                                        lambda: (randn(1, 2, 4, 4), randn(1, 3, 3, 2).tanh()), ("torch.grid_sampler",)),
    "torch.nn.functional.gumbel_softmax": (lambda x: F.gumbel_softmax(x, tau=0.5, hard=True), lambda: (randn(3, 5),),
                                           ("torch.Tensor.exponential_",)),
    "torch.nn.functional.linear_cross_entropy": (F.linear_cross_entropy,
                                                 lambda: (randn(4, 8), randn(5, 8), torch.tensor([0, 4, 2, 1])), ()),
    "torch.nn.functional.lp_pool1d": (lambda x: F.lp_pool1d(x, 2.0, 2), lambda: (randn(1, 2, 8),), ()),
    "torch.nn.functional.lp_pool2d": (lambda x: F.lp_pool2d(x, 2.0, 2), lambda: (randn(1, 2, 6, 6),), ()),
    "torch.nn.functional.lp_pool3d": (lambda x: F.lp_pool3d(x, 2.0, 2), lambda: (randn(1, 2, 4, 4, 4),), ()),
    "torch.nn.functional.max_unpool1d": (lambda x, i: F.max_unpool1d(x, i, 2), lambda: _pooled(1),
                                         ("torch._C._nn.max_unpool2d",)),
    "torch.nn.functional.max_unpool2d": (lambda x, i: F.max_unpool2d(x, i, 2), lambda: _pooled(2),
                                         ("torch._C._nn.max_unpool2d",)),
    "torch.nn.functional.max_unpool3d": (lambda x, i: F.max_unpool3d(x, i, 2), lambda: _pooled(3),
                                         ("torch._C._nn.max_unpool3d",)),
    "torch.nn.functional.multi_head_attention_forward": (
        lambda q, w, b, ow, ob: F.multi_head_attention_forward(q, q, q, 8, 2, w, b, None, None, False, 0.0, ow, ob),
        lambda: (randn(3, 2, 8), randn(24, 8), randn(24), randn(8, 8), randn(8)), ()),
    "torch.nn.functional.multi_margin_loss": (F.multi_margin_loss, lambda: (randn(3, 4), torch.tensor([0, 3, 1])),
                                              ("torch._C._nn.multi_margin_loss",)),
    "torch.nn.functional.multilabel_margin_loss": (F.multilabel_margin_loss,
                                                   lambda: (randn(2, 4), torch.tensor([[3, 0, -1, 1], [1, 2, 3, -1]])),
                                                   ("torch._C._nn.multilabel_margin_loss",)),
    "torch.nn.functional.multilabel_soft_margin_loss": (F.multilabel_soft_margin_loss,
                                                        lambda: (randn(3, 4), (randn(3, 5)[:, :4] > 0).float()), ()),
    "torch.nn.functional.triplet_margin_loss": (F.triplet_margin_loss, lambda: (randn(3, 4), randn(3, 5)[:, :4],
                                                                                randn(3, 6)[:, :4]),
                                                ("torch.triplet_margin_loss",)),
    "torch.nn.functional.triplet_margin_with_distance_loss": (
        F.triplet_margin_with_distance_loss, lambda: (randn(3, 4), randn(3, 5)[:, :4], randn(3, 6)[:, :4]),
        ("torch.pairwise_distance",)),
    "torch.pca_lowrank": (lambda a: torch.pca_lowrank(a, q=3)[1], lambda: (randn(6, 4),), ()),
    "torch.svd_lowrank": (lambda a: torch.svd_lowrank(a, q=3)[1], lambda: (randn(6, 4),), ()),
    "torch.unravel_index": (lambda i: torch.unravel_index(i, (3, 4)), lambda: (torch.tensor([5, 7, 11]),), ()),
}


def test_each_traced_through_has_a_sample():
    assert sorted(SAMPLES) == sorted(entry.name for entry in CENSUS if entry.outcome == TRACED_THROUGH)


@pytest.mark.filterwarnings("ignore::UserWarning")  # Tensor.resize is deprecated
@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_traced_through_on_a_sample(name):
    fn, make_args, opaque_inside = SAMPLES[name]
    args = make_args()
    if isinstance(opaque_inside, str):
        with pytest.raises(TracingError) as info:
            trace_callable(fn, args, name="fn")
        assert info.value.message.startswith(f"{opaque_inside} cannot be traced: its output depends on the values")
        assert info.value.message.endswith(f" (called inside {name})")
        return
    program = trace_callable(fn, args, name="fn")
    verify(program.trace)
    opaque = sorted({b.symbol.qualname for _, b in walk(program.trace.bsyms) if b.symbol.namespace in ("torch", "")})
    assert opaque == sorted(opaque_inside)
    torch.manual_seed(0)  # the random ones (fractional pooling, gumbel_softmax) draw eager's numbers
    expected = fn(*(a.clone() for a in args))
    torch.manual_seed(0)
    actual = compile_trace(program.trace)(*program.inputs)
    assert_matches("torch", program.trace, expected, actual, exact=False)
