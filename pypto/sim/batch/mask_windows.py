"""Window reads and writes of partial tiles in a batch (`masks.Masked`), traced or not.

Block by block (`intrinsics.windows`, `intrinsics.writes`) a read with a valid shape
copies the valid part, fills the rest of the tile with the pad value and tags the tile;
a write of a tagged tile writes its valid part. The trace records the valid part as
the access, and the bytes it moves as its cost (a GM read / write, or an on-chip copy
into a tile of the region). So when every block's valid part has the same extent (a
constant valid shape: hc_pre's 8-row windows of one valid row), one logged access and
one cost hold for all blocks, as for a whole tile; when the extents differ (a loop's
short last tile), the blocks are grouped by extent and each group logs and pays its own
under a mask (`branch_trace.enter`: the replay records a group's access for its blocks
only, and the cycles are added per block), so every block's trace is its own.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.sim.batch.branch_trace import enter, leave
from pypto.sim.batch.masks import BY_BLOCK, Masked, _at, _cell, _per_block, uniform
from pypto.sim.batch.state import (
    BatchState,
    Fallback,
    Partial,
    gather_index,
    store_windows,
    write_each_block,
)
from pypto.sim.batch.ufuncs import broadcast_shape
from pypto.sim.device.fill import fill_outside

# (a block's valid extents) -> logs that access and adds its costs to the frame
Note = Callable[[tuple], None]


def extents(st: BatchState, m: Masked, shp: tuple) -> list[tuple[np.ndarray | None, tuple]]:
    """The blocks of `m` grouped by the extent of their valid part (a window of `shp`):
    [(mask over the batch axes, or None for all blocks, extent)]."""
    if m.every is not BY_BLOCK:
        return [(None, _clipped(m.every, shp))]
    groups: dict[tuple, list] = {}
    for idx, v in m.tags.items():
        groups.setdefault(_clipped(v, shp), []).append(idx)
    n = math.prod(st.bs)
    if sum(len(b) for b in groups.values()) < n:  # (the untagged blocks: whole)
        tagged = {idx for b in groups.values() for idx in b}
        groups.setdefault(shp, []).extend(idx for idx in np.ndindex(*st.bs)
                                          if idx not in tagged)
    if len(groups) == 1:
        return [(None, next(iter(groups)))]
    out: list[tuple[np.ndarray | None, tuple]] = []
    for ext, blocks in groups.items():
        mask = np.zeros(st.bs, dtype=bool)
        for idx in blocks:
            mask[idx] = True
        out.append((mask, ext))
    return out


def _clipped(v: tuple | None, shp: tuple) -> tuple:
    return shp if v is None else tuple(min(int(x), s) for x, s in zip(v, shp))


def charge(f: Any, groups: list, note: Note) -> None:
    """Log and cost the access of each group of blocks (`extents`) for its blocks only."""
    if len(groups) == 1:
        note(groups[0][1])
        return
    st = f.batch
    if st.pred is not None:
        raise Fallback("partial tiles of several extents under a condition")
    for mask, ext in groups:
        saved = enter(f, st, mask)
        try:
            note(ext)
        finally:
            leave(f, st, mask, saved)


def read(st: BatchState, a: np.ndarray, offs: list, shp: tuple, valid: Any, clamp: bool,
         pad: Any) -> Masked | None:
    """All blocks' windows `offs + shp` of `a` with valid shape `valid` (entries per
    block) and `clamp`, as block by block reads each: None when every block's tile is
    whole (the caller's strided view), else a `Masked`. Raises Fallback where block by
    block faults (a valid part outside the tensor: the rerun reports it)."""
    if not clamp and valid is not None and all(type(v) is int for v in valid):
        return _read_uniform(st, a, offs, shp, tuple(min(s, v) for s, v in zip(shp, valid)),
                             pad)
    bs = st.bs
    los = [_per_block(st, o) for o in offs]
    ext: list = []
    short: np.ndarray = np.zeros(bs, dtype=bool)
    for ax, s in enumerate(shp):
        e: Any = s
        if valid is not None:
            v = _per_block(st, valid[ax])
            e = min(s, v) if type(v) is int else np.minimum(v, s)
        lo = los[ax]
        d = a.shape[ax]
        if clamp:
            e = np.maximum(0, np.minimum(e, d - np.asarray(lo)))
        if type(e) is int and type(lo) is int:  # (a whole axis at one offset: no numpy)
            if lo < 0 or lo + e > d or e < 0:
                raise Fallback("out of bounds")
            if e < s:
                short |= True
        else:
            lo = np.asarray(lo)
            if (lo < 0).any() or (lo + e > d).any() or np.any(np.asarray(e) < 0):
                raise Fallback("out of bounds")
            short |= np.asarray(e) < s
        ext.append(e)
    if not short.any():
        return None
    if st.split:
        # whole tiles first (a loop's short last tile): they run batched without masks,
        # the rest batched with them (`runtime.launch._split`)
        rows = np.asarray(short.reshape(bs[0], -1).any(axis=1))
        if not rows[0]:
            raise Partial(short.copy())
    partial = [tuple(int(i) for i in idx) for idx in zip(*np.nonzero(short))]
    tags = {idx: tuple(_at(e, idx) for e in ext) for idx in partial}
    out = np.empty(bs + tuple(shp), dtype=a.dtype)
    inside = np.ones(bs, dtype=bool)
    for lo, s, d in zip(los, shp, a.shape):
        inside &= np.asarray(lo) + s <= d
    k = _leading_whole(bs, [tuple(int(i) for i in idx) for idx in zip(*np.nonzero(~inside))])
    if k:  # the blocks whose whole window is inside the tensor: one strided view
        sub = st if k == bs[0] else BatchState((k,) + bs[1:], False, False, False)
        view = sub.window(a, offs, shp, False)
        if view is None:
            k = 0
        else:
            out[:k] = view
    for idx in _after(bs, k):
        e = tags.get(idx, shp)
        origin = [_at(x, idx) for x in los]
        out[idx][tuple(slice(0, x) for x in e)] = \
            a[tuple(slice(o, o + x) for o, x in zip(origin, e))]
    for idx, e in tags.items():
        fill_outside(out[idx], e, pad)
    return Masked(out, tags)


def _read_uniform(st: BatchState, a: np.ndarray, offs: list, shp: tuple, ext: tuple,
                  pad: Any) -> Masked | None:
    """`read` of a valid shape that is the same in every block (no clamp): each block's
    valid part `ext` copied into its tile, the rest the pad value."""
    if ext == shp:
        return None
    if any(e < 0 for e in ext):
        raise Fallback("a negative valid extent")
    nb = st.nb
    view = st.window(a, offs, ext, False)  # (bounds-checked: Fallback past the tensor)
    if view is None:  # offsets not affine: a gather
        view = a[gather_index(st, offs, ext, a.shape)]
    out = np.empty(view.shape[:nb] + shp, dtype=a.dtype)
    out[(Ellipsis,) + tuple(slice(0, e) for e in ext)] = view
    pad_outside(out, nb, ext, pad)
    return uniform(out, ext)


def pad_outside(out: np.ndarray, nb: int, ext: tuple, pad: Any) -> None:
    """`fill_outside` of every block's tile (after `nb` batch axes) at once."""
    for ax, e in enumerate(ext):
        if e < out.shape[nb + ax]:
            idx = [slice(None)] * (nb + len(ext))
            for prev in range(ax):
                idx[nb + prev] = slice(0, ext[prev])
            idx[nb + ax] = slice(e, None)
            out[tuple(idx)] = pad


def _leading_whole(bs: tuple, short: list) -> int:
    """How many leading iterations of batch axis 0 have no block in `short`."""
    return min((idx[0] for idx in short), default=bs[0])


def _after(bs: tuple, k: int) -> Any:
    """The block indices from iteration `k` of batch axis 0 on."""
    for idx in np.ndindex(*((bs[0] - k,) + bs[1:])):
        yield (idx[0] + k,) + idx[1:]


def write(st: BatchState, tgt: np.ndarray, offs: list, src: Masked, shp: tuple,
          bound: tuple) -> list:
    """Write each block's valid part of `src` into its window `offs` of `tgt` (block by
    block: the valid part only, checked against the tensor; a fault raises Fallback and
    the rerun reports it). Logs undo copies and deferred-fill boxes like any write.
    `bound`: the extents the plan proved the blocks' footprints disjoint with (a valid
    part past them gives the batch up). Returns the groups of blocks by extent
    (`extents`) for the trace."""
    bs = st.bs
    groups = extents(st, src, shp)
    if any(e > b for _, ext in groups for e, b in zip(ext, bound)):
        raise Fallback("a valid part past the footprint of the plan")
    if len(groups) == 1:  # one extent for all blocks: one strided view
        ext = groups[0][1]
        data = src.data[(Ellipsis,) + tuple(slice(0, e) for e in ext)]
        view = st.window(tgt, offs, ext, True)
        if view is not None:
            store_windows(st, view, data, tgt, offs, ext)
        else:
            write_each_block(st, tgt, offs, np.broadcast_to(data, bs + ext), ext,
                             list(np.ndindex(*bs)))
        return groups
    los = [_per_block(st, o) for o in offs]
    exts = {idx: v for idx, v in src.tags.items() if v is not None and v != shp}
    data = np.broadcast_to(src.data, bs + tuple(shp))
    k = _leading_whole(bs, list(exts))
    scalar = BatchState((), False, False, False)
    if k:  # the leading whole tiles: one strided view (bounds-checked there)
        sub = st if k == bs[0] else BatchState((k,) + bs[1:], False, False, False)
        view = sub.window(tgt, offs, shp, True)
        if view is None:
            k = 0
        else:
            store_windows(st, view, data[:k], tgt, offs, shp, sub)
    for idx in _after(bs, k):
        e = _clipped(exts.get(idx), shp)
        lo = [_at(x, idx) for x in los]
        if any(o < 0 or o + x > d for o, x, d in zip(lo, e, tgt.shape)):
            raise Fallback("out of bounds")
        box = tuple(slice(o, o + x) for o, x in zip(lo, e))
        if st.undo is not None:
            st.undo.append((tgt[box], tgt[box].copy()))
        tgt[box] = data[idx][tuple(slice(0, x) for x in e)]
        if st.wlog is not None:
            st.wlog.append((tgt, lo, tuple(e), None, scalar))
    return groups


def local_write(st: BatchState, tgt: Any, offs: list, src: Masked, shp: tuple) -> tuple:
    """`rules.window_write.blocal_write` of a tagged source: each block's valid part of `src` into
    its own tile `tgt` at the uniform offsets `offs` (block by block the write is in
    place and the old tile dies there). Returns (the tiles, the groups of blocks by
    extent for the trace)."""
    nb, rank = st.nb, len(shp)
    if st.pred is not None or type(tgt) is not np.ndarray or \
            tgt.ndim not in (rank, rank + nb) or src.data.ndim not in (rank, rank + nb) \
            or src.data.shape[-rank:] != shp or len(offs) != rank:
        raise Fallback("a tagged write into a local tile under a condition or of another rank")
    offs = [int(o) for o in offs]
    groups = extents(st, src, shp)
    tshape = tgt.shape[tgt.ndim - rank:]
    for _, ext in groups:
        if any(o < 0 or o + x > n for o, x, n in zip(offs, ext, tshape)):
            raise Fallback("out of bounds")
    lead = st.bs if len(groups) > 1 else \
        broadcast_shape([tgt.shape[:tgt.ndim - rank] or (1,) * nb,
                         src.data.shape[:src.data.ndim - rank] or (1,) * nb])
    own = tgt.ndim == rank + nb and tgt.shape[:nb] == lead and tgt.flags.writeable \
        and all(k == 1 or sd != 0 for k, sd in zip(lead, tgt.strides))
    if not own:
        full = np.empty(lead + tshape, tgt.dtype)
        full[...] = tgt
        tgt = full
    if len(groups) == 1:
        ext = groups[0][1]
        cut = tuple(slice(0, e) for e in ext)
        tgt[(slice(None),) * nb + tuple(slice(o, o + e) for o, e in zip(offs, ext))] = \
            src.data[(Ellipsis,) + cut]
        return tgt, groups
    data = np.broadcast_to(src.data, st.bs + shp) if src.data.ndim == rank + nb else src.data
    for mask, ext in groups:
        assert mask is not None
        box = tuple(slice(o, o + e) for o, e in zip(offs, ext))
        cut = tuple(slice(0, e) for e in ext)
        for idx in zip(*np.nonzero(mask)):
            part = data[_cell(data, idx)] if data.ndim == rank + nb else data
            tgt[tuple(int(i) for i in idx) + box] = part[cut]
    return tgt, groups


__all__ = ["charge", "extents", "local_write", "pad_outside", "read", "write"]
