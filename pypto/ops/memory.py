"""Creation, views and data movement: slice/assemble, load/store, reshape, dims, reads."""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.ir import dtypes
from pypto.ir.types import MemorySpace, ScalarType, TensorType, TileType
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import (dims_arg, dtype_arg, int_arg, is_static, like, py_value, shaped,
                             tile, type_of)

_NS = ("pl.{0}", "pl.tensor.{0}", "pl.tile.{0}")


def _names(name: str, *spaces: str) -> tuple[str, ...]:
    spaces = spaces or ("pl", "pl.tensor", "pl.tile")
    return tuple(f"{s}.{name}" for s in spaces)


def _static_ints(x: Any) -> list | None:
    v = py_value(x)
    return v if isinstance(v, list) and all(isinstance(i, int) for i in v) else None


# --- slicing and assembling ---------------------------------------------------------


def _slice(x, shape, offset, valid_shape=None, drop_dims=None, pad_value=None, clamp=False):
    """`pl.slice(x, shape, offset)`: the window `x[offset : offset + shape]`.

    Note the order: shape first, then offset. In orchestration a slice is a
    zero-copy view; inside a region it loads the window into a tile.
    """
    t = shaped(x, "x")
    dims = dims_arg(shape, "shape")
    offs = dims_arg(offset, "offset")
    if len(dims) != t.rank or len(offs) != t.rank:
        raise OpError(f"slice of a rank-{t.rank} value needs {t.rank} sizes and {t.rank} offsets, "
                      f"got {len(dims)} and {len(offs)}", arg="shape")
    valid = dims_arg(valid_shape, "valid_shape") if valid_shape is not None else None
    for i, (d, o, full) in enumerate(zip(dims, offs, t.shape)):
        if isinstance(d, int) and d <= 0:
            raise OpError(f"slice size {d} on axis {i} must be positive", arg="shape")
        # A window may overhang the source when its valid shape stays inside: the
        # padding rows are the tile's physical size, not data read from memory.
        extent = valid[i] if valid is not None else d
        if isinstance(extent, int) and isinstance(o, int) and isinstance(full, int) \
                and o + extent > full and not py_value(clamp):
            raise OpError(f"slice window [{o}, {o + extent}) on axis {i} runs past the extent "
                          f"{full}", arg="offset",
                          hint="shrink the window, give a valid_shape that stays inside, or "
                               "pass clamp=True")
    drop = py_value(drop_dims) or []
    keep = [i for i in range(t.rank) if i not in drop]
    out_shape = tuple(dims[i] for i in keep)
    out_valid = tuple(valid[i] for i in keep) if valid is not None else None
    if isinstance(t, TileType) and len(out_shape) < 2:
        out_shape = (1,) * (2 - len(out_shape)) + out_shape
    return like(t, shape=out_shape, valid_shape=out_valid)


def _slice_impl(x, shape, offset, valid_shape=None, drop_dims=None, pad_value=None, clamp=False,
                *, ctx=None):
    index = tuple(slice(int(o), int(o) + int(d)) for o, d in zip(offset, shape))
    window = x[index]
    if window.shape != tuple(int(d) for d in shape):
        # Overhanging window (clamp=True): the missing part reads as zero.
        padded = np.zeros([int(d) for d in shape], dtype=x.dtype)
        padded[tuple(slice(0, s) for s in window.shape)] = window
        window = padded
    if drop_dims:
        window = window.reshape([int(d) for i, d in enumerate(shape) if i not in drop_dims])
    # Inside a region a slice is a load into an on-chip tile: a copy, not a view.
    return window.copy() if ctx is not None and ctx.in_region else window


defop("slice", unit=Unit.MTE, impl=_slice_impl, wants_ctx=True, names=_names("slice"))(_slice)


