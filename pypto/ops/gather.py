"""Gathers: index, mask and compare forms, block and GM gathers (scatters: scatter.py).

Mask patterns (`pl.tile.MaskPattern`) select columns: P0101=1 even columns,
P1010=2 odd columns, P0001..P1000=3..6 column `c % 4 == 0..3`, P1111=7 all. The
mask form's `output_dtype` is a same-width **bit reinterpretation** of the kept
lanes, which is how `sort32`'s index lanes come back as integers.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.ir import dtypes
from pypto.ir.types import MemorySpace, ScalarType, TileType, TupleType
from pypto.ops.facts import Batch, Family
from pypto.ops.numeric import plain
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import (
    dims_arg,
    dtype_arg,
    given,
    int_arg,
    int_or_enum,
    like,
    py_value,
    same_family,
    scalar_like,
    shaped,
    type_of,
)
from pypto.ops.select import CMP_FNS, cmp_code

_GATHER_DTYPES = (dtypes.FP16, dtypes.FP32, dtypes.INT16, dtypes.INT32, dtypes.UINT32)
# pattern -> (stride, phase)
PATTERNS = {1: (2, 0), 2: (2, 1), 3: (4, 0), 4: (4, 1), 5: (4, 2), 6: (4, 3), 7: (1, 0)}
PATTERN_NAMES = {1: "P0101", 2: "P1010", 3: "P0001", 4: "P0010", 5: "P0100", 6: "P1000",
                 7: "P1111"}


def _pattern(x: Any) -> int:
    p = int_or_enum(x, "mask_pattern")
    if p not in PATTERNS:
        raise OpError(f"mask_pattern must be 1..7 (pl.tile.MaskPattern.P0101 … P1111), got {p}",
                      arg="mask_pattern")
    return p


def _mask_cols(t, p: int, arg: str, op: str) -> Any:
    stride = PATTERNS[p][0]
    cols = t.shape[-1]
    if isinstance(cols, int):
        if cols % stride:
            raise OpError(f"{op} with {PATTERN_NAMES[p]} needs the column count divisible by "
                          f"{stride}, got {cols}", arg=arg)
        return cols // stride
    return cols


def _reinterpret_dtype(src_dtype, output_dtype, op: str):
    if not given(output_dtype):
        return src_dtype
    od = dtype_arg(output_dtype, "output_dtype")
    if od.bits != src_dtype.bits:
        raise OpError(f"{op}: output_dtype reinterprets bits, so it needs {src_dtype!r}'s width "
                      f"({src_dtype.bits} bits); {od!r} has {od.bits}", arg="output_dtype",
                      hint="use pl.cast for a value conversion")
    return od


def mask_select(x: np.ndarray, pattern: int) -> np.ndarray:
    stride, phase = PATTERNS[int(pattern)]
    return np.ascontiguousarray(plain(x)[..., phase::stride])


def _reinterpret(a: np.ndarray, dt) -> np.ndarray:
    if dt is None:
        return a
    target = dt.np if hasattr(dt, "np") else np.dtype(dt)
    if target == a.dtype:
        return a
    return np.ascontiguousarray(a).view(target)


def _cmp_fn(mode: Any):
    code = mode if isinstance(mode, int) else ("eq", "ne", "lt", "le", "gt", "ge").index(
        str(mode).lower())
    return CMP_FNS[code]


# --- the unified tensor gather ---------------------------------------------------------------


def _gather(input, dim=None, index=None, *, mask_pattern=None, output_dtype=None, kvalue=None,
            cmp_mode=None, out_cols=None, offset=0, count_dtype=None):
    """Gather from `input` in one of three forms.

    * index form `gather(input, dim=-1, index=idx)`: torch.gather along any axis `dim`
      (the last by default; `out[b, k] = input[b, idx[b, k]]` for dim=-1 on rank 2);
      `idx` INT32 (INT16 with a 16-bit input), same rank, `idx.shape <= input.shape` off
      the gathered axis; the result has idx's shape and input's dtype.
    * mask form `gather(input, mask_pattern=P, output_dtype=None)`: keep the columns
      pattern P marks (cols / 2 or / 4); `output_dtype` reinterprets the kept bits.
    * compare form `gather(input, kvalue=k, cmp_mode="ge", out_cols=n, offset=0)`:
      returns `(dst, cdst)`: per row the column indices (+ offset) where
      `input cmp k`, ascending, in `dst [rows, n]` INT32 (unused slots 0), and the
      per-row match counts in `cdst [1, rows]` (INT32 or UINT32).
    """
    t = shaped(input, "input")
    index_form = given(dim) or given(index)
    mask_form = given(mask_pattern)
    cmp_form = given(kvalue) or given(cmp_mode) or given(out_cols)
    if index_form + mask_form + cmp_form != 1:
        raise OpError("pl.gather takes exactly one form: (dim, index), mask_pattern=, or "
                      "kvalue=/cmp_mode=/out_cols=", arg="index" if index_form else "mask_pattern")
    if t.dtype not in _GATHER_DTYPES:
        raise OpError(f"pl.gather supports FP16, FP32, INT16 and INT32 inputs, got {t.dtype!r}",
                      arg="input", hint="pl.cast the input to pl.FP32 first")
    if mask_form:
        if t.rank != 2:
            raise OpError(f"the mask form of pl.gather needs a 2-D input, got rank {t.rank}",
                          arg="input")
        p = _pattern(mask_pattern)
        cols = _mask_cols(t, p, "input", "pl.gather")
        od = _reinterpret_dtype(t.dtype, output_dtype, "pl.gather")
        return like(t, shape=(t.shape[0], cols), dtype=od, valid_shape=None)
    if cmp_form:
        return _compare_form_type(t, kvalue, cmp_mode, out_cols, count_dtype, "pl.gather")
    if not given(index):
        raise OpError("the index form of pl.gather needs index=", arg="index")
    d = -1 if not given(dim) else int_arg(dim, "dim")
    i = shaped(index, "index")
    same_family(t, i, "index")
    if t.rank < 2:
        raise OpError(f"pl.gather needs an input of rank >= 2, got rank {t.rank}", arg="input")
    if not -t.rank <= d < t.rank:
        raise OpError(f"dim {d} is out of range for a rank-{t.rank} input", arg="dim")
    d %= t.rank
    _check_index_dtype(t, i)
    if i.rank != t.rank:
        raise OpError(f"index rank {i.rank} must equal input rank {t.rank}", arg="index")
    for ax, (a, b) in enumerate(zip(i.shape, t.shape)):
        if ax != d and isinstance(a, int) and isinstance(b, int) and a > b:
            raise OpError(f"index.shape[{ax}] = {a} exceeds input.shape[{ax}] = {b}",
                          arg="index")
    return like(t, shape=i.shape, valid_shape=None)


def _check_index_dtype(t, i) -> None:
    ok = i.dtype == dtypes.INT32 or (i.dtype == dtypes.INT16 and t.dtype.bits == 16)
    if not ok:
        raise OpError(f"gather indices must be INT32 (or INT16 with a 16-bit input), got "
                      f"{i.dtype!r}", arg="index", hint="pl.cast the indices to pl.INT32")


def _compare_form_type(t, kvalue, cmp_mode, out_cols, count_dtype, op: str):
    if t.rank != 2:
        raise OpError(f"the compare form of {op} needs a 2-D input, got rank {t.rank}",
                      arg="input")
    if not given(kvalue) or not scalar_like(kvalue):
        raise OpError(f"the compare form of {op} needs a scalar kvalue=", arg="kvalue")
    kt = type_of(kvalue)
    kdt = kt.dtype if isinstance(kt, ScalarType) else (dtypes.FP32 if isinstance(
        py_value(kvalue), float) else dtypes.INDEX)
    if kdt.is_float() != t.dtype.is_float():
        raise OpError(f"kvalue ({kdt!r}) must have the input's kind ({t.dtype!r})", arg="kvalue",
                      hint="pl.cast the threshold")
    if not given(cmp_mode):
        raise OpError(f"the compare form of {op} needs cmp_mode=", arg="cmp_mode")
    cmp_code(cmp_mode, "cmp_mode")
    if not given(out_cols):
        raise OpError(f"the compare form of {op} needs out_cols=", arg="out_cols")
    n = int_arg(out_cols, "out_cols")
    if n <= 0:
        raise OpError(f"out_cols must be positive, got {n}", arg="out_cols")
    cd = dtypes.INT32 if not given(count_dtype) else dtype_arg(count_dtype, "count_dtype")
    if cd not in (dtypes.INT32, dtypes.UINT32):
        raise OpError(f"count_dtype must be INT32 or UINT32, got {cd!r}", arg="count_dtype")
    dst = like(t, shape=(t.shape[0], n), dtype=dtypes.INT32, valid_shape=None)
    cdst = like(t, shape=(1, t.shape[0]), dtype=cd, valid_shape=None)
    return TupleType((dst, cdst))


def _compare_gather(x, kvalue, cmp_mode, out_cols, offset, count_dtype):
    a = np.asarray(plain(x))
    hit = _cmp_fn(cmp_mode)(a, kvalue)
    rows = a.shape[0]
    n = int(out_cols)
    dst = np.zeros((rows, n), dtype=np.int32)
    counts = hit.sum(axis=-1)
    for r in range(rows):
        cols = np.nonzero(hit[r])[0][:n]
        dst[r, :len(cols)] = cols + int(offset or 0)
    cd = np.uint32 if count_dtype is not None and getattr(count_dtype, "name", "") == "UINT32" \
        else np.int32
    return dst, counts.astype(cd).reshape(1, rows)


def _index_gather(x, index, dim=None):
    """torch.gather: out[..., j, ...] = x[..., index[..., j, ...], ...] along `dim` (the
    last axis by default); the other axes of x are cut to the index's extent."""
    a = np.asarray(plain(x))
    idx = np.asarray(plain(index)).astype(np.int64)
    d = (-1 if dim is None else int(dim)) % a.ndim
    src = a[tuple(slice(None) if ax == d else slice(0, s) for ax, s in enumerate(idx.shape))]
    if idx.size and (idx.min() < 0 or idx.max() >= src.shape[d]):
        raise IndexError(f"gather index out of range [0, {src.shape[d]}): "
                         f"min {idx.min()}, max {idx.max()}")
    return np.take_along_axis(src, idx, axis=d)


