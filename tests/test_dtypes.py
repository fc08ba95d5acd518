"""The IR's dtype table covers every dtype torch has, and each can be made as an input."""

import pytest
import torch

from tracecli.core import dtypes
from tracecli.frontend.inputs import make_input, parse_spec
from tracecli.ops.torch_bridge import FROM_TORCH, TO_TORCH

TORCH_DTYPES = sorted({v for v in vars(torch).values() if isinstance(v, torch.dtype)}, key=str)


def test_every_torch_dtype_has_an_ir_dtype():
    assert set(TORCH_DTYPES) == set(FROM_TORCH)
    assert all(FROM_TORCH[TO_TORCH[d]] is d for d in dtypes.ALL)
    assert len(dtypes.BY_SHORT) == len(dtypes.ALL), "short names must be unique"


@pytest.mark.filterwarnings("ignore::UserWarning")  # complex32 and quantized tensors warn
@pytest.mark.parametrize("dtype", dtypes.ALL, ids=lambda d: d.short)
def test_input_spec_makes_a_tensor_of_every_dtype(dtype):
    tensor = make_input(parse_spec(f"{dtype.short}[2,3]"), "cpu", torch.Generator().manual_seed(0))
    assert (tensor.dtype, tuple(tensor.shape)) == (TO_TORCH[dtype], (2, 3))
