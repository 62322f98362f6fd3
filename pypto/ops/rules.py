"""Helpers shared by type rules: read arguments, build result types, raise OpError."""
from __future__ import annotations

from typing import Any

from pypto.errors import PyptoTypeError
from pypto.ir import dtypes
from pypto.ir.dtypes import DType
from pypto.ir.nodes import Attr, Const, DynDim, Expr, ListExpr
from pypto.ir.types import (
    ArrayType,
    MemorySpace,
    ScalarType,
    ShapedType,
    TensorType,
    TileType,
    Type,
)
from pypto.ops.registry import OpError


def is_expr(x: Any) -> bool:
    return isinstance(x, Expr)


def py_value(x: Any) -> Any:
    """The Python value of a compile-time argument (a default, an Attr or a Const)."""
    if isinstance(x, (Attr, Const)):
        return x.value
    if isinstance(x, ListExpr):
        return [py_value(i) for i in x.items]
    return x


def is_static(x: Any) -> bool:
    if isinstance(x, ListExpr):
        return all(is_static(i) for i in x.items)
    return not isinstance(x, Expr) or isinstance(x, (Attr, Const))


def type_of(x: Any) -> Type | None:
    return x.type if isinstance(x, Expr) and not isinstance(x, Attr) else None


def shaped(x: Any, arg: str) -> ShapedType:
    t = type_of(x)
    if isinstance(x, Attr) and isinstance(x.value, str):
        # a Python string has no IR value at all (the real parser: a type error)
        raise OpError(f"argument '{arg}' is the string {x.value!r}: a str has no value in a "
                      "kernel (operands are tensors, tiles, numbers and scalars)", arg=arg,
                      error=PyptoTypeError)
    if not isinstance(t, ShapedType):
        raise OpError(f"argument '{arg}' must be a tensor or tile, got {_describe(x)}", arg=arg)
    return t


def scalar_like(x: Any) -> bool:
    """A number literal or a scalar-typed value (the right operand of an 's' op)."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return True
    return isinstance(type_of(x), ScalarType)


def scalar_dtype(x: Any) -> DType:
    t = type_of(x)
    if isinstance(t, ScalarType):
        return t.dtype
    if isinstance(x, float):
        return dtypes.FP32
    return dtypes.INDEX


def dtype_arg(x: Any, arg: str) -> DType:
    v = py_value(x)
    if isinstance(v, DType):
        return v
    raise OpError(f"argument '{arg}' must be a dtype such as pl.FP32, got {_describe(x)}", arg=arg)


def int_arg(x: Any, arg: str) -> int:
    v = py_value(x)
    if isinstance(v, bool) or not isinstance(v, int):
        raise OpError(f"argument '{arg}' must be a compile-time integer, got {_describe(x)}",
                      arg=arg)
    return v


def dim_of(item: Any, arg: str) -> Any:
    """One dimension: a Python int when static, else the IR expression."""
    if isinstance(item, Const):
        if isinstance(item.value, bool) or not isinstance(item.value, int):
            raise OpError(f"dimension in '{arg}' must be an integer, got {item.value!r}", arg=arg)
        return item.value
    if isinstance(item, int) and not isinstance(item, bool):
        return item
    if isinstance(item, Expr) and isinstance(item.type, ScalarType) and item.type.dtype.is_int():
        return item
    if isinstance(item, DynDim):
        return item
    raise OpError(f"dimension in '{arg}' must be an integer or an integer scalar, got "
                  f"{_describe(item)}", arg=arg)


def dims_arg(x: Any, arg: str) -> tuple:
    """A shape / offset list argument as a tuple of dims."""
    if isinstance(x, ListExpr):
        return tuple(dim_of(i, arg) for i in x.items)
    if isinstance(x, (list, tuple)):
        return tuple(dim_of(i, arg) for i in x)
    raise OpError(f"argument '{arg}' must be a list such as [rows, cols], got {_describe(x)}",
                  arg=arg)


def like(t: ShapedType, shape: tuple | None = None, dtype: DType | None = None,
         valid_shape: Any = "keep") -> ShapedType:
    """A type of the same kind (tensor or tile) as `t` with a new shape / dtype."""
    shape = t.shape if shape is None else tuple(shape)
    dtype = t.dtype if dtype is None else dtype
    if valid_shape == "keep":
        valid_shape = t.valid_shape if shape == t.shape else None
    if isinstance(t, TileType):
        return TileType(shape, dtype, valid_shape, t.memory)
    return TensorType(shape, dtype, valid_shape)


def tile(shape: tuple, dtype: DType, memory: MemorySpace = MemorySpace.Vec,
         valid_shape: tuple | None = None) -> TileType:
    return TileType(tuple(shape), dtype, valid_shape, memory)


def dims_equal(a: Any, b: Any) -> bool | None:
    """True/False when provable, None when either side is dynamic."""
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if a is b or a == b:
        return True
    return None


def broadcast_shapes(a: tuple, b: tuple, arg: str = "rhs") -> tuple:
    """Right-aligned numpy broadcasting over possibly dynamic dims."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        da = a[-i] if i <= len(a) else 1
        db = b[-i] if i <= len(b) else 1
        if da == 1:
            out.append(db)
        elif db == 1:
            out.append(da)
        elif dims_equal(da, db) is False:
            raise OpError(f"shapes {_shape_str(a)} and {_shape_str(b)} do not broadcast", arg=arg)
        else:
            out.append(da)
    return tuple(reversed(out))