def _gather_impl(input, dim=None, index=None, mask_pattern=None, output_dtype=None, kvalue=None,
                 cmp_mode=None, out_cols=None, offset=0, count_dtype=None):
    if mask_pattern is not None:
        return _reinterpret(mask_select(input, mask_pattern), output_dtype)
    if out_cols is not None or cmp_mode is not None:
        return _compare_gather(input, kvalue, cmp_mode, out_cols, offset, count_dtype)
    return _index_gather(input, index, dim)


def _index_gather_batched(nb: int, rank: int, input, dim=None, index=None, mask_pattern=None,
                          output_dtype=None, kvalue=None, cmp_mode=None, out_cols=None,
                          offset=0, count_dtype=None):
    """The index form of `_gather_impl` for a batch of blocks (the simulator's batched
    runs): `input` and `index` of tile rank `rank`, each with `nb` leading batch axes or
    none (the same in every block); what the impl gives each block, along those axes.
    None for the other forms."""
    if mask_pattern is not None or out_cols is not None or cmp_mode is not None:
        return None
    a = np.asarray(plain(input))
    idx = np.asarray(plain(index)).astype(np.int64)
    if a.ndim == rank:
        a = a.reshape((1,) * nb + a.shape)
    if idx.ndim == rank:
        idx = idx.reshape((1,) * nb + idx.shape)
    d = (-1 if dim is None else int(dim)) % rank
    src = a[(slice(None),) * nb + tuple(slice(None) if ax == d else slice(0, s)
                                        for ax, s in enumerate(idx.shape[nb:]))]
    if idx.size and (idx.min() < 0 or idx.max() >= src.shape[nb + d]):
        raise IndexError(f"gather index out of range [0, {src.shape[nb + d]})")
    return np.take_along_axis(src, idx, axis=nb + d)


