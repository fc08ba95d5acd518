"""Questions asked of tensors and the constructors that answer with them: x.type() and
dtype checks, conversions by dtype and by type string, torch.Size arithmetic, legacy
constructors (x.new(...), torch.Tensor(...)), new_* with sizes in every form, and a
list indexed by a tensor made from constants."""

import torch


def case(inputs, kwargs=dict):
    """Marks a case: `inputs()` makes its positional arguments, `kwargs()` its keyword ones."""
    def mark(fn):
        fn.case_inputs = lambda: (inputs(), kwargs())
        return fn
    return mark


def randn(*shape, **options):
    return torch.randn(*shape, **options)


# -- type and dtype queries ---------------------------------------------------------

@case(lambda: (randn(3),))
def type_string_branch(x):
    """x.type() compared with a type string"""
    if x.type() == "torch.FloatTensor":
        return x * 2
    return x


@case(lambda: (randn(3), torch.arange(3)))
def type_of_other_tensor(a, b):
    """b.type(a.type()): convert to another tensor's type"""
    return b.type(a.type()) + a


@case(lambda: (randn(3),))
def type_with_dtype(x):
    """x.type(torch.float64)"""
    return x.type(torch.float64) * 2


@case(lambda: (randn(3),))
def type_with_type_string(x):
    """x.type('torch.DoubleTensor')"""
    return x.type("torch.DoubleTensor") + 1


@case(lambda: (randn(3), torch.arange(3)))
def dtype_equality_branch(x, i):
    """x.dtype == torch.float32 and i.dtype != torch.float32"""
    if x.dtype == torch.float32 and i.dtype != torch.float32:
        return x + i
    return x


@case(lambda: (randn(3), torch.arange(3)))
def is_floating_point_forms(x, i):
    """torch.is_floating_point, x.is_floating_point(), dtype.is_floating_point"""
    out = x
    if torch.is_floating_point(x) and not i.is_floating_point():
        out = out * 2
    if x.dtype.is_floating_point and not i.dtype.is_complex:
        out = out + 1
    return out


@case(lambda: (randn(3),))
def finfo_and_iinfo(x):
    """torch.finfo(x.dtype).eps and torch.iinfo(torch.int32).max"""
    return x.clamp(min=torch.finfo(x.dtype).eps) / torch.iinfo(torch.int32).max


@case(lambda: (randn(3, 4),))
def size_queries(x):
    """dim(), ndim, numel(), size(-1), element_size(), is_complex()"""
    n = x.dim() + x.ndim + x.numel() + x.size(-1) + x.element_size()
    return x * n if not x.is_complex() else x


@case(lambda: (randn(3), torch.arange(3)))
def promote_and_result_type(x, i):
    """torch.promote_types and torch.result_type to pick a dtype"""
    dtype = torch.promote_types(x.dtype, i.dtype)
    return (x.to(dtype) + i.to(torch.result_type(i, 2.5))).to(dtype)


@case(lambda: (randn(3).double(), randn(3)))
def to_dtype_and_to_tensor(x, y):
    """x.to(y.dtype), x.to(y) and the dtype-named methods"""
    return x.to(y.dtype) + x.to(y) + y.double().float() + y.half().float() + y.long()


@case(lambda: (randn(3, 4),))
def dtype_in_a_dict(x):
    """a dict keyed by dtype"""
    bits = {torch.float16: 16, torch.float32: 32, torch.float64: 64}
    return x * bits[x.dtype]


# -- torch.Size ----------------------------------------------------------------------

@case(lambda: (randn(2, 3),))
def size_plus_tuple(x):
    """x.view(x.shape + (1,)) and torch.Size slicing"""
    return x.view(x.shape + (1,)).expand(*x.shape, 2), x.shape[1:]


@case(lambda: (randn(2, 3, 4),))
def size_numel_and_unpack(x):
    """x.shape.numel(), unpacking the shape, torch.Size([...]) to reshape"""
    b, *rest = x.shape
    return x.reshape(torch.Size([b, x.shape.numel() // b])), rest


@case(lambda: (randn(2, 3),))
def size_returned(x):
    """x.shape and x.size() returned with the tensor"""
    return x + 1, x.shape, x.size(), x.dtype


# -- legacy constructors and new_* ----------------------------------------------------

@case(lambda: (randn(3),))
def new_with_size(x):
    """x.new(torch.Size([5, 8])), then filled"""
    y = x.new(torch.Size([5, 8]))
    return y.fill_(1.5)


@case(lambda: (randn(3),))
def new_with_varargs(x):
    """x.new(2, 3), then zeroed"""
    return x.new(2, 3).zero_() + 1


@case(lambda: (randn(3),))
def new_with_data(x):
    """x.new([1.0, 2.0, 3.0]) takes data"""
    return x.new([1.0, 2.0, 3.0]) * x


@case(lambda: (randn(2, 3),))
def tensor_constructor_sizes(x):
    """torch.Tensor(2, 3) filled, and torch.Tensor of a list"""
    return torch.Tensor(2, 3).fill_(0.5) + x + torch.Tensor([1.0, 2.0, 3.0])


@case(lambda: (randn(3),))
def typed_tensor_constructors(x):
    """torch.FloatTensor([...]) and torch.LongTensor([...])"""
    return x * torch.FloatTensor([1, 2, 3]) + torch.LongTensor([0, 1, 2])


@case(lambda: (randn(2, 3),))
def new_zeros_with_size(x):
    """x.new_zeros(torch.Size([2, 3])) and new_ones((2, 3))"""
    return x.new_zeros(torch.Size([2, 3])) + x.new_ones((2, 3)) + x


@case(lambda: (randn(2, 3),))
def new_full_and_new_empty(x):
    """x.new_full([2, 3], 7.0) and x.new_empty(x.shape).fill_(1)"""
    return x.new_full([2, 3], 7.0) - x.new_empty(x.shape).fill_(1)


@case(lambda: (randn(3),))
def new_tensor_from_list(x):
    """x.new_tensor([...]) keeps x's dtype"""
    return x + x.new_tensor([1, 2, 3])


@case(lambda: (randn(2, 3),))
def factories_from_sizes(x):
    """torch.zeros(x.size()), torch.ones(*x.shape), torch.full(x.shape, 2)"""
    return torch.zeros(x.size()) + torch.ones(*x.shape) + torch.full(x.shape, 2.0) + x


# -- indexing Python containers with tensors -----------------------------------------

@case(lambda: (randn(3),))
def list_indexed_by_constant_tensor(x):
    """items[torch.as_tensor(2)]"""
    items = [x, x * 2, x * 3]
    return items[torch.as_tensor(2)]


@case(lambda: (randn(3),))
def tuple_indexed_by_tensor_constant(x):
    """a tuple indexed by torch.tensor(1) and range(...)[torch.tensor(0)]"""
    scales = (0.5, 2.0, 4.0)
    return x * scales[torch.tensor(1)] + range(5)[torch.tensor(3)]


@case(lambda: (randn(4),))
def untyped_storage_size(x):
    """x.untyped_storage().nbytes() as a number"""
    return x * (x.untyped_storage().nbytes() // x.element_size())
