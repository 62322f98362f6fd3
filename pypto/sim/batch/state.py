"""Values and state of a batched run: affine block-varying scalars (`Aff`), the
`BatchState` of one batched run (its batch shape, the accesses it logs for the trace,
the window writes it makes into buffers whose fill waits), and `Fallback`."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

# A logged access: (array, buffer, origin, offsets, extent, write, site, extra record args)
LoggedAccess = tuple
# A window write into a buffer whose fill is pending: (target, offsets or None, extent,
# per-block origins, or a bool mask over the batch axes (the blocks that wrote: a masked
# write, `predicate`), or None; the BatchState whose batch axes the offsets span)
WindowWrite = tuple


class NotBatchable(Exception):
    """The plan's refusal of a region (static: its message says why)."""


class Fallback(Exception):
    """Abandon the batch; run block by block."""


class Stack:
    """A tensor each iteration of a batched loop body has its own of (a launch returned
    a fresh one): `array` holds them all along the leading batch axes."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray | None):
        self.array = array


class StackRead:
    """In a batched run's access log, in place of an array: the launch's parameter
    `index`, a `Stack` - each iteration's task reads its own tensor there (the replay
    locates the array that iteration was passed)."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


class Partial(Fallback):
    """Some blocks' windows are partial tiles (a valid shape short of the window, or a
    clamped window reaching past its tensor): `mask` (over the batch axes) marks them.
    A launch loop nest runs its other iterations batched when they come first
    (`pypto.sim.runtime.launch`), the rest block by block."""

    def __init__(self, mask: np.ndarray):
        super().__init__("a partial tile")
        self.mask = mask


class Aff:
    """An integer that differs per block: `base + sum(d[k] * index[k])`."""

    __slots__ = ("base", "d")

    def __init__(self, base: int, d: tuple):
        self.base = base
        self.d = d

    # Equal by value: the window memo (`BatchState.window_at`) compares the offsets of
    # this call with the previous call's, and derived offsets are fresh objects.
    def __eq__(self, other: Any) -> bool:
        return type(other) is Aff and self.base == other.base and self.d == other.d

    def __hash__(self) -> int:
        return hash((self.base, self.d))

    def at(self, idx: tuple) -> int:
        v = self.base
        for x, i in zip(self.d, idx):
            v += x * i
        return v

    def __repr__(self) -> str:
        return f"Aff({self.base}, {self.d})"


def scalar_at(v: Any, idx: tuple) -> Any:
    """The value in block `idx` of the integer scalar `v`: an `Aff`, a per-block integer
    array (over the batch axes), or uniform. Only for scalars: an integer tensor whose
    rank is the batch's would read as a per-block array (`arg_at` is for arguments)."""
    if type(v) is Aff:
        return v.at(idx)
    if isinstance(v, np.ndarray) and v.ndim == len(idx) and v.dtype.kind in "iu":
        return int(v[tuple(i if n > 1 else 0 for i, n in zip(idx, v.shape))])
    return v


def arg_at(v: Any, idx: tuple) -> Any:
    """A batched launch argument's value in block `idx`: a launch nest's arguments vary
    per block only as `Aff` (`nest._arg_fn`); tensors and carried tensors, of any dtype
    and rank, are every block's."""
    return v.at(idx) if type(v) is Aff else v


def lo_at(lo: Any, idx: tuple) -> tuple:
    """The offsets `lo` in block `idx`."""
    return tuple(int(scalar_at(o, idx)) for o in lo)


def store_windows(st: BatchState, view: np.ndarray, value: Any, tgt: np.ndarray,
                  offs: list, shp: tuple, owner: BatchState | None = None) -> None:
    """Assign `value` to `view`, the windows `offs + shp` of `tgt` of the blocks of
    `owner` (all of `st`'s by default) as one strided view: what it held kept for an
    undo, the write logged for a deferred fill."""
    if st.undo is not None:
        st.undo.append((view, view.copy()))
    view[...] = value
    if st.wlog is not None:
        st.wlog.append((tgt, list(offs), shp, None, owner or st))


def write_each_block(st: BatchState, tgt: np.ndarray, offs: list, src: np.ndarray,
                     shp: tuple, blocks: list) -> None:
    """Write `src` (one window per block, or one for all) into the windows `offs + shp`
    of `tgt` of `blocks` (block indices), one window after another: the writes whose
    windows make no single strided view. Every window is checked to lie inside `tgt` and
    to be its block's own before anything is written (else `Fallback`: block by block
    reports or makes it)."""
    los = []
    for idx in blocks:
        lo = lo_at(offs, idx)
        if any(o < 0 or o + s > d for o, s, d in zip(lo, shp, tgt.shape)):
            raise Fallback("out of bounds")
        los.append(lo)
    if len(set(los)) != len(los):
        raise Fallback("blocks write the same window")
    per_block = src.ndim == len(shp) + st.nb
    for idx, lo in zip(blocks, los):
        part = src[tuple(i if n > 1 else 0 for i, n in zip(idx, src.shape))] \
            if per_block else src
        box = tuple(slice(o, o + s) for o, s in zip(lo, shp))
        if st.undo is not None:
            st.undo.append((tgt[box], tgt[box].copy()))
        tgt[box] = part
    if st.wlog is not None:
        st.wlog.append((tgt, None, shp, los, st))


