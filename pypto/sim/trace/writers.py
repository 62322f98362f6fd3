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

from collections.abc import Callable
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


__all__ = ["WriteLog", "apply_writes"]
