"""Creation, views and data movement: slice/assemble, load/store, reshape, dims, reads."""
from __future__ import annotations

from typing import Any

import math

import numpy as np

from pypto.ir import dtypes
from pypto.ir.types import MemorySpace, ScalarType, TensorType, TileType
from pypto.ops.numeric import plain, with_valid
from pypto.ops.numeric import valid_shape as valid_shape_of
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import (dim_of, dims_arg, dtype_arg, int_arg, is_static, like, py_value,
                             scalar_like, shaped, tile, type_of)

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


defop("assemble", unit=Unit.MTE, impl=_assemble_impl, writes="target",
      names=_names("assemble"))(_assemble)


def _read(src, offset):
    """`pl.read(src, [i, j])`: one element as a scalar (a flat index is accepted too)."""
    t = shaped(src, "src")
    _check_element_index(t, offset, "pl.read")
    return ScalarType(t.dtype)


def _check_element_index(t, offset, op):
    """An element index is one flat index or one index per axis."""
    from pypto.ir.nodes import ListExpr

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


defop("read", unit=Unit.SCALAR, impl=_read_impl, names=_names("read"))(_read)


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
    if any(isinstance(d, int) and d < 0 for d in dims):
        raise OpError(f"cannot reshape to [{', '.join(map(str, dims))}]: dimensions must not "
                      "be negative (there is no -1 wildcard)", arg="shape")
    if old is not None and all(isinstance(d, int) for d in dims):
        # math.prod on Python ints: np.prod would wrap around past 2**63
        if math.prod(old) != math.prod(dims):
            raise OpError(f"cannot reshape {t} ({math.prod(old)} elements) to "
                          f"[{', '.join(map(str, dims))}] ({math.prod(dims)} elements)",
                          arg="shape")
    return like(t, shape=dims, valid_shape=None)


defop("reshape", unit=Unit.META,
      impl=lambda x, shape: x.reshape([int(d) for d in shape]),
      names=_names("reshape"))(_reshape)


def _transpose(x, axis1, axis2):
    """Swap two axes (negative axes allowed)."""
    t = shaped(x, "x")
    a, b = int_arg(axis1, "axis1"), int_arg(axis2, "axis2")
    for axis, arg in ((a, "axis1"), (b, "axis2")):
        if not -t.rank <= axis < t.rank:
            raise OpError(f"axis {axis} is out of range for rank-{t.rank} {t}", arg=arg)
    a, b = a % t.rank, b % t.rank
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
    dim_of(valid_rows, "valid_rows"), dim_of(valid_cols, "valid_cols")  # integers only
    rows = py_value(valid_rows) if is_static(valid_rows) else valid_rows
    cols = py_value(valid_cols) if is_static(valid_cols) else valid_cols
    return like(t, valid_shape=(rows, cols))


defop("set_validshape", unit=Unit.META,
      impl=lambda x, valid_rows, valid_cols: with_valid(plain(x), (int(valid_rows),
                                                                     int(valid_cols))),
      names=_names("set_validshape"))(_set_validshape)


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
    return tile(dims, t.dtype, mem, valid)


def _load_impl(tensor, offsets, shapes, valid_shape=None, target_memory=None, clamp=False):
    out = _slice_impl(tensor, shapes, offsets, valid_shape=valid_shape, clamp=clamp)
    return with_valid(plain(out).copy(), valid_shape_of(out))


defop("load", unit=Unit.MTE, impl=_load_impl, names=("pl.load", "pl.tile.load"))(_load)


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


