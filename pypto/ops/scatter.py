"""Scatter and row updates: index and mask scatters, GM scatter-stores, whole-row
updates, and row DMAs into on-chip buffers (`gather_row`, `paged_gather`).

Mask patterns and lane reinterpretation are shared with `gather.py`.
"""
from __future__ import annotations

import numpy as np

from pypto.ir import dtypes
from pypto.ir.types import MemorySpace, TensorType, TileType
from pypto.ops.gather import PATTERN_NAMES, PATTERNS, _pattern
from pypto.ops.numeric import plain
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import (
    dims_arg,
    dims_equal,
    given,
    int_arg,
    like,
    py_value,
    same_family,
    shaped,
)

# --- scatters ------------------------------------------------------------------------------------


def _scatter(input, dim=None, index=None, src=None, *, mask_pattern=None, dst=None):
    """Scatter into a rank-2 tensor (a new value; the operands are not modified).

    * index form `scatter(input, dim=-1, index=idx, src=v)`: `out = input;
      out[b, idx[b, k]] = v[b, k]` (idx INT32 for 4-byte inputs, INT16 for 1/2-byte).
    * mask form `scatter(input, mask_pattern=P, dst=d)`: `out = d` with the columns
      pattern P marks replaced by input's columns (`d.cols = input.cols * stride`).
    """
    t = shaped(input, "input")
    if t.rank != 2:
        raise OpError(f"pl.scatter needs a 2-D input, got rank {t.rank}", arg="input")
    index_form = given(dim) or given(index) or given(src)
    mask_form = given(mask_pattern) or given(dst)
    if index_form == mask_form:
        raise OpError("pl.scatter takes either (dim, index, src) or mask_pattern= with dst=",
                      arg="index")
    if mask_form:
        if not given(mask_pattern) or not given(dst):
            raise OpError("the mask form of pl.scatter needs both mask_pattern= and dst=",
                          arg="dst" if given(mask_pattern) else "mask_pattern")
        p = _pattern(mask_pattern)
        d = shaped(dst, "dst")
        same_family(t, d, "dst")
        stride = PATTERNS[p][0]
        if d.dtype != t.dtype:
            raise OpError(f"dst dtype {d.dtype!r} must equal input dtype {t.dtype!r}", arg="dst")
        if isinstance(d.shape[-1], int) and isinstance(t.shape[-1], int) and \
                d.shape[-1] != t.shape[-1] * stride:
            raise OpError(f"{PATTERN_NAMES[p]} scatter needs dst.cols = input.cols * {stride} "
                          f"= {t.shape[-1] * stride}, got {d.shape[-1]}", arg="dst")
        if dims_equal(d.shape[0], t.shape[0]) is False:
            raise OpError(f"dst rows {d.shape[0]} must equal input rows {t.shape[0]}", arg="dst")
        return like(d, valid_shape=None)
    d = -1 if not given(dim) else int_arg(dim, "dim")
    if d not in (-1, 1):
        raise OpError(f"pl.scatter scatters along the last axis only (dim=-1), got dim={d}",
                      arg="dim")
    if not given(index) or not given(src):
        raise OpError("the index form of pl.scatter needs index= and src=",
                      arg="index" if not given(index) else "src")
    i = shaped(index, "index")
    s = shaped(src, "src")
    same_family(t, i, "index")
    same_family(t, s, "src")
    want = dtypes.INT32 if t.dtype.nbytes == 4 else dtypes.INT16
    if i.dtype != want:
        raise OpError(f"scatter indices for a {t.dtype!r} input must be {want!r}, got "
                      f"{i.dtype!r}", arg="index")
    if s.dtype != t.dtype:
        raise OpError(f"src dtype {s.dtype!r} must equal input dtype {t.dtype!r}", arg="src")
    if i.rank != 2 or s.rank != 2 or any(dims_equal(a, b) is False
                                         for a, b in zip(i.shape, s.shape)):
        raise OpError(f"index {list(i.shape)} and src {list(s.shape)} must have one 2-D shape",
                      arg="index")
    if isinstance(s.shape[-1], int) and isinstance(t.shape[-1], int) and \
            s.shape[-1] > t.shape[-1]:
        raise OpError(f"src has {s.shape[-1]} columns but input only {t.shape[-1]}", arg="src")
    return like(t, valid_shape=None)


