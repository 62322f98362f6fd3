"""Turn parameter annotations (`pl.Tensor[[M, N], pl.FP32]`, `pl.Out[...]`,
`pl.Scalar[...]`) into IR types and directions."""
from __future__ import annotations

from typing import Any

from pypto.ir import dtypes
from pypto.ir.distributed import COMM_CTX, WINDOW_BUFFER, DistributedTensorType
from pypto.ir.dtypes import DType
from pypto.ir.nodes import Call, Const, Direction, DynDim, Expr
from pypto.ir.types import (
    ArrayType,
    HandleType,
    ScalarType,
    TensorType,
    TileType,
    TupleType,
    Type,
)
from pypto.language import typing as plt
from pypto.language.distributed.typing import CommCtx, WindowBuffer
from pypto.language.enums import MemorySpace, TensorLayout

_INDEX = ScalarType(dtypes.INDEX)
_SYM = {"+": "scalar.add", "-": "scalar.sub", "*": "scalar.mul", "//": "scalar.floordiv",
        "%": "scalar.mod"}


class AnnotationError(Exception):
    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint


def dim_to_ir(d: Any) -> Any:
    """An annotation dim (int, DynVar or DynVar arithmetic) as an IR dim."""
    if isinstance(d, bool):
        raise AnnotationError(f"shape dimension {d!r} is not an integer")
    if isinstance(d, int):
        if d < 0:
            raise AnnotationError(f"shape dimension {d} is negative")
        return d
    if isinstance(d, plt.DynVar):
        return DynDim(d.name, _INDEX)
    if isinstance(d, plt.DynBinary):
        return Call(_SYM[d.op], (dim_to_ir(d.lhs), dim_to_ir(d.rhs)), (), _INDEX)
    t = getattr(d, "type", None)
    if isinstance(d, Expr) and isinstance(t, ScalarType) and t.dtype.is_int():
        return d  # a run-time extent: an integer scalar of the kernel
    raise AnnotationError(
        f"shape dimension {d!r} must be an int literal, a pl.dynamic symbol, or + - * // % of "
        "those")


def to_type(ann: Any) -> tuple[Type | None, Direction]:
    """(type, direction) for an evaluated annotation. A type of None means a bare
    `pl.Tensor`, whose shape comes from the runtime argument."""
    direction = Direction.IN
    if isinstance(ann, plt.DirectionAnnotation):
        direction = Direction.OUT if ann.direction == "Out" else Direction.INOUT
        ann = ann.inner
        if isinstance(ann, plt.ScalarAnnotation) and direction is Direction.INOUT:
            raise AnnotationError("a scalar parameter cannot be pl.InOut",
                                  hint="return the new value instead")
    if ann is plt.Tensor:
        return None, direction
    if ann is plt.MemRefType:
        raise AnnotationError("pl.MemRefType (a bare MemRef variable of the real compiler's "
                              "printed IR) is not supported by pypto-lab: its IR has no MemRef "
                              "variables, buffers are planned inside the simulator",
                              hint="name a tile's buffer with pl.MemRef(...) in its pl.Tile "
                                   "annotation instead")
    if isinstance(ann, plt.TensorAnnotation):
        if not isinstance(ann.dtype, DType):
            raise AnnotationError(f"pl.Tensor's dtype must be a pl dtype such as pl.FP32, got "
                                  f"{ann.dtype!r}")
        dims = ann.shape or ()
        if ann.layout is TensorLayout.DN and len(dims) == 0:
            raise AnnotationError("layout-only DN shorthand was removed")
        view = ann.view or plt.TensorView()
        layout = next((x for x in (ann.layout, view.layout) if x is not None), None)
        layout = layout.value if isinstance(layout, TensorLayout) else "ND"
        shape = tuple(dim_to_ir(d) for d in dims)
        # pld.DistributedTensor: window-bound (pypto.ir.distributed)
        cls = DistributedTensorType if getattr(ann, "window", False) else TensorType
        return cls(shape, ann.dtype, _valid_shape(view.valid_shape), layout), direction
    if ann is CommCtx:
        return COMM_CTX, direction
    if ann is WindowBuffer:
        return WINDOW_BUFFER, direction
    if isinstance(ann, (plt.TileAnnotation, plt.ScalarAnnotation, plt.ArrayAnnotation)) and \
            not isinstance(ann.dtype, DType):
        what = type(ann).__name__.replace("Annotation", "")
        raise AnnotationError(f"pl.{what}'s dtype must be a pl dtype such as pl.FP32, got "
                              f"{ann.dtype!r}")
    if isinstance(ann, plt.TileAnnotation):
        mem = next((e for e in ann.extras if isinstance(e, MemorySpace)), MemorySpace.Vec)
        tile_view = next((e for e in ann.extras if isinstance(e, plt.TileView)), plt.TileView())
        return TileType(tuple(dim_to_ir(d) for d in ann.shape), ann.dtype,
                        _valid_shape(tile_view.valid_shape), mem), direction
    if isinstance(ann, plt.ScalarAnnotation):
        return ScalarType(ann.dtype), direction
    if isinstance(ann, plt.ArrayAnnotation):
        return ArrayType(ann.extent, ann.dtype), direction
    if isinstance(ann, plt.HandleAnnotation):
        return HandleType(ann.name), direction
    if isinstance(ann, plt.TupleAnnotation):
        return TupleType(tuple(to_type(a)[0] for a in ann.items)), direction
    if isinstance(ann, DType):
        return ScalarType(ann), direction
    if ann in (int,):
        return _INDEX, direction
    if ann in (float,):
        return ScalarType(dtypes.FP32), direction
    raise AnnotationError(f"unsupported annotation {ann!r}",
                          hint="annotate with pl.Tensor[[...], dtype], pl.Out[...], "
                               "pl.InOut[...] or pl.Scalar[dtype]")


def _valid_shape(dims: Any) -> tuple | None:
    if dims is None:
        return None
    if not isinstance(dims, (list, tuple)):
        raise AnnotationError(f"valid_shape must be a list of dims, got {dims!r}")
    return tuple(dim_to_ir(d) for d in dims)


def const_dim(value: int) -> Const:
    return Const(value, _INDEX)