defop("gather", unit=Unit.VECTOR, impl=_gather_impl, float_bits="output_dtype",
      names=("pl.gather", "pl.tensor.gather"),
      batch=Batch(Family.FORM, form=_index_gather_batched))(_gather)


# --- tile gathers ------------------------------------------------------------------------------


def _tile_gather(src, indices, tmp):
    """Index-form tile gather over the **flattened** source: `dst[i, j] =
    src.flat[indices[i, j]]` (row-major). `indices` INT32 (INT16 with a 16-bit src);
    `tmp` is a scratch tile."""
    s = shaped(src, "src")
    i = shaped(indices, "indices")
    if not isinstance(s, TileType) or not isinstance(i, TileType):
        raise OpError("pl.tile.gather takes tiles; use pl.gather(input, dim=-1, index=) on "
                      "tensors", arg="src" if not isinstance(s, TileType) else "indices")
    if s.dtype not in _GATHER_DTYPES:
        raise OpError(f"pl.tile.gather supports FP16, FP32, INT16 and INT32, got {s.dtype!r}",
                      arg="src")
    _check_index_dtype(s, i)
    if not isinstance(type_of(tmp), TileType):
        raise OpError("pl.tile.gather needs a scratch tile 'tmp'", arg="tmp")
    return TileType(i.shape, s.dtype, i.valid_shape, MemorySpace.Vec)


