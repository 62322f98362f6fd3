"""Views and shape metadata: reshape, transpose, dims, concat, valid shapes,
reinterpretation and tile extraction."""
from __future__ import annotations

import math

import numpy as np

from pypto.ir import dtypes
from pypto.ir.types import MemorySpace, ScalarType, TensorType, TileType
from pypto.ops.facts import Batch, Family, Role, TagRule, View
from pypto.ops.memory import _slice_impl, _static_ints  # noqa: F401
from pypto.ops.numeric import plain, with_valid
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import (
    dim_of,
    dims_arg,
    dtype_arg,
    int_arg,
    is_static,
    like,
    py_value,
    shaped,
)
from pypto.ops.rules import public_names as _names

# --- views --------------------------------------------------------------------------


def _reshape(x, shape):
    """Zero-copy reshape; the element count is preserved."""
    t = shaped(x, "x")
    dims = dims_arg(shape, "shape")
    old = t.static_shape()
    if any(isinstance(d, int) and d < 0 for d in dims):
        raise OpError(f"cannot reshape to [{', '.join(map(str, dims))}]: dimensions must not "
                      "be negative (there is no -1 wildcard)", arg="shape")
    # math.prod on Python ints: np.prod would wrap around past 2**63
    if old is not None and all(isinstance(d, int) for d in dims) and \
            math.prod(old) != math.prod(dims):
        raise OpError(f"cannot reshape {t} ({math.prod(old)} elements) to "
                      f"[{', '.join(map(str, dims))}] ({math.prod(dims)} elements)",
                      arg="shape")
    return like(t, shape=dims, valid_shape=None)


defop("reshape", unit=Unit.META, view=View.ALIAS, role=Role.RESHAPE, batch=Batch(Family.RESHAPE),
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


# untagged: the impl's result is a fresh base-class array whatever its operand's valid
# shape (the batch's tag rules read this: `pypto.sim.batch.rules.tag_only`)
defop("transpose", unit=Unit.VECTOR,
      impl=lambda x, axis1, axis2: np.ascontiguousarray(np.swapaxes(x, axis1, axis2)),
      names=_names("transpose"),
      batch=Batch(Family.TAG_ONLY, tag_rule=TagRule.TRANSPOSE))(_transpose)


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


defop("set_validshape", unit=Unit.META, view=View.ALIAS, role=Role.SET_VALID,
      batch=Batch(Family.TAG_ONLY, tag_rule=TagRule.SET),
      impl=lambda x, valid_rows, valid_cols: with_valid(plain(x), (int(valid_rows),
                                                                     int(valid_cols))),
      names=_names("set_validshape"))(_set_validshape)



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
        if old is not None and all(isinstance(d, int) for d in new) and \
                int(np.prod(old)) * t.dtype.nbytes != int(np.prod(new)) * dt.nbytes:
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


defop("reinterpret_view", unit=Unit.META, impl=_reinterpret_impl, view=View.ALIAS,
      float_bits=True,
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


defop("tensor.view", unit=Unit.META, impl=_tensor_view_impl, view=View.ALIAS,
      names=("pl.tensor.view",))(_tensor_view)


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
