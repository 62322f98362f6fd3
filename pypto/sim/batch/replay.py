"""A batched run's access log in the trace: kept compiled, expanded per task when read.

A traced batched run logs each access once for all blocks (the offsets as `Aff`s or
per-block integer arrays); the trace must then hold every block's accesses and last
writers exactly as block-by-block execution records them. The log is compiled once per
batched run (`Replay`): the offsets that vary become one integer matrix (every block's
offsets are one matrix-vector product), a window's origin is folded into its offsets,
and a view that is not a window (through a reshape) has its geometry taken once
(`view_frame`), leaving a memoised lookup per block.

A traced run replays it when something reads what it recorded
(`pypto.sim.batch.deferred`: `accesses` per block, `prepare` for what must happen at
once); a multi-card run (whose window accesses its communication runtime checks as
they happen) replays at once (`run`). The accesses of a predicated branch are recorded
for the blocks that took it only (`pypto.sim.batch.branch_trace`).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from operator import add
from typing import Any

import numpy as np

from pypto.sim.batch.branch_trace import MaskedLog
from pypto.sim.batch.state import Aff, LoggedAccess, StackRead, lo_at
from pypto.sim.device.memory import DeviceMemory
from pypto.sim.device.views import box_at, strided_geometry, view_frame
from pypto.sim.machine.frame import TaskFrame
from pypto.sim.trace.trace import Trace


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
            for st, preds in self.walk(()):
                if st.sid >= 0:
                    continue
                if reached(preds):  # (a branch no block takes numbers nothing)
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

    def walk(self, preds: tuple = ()) -> Iterator[tuple[_Step, tuple]]:
        """Every step with the predicates of the branches around it (and `preds`)."""
        for st in self.steps:
            if type(st) is _Branch:
                yield from st.replay.walk(preds + (st.pred,))
            else:
                yield st, preds

    def prepare(self, trace: Trace, memory: DeviceMemory, idx: tuple, args: list | None,
                found: Callable[[Any, bool], None]) -> list[_Stacked | None]:
        """What must be done for block `idx` now (a deferred replay): its sites
        numbered, the arrays its `Stack` reads find (each buffer told to `found`, with
        whether it is written)."""
        self._number_sites(trace, idx, args, memory)
        gen: list = []
        if self.stacked:
            self._prepare(idx, args, memory, gen, found)
        return gen

    def _prepare(self, idx: tuple, args: list | None, memory: DeviceMemory, gen: list,
                 found: Callable[[Any, bool], None]) -> None:
        for st in self.steps:
            if type(st) is _Branch:
                if st.replay.stacked and st.pred[idx]:
                    st.replay._prepare(idx, args, memory, gen, found)
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
            found(buf, st.write)
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


def reached(preds: tuple) -> bool:
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


__all__ = ["Replay", "reached"]
