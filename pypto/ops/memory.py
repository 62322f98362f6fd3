"""Data movement: slice/assemble, element reads/writes, load/store/move.

In orchestration a slice is a zero-copy view; inside a region it is a load into a
tile. Stores and assembles write only the source's valid region.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.ir import dtypes
from pypto.ir.nodes import ListExpr
from pypto.ir.types import MemorySpace, ScalarType, TensorType, TileType
from pypto.ops.facts import Batch, Family, Role, View, WindowRead, WindowWrite
from pypto.ops.mx import MX_LAYOUTS, SCALE_DTYPES, packing_error
from pypto.ops.numeric import plain, with_valid
from pypto.ops.numeric import valid_shape as valid_shape_of
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import (
    dims_arg,
    like,
    py_value,
    scalar_like,
    shaped,
    tile,
    type_of,
)
from pypto.ops.rules import public_names as _names

_WINDOW_READ = Batch(Family.WINDOW_READ)
_WINDOW_WRITE = Batch(Family.WINDOW_WRITE)


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
    if isinstance(t, TensorType) and t.layout in MX_LAYOUTS:
        raise OpError(f"an MX-layout tensor ({t.layout}) takes no subviews", arg="x",
                      hint="load the scales whole with pl.load(..., target_memory=pl.Mem.Mat)")
    dims = dims_arg(shape, "shape")
    offs = dims_arg(offset, "offset")
    if len(dims) != t.rank or len(offs) != t.rank:
        raise OpError(f"slice of a rank-{t.rank} value needs {t.rank} sizes and {t.rank} offsets, "
                      f"got {len(dims)} and {len(offs)}", arg="shape")
    valid = dims_arg(valid_shape, "valid_shape") if valid_shape is not None else None
    if valid is not None and len(valid) != t.rank:
        raise OpError(f"valid_shape of a rank-{t.rank} slice needs {t.rank} entries, got "
                      f"{len(valid)}", arg="valid_shape")
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
    # Valid region: the source's validity shifted by the offset and cut to the window,
    # narrowed further by an explicit valid_shape.
    src_valid = valid_shape_of(x)
    valid = [max(0, min(int(d), int(v) - int(o))) for d, v, o in zip(shape, src_valid, offset)]
    if valid_shape is not None:
        valid = [min(a, int(b)) for a, b in zip(valid, valid_shape)]
    if drop_dims:
        keep = [i for i in range(len(shape)) if i not in drop_dims]
        window = window.reshape([int(shape[i]) for i in keep])
        valid = [valid[i] for i in keep]
    # Inside a region a slice is a load into an on-chip tile: a copy, not a view.
    out = window.copy() if ctx is not None and getattr(ctx, "in_region", False) else window
    return with_valid(plain(out), valid)


defop("slice", unit=Unit.MTE, batch=_WINDOW_READ, impl=_slice_impl, wants_ctx=True,
      names=_names("slice"),
      view=View.WINDOW, window=WindowRead("x", "offset", "shape"),
      shape_param="shape")(_slice)


def _assemble(target, source, offset, atomic=None):
    """`pl.assemble(target, source, offset)`: write `source` (its valid region) into
    `target` at `offset` and return the updated target. `dst[...] = src` is sugar."""
    t = shaped(target, "target")
    s = shaped(source, "source")
    offs = dims_arg(offset, "offset")
    if len(offs) != t.rank:
        raise OpError(f"assemble into a rank-{t.rank} target needs {t.rank} offsets, "
                      f"got {len(offs)}", arg="offset")
    extra = s.rank - t.rank
    if extra > 0 and any(d != 1 for d in s.shape[:extra]):
        raise OpError(f"cannot assemble a rank-{s.rank} source {list(s.shape)} into a "
                      f"rank-{t.rank} target (only leading unit axes may be dropped)",
                      arg="source")
    # Only the source's valid region is written, so that is what must fit.
    written = s.valid_shape if s.valid_shape is not None else s.shape
    written = tuple(written)[max(extra, 0):]
    src_shape = (1,) * (t.rank - len(written)) + tuple(written)
    for i, (o, d, full) in enumerate(zip(offs, src_shape, t.shape)):
        if isinstance(o, int) and isinstance(d, int) and isinstance(full, int) and o + d > full:
            raise OpError(f"assembling a {d}-wide source at offset {o} on axis {i} overruns the "
                          f"target extent {full}", arg="offset")
    return t


def _is_atomic_add(atomic: Any) -> bool:
    if atomic is None:
        return False
    if getattr(atomic, "name", None) is not None:
        return atomic.name == "Add"
    return atomic == 1 or atomic == "add"


def _assemble_impl(target, source, offset, atomic=None, shapes=None):
    """Write the source's valid region (cut to `shapes` when given) into target."""
    valid = valid_shape_of(source)
    src = plain(source)
    while src.ndim > target.ndim and src.shape[0] == 1:  # drop leading unit axes
        src = src[0]
        valid = valid[1:]
    lead = target.ndim - src.ndim
    src = src.reshape((1,) * lead + src.shape)
    valid = (1,) * lead + tuple(valid)
    if shapes is not None:
        valid = tuple(min(v, int(d)) for v, d in zip(valid, shapes))
    # the part of the target the write can reach (offsets may be negative-free only)
    region = tuple(min(v, max(0, full - int(o))) for v, full, o in zip(valid, target.shape, offset))
    src = src[tuple(slice(0, r) for r in region)]
    index = tuple(slice(int(o), int(o) + r) for o, r in zip(offset, region))
    if _is_atomic_add(atomic):
        acc = target[index].astype(np.float64) + src.astype(np.float64) \
            if target.dtype.kind not in "iu" else target[index].astype(np.int64) + src
        target[index] = acc.astype(target.dtype)
    else:
        target[index] = src.astype(target.dtype, copy=False)
    return target


