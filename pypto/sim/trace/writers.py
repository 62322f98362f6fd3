"""The last writers of one global buffer, kept as the writes that made them until read.

Every traced write sets the write event (task, block, source site) of the elements it
wrote in the buffer's last-writer table (`Trace.writers`). Most runs never read those
tables (the golden harness reads them only to diagnose a failing output), and keeping
them as they go cost more than anything else a traced run does on some kernels: a
table is 4 bytes per element of its buffer, and a decode kernel writing a few rows of a
256 MiB KV cache per step touched (and the kernel zeroed) a fresh page for every row -
2.8 of qwen3 decode's 5.2 CPU seconds. So a `WriteLog` keeps the writes in order, as
numbers (a box, or a strided run of elements, and the event's task, block and site) and
applies them to the table when something reads it; a buffer that dies unread never has
one. The table is the same: the same writes applied in the same order. Past `LIMIT`
pending writes the log applies what it holds, so its memory stays bounded.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


class WriteLog:
    """The writes of one buffer, applied to its last-writer table when it is read.

    `pending` holds, in order: (task, block, site, lo, hi) for a box, (task, block, site,
    start, strides, extent) for a strided window (flat start and strides in elements of
    the buffer), or an object with `apply(table, event)` (a batched run's writes)."""

    __slots__ = ("_table", "pending", "shape", "trace")

    LIMIT = 1 << 14

    def __init__(self, shape: tuple, trace: Any):
        self.shape = shape
        self.trace = trace  # its `write_event` numbers (task, block, site)
        self.pending: list = []
        self._table: np.ndarray | None = None

    def table(self) -> np.ndarray:
        """The buffer's table: per element, the write event that wrote it last (0: none)."""
        t = self._table
        if t is None:
            # (np.zeros maps lazily-zeroed pages: only the pages written cost memory)
            t = self._table = np.zeros(self.shape, dtype=np.int32)
        if self.pending:
            pending, self.pending = self.pending, []
            apply_writes(t, pending, self.trace.write_event)
        return t


def apply_writes(t: np.ndarray, pending: list, event: Callable[[int, int, int], int]) -> None:
    """Apply the logged writes `pending` (see `WriteLog`) to the table `t` in order."""
    flat = None
    for w in pending:
        if type(w) is not tuple:
            w.apply(t, event)
            continue
        ev = event(w[0], w[1], w[2])
        if len(w) == 5:
            t[tuple(map(slice, w[3], w[4]))] = ev
        else:
            if flat is None:
                flat = t.reshape(-1)
            isz = t.itemsize
            np.lib.stride_tricks.as_strided(
                flat[w[3]:], shape=w[5], strides=tuple(s * isz for s in w[4]))[...] = ev


class LastWriter:
    """Per element of one global tensor: the task, block and source site that wrote it last.

    `task` / `block` / `site` are int32 arrays of the tensor's shape (-1: never written by
    a task, i.e. uploaded data or residue; task -2: written by orchestration code)."""

    def __init__(self, tensor: str, events: np.ndarray | WriteLog | None, shape: tuple,
                 trace: Any):
        self.tensor = tensor
        # the table, or the buffer's writes that make it (applied when first read)
        self._events = events
        self._shape = shape
        self.trace = trace
        self._cache: dict = {}

    @property
    def events(self) -> np.ndarray:
        """Per element: the id of the write event (`Trace.write_events`) that wrote it."""
        e = self._events
        if isinstance(e, np.ndarray):
            return e
        # A tensor no task wrote shares one read-only zero: a table of its own would cost 4
        # bytes per element of address space (which a capped run counts even while the
        # pages are untouched) for every input weight of a large model.
        t = e.table() if isinstance(e, WriteLog) else np.broadcast_to(np.int32(0), self._shape)
        self._events = t
        return t

    @events.setter
    def events(self, events: np.ndarray) -> None:
        self._events = events
        self._cache.clear()

    def writable_events(self) -> np.ndarray:
        """`events` as an array of its own, for a writer recorded after the run."""
        if not self.events.flags.writeable:
            self.events = np.zeros(self.events.shape, np.int32)
        return self.events

    def _table(self, i: int) -> np.ndarray:
        a = self._cache.get(i)
        if a is None:
            events = self.events  # (first: applying the writes numbers their events)
            table = np.asarray([e[i] for e in self.trace.write_events], dtype=np.int32)
            a = self._cache[i] = table[events]
        return a

    @property
    def task(self) -> np.ndarray:
        return self._table(0)

    def never_written(self) -> np.ndarray:
        """Per element: no task wrote it (`task == -1`), without making and keeping the
        task table (4 bytes per element: a diagnosis of a large output asks only this)."""
        if 0 in self._cache:
            return self._cache[0] == -1
        events = self.events  # (first: applying the writes numbers their events)
        none = [i for i, e in enumerate(self.trace.write_events) if e[0] == -1]
        if none == [0]:
            return events == 0
        return np.isin(events, np.asarray(none, dtype=events.dtype))

    @property
    def block(self) -> np.ndarray:
        return self._table(1)

    @property
    def site(self) -> np.ndarray:
        return self._table(2)

    def blame(self, index: int | Sequence[int]) -> dict:
        """Who wrote element `index` last: task id, name, block, source line."""
        idx = tuple(int(i) for i in np.atleast_1d(index))
        t, blk, site = self.trace.write_events[int(self.events[idx])]
        rec = self.trace.task(t) if t >= 0 else None
        return {"index": idx, "task": t, "name": rec.name if rec else
                ("orchestration" if t == -2 else "never written"),
                "block": blk,
                "source": str(self.trace.sites[site][0]) if site >= 0 else None,
                "op": self.trace.sites[site][1] if site >= 0 else None}

    def blame_mask(self, mask: np.ndarray) -> list:
        """Group the elements where `mask` is true by (task, block, site), largest first."""
        mask = np.asarray(mask, dtype=bool)
        if not mask.any():
            return []
        ids, counts = np.unique(self.events[mask], return_counts=True)
        merged: dict = {}
        for i, c in zip(ids.tolist(), counts.tolist()):
            key = self.trace.write_events[i]
            merged[key] = merged.get(key, 0) + c
        out = []
        for (t, b, s), c in sorted(merged.items(), key=lambda r: -r[1]):
            rec = self.trace.task(t) if t >= 0 else None
            out.append({"task": t, "name": rec.name if rec else
                        ("orchestration" if t == -2 else "never written"),
                        "block": b, "elements": c,
                        "source": str(self.trace.sites[s][0]) if s >= 0 else None})
        return out


__all__ = ["LastWriter", "WriteLog", "apply_writes"]
