"""Argument checks shared by the type rules of the cross-rank ops."""
from __future__ import annotations

from enum import IntEnum
from typing import Any

from pypto.ir.distributed import CommCtxType, DistributedTensorType, WindowBufferType
from pypto.ir.nodes import Attr, Const, Expr
from pypto.ir.options import AtomicType
from pypto.ir.types import ScalarType, ShapedType, TensorType, TileType
from pypto.ops.registry import OpError
from pypto.ops.rules import _describe, dims_arg, dims_equal, py_value, type_of

WINDOW_HINT = ("make it with pld.window(buf, shape, dtype=...) over a "
               "pld.alloc_window_buffer, and annotate the parameter "
               "pld.DistributedTensor[[...], dtype]")


def window_arg(x: Any, arg: str) -> DistributedTensorType:
    """A window-bound tensor (the peer side of a cross-rank op)."""
    t = type_of(x)
    if not isinstance(t, DistributedTensorType):
        got = f"a plain pl.Tensor ({t})" if isinstance(t, TensorType) else _describe(x)
        raise OpError(f"needs a window-bound pld.DistributedTensor as '{arg}', got {got}",
                      arg=arg, hint=WINDOW_HINT)
    return t


def buffer_arg(x: Any, arg: str) -> None:
    if not isinstance(type_of(x), WindowBufferType):
        raise OpError(f"needs the handle returned by pld.alloc_window_buffer as '{arg}', "
                      f"got {_describe(x)}", arg=arg,
                      hint="allocate it in the @pl.jit.host function: "
                           "buf = pld.alloc_window_buffer(shape, dtype=...)")


def ctx_arg(x: Any, arg: str) -> None:
    if not isinstance(type_of(x), CommCtxType):
        raise OpError(f"needs a pld.CommCtx as '{arg}', got {_describe(x)}", arg=arg,
                      hint="get one with ctx = pld.get_comm_ctx(window_tensor)")


def int_scalar_arg(x: Any, arg: str) -> None:
    """A rank index, a signal value: an integer literal or an integer scalar."""
    if isinstance(x, Const) and isinstance(x.value, int) and not isinstance(x.value, bool):
        return
    if isinstance(x, int) and not isinstance(x, bool):
        return
    t = type_of(x)
    if isinstance(t, ScalarType) and t.dtype.is_int():
        return
    raise OpError(f"'{arg}' must be an integer scalar, got {_describe(x)}", arg=arg)


def offsets_arg(x: Any, t: ShapedType, arg: str) -> tuple:
    offs = dims_arg(x, arg)
    if len(offs) != t.rank:
        raise OpError(f"'{arg}' needs one entry per axis of the rank-{t.rank} tensor, "
                      f"got {len(offs)}", arg=arg)
    return offs


def enum_arg(x: Any, enum: type[IntEnum], arg: str) -> IntEnum:
    """A member of `enum` (its integer payload is accepted too, as printed IR carries it)."""
    v = py_value(x)
    if isinstance(v, enum):
        return v
    if isinstance(v, (IntEnum, bool)) or not isinstance(v, int):
        members = ", ".join(f"pld.{enum.__name__}.{m.name}" for m in enum)
        raise OpError(f"'{arg}' must be one of {members}, got {_describe(x)}", arg=arg)
    try:
        return enum(v)
    except ValueError:
        raise OpError(f"'{arg}' = {v} is not a pld.{enum.__name__} value", arg=arg) \
            from None


def atomic_arg(x: Any) -> int:
    """`atomic=pld.AtomicType.None_ | Add` as its integer payload (0 / 1)."""
    v = py_value(x)
    if isinstance(v, AtomicType):
        return int(v)
    if isinstance(v, int) and not isinstance(v, bool) and v in (0, 1):
        return v
    raise OpError(f"'atomic' must be pld.AtomicType.None_ or pld.AtomicType.Add, got "
                  f"{_describe(x)}", arg="atomic")