def _tile_gather_impl(src, indices, tmp):
    flat = np.asarray(plain(src)).reshape(-1)
    idx = np.asarray(plain(indices)).astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= flat.size):
        raise IndexError(f"tile gather index out of range [0, {flat.size})")
    return flat[idx]


defop("tile.gather", unit=Unit.VECTOR, impl=_tile_gather_impl,
      names=("pl.tile.gather",))(_tile_gather)


def _gather_mask(src, mask_pattern, *, output_dtype=None):
    """Mask-form tile gather: keep the columns `mask_pattern` marks; `output_dtype`
    (same bit width) reinterprets the kept lanes' bits."""
    s = shaped(src, "src")
    if s.rank != 2:
        raise OpError(f"pl.tile.gather_mask needs a 2-D tile, got rank {s.rank}", arg="src")
    p = _pattern(mask_pattern)
    cols = _mask_cols(s, p, "src", "pl.tile.gather_mask")
    od = _reinterpret_dtype(s.dtype, output_dtype, "pl.tile.gather_mask")
    return like(s, shape=(s.shape[0], cols), dtype=od, valid_shape=None)


defop("tile.gather_mask", unit=Unit.VECTOR, float_bits="output_dtype",
      impl=lambda src, mask_pattern, output_dtype=None:
      _reinterpret(mask_select(src, mask_pattern), output_dtype),
      names=("pl.tile.gather_mask",))(_gather_mask)


def _gather_compare(src, kvalue, tmp, *, cmp_mode="eq", offset=0, out_cols=None,
                    count_dtype=None):
    """Compare-form tile gather: `(dst, cdst)` = per-row column indices (+ offset) where
    `src cmp kvalue` ([rows, out_cols] INT32, unused slots 0) and per-row match counts
    ([1, rows], INT32 or UINT32). `tmp` is a UINT8 scratch tile."""
    s = shaped(src, "src")
    if not isinstance(type_of(tmp), TileType):
        raise OpError("pl.tile.gather_compare needs a scratch tile 'tmp'", arg="tmp")
    return _compare_form_type(s, kvalue, cmp_mode, out_cols, count_dtype,
                              "pl.tile.gather_compare")


defop("tile.gather_compare", unit=Unit.VECTOR,
      impl=lambda src, kvalue, tmp, cmp_mode="eq", offset=0, out_cols=None, count_dtype=None:
      _compare_gather(src, kvalue, cmp_mode, out_cols, offset, count_dtype),
      names=("pl.tile.gather_compare",))(_gather_compare)


def _gatherb(src, offset, *, output_dtype=None):
    """Gather 32-byte blocks of `src` by UINT32 **byte** offsets: each offset column
    becomes `32 / sizeof(output_dtype)` output elements (`output_dtype` defaults to
    src's dtype and reinterprets the bytes). Offset rows must be a multiple of 8."""
    s = shaped(src, "src")
    o = shaped(offset, "offset")
    if o.dtype != dtypes.UINT32:
        raise OpError(f"pl.gatherb offsets are UINT32 byte offsets, got {o.dtype!r}",
                      arg="offset")
    if o.rank != 2:
        raise OpError("pl.gatherb needs a 2-D offset tile", arg="offset")
    if isinstance(o.shape[0], int) and o.shape[0] % 8:
        raise OpError(f"pl.gatherb needs offset rows in multiples of 8, got {o.shape[0]}",
                      arg="offset")
    od = s.dtype if not given(output_dtype) else dtype_arg(output_dtype, "output_dtype")
    per = 32 // od.nbytes
    cols = o.shape[1] * per if isinstance(o.shape[1], int) else o.shape[1]
    return TileType((o.shape[0], cols), od, None, MemorySpace.Vec)