defop("store", unit=Unit.MTE, writes="output_tensor",
      impl=lambda tile_, offsets, output_tensor, shapes=None, atomic=None:
      _assemble_impl(output_tensor, tile_, offsets, atomic, shapes),
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



# --- padding ------------------------------------------------------------------------


def pad_kind(x: Any, arg: str = "pad_value") -> str:
    """'zero' | 'max' | 'min' from a PadValue or its literal sugar (0, inf, -inf)."""
    v = py_value(x)
    name = getattr(v, "name", None)
    if name is not None and type(v).__name__ == "PadValue":
        if name == "null":
            raise OpError("fillpad needs a pad value: PadValue.null means 'no padding'", arg=arg,
                          hint="use pl.PadValue.zero, .max or .min")
        return name
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if v == 0:
            return "zero"
        if v == float("inf"):
            return "max"
        if v == float("-inf"):
            return "min"
    raise OpError(f"pad_value must be a pl.PadValue (zero, max, min) or 0 / math.inf / "
                  f"-math.inf, got {v!r}", arg=arg)


def pad_scalar(dtype: np.dtype, kind: str) -> Any:
    """The fill value: 0, or the dtype's largest / smallest **finite** value."""
    if kind == "zero":
        return np.zeros((), dtype=dtype)[()]
    if dtype == np.bool_:
        return kind == "max"
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
    else:
        import ml_dtypes

        info = ml_dtypes.finfo(dtype)
    return info.max if kind == "max" else info.min


def _fill_outside(a: np.ndarray, valid: tuple, kind: str) -> np.ndarray:
    out = np.array(plain(a), copy=True)
    fill = pad_scalar(out.dtype, kind)
    for axis, v in enumerate(valid):
        if v < out.shape[axis]:
            idx = [slice(None)] * out.ndim
            idx[axis] = slice(int(v), None)
            out[tuple(idx)] = fill
    return out


def _fillpad(x, pad_value=None):
    """Same shape; every element outside the valid region becomes 0 (zero), the dtype's
    largest finite value (max) or smallest (min). The result is fully valid. Pad with
    the identity of the reduction that follows (min before row_max, zero before row_sum)."""
    t = shaped(x, "x")
    if pad_value is not None:
        pad_kind(pad_value)
    return like(t, valid_shape=None)


def _fillpad_impl(x, pad_value=None):
    kind = "zero" if pad_value is None else _runtime_pad(pad_value)
    return _fill_outside(x, valid_shape_of(x), kind)


def _runtime_pad(v: Any) -> str:
    name = getattr(v, "name", None)
    if name in ("zero", "max", "min"):
        return name
    if v == 0:
        return "zero"
    return "max" if v > 0 else "min"


defop("fillpad", unit=Unit.VECTOR, impl=_fillpad_impl, names=_names("fillpad"))(_fillpad)


def _fillpad_inplace(tile, pad_value=None):
    """`fillpad` that reuses the tile's buffer."""
    t = shaped(tile, "tile")
    if not isinstance(t, TileType):
        raise OpError("fillpad_inplace is a tile op", arg="tile")
    if pad_value is not None:
        pad_kind(pad_value)
    return like(t, valid_shape=None)


def _fillpad_inplace_impl(tile, pad_value=None):
    kind = "zero" if pad_value is None else _runtime_pad(pad_value)
    filled = _fill_outside(tile, valid_shape_of(tile), kind)
    plain(tile)[...] = filled
    return plain(tile)


defop("fillpad_inplace", unit=Unit.VECTOR, impl=_fillpad_inplace_impl, writes="tile",
      names=("pl.tile.fillpad_inplace",))(_fillpad_inplace)


def _fillpad_expand(x, shape, pad_value=None):
    """A new, larger value of `shape`: the source's valid region copied to the top-left,
    every other element the pad value."""
    t = shaped(x, "x")
    dims = dims_arg(shape, "shape")
    if len(dims) != t.rank:
        raise OpError(f"fillpad_expand needs a rank-{t.rank} shape, got {len(dims)} dims",
                      arg="shape")
    for i, (a, b) in enumerate(zip(dims, t.shape)):
        if isinstance(a, int) and isinstance(b, int) and a < b:
            raise OpError(f"fillpad_expand cannot shrink axis {i} ({b} -> {a})", arg="shape")
    if pad_value is not None:
        pad_kind(pad_value)
    return like(t, shape=dims, valid_shape=None)


def _fillpad_expand_impl(x, shape, pad_value=None):
    kind = "zero" if pad_value is None else _runtime_pad(pad_value)
    a = plain(x)
    v = valid_shape_of(x)
    out = np.full([int(d) for d in shape], pad_scalar(a.dtype, kind), dtype=a.dtype)
    region = tuple(slice(0, int(d)) for d in v)
    out[region] = a[region]
    return out


defop("fillpad_expand", unit=Unit.VECTOR, impl=_fillpad_expand_impl,
      names=_names("fillpad_expand"))(_fillpad_expand)


def _expand_clone(src, target):
    """A copy of `src` broadcast to `target`'s shape (target supplies the shape only)."""
    s = shaped(src, "src")
    t = shaped(target, "target")
    if s.rank != t.rank:
        raise OpError(f"expand_clone needs equal ranks, got {s} and {t}", arg="src")
    for i, (a, b) in enumerate(zip(s.shape, t.shape)):
        if isinstance(a, int) and isinstance(b, int) and a not in (1, b):
            raise OpError(f"expand_clone cannot broadcast axis {i} from {a} to {b}", arg="src")
    return like(t, dtype=s.dtype, valid_shape=None)


defop("expand_clone", unit=Unit.VECTOR,
      impl=lambda src, target: np.broadcast_to(plain(src), np.shape(target)).copy(),
      names=("pl.expand_clone", "pl.tensor.expand_clone"))(_expand_clone)


# --- views and on-chip buffers -------------------------------------------------------

_VIEW_DTYPES = (dtypes.INT8, dtypes.INT16, dtypes.INT32, dtypes.INT64, dtypes.UINT8,
                dtypes.UINT16, dtypes.UINT32, dtypes.UINT64, dtypes.FP16, dtypes.BF16,
                dtypes.FP32)


def _reinterpret_view(x, dtype, *, shape=None):
    """The same bytes seen as another dtype (no conversion). Without `shape` the last
    (contiguous) dim scales by the byte ratio."""
    t = shaped(x, "x")
    dt = dtype_arg(dtype, "dtype")
    if dt not in _VIEW_DTYPES or t.dtype not in _VIEW_DTYPES:
        raise OpError(f"reinterpret_view supports INT8..INT64, UINT8..UINT64, FP16, BF16 and "
                      f"FP32, not {(dt if dt not in _VIEW_DTYPES else t.dtype)!r}", arg="dtype")
    if shape is not None and py_value(shape) is not None:
        dims = dims_arg(shape, "shape")
        old, new = t.static_shape(), dims
        if old is not None and all(isinstance(d, int) for d in new):
            if int(np.prod(old)) * t.dtype.nbytes != int(np.prod(new)) * dt.nbytes:
                raise OpError(f"reinterpret_view to {list(new)} {dt!r} changes the byte size",
                              arg="shape")
        return like(t, shape=dims, dtype=dt, valid_shape=None)
    last = t.shape[-1]
    if isinstance(last, int):
        if (last * t.dtype.nbytes) % dt.nbytes:
            raise OpError(f"the last dim ({last} x {t.dtype.nbytes} bytes) is not a whole number "
                          f"of {dt!r} elements", arg="dtype")
        last = last * t.dtype.nbytes // dt.nbytes
    return like(t, shape=tuple(t.shape[:-1]) + (last,), dtype=dt, valid_shape=None)


def _reinterpret_impl(x, dtype, shape=None):
    out = np.ascontiguousarray(plain(x)).view(dtype.np)
    return out.reshape([int(d) for d in shape]) if shape is not None else out


defop("reinterpret_view", unit=Unit.META, impl=_reinterpret_impl,
      names=_names("reinterpret_view"))(_reinterpret_view)


def _tensor_view(tensor, shape=None, valid_shape=None, *, layout=None):
    """Zero-copy view with a new shape (canonical strides), valid shape or layout tag."""
    t = shaped(tensor, "tensor")
    if not isinstance(t, TensorType):
        raise OpError("pl.tensor.view takes a tensor", arg="tensor")
    dims = dims_arg(shape, "shape") if shape is not None and py_value(shape) is not None \
        else tuple(t.shape)
    old = t.static_shape()
    if old is not None and all(isinstance(d, int) for d in dims) and \
            int(np.prod(old)) != int(np.prod(dims)):
        raise OpError(f"view {list(dims)} does not hold {int(np.prod(old))} elements", arg="shape")
    valid = dims_arg(valid_shape, "valid_shape") if valid_shape is not None and \
        py_value(valid_shape) is not None else None
    lay = py_value(layout)
    lay_name = getattr(lay, "name", lay) if lay is not None else t.layout
    return TensorType(dims, t.dtype, valid, lay_name)


def _tensor_view_impl(tensor, shape=None, valid_shape=None, layout=None):
    out = plain(tensor)
    if shape is not None:
        out = out.reshape([int(d) for d in shape])
    return with_valid(out, valid_shape) if valid_shape is not None else out


defop("tensor.view", unit=Unit.META, impl=_tensor_view_impl,
      names=("pl.tensor.view",))(_tensor_view)


def _create_l1(shape, dtype, transpose=False):
    """A tensor-typed on-chip L1 (Mat) buffer, the accumulator of `pl.gather_row`."""
    dims = dims_arg(shape, "shape")
    if not all(isinstance(d, int) for d in dims):
        raise OpError("create_l1 needs a static shape", arg="shape")
    return TensorType(dims, dtype_arg(dtype, "dtype"))


defop("create_l1", unit=Unit.META, affinity="cube",
      impl=lambda shape, dtype, transpose=False: np.zeros([int(d) for d in shape],
                                                          dtype=dtype.np),
      names=("pl.create_l1", "pl.tensor.create_l1"))(_create_l1)


def _extract(src, index_row, index_col, shape, *, target_memory=None):
    """TEXTRACT: the `shape` sub-tile at (index_row, index_col) into Left/Right (from
    Mat) or Mat (from Acc)."""
    t = shaped(src, "src")
    if not isinstance(t, TileType) or t.rank != 2:
        raise OpError("pl.tile.extract takes a 2-D tile", arg="src")
    mem = py_value(target_memory)
    if not isinstance(mem, MemorySpace):
        raise OpError("pl.tile.extract needs target_memory= (Left, Right or Mat)",
                      arg="target_memory")
    legal = {MemorySpace.Mat: (MemorySpace.Left, MemorySpace.Right),
             MemorySpace.Acc: (MemorySpace.Mat,)}
    if t.memory in legal and mem not in legal[t.memory]:
        raise OpError(f"extract from {t.memory.value} lands in "
                      f"{'/'.join(m.value for m in legal[t.memory])}, not {mem.value}",
                      arg="target_memory")
    dims = dims_arg(shape, "shape")
    r, c = py_value(index_row), py_value(index_col)
    for i, (o, d, full) in enumerate(zip((r, c), dims, t.shape)):
        if isinstance(o, int) and isinstance(d, int) and isinstance(full, int) and o + d > full:
            raise OpError(f"extract window [{o}, {o + d}) on axis {i} exceeds {full}",
                          arg="shape")
    return TileType(dims, t.dtype, None, mem)


defop("tile.extract", unit=Unit.MTE,
      impl=lambda src, index_row, index_col, shape, target_memory=None:
      plain(src)[int(index_row):int(index_row) + int(shape[0]),
                 int(index_col):int(index_col) + int(shape[1])].copy(),
      names=("pl.tile.extract",))(_extract)


# --- generated tiles ----------------------------------------------------------------


def _tri(diagonal, shape, valid_shape=None, dtype=dtypes.INT32, upper=False):
    """Triangular 0/1 tile: 1 where `j <= i + diagonal` (lower) or `j >= i + diagonal`
    (upper); only the valid region is written (the rest is 0)."""
    dims = dims_arg(shape, "shape")
    if len(dims) != 2:
        raise OpError("pl.tri makes a 2-D tile", arg="shape")
    dt = dtype_arg(dtype, "dtype")
    valid = dims_arg(valid_shape, "valid_shape") if valid_shape is not None and \
        py_value(valid_shape) is not None else None
    return tile(dims, dt, MemorySpace.Vec, valid)


def _tri_impl(diagonal, shape, valid_shape=None, dtype=dtypes.INT32, upper=False):
    r, c = (int(d) for d in shape)
    i = np.arange(r)[:, None]
    j = np.arange(c)[None, :]
    m = (j >= i + int(diagonal)) if upper else (j <= i + int(diagonal))
    out = np.zeros((r, c), dtype=dtype.np)
    vr, vc = (r, c) if valid_shape is None else (int(valid_shape[0]), int(valid_shape[1]))
    out[:vr, :vc] = m[:vr, :vc]
    return with_valid(out, None if valid_shape is None else (vr, vc))


defop("tri", unit=Unit.VECTOR, impl=_tri_impl, names=("pl.tri", "pl.tile.tri"))(_tri)


_PHILOX_M = (0xD2511F53, 0xCD9E8D57)
_PHILOX_W = (0x9E3779B9, 0xBB67AE85)
_M32 = np.uint64(0xFFFFFFFF)


def philox4x32(counter: np.ndarray, key: tuple[int, int], rounds: int = 10) -> np.ndarray:
    """Philox-4x32 over an array of 128-bit counters ([..., 4] uint32 words)."""
    c = [counter[..., k].astype(np.uint64) for k in range(4)]
    k0, k1 = np.uint64(key[0] & 0xFFFFFFFF), np.uint64(key[1] & 0xFFFFFFFF)
    for _ in range(int(rounds)):
        p0 = np.uint64(_PHILOX_M[0]) * c[0]
        p1 = np.uint64(_PHILOX_M[1]) * c[2]
        hi0, lo0 = p0 >> np.uint64(32), p0 & _M32
        hi1, lo1 = p1 >> np.uint64(32), p1 & _M32
        c = [(hi1 ^ c[1] ^ k0) & _M32, lo1, (hi0 ^ c[3] ^ k1) & _M32, lo0]
        k0 = (k0 + np.uint64(_PHILOX_W[0])) & _M32
        k1 = (k1 + np.uint64(_PHILOX_W[1])) & _M32
    return np.stack(c, axis=-1).astype(np.uint32)


def _random_rule(key0, key1, counter0, counter1, counter2, counter3, shape, dtype, rounds,
                 valid_shape=None, is_tile=False):
    for n, v in (("key0", key0), ("key1", key1), ("counter0", counter0),
                 ("counter1", counter1), ("counter2", counter2), ("counter3", counter3)):
        t = type_of(v)
        if t is None and not (isinstance(py_value(v), int) and not isinstance(py_value(v), bool)):
            raise OpError(f"'{n}' must be an integer", arg=n)
        if isinstance(t, ScalarType) and not t.dtype.is_int():
            raise OpError(f"'{n}' must be an integer scalar, got {t.dtype!r}", arg=n)
    dims = dims_arg(shape, "shape")
    if not all(isinstance(d, int) for d in dims):
        raise OpError("random needs a static shape", arg="shape")
    dt = dtype_arg(dtype, "dtype")
    if dt not in (dtypes.INT32, dtypes.UINT32):
        raise OpError(f"random produces INT32 or UINT32, not {dt!r}", arg="dtype")
    if int_arg(rounds, "rounds") not in (7, 10):
        raise OpError(f"rounds must be 7 or 10, got {py_value(rounds)}", arg="rounds")
    if is_tile:
        valid = dims_arg(valid_shape, "valid_shape") if valid_shape is not None and \
            py_value(valid_shape) is not None else None
        return tile(dims, dt, MemorySpace.Vec, valid)
    return TensorType(dims, dt)


def _random(key0, key1, counter0, counter1, counter2, counter3, shape, dtype=dtypes.UINT32,
            rounds=10):
    """Counter-based random bits (Philox-4x32, `rounds` 7 or 10): element `p` (row-major)
    is word `p % 4` of Philox(counter + p // 4, key); deterministic in key, counter and
    position. The exact device lane schedule is not modelled."""
    return _random_rule(key0, key1, counter0, counter1, counter2, counter3, shape, dtype,
                        rounds)


def _tile_random(key0, key1, counter0, counter1, counter2, counter3, shape, valid_shape=None,
                 dtype=dtypes.UINT32, rounds=10):
    """Tile form of `pl.random`; only the valid region is filled (the rest is 0)."""
    return _random_rule(key0, key1, counter0, counter1, counter2, counter3, shape, dtype,
                        rounds, valid_shape, True)


def random_bits(key0, key1, c0, c1, c2, c3, shape, dtype, rounds) -> np.ndarray:
    dims = [int(d) for d in shape]
    n = int(np.prod(dims))
    blocks = np.arange((n + 3) // 4, dtype=np.uint64)
    base = [int(c0) & 0xFFFFFFFF, int(c1) & 0xFFFFFFFF, int(c2) & 0xFFFFFFFF,
            int(c3) & 0xFFFFFFFF]
    words = np.zeros((blocks.size, 4), dtype=np.uint64)
    carry = blocks
    for k in range(4):
        total = carry + np.uint64(base[k])
        words[:, k] = total & _M32
        carry = total >> np.uint64(32)
    out = philox4x32(words, (int(key0), int(key1)), rounds).reshape(-1)[:n].reshape(dims)
    return out.view(np.int32) if dtype == dtypes.INT32 else out


def _tile_random_impl(key0, key1, counter0, counter1, counter2, counter3, shape,
                      valid_shape=None, dtype=dtypes.UINT32, rounds=10):
    out = random_bits(key0, key1, counter0, counter1, counter2, counter3, shape, dtype, rounds)
    if valid_shape is None:
        return out
    vr, vc = (int(d) for d in valid_shape)
    keep = np.zeros_like(out)
    keep[:vr, :vc] = out[:vr, :vc]
    return with_valid(keep, (vr, vc))


defop("random", unit=Unit.VECTOR, impl=random_bits,
      names=("pl.random", "pl.tensor.random"))(_random)
defop("tile.random", unit=Unit.VECTOR, impl=_tile_random_impl,
      names=("pl.tile.random",))(_tile_random)
