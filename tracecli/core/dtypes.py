"""Element types of tensor values.

The IR keeps its own small dtype records so that the core needs no torch import;
`ops.torch_bridge` maps them to and from torch dtypes. A dtype prints in type
comments by its short name (`f32`) and in executable code by its torch name
(`torch.float32`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tracecli.core.dims import Dim


@dataclass(frozen=True, slots=True)
class DType:
    name: str  # torch's attribute name: "float32"
    short: str  # type-comment spelling: "f32"
    # "bool", "int", "float" or "complex": the type-promotion category; "quantized" and
    # "bits" dtypes belong to none (torch promotes them with nothing).
    kind: str
    bits: int  # bits per element

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

    # Every traced op compares dtypes and looks them up in the torch bridge's tables. Each
    # dtype is one record (the ones below), so identity answers almost every comparison;
    # a copy still equals its original field by field, and hashes by its name as it does.
    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not DType:
            return NotImplemented
        return (self.name, self.short, self.kind, self.bits) == (other.name, other.short, other.kind, other.bits)

    def __hash__(self) -> int:
        return hash(self.name)


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

# The dtypes every op of torch's promotion lattice takes part in.
CORE = (bool8, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)

complex32 = DType("complex32", "c32", "complex", 32)
# Unsigned integers torch stores but barely computes with (it promotes them only with floats).
uint16 = DType("uint16", "u16", "int", 16)
uint32 = DType("uint32", "u32", "int", 32)
uint64 = DType("uint64", "u64", "int", 64)
# Storage formats for low-precision kernels: torch refuses to promote them at all.
float8_e4m3fn = DType("float8_e4m3fn", "f8e4m3fn", "float", 8)
float8_e4m3fnuz = DType("float8_e4m3fnuz", "f8e4m3fnuz", "float", 8)
float8_e5m2 = DType("float8_e5m2", "f8e5m2", "float", 8)
float8_e5m2fnuz = DType("float8_e5m2fnuz", "f8e5m2fnuz", "float", 8)
float8_e8m0fnu = DType("float8_e8m0fnu", "f8e8m0fnu", "float", 8)
float4_e2m1fn_x2 = DType("float4_e2m1fn_x2", "f4e2m1fn_x2", "float", 8)  # two 4-bit floats per byte
# Sub-byte integers (one element per byte in memory).
SUB_BYTE = tuple(DType(f"{sign}int{n}", f"{sign[:1] or 'i'}{n}", "int", n) for sign in ("u", "") for n in range(1, 8))
# Quantized integers and untyped bit containers: no arithmetic, no promotion.
QUANTIZED = (
    DType("qint8", "qi8", "quantized", 8), DType("quint8", "qu8", "quantized", 8),
    DType("qint32", "qi32", "quantized", 32), DType("quint4x2", "qu4x2", "quantized", 8),
    DType("quint2x4", "qu2x4", "quantized", 8),
)
BITS = (
    DType("bits1x8", "b1x8", "bits", 8), DType("bits2x4", "b2x4", "bits", 8), DType("bits4x2", "b4x2", "bits", 8),
    DType("bits8", "b8", "bits", 8), DType("bits16", "b16", "bits", 16),
)

# Every dtype torch has (tests check this against torch itself).
ALL = (
    *CORE, complex32, uint16, uint32, uint64,
    float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu, float4_e2m1fn_x2,
    *SUB_BYTE, *QUANTIZED, *BITS,
)
BY_NAME = {d.name: d for d in ALL}
BY_SHORT = {d.short: d for d in ALL}

# Python number types map onto these when a number becomes a tensor.
DEFAULT_FOR_KIND = {"bool": bool8, "int": int64, "float": float32, "complex": complex64}
KIND_ORDER = {"bool": 0, "int": 1, "float": 2, "complex": 3}


def kind_of_number(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, Dim)):  # a size symbol is an int whose value calls give
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, complex):
        return "complex"
    raise TypeError(f"not a number: {value!r}")