def _gatherb_impl(src, offset, output_dtype=None):
    raw = np.ascontiguousarray(plain(src)).reshape(-1).view(np.uint8)
    offs = np.asarray(plain(offset)).astype(np.int64)
    od = np.asarray(src).dtype if output_dtype is None else output_dtype.np
    rows, cols = offs.shape
    out = np.empty((rows, cols, 32), dtype=np.uint8)
    for r in range(rows):
        for c in range(cols):
            o = int(offs[r, c])
            if o < 0 or o + 32 > raw.size:
                raise IndexError(f"gatherb byte offset {o} is outside the {raw.size}-byte source")
            out[r, c] = raw[o:o + 32]
    return out.reshape(rows, cols * 32).view(od)


defop("gatherb", unit=Unit.VECTOR, impl=_gatherb_impl,
      names=("pl.gatherb", "pl.tile.gatherb"))(_gatherb)


_OOB = {"undefined": 0, "clamp": 1, "wrap": 2, "zero": 3}
_COALESCE = {"row": 0, "elem": 1}


def _enum_arg(x: Any, table: dict, arg: str) -> int:
    v = py_value(x)
    if isinstance(v, str) and v in table:
        return table[v]
    if isinstance(v, int) and not isinstance(v, bool) and v in table.values():
        return v
    raise OpError(f"{arg} must be one of {', '.join(table)}, got {v!r}", arg=arg)


def _mgather(mem, idx, coalesce="row", *, gather_oob="undefined", target_memory=MemorySpace.Vec,
             scratch=None, valid_shape=None):
    """Gather from a GM tensor by INT32 indices into a fresh tile: `coalesce="row"`
    copies whole rows `mem2d[idx.flat[k], :]` (result `[idx.size, cols]`), `"elem"`
    flat elements `mem.flat[idx[i, j]]` (result idx's shape). `gather_oob` handles
    out-of-range indices: undefined (an error here), clamp, wrap or zero."""
    m = shaped(mem, "mem")
    i = shaped(idx, "idx")
    if i.dtype != dtypes.INT32:
        raise OpError(f"pl.mgather indices must be INT32, got {i.dtype!r}", arg="idx")
    if i.rank != 2:
        raise OpError("pl.mgather needs a 2-D index", arg="idx")
    mode = _enum_arg(coalesce, _COALESCE, "coalesce")
    _enum_arg(gather_oob, _OOB, "gather_oob")
    mem_space = py_value(target_memory)
    if mem_space not in (MemorySpace.Vec, MemorySpace.Mat):
        raise OpError("pl.mgather lands in Vec or Mat", arg="target_memory")
    if mode == 1 and mem_space is MemorySpace.Mat and not given(scratch):
        raise OpError("element-mode mgather into Mat needs a same-dtype GM scratch tensor",
                      arg="scratch")
    if mode == 0:
        n = i.shape[0] * i.shape[1] if all(isinstance(d, int) for d in i.shape) else i.shape[0]
        shape = (n, m.shape[-1])
    else:
        shape = tuple(i.shape)
    valid = dims_arg(valid_shape, "valid_shape") if given(valid_shape) else None
    return TileType(shape, m.dtype, valid, mem_space)


def _fix_oob(idx: np.ndarray, n: int, oob: int) -> tuple[np.ndarray, np.ndarray]:
    bad = (idx < 0) | (idx >= n)
    if oob in (0, "undefined") and bad.any():
        raise IndexError(f"mgather index out of range [0, {n}) with gather_oob='undefined'")
    if oob in (1, "clamp"):
        return np.clip(idx, 0, n - 1), np.zeros_like(bad)
    if oob in (2, "wrap"):
        return np.mod(idx, n), np.zeros_like(bad)
    return np.where(bad, 0, idx), bad


def _mgather_impl(mem, idx, coalesce="row", gather_oob="undefined", target_memory=None,
                  scratch=None, valid_shape=None):
    a = np.asarray(plain(mem))
    ids = np.asarray(plain(idx)).astype(np.int64)
    oob = _OOB.get(gather_oob, gather_oob)
    if _COALESCE.get(coalesce, coalesce) == 0:
        rows = a.reshape(-1, a.shape[-1])
        k, zero = _fix_oob(ids.reshape(-1), rows.shape[0], oob)
        out = rows[k].copy()
        out[zero] = 0
        return out
    flat = a.reshape(-1)
    k, zero = _fix_oob(ids, flat.size, oob)
    out = flat[k].copy()
    out[zero] = 0
    return out


defop("mgather", unit=Unit.MTE, impl=_mgather_impl,
      names=("pl.mgather", "pl.tile.mgather"))(_mgather)
