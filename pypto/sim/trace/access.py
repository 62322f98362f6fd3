"""One task's access of a global buffer, as the trace records it.

An `Access` is a box of the buffer. A gather (an embedding lookup, a paged-KV attention
reading one cache row per top-k position) reads many equal windows that differ along
one axis only and cannot merge into a box: a `RowAccess` holds them as one record, the
box they share on the other axes and the start of each row along that axis. A traced
DeepSeek decode reads 2,048 scattered cache rows per task over thousands of tasks, so
an `Access` per row (~300 bytes with its tuples, and as much again in the dependency
index) was what filled its memory; a row costs 8 bytes here. Only reads become rows:
the writes keep one box each (the sanitizers, the golden diagnosis and the last-writer
tables read write boxes).
"""
from __future__ import annotations

from array import array
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np


@dataclass(slots=True)  # (a long traced run holds millions: no per-instance dict)
class Access:
    tensor: str  # the global buffer's name
    mode: str  # "R" or "W"
    block: int
    lo: tuple
    hi: tuple  # exclusive
    uid: int = -1  # the buffer's id within the run
    atomic: bool = False  # a write by an atomic-add store/assemble (sanitizers: no conflict
    # with other atomic adds)
    phase: int = 0  # syncall barriers the block had passed (sanitizers: blocks of one task
    # are ordered across a barrier)

    @property
    def ranges(self) -> list:
        return [(a, b) for a, b in zip(self.lo, self.hi)]

    def boxes(self) -> Iterator[tuple[tuple, tuple]]:
        """The boxes this access covers: (lo, hi) each (one, for a plain access)."""
        yield self.lo, self.hi

    def grow(self, lo: tuple, hi: tuple) -> bool:
        """Grow this box to cover [lo, hi) when the union is still a box (contained, or
        adjacent along one axis with equal extents elsewhere); False when it is not."""
        alo, ahi = self.lo, self.hi
        if alo == lo and ahi == hi:  # the same box again (a loop re-reading a window)
            return True
        # one pass: is it contained, and which axes differ (traced runs merge per access)
        inside = True
        diff = -1
        for ax in range(len(lo)):
            a, b, lo_ax, hi_ax = alo[ax], ahi[ax], lo[ax], hi[ax]
            if a == lo_ax and b == hi_ax:
                continue
            if inside and not (a <= lo_ax and hi_ax <= b):
                inside = False
            if diff >= 0 or lo_ax > b or hi_ax < a:
                diff = -2  # two differing axes, or apart along one: not a box unless inside
            elif diff == -1:
                diff = ax
        if inside:
            return True
        if diff < 0:
            return False
        self.lo = alo[:diff] + (min(alo[diff], lo[diff]),) + alo[diff + 1:]
        self.hi = ahi[:diff] + (max(ahi[diff], hi[diff]),) + ahi[diff + 1:]
        return True

    def row_axis(self, lo: tuple, hi: tuple) -> int:
        """The one axis along which the box [lo, hi) is this box moved (the same extents,
        the same bounds on every other axis), or -1: what makes the two rows of a
        `RowAccess`. Only reads qualify."""
        if self.mode != "R" or len(lo) != len(self.lo):
            return -1
        axis = -1
        for ax in range(len(lo)):
            if self.lo[ax] == lo[ax] and self.hi[ax] == hi[ax]:
                continue
            if axis >= 0 or self.hi[ax] - self.lo[ax] != hi[ax] - lo[ax]:
                return -1
            axis = ax
        return axis

    def to_dict(self) -> dict:
        return {"tensor": self.tensor, "mode": self.mode, "block": self.block,
                "ranges": self.ranges}


class RowAccess(Access):
    """Reads of equal windows of one buffer that differ along `axis` only: the rows start
    at `starts` (sorted, distinct) and are `ext` long; `lo` / `hi` are the box holding
    them all (their bounds on every other axis are exact)."""

    __slots__ = ("_grown", "_starts", "axis", "ext")

    def __init__(self, first: Access, axis: int):
        Access.__init__(self, first.tensor, first.mode, first.block, first.lo, first.hi,
                        first.uid, first.atomic, first.phase)
        self.axis = axis
        self.ext = first.hi[axis] - first.lo[axis]
        self._grown = array("q", (first.lo[axis],))  # starts added since `starts` was read
        self._starts = np.empty(0, np.int64)

    def grow(self, lo: tuple, hi: tuple) -> bool:
        """Add the row [lo, hi) when it is this access's kind of row."""
        ax = self.axis
        if len(lo) != len(self.lo) or hi[ax] - lo[ax] != self.ext:
            return False
        for i in range(len(lo)):
            if i != ax and (lo[i] != self.lo[i] or hi[i] != self.hi[i]):
                return False
        self._grown.append(lo[ax])
        if lo[ax] < self.lo[ax]:
            self.lo = self.lo[:ax] + (lo[ax],) + self.lo[ax + 1:]
        if hi[ax] > self.hi[ax]:
            self.hi = self.hi[:ax] + (hi[ax],) + self.hi[ax + 1:]
        return True

    @property
    def starts(self) -> np.ndarray:
        if len(self._grown):
            grown = np.frombuffer(self._grown, np.int64)
            self._starts = np.unique(np.concatenate([self._starts, grown]))
            self._grown = array("q")
        return self._starts

    def boxes(self) -> Iterator[tuple[tuple, tuple]]:
        ax, ext = self.axis, self.ext
        lo, hi = self.lo, self.hi
        for s in self.starts.tolist():
            yield lo[:ax] + (s,) + lo[ax + 1:], hi[:ax] + (s + ext,) + hi[ax + 1:]

    def to_dict(self) -> dict:
        d = Access.to_dict(self)
        d["rows"] = {"axis": self.axis, "extent": self.ext, "starts": self.starts.tolist()}
        return d

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RowAccess):
            return NotImplemented
        return (Access.__eq__(self, other) is True and self.axis == other.axis
                and self.ext == other.ext and np.array_equal(self.starts, other.starts))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"RowAccess({self.tensor!r}, {self.mode!r}, block={self.block}, "
                f"box={self.ranges}, {len(self.starts)} rows along axis {self.axis})")


def rows_meet(starts: np.ndarray, ext: int, lo: int, hi: int) -> bool:
    """Does a row [s, s + ext) for some s in sorted `starts` overlap [lo, hi)?"""
    return int(np.searchsorted(starts, hi, "left")) > int(np.searchsorted(starts, lo - ext,
                                                                            "right"))


def rows_inside(starts: np.ndarray, ext: int, lo: int, hi: int) -> np.ndarray:
    """Mask of the rows lying inside [lo, hi)."""
    return (starts >= lo) & (starts + ext <= hi)


__all__ = ["Access", "RowAccess", "rows_inside", "rows_meet"]