def _assemble(target, source, offset, atomic=None):
    """`pl.assemble(target, source, offset)`: write `source` (its valid region) into
    `target` at `offset` and return the updated target. `dst[...] = src` is sugar."""
    t = shaped(target, "target")
    s = shaped(source, "source")
    offs = dims_arg(offset, "offset")
    if len(offs) != t.rank:
        raise OpError(f"assemble into a rank-{t.rank} target needs {t.rank} offsets, "
                      f"got {len(offs)}", arg="offset")
    if s.rank > t.rank:
        raise OpError(f"cannot assemble a rank-{s.rank} source into a rank-{t.rank} target",
                      arg="source")
    # Only the source's valid region is written, so that is what must fit.
    written = s.valid_shape if s.valid_shape is not None else s.shape
    src_shape = (1,) * (t.rank - s.rank) + tuple(written)
    for i, (o, d, full) in enumerate(zip(offs, src_shape, t.shape)):
        if isinstance(o, int) and isinstance(d, int) and isinstance(full, int) and o + d > full:
            raise OpError(f"assembling a {d}-wide source at offset {o} on axis {i} overruns the "
                          f"target extent {full}", arg="offset")
    return t


def _assemble_impl(target, source, offset, atomic=None):
    src = np.asarray(source)
    src = src.reshape((1,) * (target.ndim - src.ndim) + src.shape)
    index = tuple(slice(int(o), int(o) + d) for o, d in zip(offset, src.shape))
    if atomic is not None and getattr(atomic, "name", "") == "Add":
        target[index] = (target[index].astype(np.float64) + src).astype(target.dtype)
    else:
        target[index] = src.astype(target.dtype, copy=False)
    return target


defop("assemble", unit=Unit.MTE, impl=_assemble_impl, writes="target",
      names=_names("assemble"))(_assemble)


def _read(src, offset):
    """`pl.read(src, [i, j])`: one element as a scalar (a flat index is accepted too)."""
    t = shaped(src, "src")
    return ScalarType(t.dtype)


def _read_impl(src, offset):
    idx = tuple(int(i) for i in (offset if isinstance(offset, (list, tuple)) else [offset]))
    if len(idx) == 1 and src.ndim != 1:
        return src.reshape(-1)[idx[0]].item()
    return src[idx].item()


defop("read", unit=Unit.SCALAR, impl=_read_impl, names=_names("read"))(_read)


def _write(dst, offset, value):
    """`pl.write(dst, [i, j], value)`: store one scalar element."""
    shaped(dst, "dst")
    return type_of(dst)


def _write_impl(dst, offset, value):
    idx = tuple(int(i) for i in (offset if isinstance(offset, (list, tuple)) else [offset]))
    if len(idx) == 1 and dst.ndim != 1:
        dst.reshape(-1)[idx[0]] = value
    else:
        dst[idx] = value
    return dst


defop("write", unit=Unit.SCALAR, impl=_write_impl, writes="dst", names=_names("write"))(_write)


# --- creation -----------------------------------------------------------------------


def _create_tensor(shape, dtype, layout=None, manual_dep=False, init_value=None):
    """A new global tensor (control plane); inside a region, a new on-chip buffer."""
    return TensorType(dims_arg(shape, "shape"), dtype_arg(dtype, "dtype"))


defop("create_tensor", unit=Unit.ORCH,
      impl=lambda shape, dtype, layout=None, manual_dep=False, init_value=None:
      np.zeros([int(d) for d in shape], dtype=dtype.np),
      names=("pl.create_tensor", "pl.tensor.create", "pl.tensor.create_tensor"))(_create_tensor)


def _create_tile(shape, dtype, target_memory=MemorySpace.Vec, transpose=None, flat_layout=None):
    """A new on-chip tile (contents undefined on hardware)."""
    mem = py_value(target_memory)
    if not isinstance(mem, MemorySpace):
        raise OpError("target_memory must be a pl.MemorySpace", arg="target_memory")
    return tile(dims_arg(shape, "shape"), dtype_arg(dtype, "dtype"), mem)


defop("create_tile", unit=Unit.META,
      impl=lambda shape, dtype, target_memory=None, transpose=None, flat_layout=None:
      np.zeros([int(d) for d in shape], dtype=dtype.np),
      names=("pl.create_tile", "pl.tile.create", "pl.tile.create_tile"))(_create_tile)


