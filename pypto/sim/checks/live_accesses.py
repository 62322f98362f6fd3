"""The live accesses of one buffer for the race check: the ones no later write covered,
indexed by rows so that a new access meets only those near it.

An access is the race check's tuple `(task position, block, kind, phase, lo, hi, root)`
(`kind` 0 read, 1 write, 2 atomic add). (`pypto.sim.trace.index.BoxIndex` indexes boxes
the same way for the trace's edges, by task id; this one keeps the accesses themselves,
with their blocks and kinds, which the race report names.)
"""
from __future__ import annotations


class LiveAccesses:
    """The live accesses of one buffer, indexed by rows: each sits in the buckets of the
    first-axis cells its box spans (cells as tall as the first access), so a new access
    meets only the accesses near it, and a write finds the ones it covers the same way.
    A box spanning more than `WIDE` cells is kept aside and met by every access. Entries
    are `[access, alive]`; a covered one is marked and dropped from a bucket when next
    met there."""

    WIDE = 64

    def __init__(self, cell: int):
        self.cell = max(1, cell)
        self.buckets: dict[int, list] = {}
        self.wide: list = []
        self.count = 0

    def _cells(self, a: tuple) -> range | None:
        if not a[4]:
            return None  # a scalar buffer: one box
        lo, hi = a[4][0] // self.cell, (a[5][0] - 1) // self.cell
        return range(lo, hi + 1) if hi - lo < self.WIDE else None

    def add(self, accesses: list) -> None:
        for a in accesses:
            entry = [a, True]
            cells = self._cells(a)
            if cells is None:
                self.wide.append(entry)
            else:
                buckets = self.buckets
                for c in cells:
                    got = buckets.get(c)
                    if got is None:
                        buckets[c] = [entry]
                    else:
                        got.append(entry)
            self.count += 1

    def near(self, b: tuple) -> list:
        """The live entries whose first-axis extent may meet `b`'s (each once)."""
        cells = self._cells(b)
        if cells is None:
            groups = [*self.buckets.values(), self.wide]
        else:
            groups = [g for g in (self.buckets.get(c) for c in cells) if g] + [self.wide]
        out = []
        seen: set = set()
        for g in groups:
            stale = False
            for e in g:
                if not e[1]:
                    stale = True
                elif len(groups) == 1 or id(e) not in seen:
                    seen.add(id(e))
                    out.append(e)
            if stale:
                g[:] = [e for e in g if e[1]]
        return out

    def cover(self, w: tuple) -> None:
        """`w` writes over the live accesses inside its box: it stands for them now."""
        for e in self.near(w):
            if covers(w, e[0]):
                e[1] = False
                self.count -= 1


def conflict(a: tuple, b: tuple) -> bool:
    """Do accesses `a` and `b` conflict (boxes meet, one writes, not two atomic adds)?"""
    ka, kb = a[2], b[2]
    if not (ka or kb) or (ka == 2 and kb == 2):
        return False  # reads meet reads, and atomic adds commute
    return all(x < w and y < z for x, z, y, w in zip(a[4], a[5], b[4], b[5]))


def covers(a: tuple, b: tuple) -> bool:
    """Does `a`'s box contain `b`'s?"""
    return all(x <= y and w <= z for x, z, y, w in zip(a[4], a[5], b[4], b[5]))


__all__ = ["LiveAccesses", "conflict", "covers"]
