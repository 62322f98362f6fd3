"""Data types of the `pl` language and their numpy / ml_dtypes storage types."""
from __future__ import annotations

from enum import Enum

import ml_dtypes
import numpy as np

from pypto.ir.record import record


class Kind(Enum):
    BOOL = "bool"
    SINT = "sint"
    UINT = "uint"
    FLOAT = "float"
    HANDLE = "handle"  # TASK_ID: an opaque runtime handle, not a number


@record
class DType:
    """A `pl` data type: name, bit width, kind and the numpy type that stores it."""

    name: str
    bits: int
    kind: Kind
    np_name: str

    @property
    def np(self) -> np.dtype:
        return _NP[self.np_name]

    @property
    def nbytes(self) -> int:
        """Bytes per element as the hardware lays it out (4-bit types pack two per byte)."""
        return max(1, self.bits // 8)

    def is_float(self) -> bool:
        return self.kind is Kind.FLOAT

    def is_int(self) -> bool:
        return self.kind in (Kind.SINT, Kind.UINT)

    def is_signed_int(self) -> bool:
        return self.kind is Kind.SINT

    def is_unsigned_int(self) -> bool:
        return self.kind is Kind.UINT

    def get_bit(self) -> int:
        return self.bits

    def get_byte(self) -> int:
        return self.nbytes

    def to_string(self) -> str:
        return self.name.lower()

    def __repr__(self) -> str:
        return f"pl.{self.name}"


_NP: dict[str, np.dtype] = {
    "bool": np.dtype(np.bool_),
    "int8": np.dtype(np.int8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32),
    "uint64": np.dtype(np.uint64),
    "float16": np.dtype(np.float16),
    "float32": np.dtype(np.float32),
    "float64": np.dtype(np.float64),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float8_e4m3fn": np.dtype(ml_dtypes.float8_e4m3fn),
    "float8_e5m2": np.dtype(ml_dtypes.float8_e5m2),
    "float8_e8m0fnu": np.dtype(ml_dtypes.float8_e8m0fnu),
    "float4_e2m1fn": np.dtype(ml_dtypes.float4_e2m1fn),
    "int4": np.dtype(ml_dtypes.int4),
    "uint4": np.dtype(ml_dtypes.uint4),
}

BOOL = DType("BOOL", 8, Kind.BOOL, "bool")
INT4 = DType("INT4", 4, Kind.SINT, "int4")
INT8 = DType("INT8", 8, Kind.SINT, "int8")
INT16 = DType("INT16", 16, Kind.SINT, "int16")
INT32 = DType("INT32", 32, Kind.SINT, "int32")
INT64 = DType("INT64", 64, Kind.SINT, "int64")
UINT4 = DType("UINT4", 4, Kind.UINT, "uint4")
UINT8 = DType("UINT8", 8, Kind.UINT, "uint8")
UINT16 = DType("UINT16", 16, Kind.UINT, "uint16")
UINT32 = DType("UINT32", 32, Kind.UINT, "uint32")
UINT64 = DType("UINT64", 64, Kind.UINT, "uint64")
FP16 = DType("FP16", 16, Kind.FLOAT, "float16")
BF16 = DType("BF16", 16, Kind.FLOAT, "bfloat16")
FP32 = DType("FP32", 32, Kind.FLOAT, "float32")
FP4 = DType("FP4", 4, Kind.FLOAT, "float4_e2m1fn")
FP8E4M3FN = DType("FP8E4M3FN", 8, Kind.FLOAT, "float8_e4m3fn")
FP8E5M2 = DType("FP8E5M2", 8, Kind.FLOAT, "float8_e5m2")
FP8E8M0 = DType("FP8E8M0", 8, Kind.FLOAT, "float8_e8m0fnu")
# HiSilicon 4/8-bit floats have no ml_dtypes counterpart; they are storage-only here.
HF4 = DType("HF4", 4, Kind.FLOAT, "uint4")
HF8 = DType("HF8", 8, Kind.FLOAT, "uint8")
INDEX = DType("INDEX", 64, Kind.SINT, "int64")
TASK_ID = DType("TASK_ID", 64, Kind.HANDLE, "int64")
# The float of the precision shadow run (`pypto.precision`): every float of a kernel
# widened. No kernel can name it: it is in neither ALL nor BY_NAME, and pl has no FP64.
SHADOW_FP64 = DType("FP64", 64, Kind.FLOAT, "float64")

ALL: tuple[DType, ...] = (BOOL, INT4, INT8, INT16, INT32, INT64, UINT4, UINT8, UINT16, UINT32,
                          UINT64, FP16, BF16, FP32, FP4, FP8E4M3FN, FP8E5M2, FP8E8M0, HF4, HF8,
                          INDEX, TASK_ID)
BY_NAME = {d.name: d for d in ALL}

_FROM_NP = {FP32.np: FP32, FP16.np: FP16, BF16.np: BF16, INT8.np: INT8, INT16.np: INT16,
            INT32.np: INT32, INT64.np: INT64, UINT8.np: UINT8, UINT16.np: UINT16,
            UINT32.np: UINT32, UINT64.np: UINT64, BOOL.np: BOOL,
            FP8E4M3FN.np: FP8E4M3FN, FP8E5M2.np: FP8E5M2, FP8E8M0.np: FP8E8M0, FP4.np: FP4,
            INT4.np: INT4, UINT4.np: UINT4}


def from_numpy(dt: np.dtype) -> DType:
    """The `pl` dtype that numpy dtype `dt` stores (int64 maps to INT64, not INDEX)."""
    try:
        return _FROM_NP[np.dtype(dt)]
    except KeyError:
        raise TypeError(f"numpy dtype {dt} has no pl counterpart") from None


def promote(a: DType, b: DType) -> DType:
    """Result dtype of a binary op: same → itself; float beats int; wider wins;
    same width → the signed integer; otherwise the first operand."""
    if a == b:
        return a
    if a.is_float() != b.is_float():
        return a if a.is_float() else b
    if a.bits != b.bits:
        return a if a.bits > b.bits else b
    if a.is_signed_int() != b.is_signed_int():
        return a if a.is_signed_int() else b
    return a