def _full(shape, dtype, value):
    """A tensor of `shape` filled with `value`."""
    return TensorType(dims_arg(shape, "shape"), dtype_arg(dtype, "dtype"))


defop("full", unit=Unit.VECTOR,
      impl=lambda shape, dtype, value: np.full([int(d) for d in shape], value, dtype=dtype.np),
      names=("pl.full", "pl.tensor.full"))(_full)


def _tile_full(shape, dtype, value):
    """A Vec tile of `shape` filled with `value`."""
    return tile(dims_arg(shape, "shape"), dtype_arg(dtype, "dtype"))


defop("tile.full", unit=Unit.VECTOR,
      impl=lambda shape, dtype, value: np.full([int(d) for d in shape], value, dtype=dtype.np),
      names=("pl.tile.full",))(_tile_full)


def _arange(start, shape, dtype=dtypes.INT32, descending=False):
    """Integer sequence along the last axis of the first row: `dst[0, k] = start ± k`."""
    return TensorType(dims_arg(shape, "shape"), dtype_arg(dtype, "dtype"))


def _arange_impl(start, shape, dtype=dtypes.INT32, descending=False):
    dims = [int(d) for d in shape]
    out = np.zeros(dims, dtype=dtype.np)
    k = np.arange(dims[-1])
    row = start - k if descending else start + k
    out[(0,) * (len(dims) - 1)] = row.astype(dtype.np)
    return out


defop("arange", unit=Unit.VECTOR, impl=_arange_impl,
      names=("pl.arange", "pl.tensor.arange", "pl.tensor.ci"))(_arange)


def _tile_arange(start, shape, dtype=dtypes.INT32, descending=False):
    """Tile form of `pl.arange`."""
    return tile(dims_arg(shape, "shape"), dtype_arg(dtype, "dtype"))


defop("tile.arange", unit=Unit.VECTOR, impl=_arange_impl,
      names=("pl.tile.arange", "pl.tile.ci"))(_tile_arange)


# --- views --------------------------------------------------------------------------


def _reshape(x, shape):
    """Zero-copy reshape; the element count is preserved."""
    t = shaped(x, "x")
    dims = dims_arg(shape, "shape")
    old = t.static_shape()
    if old is not None and all(isinstance(d, int) for d in dims):
        if int(np.prod(old)) != int(np.prod(dims)):
            raise OpError(f"cannot reshape {t} ({int(np.prod(old))} elements) to "
                          f"[{', '.join(map(str, dims))}] ({int(np.prod(dims))} elements)",
                          arg="shape")
    return like(t, shape=dims, valid_shape=None)


defop("reshape", unit=Unit.META,
      impl=lambda x, shape: x.reshape([int(d) for d in shape]),
      names=_names("reshape"))(_reshape)


def _transpose(x, axis1, axis2):
    """Swap two axes (negative axes allowed)."""
    t = shaped(x, "x")
    a, b = int_arg(axis1, "axis1") % t.rank, int_arg(axis2, "axis2") % t.rank
    if a == b:
        raise OpError("transpose needs two different axes", arg="axis2")
    shape = list(t.shape)
    shape[a], shape[b] = shape[b], shape[a]
    return like(t, shape=tuple(shape), valid_shape=None)


defop("transpose", unit=Unit.VECTOR,
      impl=lambda x, axis1, axis2: np.ascontiguousarray(np.swapaxes(x, axis1, axis2)),
      names=_names("transpose"))(_transpose)


def _dim(x, axis):
    """The run-time extent of axis `axis` of a tensor, as an INDEX scalar."""
    t = shaped(x, "x")
    a = int_arg(axis, "axis")
    if not -t.rank <= a < t.rank:
        raise OpError(f"axis {a} is out of range for a rank-{t.rank} tensor", arg="axis")
    return ScalarType(dtypes.INDEX)


defop("tensor.dim", unit=Unit.ORCH, impl=lambda x, axis: int(x.shape[axis]),
      names=("pl.tensor.dim", "pl.dim"))(_dim)


