"""A batched run's access log in the trace: kept compiled, expanded per task when read.

A traced batched run logs each access once for all blocks (the offsets as `Aff`s or
per-block integer arrays); the trace must then hold every block's accesses and last
writers exactly as block-by-block execution records them. The log is compiled once per
batched run (`Replay`): the offsets that vary become one integer matrix (every block's
offsets are one matrix-vector product), a window's origin is folded into its offsets,
and a view that is not a window (through a reshape) has its geometry taken once
(`view_frame`), leaving a memoised lookup per block.

Most traced runs never read a task's accesses or the last-writer tables (the golden
harness reads its tasks' costs; the accesses only for the race check, the edges, a
diagnosis), and replaying every logged access per block cost a prefill kernel more than
its batched bodies. So the replay is deferred (`BatchTrace`): per task only what must
happen in order is done then - the source sites are numbered in the order block by
block meets them, the reads of a `Stack` parameter find the array that task was passed,
offsets held in per-block arrays are read - and each task keeps its row (its block
index); its accesses are made from the compiled log when first read
(`TaskRecord.accesses`), and the run's writes become one entry in the write log of each
buffer it wrote (`WriteLog`), applied to the table when that is read. A multi-card run
(whose window accesses its communication runtime checks as they happen) replays at
once (`Replay.run`). The accesses of a predicated branch are recorded for the blocks
that took it only (`pypto.sim.batch.branch_trace`).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from operator import add, mul
from typing import Any

import numpy as np

from pypto.sim.batch.branch_trace import MaskedLog
from pypto.sim.batch.state import Aff, LoggedAccess, StackRead, lo_at
from pypto.sim.device.memory import DeviceMemory
from pypto.sim.device.views import box_at, strided_geometry, view_frame
from pypto.sim.machine.frame import TaskFrame
from pypto.sim.trace.trace import TaskRecord, Trace
from pypto.sim.trace.writers import WriteLog


class _Step:
    """One logged access, ready to be recorded for any block."""

    __slots__ = (
        "a",
        "arrays",
        "atomic",
        "buf",
        "const",
        "ext",
        "frame",
        "geom",
        "name",
        "origin",
        "parts",
        "sid",
        "site",
        "stack",
        "uid",
        "write",
    )

    def __init__(self, item: LoggedAccess, rows: list, cols: list, nb: int):
        a, buf, origin, lo, ext, write, site, rest = item
        self.a, self.buf, self.origin = a, buf, origin
        self.ext = tuple(int(e) for e in ext)
        self.write, self.site = write, site
        self.sid = site if type(site) is int else -1  # its number in the trace, once met
        self.atomic = bool(rest[0]) if rest else False
        self.frame: tuple | None = None
        self.geom: tuple | None = None
        # a Stack's own tensor: each task locates the array it was passed
        self.stack = type(a) is StackRead
        self.uid = -1 if self.stack else buf.uid
        self.name = "" if self.stack else buf.name
        self.parts: list = []
        self.const: tuple | None = None
        # offsets held in per-block arrays: read per block (`lo_at`)
        self.arrays = not self.stack and \
            any(not (type(o) is Aff or isinstance(o, (int, np.integer))) for o in lo)
        if self.stack or self.arrays:
            # (copies: a deferred row must not keep a view of some tensor alive)
            self.const = tuple(np.array(o) if isinstance(o, np.ndarray) else o for o in lo)
            if self.arrays and origin is None:
                self._view(a, buf)
            return
        # per axis: the row of the offset matrix holding it, or ("c", constant); a
        # window's origin is added in (the replay needs its box, not its offsets)
        shift = origin if origin is not None else (0,) * len(lo)
        for o, s in zip(lo, shift):
            if type(o) is Aff and any(o.d):
                d = list(o.d[:nb])
                rows.append(int(o.base) + int(s))
                cols.append(d + [0] * (nb - len(d)))
                self.parts.append(len(rows) - 1)
            else:
                self.parts.append(("c", (int(o.base) if type(o) is Aff else int(o)) + int(s)))
        if all(type(p) is tuple for p in self.parts):
            self.const = tuple(p[1] for p in self.parts)
        if origin is None:
            self._view(a, buf)

    def _view(self, a: np.ndarray, buf: Any) -> None:
        """The geometry of `a`, a view that is not a window (taken once)."""
        self.frame = f = view_frame(a, buf.array, self.ext)
        # (where a write's elements lie, for the last-writer table)
        self.geom = f[2:4] if len(f) == 6 else strided_geometry(a, buf.array)

    def box(self, vals: list, idx: tuple) -> tuple:
        """(box lo, box hi, window offsets) of a step of a known array in block `idx`
        (`vals`: the varying offsets of the block)."""
        if self.arrays:
            lo = lo_at(self.const, idx)
            if self.origin is not None:
                glo = tuple(map(add, self.origin, lo))
                return glo, tuple(map(add, glo, self.ext)), lo
        else:
            lo = self.const if self.const is not None else \
                tuple(vals[p] if type(p) is int else p[1] for p in self.parts)
        if self.origin is None:
            assert self.frame is not None
            glo, ghi = box_at(self.frame, lo)
            return glo, ghi, lo
        # the origin is folded in: these are the box's corner
        return lo, tuple(map(add, lo, self.ext)), lo


class _Branch:
    """The accesses of a predicated branch (`branch_trace.MaskedLog`)."""

    __slots__ = ("pred", "replay")

    def __init__(self, item: MaskedLog, nb: int):
        self.pred = item.pred
        self.replay = Replay(item.items, nb)


# what a deferred task row holds of one read of a `Stack` (or None: not a global
# buffer): (uid, name, box lo, box hi, window offsets, the view's write geometry or None)
_Stacked = tuple


class Replay:
    """A batched run's access log, compiled (see the module docstring)."""

    def __init__(self, items: list[LoggedAccess], nb: int):
        rows: list = []
        cols: list = []
        # (a predicated branch's accesses: replayed for the blocks that took it only)
        self.steps = [_Branch(item, nb) if type(item) is MaskedLog else
                      _Step(item, rows, cols, nb) for item in items]
        self.base = np.asarray(rows, dtype=np.int64)
        self.coef = np.asarray(cols, dtype=np.int64).reshape(len(rows), nb)
        self._unnumbered: list | None = None  # (see `_number_sites`)
        # does a task locate an array (a `Stack`'s) here
        self.stacked = any(st.replay.stacked if type(st) is _Branch else st.stack
                           for st in self.steps)

    def vals(self, idx: tuple) -> list:
        """The varying offsets of block `idx`."""
        return (self.base + self.coef @ np.asarray(idx, dtype=np.int64)).tolist() \
            if len(self.base) else []

    # -- at once (a multi-card run) -------------------------------------------------------

    def run(self, fr: TaskFrame, idx: tuple, args: list | None = None) -> None:
        """Record block `idx`'s accesses; `args`: the arrays this task was passed (for
        the reads of a `Stack` parameter, `StackRead`)."""
        vals = self.vals(idx)
        record_box = fr.record_box
        for st in self.steps:
            if type(st) is _Branch:
                if st.pred[idx]:
                    st.replay.run(fr, idx, args)
                continue
            if st.stack:
                a = _stack_array(st, args)
                buf, origin = fr.run.memory.locate(a)
                if buf is not None:
                    fr.record(a, buf, origin, lo_at(st.const, idx), st.ext, st.write,
                              st.site, st.atomic)
                continue
            glo, ghi, lo = st.box(vals, idx)
            # (the window's own offsets matter to a write through a view only)
            record_box(st.a, st.buf, st.origin, lo, st.ext, glo, ghi, st.write, st.site,
                       st.atomic, st.frame)

    # -- deferred ------------------------------------------------------------------------

    def _number_sites(self, trace: Trace, idx: tuple, args: list | None,
                      memory: DeviceMemory) -> None:
        """Number the sites of the steps block `idx` is the first to reach, in the order
        it reaches them (as the replay block after block would)."""
        todo = self._unnumbered
        if todo is None:
            todo = []
            for st, preds in self._walk_all(()):
                if st.sid >= 0:
                    continue
                if _reached(preds):  # (a branch no block takes numbers nothing)
                    todo.append((st, preds))
        keep = []
        for st, preds in todo:
            if st.sid >= 0:
                continue
            if all(p[idx] for p in preds) and (
                    type(st.a) is not StackRead or
                    memory.locate(_stack_array(st, args))[0] is not None):
                site = st.site
                st.sid = site if type(site) is int else site.of(trace)
            else:
                keep.append((st, preds))
        self._unnumbered = keep

    def _walk_all(self, preds: tuple) -> Iterator[tuple[_Step, tuple]]:
        """Every step with the predicates of the branches around it."""
        for st in self.steps:
            if type(st) is _Branch:
                yield from st.replay._walk_all(preds + (st.pred,))
            else:
                yield st, preds

    def prepare(self, trace: Trace, memory: DeviceMemory, idx: tuple, args: list | None,
                into: BatchTrace) -> list[_Stacked | None]:
        """What must be done for block `idx` now: its sites numbered, the arrays its
        `Stack` reads find (and the buffers it writes through them registered with
        `into`)."""
        self._number_sites(trace, idx, args, memory)
        gen: list = []
        if self.stacked:
            self._prepare(idx, args, memory, gen, into)
        return gen

    def _prepare(self, idx: tuple, args: list | None, memory: DeviceMemory, gen: list,
                 into: BatchTrace) -> None:
        for st in self.steps:
            if type(st) is _Branch:
                if st.replay.stacked and st.pred[idx]:
                    st.replay._prepare(idx, args, memory, gen, into)
                continue
            if not st.stack:
                continue
            a = _stack_array(st, args)
            buf, origin = memory.locate(a)
            if buf is None:
                gen.append(None)
                continue
            lo = lo_at(st.const, idx)
            geom = None
            if origin is None:
                frame = view_frame(a, buf.array, st.ext)
                glo, ghi = box_at(frame, lo)
                if st.write:
                    geom = frame[2:4] if len(frame) == 6 else strided_geometry(a, buf.array)
            else:
                glo = tuple(map(add, origin, lo))
                ghi = tuple(map(add, glo, st.ext))
            into.touches(buf)
            if st.write:
                into.writes_to(buf)
            gen.append((buf.uid, buf.name, glo, ghi, lo, geom))

    def accesses(self, idx: tuple, gen: Iterator) -> Iterator[tuple]:
        """(step, uid, name, box lo, box hi, window offsets, write geometry) of every
        access block `idx` makes, in order (`gen`: its `Stack` reads', from `prepare`)."""
        vals = self.vals(idx)
        for st in self.steps:
            if type(st) is _Branch:
                if st.pred[idx]:
                    yield from st.replay.accesses(idx, gen)
                continue
            if st.stack:
                g = next(gen)
                if g is not None:
                    yield (st, *g)
                continue
            glo, ghi, lo = st.box(vals, idx)
            yield st, st.uid, st.name, glo, ghi, lo, st.geom

    def release(self) -> None:
        """Drop the arrays the log held (the deferred rows need their numbers only)."""
        for st in self.steps:
            if type(st) is _Branch:
                st.replay.release()
            elif not st.stack:
                st.a = st.buf = None
        self._unnumbered = None


def _reached(preds: tuple) -> bool:
    """Does some block take every branch of `preds` (the predicates around a step)?"""
    if not preds:
        return True
    mask = np.broadcast_to(True, np.broadcast_shapes(*(p.shape for p in preds)))
    for p in preds:
        mask = mask & p
    return bool(mask.any())


def _stack_array(st: _Step, args: list | None) -> Any:
    assert args is not None and type(st.a) is StackRead
    return args[st.a.index]


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
            for st, preds in log._walk_all(()):
                if st.stack:  # (per block: `prepare`)
                    continue
                self.touches(st.buf)
                if st.write and _reached(preds):
                    self.writes_to(st.buf)
        assert self.memory is not None  # (not closed)
        gen = log.prepare(self.trace, self.memory, idx, args, self)
        row = (log, rec.id, idx, block, gen)
        self.rows.append(row)
        lazy = rec._lazy
        if lazy is None:
            rec._lazy = _Deferred([row])
        else:
            lazy.rows.append(row)

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


__all__ = ["BatchTrace", "Replay"]
