"""The quick record builders passes use: the records they make are the ones the
constructors make, still frozen."""

import dataclasses

import pytest

from tracecli.core import dtypes
from tracecli.core.symbol import BoundSymbol, new_bound_symbol
from tracecli.core.values import TensorValue
from tracecli.ops import prims


def test_renamed_and_new_bound_symbol_make_frozen_records_like_the_constructors():
    x = TensorValue("x", (2, 3), dtypes.float16, "cuda:0", requires_grad=True)
    renamed = x.renamed("y")
    assert type(renamed) is TensorValue
    assert renamed == TensorValue("y", (2, 3), dtypes.float16, "cuda:0", True)
    assert hash(renamed) == hash(TensorValue("y", (2, 3), dtypes.float16, "cuda:0", True))
    with pytest.raises(dataclasses.FrozenInstanceError):
        renamed.name = "z"

    fields = (prims.mul, (x, 2), (("k", 1),), renamed, (), None, (("y", "y"),), "fc1")
    bsym = new_bound_symbol(*fields)
    assert type(bsym) is BoundSymbol
    assert [getattr(bsym, f.name) for f in dataclasses.fields(BoundSymbol)] == list(fields)
    with pytest.raises(dataclasses.FrozenInstanceError):
        bsym.args = ()