def _concat(src0, src1):
    """Concatenate along the last (column) axis."""
    a = shaped(src0, "src0")
    b = shaped(src1, "src1")
    if a.rank != b.rank:
        raise OpError(f"concat needs equal ranks, got {a} and {b}", arg="src1")
    last = a.shape[-1] + b.shape[-1] if isinstance(a.shape[-1], int) and \
        isinstance(b.shape[-1], int) else a.shape[-1]
    return like(a, shape=tuple(a.shape[:-1]) + (last,), valid_shape=None)


defop("concat", unit=Unit.VECTOR, impl=lambda src0, src1: np.concatenate([src0, src1], axis=-1),
      names=_names("concat"))(_concat)


def _set_validshape(x, valid_rows, valid_cols):
    """Change the valid region of a 2-D value (metadata only)."""
    t = shaped(x, "x")
    if t.rank != 2:
        raise OpError("set_validshape works on 2-D values only", arg="x")
    rows = py_value(valid_rows) if is_static(valid_rows) else valid_rows
    cols = py_value(valid_cols) if is_static(valid_cols) else valid_cols
    return like(t, valid_shape=(rows, cols))


defop("set_validshape", unit=Unit.META,
      impl=lambda x, valid_rows, valid_cols: x, names=_names("set_validshape"))(_set_validshape)


# --- explicit tile movement ---------------------------------------------------------


def _load(tensor, offsets, shapes, valid_shape=None, target_memory=MemorySpace.Vec, clamp=False):
    """Copy the window `tensor[offsets : offsets + shapes]` into a new tile."""
    t = shaped(tensor, "tensor")
    mem = py_value(target_memory)
    if mem not in (MemorySpace.Vec, MemorySpace.Mat):
        raise OpError(f"loads land only in Vec or Mat, not {mem}", arg="target_memory",
                      hint="load into Mat and pl.move the tile to Left/Right")
    dims = dims_arg(shapes, "shapes")
    if len(dims_arg(offsets, "offsets")) != t.rank:
        raise OpError(f"load from a rank-{t.rank} tensor needs {t.rank} offsets", arg="offsets")
    valid = dims_arg(valid_shape, "valid_shape") if valid_shape is not None else None
    return tile(dims, t.dtype, mem, valid)


def _load_impl(tensor, offsets, shapes, valid_shape=None, target_memory=None, clamp=False):
    return _slice_impl(tensor, shapes, offsets, clamp=clamp).copy()


defop("load", unit=Unit.MTE, impl=_load_impl, names=("pl.load", "pl.tile.load"))(_load)


def _store(tile_, offsets, output_tensor, shapes=None, atomic=None):
    """Write the tile's valid region into `output_tensor` at `offsets`; returns the tensor."""
    shaped(tile_, "tile")
    return shaped(output_tensor, "output_tensor")


defop("store", unit=Unit.MTE, writes="output_tensor",
      impl=lambda tile_, offsets, output_tensor, shapes=None, atomic=None:
      _assemble_impl(output_tensor, tile_, offsets, atomic),
      names=("pl.store", "pl.tile.store"))(_store)


def _move(tile_, target_memory, blayout=None, slayout=None):
    """On-chip copy into another memory space (the only way into Left/Right)."""
    t = shaped(tile_, "tile")
    mem = py_value(target_memory)
    if not isinstance(mem, MemorySpace):
        raise OpError("target_memory must be a pl.MemorySpace", arg="target_memory")
    return TileType(t.shape, t.dtype, t.valid_shape, mem)


defop("move", unit=Unit.MTE, impl=lambda tile_, target_memory, blayout=None, slayout=None:
      tile_.copy(), names=("pl.move", "pl.tile.move"))(_move)


def _transpose_view(tile_):
    """Zero-copy swap of the last two dims of a tile (transposed matmul operand)."""
    t = shaped(tile_, "tile")
    shape = tuple(t.shape[:-2]) + (t.shape[-1], t.shape[-2])
    return like(t, shape=shape, valid_shape=None)


defop("tile.transpose_view", unit=Unit.META,
      impl=lambda tile_: np.swapaxes(tile_, -1, -2),
      names=("pl.tile.transpose_view",))(_transpose_view)

