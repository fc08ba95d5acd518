"""How a torch callable that reached the tracer is handled: answered from the proxy's
metadata, refused as data-dependent, mapped onto ltorch through the form its op
declared (see ops/forms.py), or, for a torch function written in Python that hands
itself whole to `__torch_function__`, traced through (see ops/composites.py); anything
else becomes an opaque call.

The forms themselves are declared with the ops (`@symbol(torch.add, methods=(...))` in
ltorch/elementwise.py): importing ltorch fills FORMS, so this module reads, never writes.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import torch
from torch._ops import OpOverload, OpOverloadPacket

from tracecli.ops import ltorch  # noqa: F401 - importing ltorch declares every form
from tracecli.ops.composites import body
from tracecli.ops.forms import FORMS, OPAQUE
from tracecli.ops.ltorch.inplace import written_in_place
from tracecli.ops.opaque_effects import writes_first_argument

# Calls answered from the proxy's own metadata: they record nothing.
METADATA_METHODS = frozenset({
    "size", "dim", "ndimension", "numel", "nelement", "is_floating_point", "is_complex", "element_size",
    "is_contiguous", "get_device", "is_signed", "__len__", "__hash__", "stride", "storage_offset", "storage_type",
    "__get__",  # property reads other than TENSOR_PROPERTIES: shape, dtype, device, ndim, ...
})
# Function forms of metadata reads: answered from the proxy too (`torch.is_floating_point(x)`
# as `x.is_floating_point()`; result_type from dtypes and ranks alone).
METADATA_FUNCTIONS = frozenset({
    torch.is_floating_point, torch.is_complex, torch.is_signed, torch.numel, torch.result_type,
})
# Reads that need tensor values, which a trace does not have.
DATA_DEPENDENT = frozenset({
    "__bool__", "item", "tolist", "__int__", "__float__", "__index__", "__complex__", "numpy",
    "__array__", "data_ptr", "__contains__", "__format__", "__repr__",
})


# Tensor properties whose value is a tensor made from the data: each is an op (declared
# as a form, like T, or opaque, like H); every other property is metadata.
TENSOR_PROPERTIES = frozenset({"T", "mT", "H", "mH", "real", "imag", "data"})


# numpy's names torch's argument parser takes for its own (`t.sum(axis=0, keepdims=True)`).
NUMPY_KEYWORDS = {"axis": "dim", "keepdims": "keepdim"}


def torch_keywords(kwargs: dict) -> dict:
    """`kwargs` under torch's own names, where a call gave numpy's."""
    return {NUMPY_KEYWORDS[k] if k in NUMPY_KEYWORDS and NUMPY_KEYWORDS[k] not in kwargs else k: v
            for k, v in kwargs.items()}


def resolve(func: Callable) -> tuple[str, Callable | None]:
    """Classify a torch callable: ('ltorch', adapter), ('metadata', None), ('data', None),
    ('unsupported-inplace', None), ('composite', its body) or ('opaque', None)."""
    try:
        form = FORMS.functions.get(func) or FORMS.properties.get(func)
    except TypeError:  # an unhashable callable object: nothing declares it
        return "opaque", None
    if form is not None:
        return "ltorch", form.adapter
    if func in METADATA_FUNCTIONS:
        return "metadata", None
    if isinstance(func, (OpOverload, OpOverloadPacket)):
        return _aten(func)
    name = getattr(func, "__name__", "")
    if _inplace_name(name) and getattr(func, "__module__", None) == "torch":
        twin = FORMS.functions.get(getattr(torch, name[:-1], None))
        if twin is not None:  # torch.relu_(x), the function form of x.relu_()
            return "ltorch", _through_twin(twin.adapter, f"torch.{name}")
    qualname = getattr(func, "__qualname__", "")
    is_method = qualname.startswith(("Tensor.", "TensorBase.", "getset_descriptor."))
    if name == "__get__" and getattr(getattr(func, "__self__", None), "__name__", "") in TENSOR_PROPERTIES:
        return "opaque", None
    if is_method or (name == "__get__" and not qualname):
        if name in DATA_DEPENDENT:
            return "data", None
        if name in METADATA_METHODS:
            return "metadata", None
        form = FORMS.methods.get(name)
        if form is not None:
            return "ltorch", form.adapter
        twin = FORMS.methods.get(name[:-1]) if _inplace_name(name) else None
        if twin is not None:
            return "ltorch", _through_twin(twin.adapter, f"Tensor.{name}")
        if name.endswith("_") and not name.startswith("__") and not writes_first_argument(func):
            # Without a schema saying it writes its tensor, an opaque call would record a new
            # value but leave the user's tensor as it was. With one, it is an INPLACE op.
            return "unsupported-inplace", None
    traced_body = body(func)
    if traced_body is not None:
        return "composite", traced_body
    return "opaque", None


# In-place ops that change a tensor's shape or strides, not its data: no write to model.
METADATA_INPLACE = frozenset({
    "transpose_", "t_", "squeeze_", "unsqueeze_", "swapdims_", "swapaxes_", "as_strided_", "resize_", "resize_as_",
})


def _inplace_name(name: str) -> bool:
    return name.endswith("_") and not name.startswith("_") and len(name) > 1 and name not in METADATA_INPLACE


def _through_twin(out_of_place: Callable, op: str) -> Callable:
    """One rule for every in-place method whose out-of-place twin is modelled: the twin's
    result, written into the tensor as eager's in-place ops do."""

    def adapter(self, *args, **kwargs):
        result = out_of_place(self, *args, **kwargs)
        return OPAQUE if result is OPAQUE else written_in_place(self, result, op)

    return adapter


def _aten(op: OpOverload | OpOverloadPacket) -> tuple[str, Callable | None]:
    """`torch.ops.aten.<name>.<overload>`: modelled through the form of `torch.<name>`
    (generated from the same schema, so its arguments come in the same order) or of
    `Tensor.<name>`; otherwise, and for `out=` variants, opaque."""
    packet = op if isinstance(op, OpOverloadPacket) else op.overloadpacket
    if packet._qualified_op_name.split("::")[0] != "aten":
        return "opaque", None
    schema = op._schema if isinstance(op, OpOverload) else None
    if schema is not None and any(arg.is_out for arg in schema.arguments):
        return "opaque", None
    name = packet.__name__
    form = FORMS.functions.get(getattr(torch, name, None)) or FORMS.methods.get(name)
    if form is None:
        return "opaque", None
    return "ltorch", _schema_adapter(form.adapter, schema)


def _schema_adapter(adapter: Callable, schema) -> Callable:
    """Call `adapter` with the schema's positional arguments positionally (aten names
    its first one `self` where torch says `input`), or answer OPAQUE where the public
    spelling takes different arguments than the aten overload."""
    target = adapter.decomposition if hasattr(adapter, "decomposition") else adapter
    signature = inspect.signature(target)
    positional = [a for a in schema.arguments if not a.kwarg_only] if schema is not None else []

    def call(*args, **kwargs):
        args = list(args)
        for arg in positional[len(args):]:
            if arg.name in kwargs:
                args.append(kwargs.pop(arg.name))
            elif arg.has_default_value() and any(a.name in kwargs for a in positional[len(args) + 1 :]):
                args.append(arg.default_value)
            else:
                break
        try:
            signature.bind(*args, **kwargs)
        except TypeError:
            return OPAQUE
        return adapter(*args, **kwargs)

    return call


__all__ = ["NUMPY_KEYWORDS", "resolve", "torch_keywords"]