def _scatter_impl(input, dim=None, index=None, src=None, mask_pattern=None, dst=None):
    if mask_pattern is not None:
        out = np.array(plain(dst), copy=True)
        stride, phase = PATTERNS[int(mask_pattern)]
        out[..., phase::stride] = np.asarray(plain(input))
        return out
    out = np.array(plain(input), copy=True)
    idx = np.asarray(plain(index)).astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= out.shape[-1]):
        raise IndexError(f"scatter index out of range [0, {out.shape[-1]})")
    rows = np.arange(idx.shape[0])[:, None]
    out[rows, idx] = np.asarray(plain(src))
    return out


defop("scatter", unit=Unit.VECTOR, impl=_scatter_impl,
      names=("pl.scatter", "pl.tensor.scatter"))(_scatter)


def _tile_scatter(dst, src, indexes):
    """`dst.flat[indexes[i, j]] = src[i, j]` in place (flattened row-major); returns dst."""
    d = shaped(dst, "dst")
    s = shaped(src, "src")
    i = shaped(indexes, "indexes")
    if not all(isinstance(x, TileType) for x in (d, s, i)):
        raise OpError("pl.tile.scatter takes tiles", arg="dst")
    if s.dtype != d.dtype:
        raise OpError(f"src dtype {s.dtype!r} must equal dst dtype {d.dtype!r}", arg="src")
    if not i.dtype.is_int():
        raise OpError(f"scatter indexes must be integers, got {i.dtype!r}", arg="indexes")
    if any(dims_equal(a, b) is False for a, b in zip(i.shape, s.shape)):
        raise OpError(f"indexes {list(i.shape)} must have src's shape {list(s.shape)}",
                      arg="indexes")
    return d


def _flat_scatter(dst, src, idx):
    flat = dst.reshape(-1)
    k = np.asarray(plain(idx)).astype(np.int64).reshape(-1)
    if k.size and (k.min() < 0 or k.max() >= flat.size):
        raise IndexError(f"scatter index out of range [0, {flat.size})")
    flat[k] = np.asarray(plain(src)).reshape(-1).astype(dst.dtype)
    return dst


defop("tile.scatter", unit=Unit.VECTOR, writes="dst",
      impl=lambda dst, src, indexes: _flat_scatter(dst, src, indexes),
      names=("pl.tile.scatter",))(_tile_scatter)


def _scatter_mask(dst, src, mask_pattern):
    """Write `src`'s columns into the columns of `dst` that `mask_pattern` marks, in
    place (`dst.cols = src.cols * stride`); returns dst."""
    d = shaped(dst, "dst")
    s = shaped(src, "src")
    p = _pattern(mask_pattern)
    stride = PATTERNS[p][0]
    if isinstance(d.shape[-1], int) and isinstance(s.shape[-1], int) and \
            d.shape[-1] != s.shape[-1] * stride:
        raise OpError(f"{PATTERN_NAMES[p]} scatter needs dst.cols = src.cols * {stride}", arg="dst")
    if s.dtype != d.dtype:
        raise OpError(f"src dtype {s.dtype!r} must equal dst dtype {d.dtype!r}", arg="src")
    return d


def _scatter_mask_impl(dst, src, mask_pattern):
    stride, phase = PATTERNS[int(mask_pattern)]
    dst[..., phase::stride] = np.asarray(plain(src)).astype(dst.dtype)
    return dst


defop("tile.scatter_mask", unit=Unit.VECTOR, writes="dst", impl=_scatter_mask_impl,
      names=("pl.tile.scatter_mask",))(_scatter_mask)