def same_family(a: ShapedType, b: ShapedType, arg: str) -> None:
    if isinstance(a, TileType) != isinstance(b, TileType):
        raise OpError("cannot mix Tensor and Tile arguments", arg=arg,
                      hint="load the tensor into a tile with pl.load, or use tensor ops throughout")


def array_type(x: Any, arg: str) -> ArrayType:
    t = type_of(x)
    if not isinstance(t, ArrayType):
        raise OpError(f"argument '{arg}' must be a pl.array, got {_describe(x)}", arg=arg)
    return t


def _shape_str(s: tuple) -> str:
    return "[" + ", ".join(str(d) for d in s) + "]"


def _describe(x: Any) -> str:
    if isinstance(x, Attr):
        return repr(x.value)
    if isinstance(x, Const):
        return f"the literal {x.value!r}"
    t = type_of(x)
    if t is not None:
        return str(t)
    return repr(x)


def is_tile(x: Any) -> bool:
    return isinstance(type_of(x), TileType)


def given(x: Any) -> bool:
    """True when an optional argument was actually passed (not None / Attr(None))."""
    return py_value(x) is not None if not isinstance(x, Expr) or isinstance(x, (Attr, Const)) \
        else True


def scratch(x: Any, tmp: Any, op: str, arg: str = "tmp", *, required: bool = True) -> None:
    """Tile forms take a caller-owned scratch tile; tensor forms synthesise it."""
    if is_tile(x):
        if required and not given(tmp):
            raise OpError(f"the tile form of {op} needs a scratch tile '{arg}'", arg=arg,
                          hint=f"create one with pl.create_tile(...) and pass {arg}=...")
        if given(tmp) and not isinstance(type_of(tmp), TileType):
            raise OpError(f"'{arg}' of {op} must be a tile, got {_describe(tmp)}", arg=arg)
    elif given(tmp):
        raise OpError(f"{op} on tensors takes no scratch '{arg}' (the compiler allocates it)",
                      arg=arg, hint=f"drop {arg}=, or call the tile form on tiles")


def int_or_enum(x: Any, arg: str) -> int:
    """A compile-time int, also accepting an IntEnum member (MaskPattern…)."""
    v = py_value(x)
    if isinstance(v, bool) or not isinstance(v, int):
        raise OpError(f"argument '{arg}' must be a compile-time integer, got {_describe(x)}",
                      arg=arg)
    return int(v)


def static_dims(t: ShapedType) -> tuple | None:
    return t.static_shape()


def public_names(name: str, *spaces: str) -> tuple[str, ...]:
    """The public spellings of an op: `pl.x`, `pl.tensor.x`, `pl.tile.x` by default."""
    spaces = spaces or ("pl", "pl.tensor", "pl.tile")
    return tuple(f"{s}.{name}" for s in spaces)
