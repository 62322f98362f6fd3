"""A traced batched run's accesses and last writers, made when something reads them.

A traced batched run logs each access once for all blocks (`pypto.sim.batch.replay`
compiles the log). Most traced runs never read a task's accesses or the last-writer
tables (the golden harness reads its tasks' costs; the accesses only for the race
check, the edges, a diagnosis), and replaying every logged access per block cost a
prefill kernel more than its batched bodies. So the replay waits (`BatchTrace`): per
task only what must happen in order is done at once - the source sites are numbered in
the order block by block meets them, the reads of a `Stack` parameter find the array
that task was passed - and each task keeps its row (its block index); its accesses are
made from the compiled log when first read (`TaskRecord.accesses`), and the run's
writes become one entry in the write log of each buffer it wrote (`WriteLog`), applied
to the table when that is read: the same accesses and tables as replaying at once.
"""
from __future__ import annotations

from collections.abc import Callable
from operator import mul
from typing import Any

import numpy as np

from pypto.sim.batch.replay import Replay, reached
from pypto.sim.device.memory import DeviceMemory
from pypto.sim.trace.trace import TaskRecord, Trace
from pypto.sim.trace.writers import WriteLog


class BatchTrace:
    """The accesses and writes of one traced batched run's tasks, kept as the compiled
    logs and a row per task block: (log, task id, block index, block number, the
    boxes of its `Stack` reads). See the module docstring."""

    def __init__(self, trace: Trace, memory: DeviceMemory):
        self.trace = trace
        self.memory: DeviceMemory | None = memory
        self.rows: list[tuple] = []
        self._written: set[int] = set()
        self._touched: set[int] = set()
        self._replays: list[Replay] = []

    def add(self, log: Replay, rec: TaskRecord, idx: tuple, block: int,
            args: list | None = None) -> None:
        """Block `idx` of the batch, task `rec`'s block `block` (the run's blocks in
        order); `args`: the arrays the task was passed."""
        if all(r is not log for r in self._replays):  # (a few: a body's launches)
            self._replays.append(log)
            for st, preds in log.walk():
                if st.stack:  # (per block: `prepare`)
                    continue
                self.touches(st.buf)
                if st.write and reached(preds):
                    self.writes_to(st.buf)
        assert self.memory is not None  # (not closed)
        gen = log.prepare(self.trace, self.memory, idx, args, self._found)
        row = (log, rec.id, idx, block, gen)
        self.rows.append(row)
        lazy = rec._lazy
        if lazy is None:
            rec._lazy = _Deferred([row])
        else:
            lazy.rows.append(row)

    def _found(self, buf: Any, write: bool) -> None:
        self.touches(buf)
        if write:
            self.writes_to(buf)

    def touches(self, buf: Any) -> None:
        uid = buf.uid
        if uid not in self._touched:
            self._touched.add(uid)
            assert self.memory is not None
            self.trace.note_shapes((uid,), self.memory)

    def writes_to(self, buf: Any) -> None:
        """A block writes `buf`: the run's writes go into its write log (once)."""
        uid = buf.uid
        if uid in self._written:
            return
        self._written.add(uid)
        log = buf.writes
        if log is None:
            log = buf.writes = WriteLog(buf.array.shape, self.trace)
        log.pending.append(_BatchWrites(self, uid))
        if len(log.pending) > WriteLog.LIMIT:
            log.table()

    def close(self) -> None:
        """The run's tasks are all added: its logs keep numbers only."""
        for log in self._replays:
            log.release()
        self._replays = []
        self.memory = None  # (the trace outlives the run's memory)


class _Deferred:
    """A batched task's accesses, made from its rows when first read."""

    __slots__ = ("rows",)

    def __init__(self, rows: list):
        self.rows = rows

    def expand(self, rec: TaskRecord) -> None:
        for log, _, idx, block, gen in self.rows:
            for st, uid, name, glo, ghi, _, _ in log.accesses(idx, iter(gen)):
                rec.add_access(name, uid, st.write, block, st.atomic, 0, glo, ghi)
        rec._merge = None


class _BatchWrites:
    """A batched run's writes of one buffer, for its `WriteLog`."""

    __slots__ = ("batch", "uid")

    def __init__(self, batch: BatchTrace, uid: int):
        self.batch = batch
        self.uid = uid

    def apply(self, t: np.ndarray, event: Callable[[int, int, int], int]) -> None:
        uid = self.uid
        flat = None
        for log, tid, idx, block, gen in self.batch.rows:
            for st, u, _, glo, ghi, lo, geom in log.accesses(idx, iter(gen)):
                if not st.write or u != uid:
                    continue
                ev = event(tid, block, st.sid)
                if geom is None:
                    t[tuple(map(slice, glo, ghi))] = ev
                else:
                    if flat is None:
                        flat = t.reshape(-1)
                    first, strides = geom
                    isz = t.itemsize
                    np.lib.stride_tricks.as_strided(
                        flat[first + sum(map(mul, lo, strides)):], shape=st.ext,
                        strides=tuple(s * isz for s in strides))[...] = ev


__all__ = ["BatchTrace"]
