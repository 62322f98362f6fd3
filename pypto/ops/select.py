"""Comparisons and selection: `cmp`/`cmps` and the tile-only `sel`/`sels`.

Comparison results differ by level:

* tensor `pl.cmp(lhs, rhs|scalar, cmp_type)` gives 0/1 **in lhs's dtype** and shape;
* tile `pl.cmp`/`pl.cmps` give a **packed predicate mask**: a UINT8 tile of shape
  `[rows, round_up(ceil(cols / 8), 32)]`, bit `j % 8` (least significant first) of
  byte `j // 8` of a row is the predicate of column `j`; padding bytes are zero.
  Only `sel`/`sels` should consume it.

Codes: 0 EQ, 1 NE, 2 LT, 3 LE, 4 GT, 5 GE (strings "eq" … "ge" are accepted too).
NaN compares false except under NE, as in IEEE.
"""
from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir import dtypes
from pypto.ir.types import ScalarType, TileType
from pypto.ops.numeric import compute_dtype, plain, tile_scalar
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import (
    broadcast_shapes,
    like,
    py_value,
    same_family,
    scalar_dtype,
    scalar_like,
    shaped,
    type_of,
)

CMP_NAMES = ("eq", "ne", "lt", "le", "gt", "ge")
CMP_FNS: tuple[Callable, ...] = (operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
                                 operator.ge)
MASK_COL_ALIGN = 32  # bytes per mask row are rounded up to this


def cmp_code(x: Any, arg: str = "cmp_type") -> int:
    v = py_value(x)
    if isinstance(v, str) and v.lower() in CMP_NAMES:
        return CMP_NAMES.index(v.lower())
    if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 5:
        return int(v)
    raise OpError(f"unknown comparison {v!r}: use 0 EQ, 1 NE, 2 LT, 3 LE, 4 GT, 5 GE "
                  "(or 'eq' … 'ge')", arg=arg)


