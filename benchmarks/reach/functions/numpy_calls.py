"""numpy inside the function: numpy scalars and constants mixed with tensors, numpy on
sizes, and tensors taken to numpy (x.numpy(), np.asarray), computed on with numpy
functions and brought back with torch.from_numpy."""

import numpy as np
import torch


def case(inputs, kwargs=dict):
    """Marks a case: `inputs()` makes its positional arguments, `kwargs()` its keyword ones."""
    def mark(fn):
        fn.case_inputs = lambda: (inputs(), kwargs())
        return fn
    return mark


def randn(*shape, **options):
    return torch.randn(*shape, **options)


WEIGHTS = np.linspace(0.0, 1.0, 4, dtype=np.float32)


# -- numpy numbers and constants ----------------------------------------------------

@case(lambda: (randn(3),))
def numpy_float32_scalar_times_tensor(x):
    """np.float32(2.0) * x"""
    return np.float32(2.0) * x


@case(lambda: (randn(3),))
def add_finfo_min(x):
    """x + np.finfo(np.float32).min, as attention masks are made"""
    return x + np.finfo(np.float32).min


@case(lambda: (randn(3),))
def numpy_float64_scalar_on_the_right(x):
    """x * np.float64(0.5) and x / np.int64(4)"""
    return x * np.float64(0.5) + x / np.int64(4)


@case(lambda: (randn(5),))
def numpy_int_as_index(x):
    """a numpy integer as an index and a slice bound"""
    i = np.int64(2)
    return x[i] + x[: np.int32(3)].sum()


@case(lambda: (randn(3),))
def numpy_pi_and_e(x):
    """np.pi and np.e as Python floats"""
    return x * np.pi - np.e


@case(lambda: (randn(2, 16),))
def numpy_sqrt_of_size(x):
    """np.sqrt of a size as the attention scale"""
    return x / np.sqrt(x.shape[-1])


@case(lambda: (randn(2, 3, 4),))
def numpy_prod_of_shape(x):
    """np.prod(x.shape[1:]) to flatten"""
    return x.reshape(x.shape[0], int(np.prod(x.shape[1:])))


@case(lambda: (randn(4),))
def global_array_to_tensor(x):
    """a global numpy array turned into a tensor with torch.from_numpy"""
    return x * torch.from_numpy(WEIGHTS)


@case(lambda: (randn(4),))
def numpy_arange_as_tensor(x):
    """torch.as_tensor(np.arange(n)) of a constant array"""
    return x + torch.as_tensor(np.arange(4), dtype=x.dtype)


@case(lambda: (randn(3),))
def numpy_bool_checks(x):
    """np.isfinite / np.isclose on Python numbers in a branch"""
    eps = 1e-6
    if np.isfinite(eps) and not np.isclose(eps, 0.0, atol=0.0):
        return x + eps
    return x


# -- tensors through numpy ------------------------------------------------------------

@case(lambda: (randn(3, 4),))
def numpy_roundtrip(x):
    """x.numpy(), np.sin, torch.from_numpy back"""
    return torch.from_numpy(np.sin(x.numpy())) * 2


@case(lambda: (randn(3, 4),))
def asarray_and_numpy_functions(x):
    """np.asarray(x), np.clip and np.mean, then torch.from_numpy"""
    a = np.asarray(x)
    clipped = np.clip(a, -0.5, 0.5)
    return torch.from_numpy(clipped - np.mean(clipped, axis=0, keepdims=True))


@case(lambda: (randn(3),))
def full_like_of_tensor(x):
    """np.full_like(x, 2) on a tensor"""
    return x + torch.from_numpy(np.full_like(x, 2))


@case(lambda: (randn(2, 3), randn(2, 3)))
def numpy_concatenate_and_where(x, y):
    """np.concatenate and np.where on arrays from tensors"""
    a, b = x.numpy(), y.numpy()
    joined = np.concatenate([a, b], axis=0)
    return torch.from_numpy(np.where(joined > 0, joined, 0.0))


@case(lambda: (randn(2, 3), randn(3, 2)))
def numpy_matmul(x, y):
    """the @ operator on numpy arrays from tensors"""
    return torch.from_numpy(x.numpy() @ y.numpy())


@case(lambda: (randn(4),))
def numpy_array_returned(x):
    """a numpy array returned"""
    return (x * 2).numpy()


@case(lambda: (randn(4),))
def numpy_reduction_to_number(x):
    """a numpy reduction used as a Python number"""
    peak = float(np.abs(x.numpy()).max())
    return x / peak