def gather_index(st: BatchState, offs: list, shp: tuple, ashape: tuple) -> tuple:
    """The index of every block's window `offs + shp` of an array of shape `ashape`
    (its result: the batch axes, then the window's); raises Fallback when a window
    leaves the array (the block-by-block rerun reports it). Axes after the last varying
    offset are plain slices (a row gather copies whole contiguous rows)."""
    nb = st.nb
    los: list[Any] = [o if type(o) is int else np.asarray(st.materialize(o), dtype=np.int64)
                      for o in offs]
    m = max((ax + 1 for ax, lo in enumerate(los) if type(lo) is not int and lo.ndim),
            default=0)
    index: list = []
    for ax, (lo, s, d) in enumerate(zip(los, shp, ashape)):
        if type(lo) is int:
            if lo < 0 or lo + s > d:
                raise Fallback("out of bounds")
        elif lo.size and (int(lo.min()) < 0 or int(lo.max()) + s > d):
            raise Fallback("out of bounds")
        if ax >= m:
            o = int(lo)
            index.append(slice(o, o + s))
            continue
        lo = np.asarray(lo, dtype=np.int64)
        lo = lo.reshape((1,) * nb) if lo.ndim == 0 else lo
        tail = [1] * m
        tail[ax] = s
        index.append(lo.reshape(lo.shape + (1,) * m) +
                     np.arange(s, dtype=np.int64).reshape((1,) * nb + tuple(tail)))
    return tuple(index)