def box_fits(shape: tuple, offs: tuple, t: ShapedType, arg: str,
             what: str = "box") -> None:
    """A box at `offs` of extent `shape` must stay inside `t` where that is provable."""
    for i, (o, d, full) in enumerate(zip(offs, shape, t.shape)):
        if isinstance(d, int) and d <= 0:
            raise OpError(f"{what} extent {d} on axis {i} must be positive", arg=arg)
        if isinstance(o, int) and isinstance(d, int) and isinstance(full, int) and o + d > full:
            raise OpError(f"the {what} [{o}, {o + d}) on axis {i} runs past the extent "
                          f"{full} of {t}", arg=arg)


def same_dtype(a: ShapedType, b: ShapedType, arg: str) -> None:
    if a.dtype != b.dtype:
        raise OpError(f"'{arg}' has dtype {a.dtype!r} but the window holds "
                      f"{b.dtype!r}", arg=arg, hint="insert a pl.cast")


def static_int(x: Any, arg: str, *, minimum: int = 0) -> int:
    v = py_value(x)
    if isinstance(v, bool) or not isinstance(v, int) or (isinstance(x, Expr) and \
            not isinstance(x, (Attr, Const))):
        raise OpError(f"'{arg}' must be a compile-time int, got {_describe(x)}", arg=arg)
    if v < minimum:
        raise OpError(f"'{arg}' must be >= {minimum}, got {v}", arg=arg)
    return v


def region_args(dst_offsets: Any, src_offsets: Any, shape: Any, dst: ShapedType,
                src: ShapedType) -> None:
    """put / get: the three region arguments come together and fit both sides."""
    given = [py_value(a) is not None or (isinstance(a, Expr) and not isinstance(a, (Attr, Const)))
             for a in (dst_offsets, src_offsets, shape)]
    if any(given) and not all(given):
        missing = [n for n, g in zip(("dst_offsets", "src_offsets", "shape"), given) if not g]
        raise OpError(f"dst_offsets, src_offsets and shape must be given together "
                      f"(missing {', '.join(missing)})", arg=missing[0])
    if not all(given):
        if dst.rank == src.rank and any(dims_equal(a, b) is False
                                        for a, b in zip(dst.shape, src.shape)):
            raise OpError(f"without a region the whole source {src} goes to the whole "
                          f"destination {dst}; their shapes differ", arg="src",
                          hint="give dst_offsets=, src_offsets= and shape=")
        return
    dims = dims_arg(shape, "shape")
    d_off = dims_arg(dst_offsets, "dst_offsets")
    s_off = dims_arg(src_offsets, "src_offsets")
    if len(d_off) != dst.rank:
        raise OpError(f"dst_offsets needs {dst.rank} entries, got {len(d_off)}",
                      arg="dst_offsets")
    if len(s_off) != src.rank:
        raise OpError(f"src_offsets needs {src.rank} entries, got {len(s_off)}",
                      arg="src_offsets")
    if len(dims) not in (dst.rank, src.rank):
        raise OpError(f"shape needs one extent per axis, got {len(dims)}", arg="shape")
    if len(dims) == dst.rank:
        box_fits(dims, d_off, dst, "dst_offsets", "destination box")
    if len(dims) == src.rank:
        box_fits(dims, s_off, src, "src_offsets", "source box")


def chunk_args(chunk_rows: Any, chunk_cols: Any, pipeline: Any) -> None:
    rows = static_int(chunk_rows, "chunk_rows")
    cols = static_int(chunk_cols, "chunk_cols")
    pipe = py_value(pipeline)
    if not isinstance(pipe, bool):
        raise OpError(f"'pipeline' must be True or False, got {_describe(pipeline)}",
                      arg="pipeline")
    if pipe and not (rows > 0 and cols > 0):
        raise OpError(f"pipeline=True double-buffers a chunked transfer, so it needs both "
                      f"chunk_rows > 0 and chunk_cols > 0 (got chunk_rows={rows}, "
                      f"chunk_cols={cols})", arg="pipeline")


def is_tile_value(x: Any) -> bool:
    return isinstance(type_of(x), TileType)
