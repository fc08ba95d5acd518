"""Element types of tensor values.

The IR keeps its own small dtype records so that the core needs no torch import;
`ops.torch_bridge` maps them to and from torch dtypes. A dtype prints in type
comments by its short name (`f32`) and in executable code by its torch name
(`torch.float32`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DType:
    name: str  # torch's attribute name: "float32"
    short: str  # type-comment spelling: "f32"
    kind: str  # "bool", "int", "float" or "complex": the type-promotion category
    bits: int

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_complex(self) -> bool:
        return self.kind == "complex"

    @property
    def is_inexact(self) -> bool:
        return self.kind in ("float", "complex")

    def __repr__(self) -> str:
        return f"torch.{self.name}"


bool8 = DType("bool", "bool", "bool", 8)
uint8 = DType("uint8", "u8", "int", 8)
int8 = DType("int8", "i8", "int", 8)
int16 = DType("int16", "i16", "int", 16)
int32 = DType("int32", "i32", "int", 32)
int64 = DType("int64", "i64", "int", 64)
float16 = DType("float16", "f16", "float", 16)
bfloat16 = DType("bfloat16", "bf16", "float", 16)
float32 = DType("float32", "f32", "float", 32)
float64 = DType("float64", "f64", "float", 64)
complex64 = DType("complex64", "c64", "complex", 64)
complex128 = DType("complex128", "c128", "complex", 128)

ALL = (bool8, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)
BY_NAME = {d.name: d for d in ALL}
BY_SHORT = {d.short: d for d in ALL}

# Python number types map onto these when a number becomes a tensor.
DEFAULT_FOR_KIND = {"bool": bool8, "int": int64, "float": float32, "complex": complex64}
KIND_ORDER = {"bool": 0, "int": 1, "float": 2, "complex": 3}


def kind_of_number(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, complex):
        return "complex"
    raise TypeError(f"not a number: {value!r}")