defop("assemble", unit=Unit.MTE, batch=_WINDOW_WRITE, impl=_assemble_impl, writes="target",
      window=WindowWrite("target", "offset", "source"),
      names=_names("assemble"))(_assemble)


def _read(src, offset):
    """`pl.read(src, [i, j])`: one element as a scalar (a flat index is accepted too)."""
    t = shaped(src, "src")
    _check_element_index(t, offset, "pl.read")
    return ScalarType(t.dtype)


def _check_element_index(t, offset, op):
    """An element index is one flat index or one index per axis."""
    if isinstance(offset, (list, tuple, ListExpr)):
        n = len(dims_arg(offset, "offset"))
        if n not in (1, t.rank):
            raise OpError(f"{op} of a rank-{t.rank} value takes 1 (flat) or {t.rank} indices, "
                          f"got {n}", arg="offset")


def _read_impl(src, offset):
    idx = tuple(int(i) for i in (offset if isinstance(offset, (list, tuple)) else [offset]))
    if len(idx) == 1 and src.ndim != 1:
        return src.reshape(-1)[idx[0]].item()
    return src[idx].item()


defop("read", unit=Unit.SCALAR, impl=_read_impl, role=Role.ELEMENT_READ,
      batch=Batch(Family.INDEX_SCALAR),
      names=_names("read"))(_read)


def _write(dst, offset, value):
    """`pl.write(dst, [i, j], value)`: store one scalar element."""
    t = shaped(dst, "dst")
    _check_element_index(t, offset, "pl.write")
    if not scalar_like(value):
        raise OpError(f"pl.write stores one scalar element, got {type_of(value)}", arg="value",
                      hint="write a block with dst[...] = tile or pl.store / pl.assemble")
    return type_of(dst)


def _write_impl(dst, offset, value):
    idx = tuple(int(i) for i in (offset if isinstance(offset, (list, tuple)) else [offset]))
    if len(idx) == 1 and dst.ndim != 1:
        dst.reshape(-1)[idx[0]] = value
    else:
        dst[idx] = value
    return dst


defop("write", unit=Unit.SCALAR, impl=_write_impl, writes="dst", role=Role.ELEMENT_WRITE,
      names=_names("write"))(_write)



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
    if len(dims) != t.rank:
        raise OpError(f"load from a rank-{t.rank} tensor needs {t.rank} sizes, got {len(dims)}",
                      arg="shapes")
    if valid_shape is not None and len(dims_arg(valid_shape, "valid_shape")) != t.rank:
        raise OpError(f"valid_shape of a rank-{t.rank} load needs {t.rank} entries",
                      arg="valid_shape")
    valid = dims_arg(valid_shape, "valid_shape") if valid_shape is not None else None
    if isinstance(t, TensorType) and t.layout in MX_LAYOUTS:
        _check_mx_load(t, dims, mem)
    return tile(dims, t.dtype, mem, valid)


