"""Value types: tensors in global memory, on-chip tiles, scalars, tuples, arrays.

A dimension is either a Python int (static) or an IR expression (dynamic: a
`DynDim` symbol from `pl.dynamic`, or a scalar computed at run time).
"""
from __future__ import annotations

from dataclasses import field
from enum import Enum
from typing import TYPE_CHECKING, Union

from pypto.ir.dtypes import DType
from pypto.ir.record import record

if TYPE_CHECKING:
    from pypto.ir.nodes import Expr

Dim = Union[int, "Expr"]


class MemorySpace(Enum):
    """Where a tile lives (DDR is global memory; the rest are on-chip buffers)."""

    DDR = "DDR"
    Vec = "Vec"  # unified buffer (UB), vector unit
    Mat = "Mat"  # L1, cube side
    Left = "Left"  # L0A
    Right = "Right"  # L0B
    Acc = "Acc"  # L0C
    Bias = "Bias"
    LeftScale = "LeftScale"
    RightScale = "RightScale"
    ScalarLocal = "ScalarLocal"


class Type:
    """Base of all value types."""

    __slots__ = ()


def _dims_str(dims: tuple) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]"


@record
class ScalarType(Type):
    dtype: DType

    def __str__(self) -> str:
        return f"pl.Scalar[{self.dtype!r}]"


@record
class ShapedType(Type):
    """Common part of tensors and tiles: physical shape, dtype, optional valid shape."""

    shape: tuple
    dtype: DType
    valid_shape: tuple | None = None

    @property
    def rank(self) -> int:
        return len(self.shape)

    def static_shape(self) -> tuple[int, ...] | None:
        """The shape if every dim is a Python int, else None."""
        return self.shape if all(isinstance(d, int) for d in self.shape) else None

    def nbytes(self) -> int | None:
        shape = self.static_shape()
        if shape is None:
            return None
        n = 1
        for d in shape:
            n *= d
        return (n * self.dtype.bits + 7) // 8


@record
class TensorType(ShapedType):
    """A tensor: in global memory (DDR) in orchestration, a tile-to-be inside a region."""

    layout: str = "ND"

    def __str__(self) -> str:
        return f"pl.Tensor[{_dims_str(self.shape)}, {self.dtype!r}]"


@record
class TileType(ShapedType):
    """An explicit on-chip buffer."""

    memory: MemorySpace = MemorySpace.Vec

    def __str__(self) -> str:
        return f"pl.Tile[{_dims_str(self.shape)}, {self.dtype!r}, pl.Mem.{self.memory.value}]"


@record
class TupleType(Type):
    items: tuple = field(default_factory=tuple)

    def __str__(self) -> str:
        return "pl.Tuple[" + ", ".join(str(t) for t in self.items) + "]"


@record
class ArrayType(Type):
    """A small on-core array (`pl.array.create`), e.g. of TaskIds."""

    extent: int
    dtype: DType

    def __str__(self) -> str:
        return f"pl.Array[{self.extent}, {self.dtype!r}]"


@record
class HandleType(Type):
    """An opaque handle the toolchain hands between ops: an allocation (`pl.Ptr`, the
    result of `pl.tile.alloc`), a prefetch context, event or session. It has no shape
    or dtype; the op that consumes one checks it got the kind it needs."""

    name: str  # the `pl` annotation naming it: "Ptr", "AsyncEvent", ...

    def __str__(self) -> str:
        return f"pl.{self.name}"


@record
class AttrType(Type):
    """A compile-time attribute (dtype, enum, string, list of ints…), not a runtime value."""

    def __str__(self) -> str:
        return "attr"


@record
class NoneType(Type):
    def __str__(self) -> str:
        return "None"


ATTR = AttrType()
NONE = NoneType()


def is_shaped(t: Type) -> bool:
    return isinstance(t, ShapedType)