class BatchState:
    """One batched run: its batch shape (one leading axis per batch axis), the block
    index of an SPMD batch, and what it logs."""

    __slots__ = ("blk", "bs", "log", "masked", "merge", "nb", "pred", "shorts", "split",
                 "undo", "wlog")

    def __init__(self, bs: tuple, spmd: bool, trace: bool, wlog: bool,
                 undo: list | None = None, split: bool = False):
        self.bs = bs
        self.nb = len(bs)
        # a launch loop nest that splits its outermost loop (`run.Split`): partial tiles
        # after whole ones stop the batch, the whole ones then run without masks
        self.split = split
        self.shorts: dict = {}  # masks._short_blocks's memo
        # inside a branch of a condition that differs per block: the blocks taking it
        # (a bool array over the batch axes; `pypto.sim.batch.predicate`)
        self.pred: np.ndarray | None = None
        # while both branches of such a condition run: the window writes they record
        # for one merged write instead of writing (`pypto.sim.batch.merged`)
        self.merge: list | None = None
        # (view, its old contents) before every window write, when what the run wrote
        # must be undone after a later failure (a loop body of several launches)
        self.undo = undo
        self.blk = Aff(0, (1,)) if spmd else None
        # traced runs: the accesses, replayed per task (or block) afterwards
        self.log: list[LoggedAccess] | None = [] if trace else None
        # traced runs: (mask, counts) of each predicated branch that ran, added to the
        # blocks of its mask (`pypto.sim.batch.branch_trace`)
        self.masked: list[tuple] = []
        # the window writes into buffers whose fill waits for this run
        # (pypto.sim.batch.fills)
        self.wlog: list[WindowWrite] | None = [] if wlog else None

    def axis(self, n: int) -> BatchState:
        """This run's state with one more batch axis in front, `n` long: a loop of the
        region run as a batch axis (`pypto.sim.batch.loop_axis`). The logs are shared;
        numpy broadcasting lines the outer values' axes up with the new trailing ones."""
        st = BatchState.__new__(BatchState)
        st.bs = (n,) + self.bs
        st.nb = self.nb + 1
        st.undo = self.undo
        st.log = self.log
        st.masked = self.masked
        st.wlog = self.wlog
        st.split = False  # (the new axis comes first: a split would cut the loop's)
        st.shorts = {}
        st.pred = None  # (no loop runs under a mask: `predicate`)
        st.merge = None
        blk = self.blk
        st.blk = Aff(blk.base, (0,) + blk.d) if blk is not None else None
        return st

    def materialize(self, v: Any) -> Any:
        if type(v) is Aff:
            out = np.asarray(v.base, dtype=np.int64)
            for k, (x, n) in enumerate(zip(v.d, self.bs)):
                if x:
                    shape = [1] * self.nb
                    shape[k] = n
                    out = out + (np.arange(n, dtype=np.int64) * x).reshape(shape)
            return out
        return v

    # -- windows -------------------------------------------------------------------

    def _geometry(self, a: np.ndarray, offs: list, shp: tuple, write: bool) -> tuple | None:
        """(shape, strides, first element's index) of all blocks' windows of `a` as one
        strided view, None when the offsets are not affine; raises Fallback when a
        window leaves `a` or blocks would write the same window."""
        nb, bs = self.nb, self.bs
        st = a.strides
        ashape = a.shape
        base = []
        bstr = [0] * nb
        moved = [False] * nb
        for ax, o in enumerate(offs):
            if type(o) is Aff:
                b = lo = hi = o.base
                s_ax = st[ax]
                for k, x in enumerate(o.d):
                    if x:
                        moved[k] = True
                        bstr[k] += x * s_ax
                        span = x * (bs[k] - 1)
                        if span < 0:
                            lo += span
                        else:
                            hi += span
            elif isinstance(o, np.ndarray):
                return None
            else:
                b = lo = hi = int(o)
            if lo < 0 or hi + shp[ax] > ashape[ax]:
                raise Fallback("out of bounds")
            base.append(b)
        bshape = []
        for k in range(nb):
            n = bs[k]
            if moved[k] and n > 1:
                bshape.append(n)
            else:
                if write and n > 1:
                    raise Fallback("blocks write the same window")
                bshape.append(1)
                bstr[k] = 0
        return tuple(bshape) + tuple(shp), tuple(bstr) + st, base

    def window(self, a: np.ndarray, offs: list, shp: tuple, write: bool) -> np.ndarray | None:
        """All blocks' windows of `a` as one strided view (leading batch axes), or None
        when the offsets are not affine."""
        g = self._geometry(a, offs, shp, write)
        if g is None:
            return None
        shape, strides, base = g
        st = a.strides
        # fast path (sim speed: as_strided costs ~3 us): the view straight on the memory
        # of the array owning it
        root = a.base if a.base is not None else a
        if type(a) is np.ndarray and type(root) is np.ndarray and root.base is None and \
                root.flags.c_contiguous and all(x >= 0 for x in strides):
            off = sum(b * x for b, x in zip(base, st))
            if root is not a:
                off += a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
            if off >= 0:
                v = np.ndarray(shape, a.dtype, root, off, strides)
                if not (write and a.flags.writeable):
                    v.flags.writeable = False
                return v
        v0 = a[tuple(slice(b, b + s) for b, s in zip(base, shp))]
        return as_strided(v0, shape, strides, writeable=write)

    def window_at(self, site: list, a: np.ndarray, offs: list, shp: tuple, write: bool
                  ) -> np.ndarray | None:
        """`window`, remembering at `site` (a one-item list owned by the calling op) the
        geometry of its last result. When the array's layout, the offsets and the batch
        shape equal the previous call's, the bounds and overlap checks `window` made then
        hold now, and the view is built from the remembered shape, strides and byte
        offset (sim speed: `window` is ~3 us of Python per call). A C-contiguous array
        is the buffer of its own windows (a read-only one gives read-only windows, as
        `window` makes them)."""
        g = site[0]
        if g is not None and type(a) is np.ndarray:
            try:
                same = g[0] == offs and g[1] == self.bs and g[2] == a.shape and \
                    g[3] == a.strides and g[4] == a.dtype
            except ValueError:  # an array offset compared with an int
                same = False
            if same:
                v = np.ndarray(g[5], a.dtype, a, g[6], g[7])
                if not write:
                    v.flags.writeable = False
                return v
        if type(a) is not np.ndarray or not a.flags.c_contiguous:
            return self.window(a, offs, shp, write)
        g = self._geometry(a, offs, shp, write)
        if g is None:
            return None
        shape, strides, base = g
        if not all(x >= 0 for x in strides):
            return self.window(a, offs, shp, write)
        off = sum(b * x for b, x in zip(base, a.strides))
        v = np.ndarray(shape, a.dtype, a, off, strides)
        if not write:
            v.flags.writeable = False
        if all(type(o) is Aff or type(o) is int for o in offs):
            site[0] = (list(offs), self.bs, a.shape, a.strides, a.dtype, shape, off, strides)
        return v

    def indices(self) -> Iterator[tuple]:
        return iter(np.ndindex(*self.bs))


__all__ = ["Aff", "BatchState", "Fallback", "LoggedAccess", "NotBatchable", "Partial", "Stack",
           "StackRead", "WindowWrite", "arg_at", "gather_index", "lo_at", "scalar_at",
           "store_windows", "write_each_block"]
