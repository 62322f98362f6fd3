"""Which earlier tasks touched a box of a buffer: the trace's dependency index."""
from __future__ import annotations

import numpy as np


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

    def overlapping(self, lo: tuple, hi: tuple, writes_only: bool = False
                    ) -> tuple[np.ndarray, np.ndarray]:
        """(task ids, is-write flags) of the earlier boxes overlapping [lo, hi)."""
        found: dict = {}
        if self.n:
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
                            found[(t, w)] = None
        tids = np.fromiter((t for t, _ in found), np.int64, len(found))
        writes = np.fromiter((bool(w) for _, w in found), bool, len(found))
        return tids, writes


__all__ = ["BoxIndex"]
