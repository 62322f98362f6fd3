"""Replaying a batched run's access log into the trace, block after block.

A traced batched run logs each access once for all blocks (the offsets as `Aff`s or
per-block integer arrays); the trace must then hold every block's accesses exactly as
block-by-block execution records them, so the log is replayed per block through
`TaskFrame.record_box`. A traced DeepSeek decode replays ~6,000 logged accesses for
each of 2,048 heads x 16 rows: what one access costs per block is what matters. So the
log is compiled once per batched run (`Replay`): the offsets that vary become one
integer matrix (every block's offsets are one matrix-vector product), a window's
origin is folded into its offsets, and a view that is not a window (through a reshape)
has its geometry taken once (`view_frame`), leaving a memoised lookup per block. The
accesses of a predicated branch are replayed for the blocks that took it only
(`pypto.sim.batch.branch_trace`).
"""
from __future__ import annotations

from operator import add

import numpy as np

from pypto.sim.batch.branch_trace import MaskedLog
from pypto.sim.batch.state import Aff, LoggedAccess, StackRead, lo_at
from pypto.sim.device.views import box_at, view_frame
from pypto.sim.machine.frame import TaskFrame


class _Step:
    """One logged access, ready to be recorded for any block."""

    __slots__ = (
        "a",
        "atomic",
        "buf",
        "const",
        "ext",
        "frame",
        "generic",
        "origin",
        "parts",
        "site",
        "write",
    )

    def __init__(self, item: LoggedAccess, rows: list, cols: list, nb: int):
        a, buf, origin, lo, ext, write, site, rest = item
        self.a, self.buf, self.origin = a, buf, origin
        self.ext = tuple(int(e) for e in ext)
        self.write, self.site = write, site
        self.atomic = bool(rest[0]) if rest else False
        self.frame: tuple | None = None
        self.generic = type(a) is StackRead or \
            any(not (type(o) is Aff or isinstance(o, (int, np.integer))) for o in lo)
        self.parts: list = []
        self.const: tuple | None = None
        if self.generic:  # per-block arrays, a Stack's own tensor: the plain path
            self.const = tuple(lo)
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
            self.frame = view_frame(a, buf.array, self.ext)


class _Branch:
    """The accesses of a predicated branch (`branch_trace.MaskedLog`)."""

    __slots__ = ("pred", "replay")

    def __init__(self, item: MaskedLog, nb: int):
        self.pred = item.pred
        self.replay = Replay(item.items, nb)


class Replay:
    """A batched run's access log compiled for `run` (see the module docstring)."""

    def __init__(self, items: list[LoggedAccess], nb: int):
        rows: list = []
        cols: list = []
        # (a predicated branch's accesses: replayed for the blocks that took it only)
        self.steps = [_Branch(item, nb) if type(item) is MaskedLog else
                      _Step(item, rows, cols, nb) for item in items]
        self.base = np.asarray(rows, dtype=np.int64)
        self.coef = np.asarray(cols, dtype=np.int64).reshape(len(rows), nb)

    def run(self, fr: TaskFrame, idx: tuple, args: list | None = None) -> None:
        """Record block `idx`'s accesses; `args`: the arrays this task was passed (for
        the reads of a `Stack` parameter, `StackRead`)."""
        vals = (self.base + self.coef @ np.asarray(idx, dtype=np.int64)).tolist() \
            if len(self.base) else []
        record_box = fr.record_box
        for st in self.steps:
            if type(st) is _Branch:
                if st.pred[idx]:
                    st.replay.run(fr, idx, args)
                continue
            if st.generic:
                a, buf, origin = st.a, st.buf, st.origin
                if type(a) is StackRead:
                    assert args is not None
                    a = args[a.index]
                    buf, origin = fr.run.memory.locate(a)
                    if buf is None:
                        continue
                fr.record(a, buf, origin, lo_at(st.const, idx), st.ext, st.write, st.site,
                          st.atomic)
                continue
            lo = st.const if st.const is not None else \
                tuple(vals[p] if type(p) is int else p[1] for p in st.parts)
            if st.origin is None:
                assert st.frame is not None
                glo, ghi = box_at(st.frame, lo)
            else:  # the origin is folded in: these are the box's corner
                glo = lo
                ghi = tuple(map(add, glo, st.ext))
                # (the window's own offsets matter to a write through a view only)
            record_box(st.a, st.buf, st.origin, lo, st.ext, glo, ghi, st.write, st.site,
                       st.atomic)


__all__ = ["Replay"]
