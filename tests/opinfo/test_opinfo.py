"""Torch's own op database through tracecli (tests/opinfo/harness.py), held to the
reviewed table in tests/opinfo/expected.py: an OpInfo expected modeled stays modeled, no
OpInfo crashes or gives a wrong result unless listed as that known defect, and one
listed as not modeled that becomes modeled moves to MODELED (the table stays true).

`make test` runs about one OpInfo in SAMPLE_EVERY, chosen by name, so the sample does not
move when torch adds OpInfos; TRACECLI_OPINFO=all runs them all, as `make coverage` does
(which prints the counts per family, tests/opinfo/coverage.py).
"""

from __future__ import annotations

import os

import pytest
import torch

from tests.opinfo.coverage import against_table
from tests.opinfo.expected import MODELED, NOT_MODELED, TORCH_VERSION
from tests.opinfo.harness import KINDS, opinfos, run_opinfo
from tests.opinfo.harness import sampled as in_sample

SAMPLE_EVERY = 3
ALL = os.environ.get("TRACECLI_OPINFO") == "all"
OPINFOS = opinfos()

# The table holds for the op database of one torch release: another one's OpInfos have
# other samples, and some other names.
pytestmark = pytest.mark.skipif(
    not torch.__version__.startswith(TORCH_VERSION + "."),
    reason=f"tests/opinfo/expected.py is the table for torch {TORCH_VERSION}",
)


def sampled(name: str) -> bool:
    return in_sample(name, SAMPLE_EVERY)


def test_the_table_lists_every_opinfo_once():
    assert not MODELED & NOT_MODELED.keys(), f"listed twice: {sorted(MODELED & NOT_MODELED.keys())}"
    listed = MODELED | NOT_MODELED.keys()
    assert listed == set(OPINFOS), (f"not in the table: {sorted(set(OPINFOS) - listed)}; "
                                    f"not OpInfos: {sorted(listed - set(OPINFOS))}")
    odd = {name: kind for name, (kind, _) in NOT_MODELED.items() if kind not in KINDS or kind == "modeled"}
    assert not odd, f"classes that are not harness.KINDS: {odd}"


@pytest.mark.parametrize("name", [name for name in sorted(OPINFOS) if ALL or sampled(name)])
def test_opinfo(name):
    disagreement = against_table(run_opinfo(OPINFOS[name]))
    assert not disagreement, disagreement