def _mscatter(src, idx, output_tensor):
    """GM scatter-store: `output_tensor.flat[idx[i, j]] = src[i, j]`; returns the tensor."""
    s = shaped(src, "src")
    i = shaped(idx, "idx")
    o = shaped(output_tensor, "output_tensor")
    if not isinstance(s, TileType):
        raise OpError("pl.mscatter stores a tile", arg="src")
    if i.dtype != dtypes.INT32:
        raise OpError(f"pl.mscatter indices must be INT32, got {i.dtype!r}", arg="idx")
    if s.dtype != o.dtype:
        raise OpError(f"src dtype {s.dtype!r} must equal the tensor's {o.dtype!r}", arg="src")
    return o


defop("mscatter", unit=Unit.MTE, writes="output_tensor",
      impl=lambda src, idx, output_tensor: _flat_scatter(output_tensor, src, idx),
      names=("pl.mscatter", "pl.tile.mscatter"))(_mscatter)


def _scatter_update(input, dim, index, src):
    """Row update in place: `input[index.flat[k], :] = src[k, :]`.

    2-D: `input [rows, d]`, `src [b*s, d]`, `index [b, s]`; 4-D paged form: `input
    [blocks, block_size, 1, d]`, `src [b, s, 1, d]` (rows are the flattened leading
    axes). `dim` must be -2. Returns the updated input.
    """
    t = shaped(input, "input")
    d = int_arg(dim, "dim")
    if d not in (-2, t.rank - 2):
        raise OpError(f"pl.scatter_update updates whole rows (dim=-2), got dim={d}", arg="dim")
    i = shaped(index, "index")
    s = shaped(src, "src")
    same_family(t, s, "src")
    if t.rank not in (2, 4):
        raise OpError(f"pl.scatter_update takes a 2-D or 4-D input, got rank {t.rank}",
                      arg="input")
    if not i.dtype.is_int():
        raise OpError(f"scatter_update indices must be integers, got {i.dtype!r}", arg="index")
    if i.rank != 2:
        raise OpError("scatter_update index must be 2-D [b, s]", arg="index")
    if s.rank != t.rank or dims_equal(s.shape[-1], t.shape[-1]) is False:
        raise OpError(f"src rows must have input's row width {t.shape[-1]}", arg="src")
    if s.dtype != t.dtype:
        raise OpError(f"src dtype {s.dtype!r} must equal input dtype {t.dtype!r}", arg="src")
    return t


def _scatter_update_impl(input, dim, index, src):
    rows = input.reshape(-1, input.shape[-1])
    k = np.asarray(plain(index)).astype(np.int64).reshape(-1)
    vals = np.asarray(plain(src)).reshape(-1, input.shape[-1])
    if k.size and (k.min() < 0 or k.max() >= rows.shape[0]):
        raise IndexError(f"scatter_update row index out of range [0, {rows.shape[0]})")
    rows[k] = vals[:k.size].astype(input.dtype)
    return input


defop("scatter_update", unit=Unit.VECTOR, writes="input", impl=_scatter_update_impl,
      names=("pl.scatter_update", "pl.tensor.scatter_update",
             "pl.tile.scatter_update"))(_scatter_update)


# --- row DMAs into on-chip buffers ------------------------------------------------------------


def _gather_row(dst, src, dst_offset, src_offset, shapes, transpose=False, *, valid_shape=None):
    """DMA the GM window `src[src_offset : src_offset + shapes]` into `dst` at
    `dst_offset`, in place (returns dst). `transpose=True` places the `[r, c]` window
    as `[c, r]`; `valid_shape` (maybe dynamic) transfers only that much of the window."""
    d = shaped(dst, "dst")
    s = shaped(src, "src")
    win = dims_arg(shapes, "shapes")
    if not all(isinstance(x, int) for x in win):
        raise OpError("gather_row window shapes must be compile-time constants", arg="shapes")
    if len(win) != 2 or len(dims_arg(src_offset, "src_offset")) != s.rank or \
            len(dims_arg(dst_offset, "dst_offset")) != d.rank:
        raise OpError("gather_row takes 2-D windows with full-rank offsets", arg="shapes")
    if bool(py_value(transpose)) and given(valid_shape):
        raise OpError("gather_row: valid_shape is not supported with transpose=True",
                      arg="valid_shape")
    if s.dtype != d.dtype:
        raise OpError(f"gather_row copies bytes: src {s.dtype!r} and dst {d.dtype!r} differ",
                      arg="src")
    placed = win[::-1] if bool(py_value(transpose)) else win
    for ax, (w, full) in enumerate(zip(placed, d.shape)):
        if isinstance(full, int) and w > full:
            raise OpError(f"a {w}-wide window does not fit dst axis {ax} ({full})", arg="shapes")
    return d


