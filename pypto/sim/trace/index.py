"""Which earlier tasks touched a box of a buffer: the trace's dependency index."""
from __future__ import annotations

import numpy as np

from pypto.sim.trace.access import rows_inside, rows_meet


class BoxIndex:
    """Boxes accessed in one buffer by earlier tasks, searchable for overlaps.

    Reads and writes are kept apart and bucketed along one axis (the axis that the first
    box divides into the most buckets of its extent, which is the buffer's extent over the
    box's: an axis the box spans whole, like the 1 of a [N, 1] column, would put every box
    in one bucket), so finding the overlaps of a box costs about the number of boxes near
    it, not the number of earlier tasks: the trace stays linear in the number of tasks.
    Boxes spanning more than `WIDE` buckets are kept in a list scanned by every query.

    `shadow` drops the boxes of other tasks that a new write box contains: whatever later
    overlaps such a box overlaps the write too, so its task is ordered after the older one
    through the writer; the edges stay as many as the scheduler needs (a tensor rewritten by
    800 tasks gives 799 write-after-write edges, not 319,600 of each kind)."""

    WIDE = 64

    def __init__(self, rank: int, shape: tuple | None = None):
        self.rank = rank
        self.shape = shape  # the buffer's, when known
        self.n = 0
        self.axis = -1
        self.size = 1
        self.buckets: tuple = ({}, {})  # [read, write]: bucket -> [(lo, hi, tid)]
        self.wide: tuple = ([], [])
        # [read, write]: (lo, hi, axis, ext, starts, tid) of each RowAccess (`add_rows`)
        self.rowsets: tuple = ([], [])

    def _span(self, lo: tuple, hi: tuple) -> range:
        """The buckets the box [lo, hi) meets."""
        if self.rank == 0:
            return range(0, 1)
        ax = self.axis
        return range(lo[ax] // self.size, (max(hi[ax], lo[ax] + 1) - 1) // self.size + 1)

    def _keys(self, lo: tuple, hi: tuple) -> range | None:
        """The buckets a box is filed under; None: too many, it goes to the wide list."""
        keys = self._span(lo, hi)
        return keys if len(keys) <= self.WIDE else None

    def add(self, tid: int, write: bool, lo: tuple, hi: tuple) -> None:
        # the access's own tuples when they already are plain ints (no copy per box)
        if type(lo) is not tuple or any(type(x) is not int for x in lo):
            lo = tuple(int(x) for x in lo)
        if type(hi) is not tuple or any(type(x) is not int for x in hi):
            hi = tuple(int(x) for x in hi)
        if self.axis < 0 and self.rank:
            ext = [max(1, h - lo_) for lo_, h in zip(lo, hi)]
            dims = self.shape if self.shape is not None and len(self.shape) == self.rank \
                else (1,) * self.rank
            # most buckets first, then the smallest extent (the only rule without a shape)
            self.axis = min(range(self.rank), key=lambda i: (-dims[i] // ext[i], ext[i]))
            self.size = ext[self.axis]
        w = 1 if write else 0
        keys = self._keys(lo, hi)
        item = (lo, hi, tid)
        if keys is None:
            self.wide[w].append(item)
        else:
            b = self.buckets[w]
            for k in keys:
                lst = b.get(k)
                if lst is None:
                    b[k] = [item]
                else:
                    lst.append(item)
        self.n += 1

    def shadow(self, tid: int, lo: tuple, hi: tuple) -> None:
        """Forget the boxes of tasks other than `tid` lying inside the written box [lo, hi)."""
        if not self.n:
            return
        lo, hi = tuple(int(x) for x in lo), tuple(int(x) for x in hi)

        def outside(item: tuple) -> bool:
            return item[2] == tid or any(a < x or c > y for a, c, x, y in
                                         zip(item[0], item[1], lo, hi))

        keys = self._keys(lo, hi) if self.axis >= 0 else None
        for w in (0, 1):
            rows = self.rowsets[w]
            if rows:
                rows[:] = [r for r in (_rows_outside(it, tid, lo, hi) for it in rows)
                           if r is not None]
            wide = self.wide[w]
            if wide:
                wide[:] = [it for it in wide if outside(it)]
            b = self.buckets[w]
            for k in (list(b) if keys is None else [k for k in keys if k in b]):
                kept = [it for it in b[k] if outside(it)]
                if kept:
                    b[k] = kept
                else:
                    del b[k]

    def add_rows(self, tid: int, write: bool, lo: tuple, hi: tuple, axis: int, ext: int,
                 starts: np.ndarray) -> None:
        """File the rows of a `RowAccess`: [lo, hi) is their box; each row spans
        [s, s + ext) along `axis` (s in the sorted `starts`) and [lo, hi) elsewhere."""
        self.rowsets[1 if write else 0].append((_ints(lo), _ints(hi), axis, ext, starts, tid))
        self.n += 1

    def _plain(self, lo: tuple, hi: tuple, writes_only: bool):
        """(lo, hi, tid, is-write) of the filed boxes overlapping [lo, hi)."""
        span = self._span(lo, hi) if self.axis >= 0 or not self.rank else None
        for w in ((1,) if writes_only else (0, 1)):
            b = self.buckets[w]
            groups = [self.wide[w]]
            if span is None:
                groups.extend(b.values())
            elif len(span) <= len(b):
                groups.extend(b[k] for k in span if k in b)
            else:  # a query wider than the buckets there are: only those it meets
                first, stop = span.start, span.stop
                groups.extend(g for k, g in b.items() if first <= k < stop)
            for g in groups:
                for l2, h2, t in g:
                    for a, c, x, y in zip(l2, h2, lo, hi):
                        if not (a < y and c > x):
                            break
                    else:
                        yield l2, h2, t, w

    def _rowsets(self, lo: tuple, hi: tuple, writes_only: bool):
        """The filed row sets whose box overlaps [lo, hi), with their is-write flag."""
        for w in ((1,) if writes_only else (0, 1)):
            for item in self.rowsets[w]:
                if _boxes_meet(item[0], item[1], lo, hi):
                    yield item, w

    def overlapping(self, lo: tuple, hi: tuple, writes_only: bool = False
                    ) -> tuple[np.ndarray, np.ndarray]:
        """(task ids, is-write flags) of the earlier accesses overlapping [lo, hi)."""
        found: dict = {}
        if self.n:
            for _, _, t, w in self._plain(lo, hi, writes_only):
                found[(t, w)] = None
            for (_, _, ax, ext, starts, t), w in self._rowsets(lo, hi, writes_only):
                if (t, w) not in found and rows_meet(starts, ext, lo[ax], hi[ax]):
                    found[(t, w)] = None
        return _found(found)

    def overlapping_rows(self, lo: tuple, hi: tuple, axis: int, ext: int, starts: np.ndarray,
                         writes_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """`overlapping` for the rows of a `RowAccess` (box [lo, hi), see `add_rows`)."""
        found: dict = {}
        if self.n:
            for l2, h2, t, w in self._plain(lo, hi, writes_only):
                if (t, w) not in found and rows_meet(starts, ext, l2[axis], h2[axis]):
                    found[(t, w)] = None
            for (l2, h2, ax2, ext2, starts2, t), w in self._rowsets(lo, hi, writes_only):
                if (t, w) in found:
                    continue
                if ax2 == axis:
                    meet = rows_sets_meet(starts, ext, starts2, ext2)
                else:  # each set's rows must reach the other's fixed extent on its axis
                    meet = rows_meet(starts, ext, l2[axis], h2[axis]) and \
                        rows_meet(starts2, ext2, lo[ax2], hi[ax2])
                if meet:
                    found[(t, w)] = None
        return _found(found)


def _rows_outside(item: tuple, tid: int, lo: tuple, hi: tuple) -> tuple | None:
    """A filed row set less its rows inside the written box [lo, hi) of task `tid` (None:
    none are left); a row set of `tid` itself, or one not inside on its other axes, as
    it was."""
    rlo, rhi, ax, ext, starts, t = item
    if t == tid:
        return item
    for i, (a, c, x, y) in enumerate(zip(rlo, rhi, lo, hi)):
        if i != ax and (a < x or c > y):
            return item
    inside = rows_inside(starts, ext, lo[ax], hi[ax])
    if not inside.any():
        return item
    if inside.all():
        return None
    kept = starts[~inside]
    return (rlo[:ax] + (int(kept[0]),) + rlo[ax + 1:],
            rhi[:ax] + (int(kept[-1]) + ext,) + rhi[ax + 1:], ax, ext, kept, t)


def _ints(t: tuple) -> tuple:
    return t if type(t) is tuple and all(type(x) is int for x in t) else \
        tuple(int(x) for x in t)


def _boxes_meet(lo: tuple, hi: tuple, lo2: tuple, hi2: tuple) -> bool:
    return all(a < y and c > x for a, c, x, y in zip(lo, hi, lo2, hi2))


def _found(found: dict) -> tuple[np.ndarray, np.ndarray]:
    tids = np.fromiter((t for t, _ in found), np.int64, len(found))
    writes = np.fromiter((bool(w) for _, w in found), bool, len(found))
    return tids, writes


def rows_sets_meet(a: np.ndarray, ea: int, b: np.ndarray, eb: int) -> bool:
    """Does some row [s, s + ea), s in sorted `a`, overlap some [u, u + eb), u in `b`?"""
    if not len(a) or not len(b):
        return False
    i = np.searchsorted(b, a - eb, "right")
    j = np.searchsorted(b, a + ea, "left")
    return bool(np.any(j > i))


__all__ = ["BoxIndex"]