def mask_bytes(cols: Any) -> Any:
    if isinstance(cols, int):
        nbytes = -(-cols // 8)  # one bit per column, rounded up to whole bytes
        return -(-nbytes // MASK_COL_ALIGN) * MASK_COL_ALIGN
    return cols


def mask_type(t: TileType) -> TileType:
    shape = tuple(t.shape[:-1]) + (mask_bytes(t.shape[-1]),)
    valid = None
    if t.valid_shape is not None:
        vc = t.valid_shape[-1]
        valid = tuple(t.valid_shape[:-1]) + ((-(-vc // 8)) if isinstance(vc, int) else vc,)
    return TileType(shape, dtypes.UINT8, valid, t.memory)


def pack_mask(pred: np.ndarray) -> np.ndarray:
    """Pack a boolean [..., cols] predicate into the mask layout."""
    pred = np.asarray(pred, dtype=bool)
    packed = np.packbits(pred, axis=-1, bitorder="little")
    width = mask_bytes(pred.shape[-1])
    out = np.zeros(pred.shape[:-1] + (width,), dtype=np.uint8)
    out[..., :packed.shape[-1]] = packed
    return out


def unpack_mask(mask: np.ndarray, shape: tuple) -> np.ndarray:
    """The boolean predicate of `shape` ([..., cols]) held by a packed mask carrier
    (any 8/16/32-bit integer dtype: its bytes are read in memory order)."""
    m = np.ascontiguousarray(plain(mask))
    rows = m.reshape(-1, m.shape[-1]) if m.ndim else m.reshape(1, 1)
    raw = rows.view(np.uint8)
    bits = np.unpackbits(raw, axis=-1, bitorder="little")
    cols = shape[-1]
    if bits.shape[-1] < cols:
        raise ValueError(f"mask carrier holds {bits.shape[-1]} bits per row, need {cols}")
    lead = m.shape[:-1]
    pred = bits[:, :cols].reshape(lead + (cols,)).astype(bool)
    return np.broadcast_to(pred, shape)


def _compare(a: Any, b: Any, code: int) -> np.ndarray:
    x = np.asarray(a)
    y = np.asarray(tile_scalar(x, b) if not isinstance(b, np.ndarray) or b.ndim == 0 else b)
    x = x.astype(compute_dtype(x.dtype), copy=False)
    if y.ndim:
        y = y.astype(compute_dtype(y.dtype), copy=False)
    with np.errstate(all="ignore"):
        return CMP_FNS[code](x, y)


# --- cmp / cmps ----------------------------------------------------------------------------


def _cmp(lhs, rhs, cmp_type=0):
    """Elementwise comparison. Tensors: 0/1 in lhs's dtype and shape. Tiles: a packed
    predicate mask (UINT8) that `pl.sel` / `pl.sels` consume. `cmp_type` 0 EQ, 1 NE,
    2 LT, 3 LE, 4 GT, 5 GE."""
    cmp_code(cmp_type)
    a = shaped(lhs, "lhs")
    if not scalar_like(rhs):
        b = shaped(rhs, "rhs")
        same_family(a, b, "rhs")
        shape = broadcast_shapes(a.shape, b.shape)
    else:
        shape = a.shape
    if isinstance(a, TileType):
        return mask_type(like(a, shape=shape))
    return like(a, shape=shape)


def _cmp_impl(lhs, rhs, cmp_type=0):
    code = cmp_type if isinstance(cmp_type, int) else CMP_NAMES.index(str(cmp_type).lower())
    pred = _compare(lhs, rhs, code)
    return pred.astype(np.asarray(lhs).dtype)


def _cmp_tile_impl(lhs, rhs, cmp_type=0):
    code = cmp_type if isinstance(cmp_type, int) else CMP_NAMES.index(str(cmp_type).lower())
    return pack_mask(_compare(lhs, rhs, code))


def _cmps(lhs, rhs, cmp_type=0):
    """Tile compared with a scalar: a packed predicate mask for `pl.sels` / `pl.sel`."""
    a = shaped(lhs, "lhs")
    if not isinstance(a, TileType):
        raise OpError("pl.cmps is a tile op; use pl.cmp on tensors", arg="lhs")
    if not scalar_like(rhs):
        raise OpError(f"pl.cmps compares with a scalar, got {type_of(rhs)}", arg="rhs",
                      hint="use pl.cmp for tile-tile comparisons")
    cmp_code(cmp_type)
    return mask_type(a)


def _tile_cmp(lhs, rhs, cmp_type=0):
    """Tile comparison: a packed predicate mask (UINT8, `[rows, round_up(ceil(cols/8), 32)]`)
    for `pl.sel` / `pl.sels`. `cmp_type` 0 EQ, 1 NE, 2 LT, 3 LE, 4 GT, 5 GE."""
    a = shaped(lhs, "lhs")
    if not isinstance(a, TileType):
        raise OpError("pl.tile.cmp takes tiles; use pl.cmp on tensors", arg="lhs")
    return _cmp(lhs, rhs, cmp_type)


# `pl.cmp` on tiles is the IR op `tile.cmp` (different result); the parser asks `resolve`.
defop("cmp", unit=Unit.VECTOR, impl=_cmp_impl, names=("pl.cmp", "pl.tensor.cmp"),
      resolve=lambda t: "tile.cmp" if isinstance(t, TileType) else None)(_cmp)
defop("tile.cmp", unit=Unit.VECTOR, impl=_cmp_tile_impl, names=("pl.tile.cmp",))(_tile_cmp)
defop("cmps", unit=Unit.VECTOR, impl=_cmp_tile_impl,
      names=("pl.cmps", "pl.tile.cmps"))(_cmps)


# --- sel / sels -----------------------------------------------------------------------------


def _sel(mask, lhs, rhs, tmp):
    """`lhs` where the packed predicate `mask` (from `pl.cmp`/`pl.cmps` on tiles) is set,
    else `rhs`. Tile only; `tmp` is the scratch TSEL needs (UINT8 [1, 32] on A2/A3)."""
    m = shaped(mask, "mask")
    if not isinstance(m, TileType):
        raise OpError("pl.sel is a tile op: 'mask' must be the tile mask of pl.cmp/pl.cmps",
                      arg="mask")
    a = shaped(lhs, "lhs")
    b = shaped(rhs, "rhs")
    for t, n in ((a, "lhs"), (b, "rhs")):
        if not isinstance(t, TileType):
            raise OpError(f"pl.sel is a tile op; '{n}' is a tensor", arg=n)
    if not isinstance(type_of(tmp), TileType):
        raise OpError("pl.sel needs a scratch tile 'tmp' (UINT8 [1, 32])", arg="tmp")
    _check_mask(m, a, "mask")
    shape = broadcast_shapes(a.shape, b.shape)
    return TileType(shape, dtypes.promote(a.dtype, b.dtype), a.valid_shape, a.memory)


def _check_mask(m: TileType, src: TileType, arg: str) -> None:
    if not m.dtype.is_int() or m.dtype.bits not in (8, 16, 32):
        raise OpError(f"the predicate mask must be an 8/16/32-bit integer tile (from pl.cmp), "
                      f"got {m.dtype!r}", arg=arg)
    mb, sc = m.shape[-1], src.shape[-1]
    if isinstance(mb, int) and isinstance(sc, int) and mb * m.dtype.nbytes * 8 < sc:
        raise OpError(f"mask rows hold {mb * m.dtype.nbytes * 8} predicate bits but the source "
                      f"has {sc} columns", arg=arg)


def _sel_impl(mask, lhs, rhs, tmp):
    a, b = np.asarray(lhs), np.asarray(rhs)
    shape = np.broadcast_shapes(a.shape, b.shape)
    pred = unpack_mask(mask, shape)
    return np.where(pred, a, b)


defop("sel", unit=Unit.VECTOR, impl=_sel_impl, names=("pl.sel", "pl.tile.sel"))(_sel)


def _sels(mask, src, tmp, scalar):
    """`src` where the packed predicate `mask` is set, else `scalar`. Tile only."""
    m = shaped(mask, "mask")
    s = shaped(src, "src")
    if not isinstance(m, TileType) or not isinstance(s, TileType):
        raise OpError("pl.sels is a tile op", arg="src" if isinstance(m, TileType) else "mask")
    if not isinstance(type_of(tmp), TileType):
        raise OpError("pl.sels needs a scratch tile 'tmp'", arg="tmp")
    if not scalar_like(scalar):
        raise OpError(f"pl.sels takes a scalar fill value, got {type_of(scalar)}", arg="scalar")
    if isinstance(type_of(scalar), ScalarType) and scalar_dtype(scalar).is_float() != \
            s.dtype.is_float():
        raise OpError(f"pl.sels fill value {scalar_dtype(scalar)!r} does not match the source "
                      f"dtype {s.dtype!r}", arg="scalar", hint="pl.cast the scalar")
    _check_mask(m, s, "mask")
    return like(s)


def _sels_impl(mask, src, tmp, scalar):
    a = np.asarray(src)
    pred = unpack_mask(mask, a.shape)
    return np.where(pred, a, np.asarray(scalar).astype(a.dtype))


defop("sels", unit=Unit.VECTOR, impl=_sels_impl, names=("pl.sels", "pl.tile.sels"))(_sels)
