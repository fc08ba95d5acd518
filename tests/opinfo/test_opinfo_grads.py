"""The grad transform on torch's op database (tests/opinfo/gradients.py): the gradient of
every OpInfo expected modeled matches torch.autograd's, is refused by the transform with
the op it has no rule for, or is one torch does not take either; a mismatch or a crash
fails unless GRAD_DEFECTS in tests/opinfo/expected.py lists it, with why, and a listed
defect that went away fails too (its line goes).

`make test` runs about one OpInfo in SAMPLE_EVERY, chosen by name, so the sample does not
move when torch adds OpInfos; TRACECLI_OPINFO_GRADS=all runs them all, as
`python -m tests.opinfo.gradients` does (which prints the counts per family).
"""

from __future__ import annotations

import os

import pytest
import torch

from tests.opinfo.expected import GRAD_DEFECTS, MODELED, TORCH_VERSION
from tests.opinfo.gradients import against_table, grad_opinfo, population
from tests.opinfo.harness import sampled as in_sample

SAMPLE_EVERY = 5
ALL = os.environ.get("TRACECLI_OPINFO_GRADS") == "all"
OPINFOS = population()

pytestmark = pytest.mark.skipif(
    not torch.__version__.startswith(TORCH_VERSION + "."),
    reason=f"tests/opinfo/expected.py is the table for torch {TORCH_VERSION}",
)


def sampled(name: str) -> bool:
    # Salted, so that this sample is not the forward test's (tests/opinfo/test_opinfo.py).
    return in_sample(name, SAMPLE_EVERY, b"grad:")


def test_the_defects_listed_are_modeled_opinfos_with_reasons():
    assert set(GRAD_DEFECTS) <= MODELED, f"not MODELED OpInfos: {sorted(set(GRAD_DEFECTS) - MODELED)}"
    odd = {name: entry for name, entry in GRAD_DEFECTS.items()
           if entry[0] not in ("mismatch", "crash") or not entry[1].strip()}
    assert not odd, f"each entry is ('mismatch' or 'crash', why): {odd}"


@pytest.mark.parametrize("name", [name for name in sorted(OPINFOS) if ALL or sampled(name)])
def test_opinfo_gradient(name):
    disagreement = against_table(grad_opinfo(OPINFOS[name]))
    assert not disagreement, disagreement