def _gather_row_impl(dst, src, dst_offset, src_offset, shapes, transpose=False,
                     valid_shape=None):
    r, c = (int(x) for x in shapes)
    if valid_shape is not None:
        r, c = min(r, int(valid_shape[0])), min(c, int(valid_shape[1]))
    so = [int(x) for x in src_offset]
    a = np.asarray(plain(src))
    window = a[so[0]:so[0] + r, so[1]:so[1] + c]
    if transpose:
        window = window.T
    do = [int(x) for x in dst_offset]
    dst[do[0]:do[0] + window.shape[0], do[1]:do[1] + window.shape[1]] = window
    return dst


defop("gather_row", unit=Unit.MTE, writes="dst", impl=_gather_row_impl,
      names=("pl.gather_row", "pl.tensor.gather_row", "pl.tile.gather_row"))(_gather_row)


def _paged_gather(src, indices, block_table, block_size, size, max_indices, *,
                  space=MemorySpace.Mat, col_off=0, is_trans=False, is_b_matrix=False):
    """Gather rows of a paged 2-D pool into an on-chip buffer: logical row `idx` lives
    at `block_table[idx // block_size] * block_size + idx % block_size`; result
    `[max_indices, size]` (transposed with `is_trans`), columns from `col_off`. Rows
    past the number of indices are zero."""
    s = shaped(src, "src")
    i = shaped(indices, "indices")
    b = shaped(block_table, "block_table")
    if s.rank != 2:
        raise OpError("pl.paged_gather needs a 2-D pool", arg="src")
    if i.dtype != dtypes.INT32 or b.dtype != dtypes.INT32:
        raise OpError("pl.paged_gather indices and block_table must be INT32",
                      arg="indices" if i.dtype != dtypes.INT32 else "block_table")
    bs = int_arg(block_size, "block_size")
    n = int_arg(size, "size")
    m = int_arg(max_indices, "max_indices")
    off = int_arg(col_off, "col_off")
    if bs <= 0 or n <= 0 or m <= 0:
        raise OpError("block_size, size and max_indices must be positive", arg="size")
    if isinstance(s.shape[1], int) and off + n > s.shape[1]:
        raise OpError(f"columns [{off}, {off + n}) exceed the pool width {s.shape[1]}",
                      arg="size")
    sp = py_value(space)
    if sp not in (MemorySpace.Mat, MemorySpace.Vec):
        raise OpError("paged_gather lands in Mat or Vec", arg="space")
    trans = bool(py_value(is_trans))
    if trans and sp is not MemorySpace.Mat:
        raise OpError("is_trans=True needs space=Mat", arg="is_trans")
    return TensorType((n, m) if trans else (m, n), s.dtype)


def _paged_gather_impl(src, indices, block_table, block_size, size, max_indices, space=None,
                       col_off=0, is_trans=False, is_b_matrix=False):
    a = np.asarray(plain(src))
    ids = np.asarray(plain(indices)).astype(np.int64).reshape(-1)[:int(max_indices)]
    table = np.asarray(plain(block_table)).astype(np.int64).reshape(-1)
    bs = int(block_size)
    phys = table[ids // bs] * bs + ids % bs
    out = np.zeros((int(max_indices), int(size)), dtype=a.dtype)
    out[:len(ids)] = a[phys, int(col_off):int(col_off) + int(size)]
    return np.ascontiguousarray(out.T) if is_trans else out


defop("paged_gather", unit=Unit.MTE, impl=_paged_gather_impl,
      names=("pl.paged_gather", "pl.tensor.paged_gather"))(_paged_gather)
