"""Linear algebra prims: matmul, with torch's rules for 1-d operands and batch broadcasting,
and the checks the linear algebra prims of linalg_solvers.py and linalg_decompositions.py
share (matrices, square matrices, the dtypes LAPACK takes, real and complex counterparts)."""

from __future__ import annotations

import torch

from tracecli.core import dtypes
from tracecli.core.dtypes import DType
from tracecli.core.values import TensorType, TensorValue
from tracecli.ops.prims.base import prim
from tracecli.ops.promotion import ShapeError, broadcast_shapes, same_device


def _matmul_meta(a: TensorValue, b: TensorValue) -> TensorType:
    same_device(a, b)
    if a.dtype != b.dtype:
        raise ShapeError("prims.matmul operands must share a dtype")
    if a.dtype == dtypes.bool8:
        raise ShapeError("matmul is not implemented for bool tensors")
    if a.dtype.kind == "int" and on_cuda(a):
        raise ShapeError(f"matmul of {a.dtype.name} tensors is not implemented on CUDA")
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError("matmul needs tensors with at least one dimension")
    a_shape = (1,) + a.shape if a.ndim == 1 else a.shape
    b_shape = b.shape + (1,) if b.ndim == 1 else b.shape
    if a_shape[-1] != b_shape[-2]:
        raise ShapeError(f"cannot multiply {list(a.shape)} by {list(b.shape)}: inner sizes differ")
    batch = broadcast_shapes(a_shape[:-2], b_shape[:-2])
    shape = batch + (a_shape[-2], b_shape[-1])
    if a.ndim == 1:
        shape = shape[:-2] + shape[-1:]
    if b.ndim == 1:
        shape = shape[:-1]
    return TensorType(shape, a.dtype, a.device)


matmul = prim("matmul", _matmul_meta, torch.matmul)

# --- what the LAPACK-backed prims check ------------------------------------------------

# The dtypes torch's factorizations and solvers take, on CPU (LAPACK) and CUDA (cuSOLVER,
# MAGMA) alike: integers and half precision are refused.
LAPACK = frozenset({dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128})
_REAL = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}
_COMPLEX = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}


def real_dtype(dtype: DType) -> DType:
    """The real dtype of a complex one (singular values, eigenvalues of Hermitian matrices)."""
    return _REAL.get(dtype, dtype)


def complex_dtype(dtype: DType) -> DType:
    """The complex dtype of a real one (eigenvalues of a general matrix)."""
    return _COMPLEX.get(dtype, dtype)


def check_operands(name: str, *tensors: TensorValue, allowed: frozenset = LAPACK,
                   kinds: str = "float32, float64, complex64 or complex128") -> None:
    """Every operand in a dtype torch's kernel takes, all of one dtype and one device."""
    first = tensors[0]
    for t in tensors:
        if t.dtype not in allowed:
            raise ShapeError(f"{name}: expected a tensor of {kinds}, got {t.dtype.name}")
        if t.dtype != first.dtype:
            raise ShapeError(f"{name}: expected tensors of one dtype, got {first.dtype.name} and {t.dtype.name}")
        if t.device != first.device:
            raise ShapeError(f"{name}: expected tensors on one device, got {first.device} and {t.device}")


def check_matrix(name: str, x: TensorValue, what: str = "A") -> None:
    if x.ndim < 2:
        raise ShapeError(f"{name}: the input tensor {what} must have at least 2 dimensions, got {list(x.shape)}")


def check_square(name: str, x: TensorValue, what: str = "A") -> None:
    check_matrix(name, x, what)
    if x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"{name}: {what} must be batches of square matrices, got {list(x.shape)}")


def on_cuda(x: TensorValue) -> bool:
    return x.device.split(":", 1)[0] == "cuda"