def _check_mx_load(t: TensorType, dims: tuple, mem: MemorySpace) -> None:
    """A load of packed MX scales (TLoadMxCube): codes, 2-D, into Mat only."""
    if t.dtype not in SCALE_DTYPES:
        raise OpError(f"a load of an MX-layout tensor ({t.layout}) needs FP8E8M0 or UINT8 "
                      f"scale codes, got {t.dtype!r}", arg="tensor")
    if t.rank != 2 or len(dims) != 2:
        raise OpError(f"a load of an MX-layout tensor ({t.layout}) is 2-D", arg="shapes")
    why = packing_error(t.shape, t.layout)
    if why is not None:
        raise OpError(why, arg="tensor")
    if mem is not MemorySpace.Mat:
        raise OpError(f"a load of an MX-layout tensor ({t.layout}) requires "
                      "target_memory=pl.Mem.Mat", arg="target_memory",
                      hint="load the scales into Mat, then pl.move them to LeftScale / "
                           "RightScale")


def _load_impl(tensor, offsets, shapes, valid_shape=None, target_memory=None, clamp=False):
    out = _slice_impl(tensor, shapes, offsets, valid_shape=valid_shape, clamp=clamp)
    return with_valid(plain(out).copy(), valid_shape_of(out))


defop("load", unit=Unit.MTE, batch=_WINDOW_READ, impl=_load_impl, names=("pl.load", "pl.tile.load"),
      window=WindowRead("tensor", "offsets", "shapes"), shape_param="shapes",
      memory_param="target_memory")(_load)


def _store(tile_, offsets, output_tensor, shapes=None, atomic=None):
    """Write the tile's valid region into `output_tensor` at `offsets`; returns the tensor."""
    shaped(tile_, "tile")
    out = shaped(output_tensor, "output_tensor")
    if len(dims_arg(offsets, "offsets")) != out.rank:
        raise OpError(f"store into a rank-{out.rank} tensor needs {out.rank} offsets",
                      arg="offsets")
    if isinstance(out, TileType):
        raise OpError("pl.store writes a tile into a global tensor, not into another tile",
                      arg="output_tensor", hint="copy between tiles with pl.move or pl.assemble")
    return out


defop("store", unit=Unit.MTE, batch=_WINDOW_WRITE, writes="output_tensor",
      window=WindowWrite("output_tensor", "offsets", "tile_"),
      impl=lambda tile_, offsets, output_tensor, shapes=None, atomic=None:
      _assemble_impl(output_tensor, tile_, offsets, atomic, shapes),
      names=("pl.store", "pl.tile.store"))(_store)


def _move(tile_, target_memory, blayout=None, slayout=None):
    """On-chip copy into another memory space (the only way into Left/Right)."""
    t = shaped(tile_, "tile")
    mem = py_value(target_memory)
    if not isinstance(mem, MemorySpace):
        raise OpError("target_memory must be a pl.MemorySpace", arg="target_memory")
    dtype = t.dtype
    if mem in _SCALE_SPACES:
        if not isinstance(t, TileType) or t.memory is not MemorySpace.Mat:
            where = t.memory.value if isinstance(t, TileType) else "GM"
            raise OpError(f"pl.move into {mem.value} needs a tile in Mat (MX scales loaded "
                          f"with target_memory=pl.Mem.Mat), got one in {where}", arg="tile_")
        if t.rank != 2 or t.dtype not in SCALE_DTYPES:
            raise OpError(f"pl.move into {mem.value} takes a 2-D tile of UINT8 or FP8E8M0 "
                          f"scale codes, got {t}", arg="tile_")
        dtype = dtypes.FP8E8M0  # UINT8 codes are read as E8M0 there
    return TileType(t.shape, dtype, t.valid_shape, mem)


_SCALE_SPACES = (MemorySpace.LeftScale, MemorySpace.RightScale)


def _move_impl(tile_, target_memory, blayout=None, slayout=None):
    out = tile_.copy()
    if target_memory in _SCALE_SPACES and out.dtype == np.uint8:
        out = out.view(dtypes.FP8E8M0.np)  # the code bytes, reinterpreted (not converted)
    return out


defop("move", unit=Unit.MTE, memory_param="target_memory", impl=_move_impl,
      names=("pl.move", "pl.tile.move"))(_move)


def _transpose_view(tile_):
    """Zero-copy swap of the last two dims of a tile (transposed matmul operand)."""
    t = shaped(tile_, "tile")
    shape = tuple(t.shape[:-2]) + (t.shape[-1], t.shape[-2])
    return like(t, shape=shape, valid_shape=None)


defop("tile.transpose_view", unit=Unit.META, view=View.ALIAS,
      impl=lambda tile_: np.swapaxes(tile_, -1, -2),
      names=("pl.tile.transpose_view",))(_transpose_view)
