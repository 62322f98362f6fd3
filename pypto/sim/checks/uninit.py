"""The `uninit` check: reads of memory nothing wrote.

Fresh device memory holds residue (NaN / garbage): the elements of a `pl.Out`
parameter, of a `pl.create_tensor` without `init_value=` and of a
`pl.create_tile`. With `checks=(..., "uninit")` the simulator keeps one "written"
bitmap per such buffer (and only for those: uploaded inputs, `InOut` parameters,
initialised tensors and values computed by ops are written by definition), sets
it on every write (store / assemble / `pl.write` / an op writing a parameter in
place) and tests it on every read (a window loaded in a region, `pl.read`, the
source of a store / assemble, the target of an atomic-add store, an array operand
of a vector / cube / data-movement op, over its valid region). A read that touches
an unwritten element is reported with the reading task, block and source line and
the range of unwritten elements read, so the culprit is named rather than found
later as NaN in an output.

Strict runs (the default) raise `UninitializedReadError` at the first such read;
with `strict=False` each (buffer, reading site) is reported once in
`SimResult.uninit_reads` and the run goes on.

The interpreter calls this module at three places only (all compiled in only when the
check is on, `Settings.check_uninit`): the memory intrinsics
(`pypto.sim.engine.intrinsics`), the allocation intrinsics and `FnCompiler.call` for
every other op of the vector / cube / data-movement units.
Writes an op makes into a parameter it declares (`writes=`, e.g. scatter) mark
the whole parameter written: which elements a data-dependent scatter touches is
not known, and a missed report is better than a false one.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from pypto.errors import SimulationError
from pypto.ir.span import Span
from pypto.sim.device.memory import DeviceMemory
from pypto.sim.device.views import root_of, strided_like
from pypto.sim.faults import fault, region_name
from pypto.sim.trace.trace import TaskRecord


class UninitializedReadError(SimulationError):
    """A kernel read device memory that nothing had written (`checks=("uninit",)`)."""

    code = "S010"

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None,
                 note: str | None = None, *, read: UninitRead | None = None, **kw: Any):
        super().__init__(message, span, hint, note, **kw)
        self.read = read


@dataclass
class UninitRead:
    """One reading site that saw unwritten elements of one buffer."""

    tensor: str  # the buffer's name (a tile's variable name for on-chip memory)
    memory: str  # "pl.Out", "pl.create_tensor", "pl.create_tile"
    op: str  # the reading op
    task: int  # -1: orchestration
    region: str  # the reading task's name_hint ("orchestration" outside tasks)
    block: int | None
    source: str  # file:line:col of the reading op
    line: int
    ranges: list  # [(lo, hi)] per axis of the buffer: bounding box of the unwritten read
    elements: int  # unwritten elements read (first occurrence)
    count: int = 1  # how many reads at this site hit unwritten elements
    gm: bool = True  # a global tensor (False: an on-chip tile)

    @property
    def index_text(self) -> str:
        return "[" + ", ".join(f"{lo}:{hi}" for lo, hi in self.ranges) + "]"

    def __str__(self) -> str:
        blk = f" block {self.block}" if self.block is not None else ""
        return (f"{self.op} of '{self.tensor}'{self.index_text} ({self.memory}) reads "
                f"{self.elements} unwritten element(s) in task {self.task} "
                f"'{self.region}'{blk} at {self.source}"
                + (f" ({self.count} times)" if self.count > 1 else ""))

    def to_dict(self) -> dict:
        return {"tensor": self.tensor, "memory": self.memory, "op": self.op,
                "task": self.task, "region": self.region, "block": self.block,
                "source": self.source, "ranges": [list(r) for r in self.ranges],
                "elements": self.elements, "count": self.count, "gm": self.gm}


class Reader(Protocol):
    """Where a read happens (a task frame): the task's record, its region, the block."""

    rec: TaskRecord | None
    region: str | None
    block: int | None
    task_id: int


class UninitTracker:
    """One run's "written" bitmaps of fresh buffers; see the module docstring."""

    def __init__(self, memory: DeviceMemory, strict: bool = True):
        self.memory = memory
        self.strict = strict
        self.reads: list[UninitRead] = []
        self._sites: dict = {}
        self._gm: dict[int, tuple] = {}  # buffer uid -> (bitmap, memory kind)
        self._tiles: dict[int, tuple] = {}  # id(root) -> (weakref, bitmap, name, memory)

    # -- registration ---------------------------------------------------------------

    def fresh(self, arr: np.ndarray, name: str, memory: str) -> None:
        """`arr` was just allocated and holds residue (create_tensor / create_tile)."""
        root = root_of(arr)
        bm = np.zeros(root.shape, bool)
        buf = self.memory.buffers.get(id(root))
        if buf is not None:
            self._gm[buf.uid] = (bm, memory)
            return
        if len(self._tiles) > 4096:  # drop tiles that died with their task
            self._tiles = {k: v for k, v in self._tiles.items() if v[0]() is not None}
        self._tiles[id(root)] = (weakref.ref(root), bm, name, memory)

    def _entry(self, a: Any) -> tuple | None:
        """(bitmap laid over `a`, buffer name, memory kind, is GM) or None if untracked."""
        if not isinstance(a, np.ndarray):
            return None
        root = root_of(a)
        buf = self.memory.buffers.get(id(root))
        if buf is not None:
            e = self._gm.get(buf.uid)
            if e is None:
                if buf.direction != "Out" or buf.kind != "param":
                    return None
                e = self._gm[buf.uid] = (np.zeros(root.shape, bool), "pl.Out")
            bm, memory, name, gm = e[0], e[1], buf.name, True
        else:
            t = self._tiles.get(id(root))
            if t is None or t[0]() is not root:
                return None
            bm, name, memory, gm = t[1], t[2], t[3], False
        view = _over(bm, a, root)
        if view is None:
            return None
        return view, name, memory, gm, bm

    # -- events ---------------------------------------------------------------------

    def wrote(self, a: Any, box: tuple | None = None) -> None:
        """Elements `box` (slices, or all of `a`) of `a` were written."""
        e = self._entry(a)
        if e is None:
            return
        if box is None:
            e[0][...] = True
        else:
            e[0][box] = True

    def read(self, at: Reader, a: Any, box: tuple | None, span: Span | None, op: str,
             name: str | None = None) -> None:
        """Elements `box` (slices, or all of `a`) of `a` are about to be read in `at`."""
        e = self._entry(a)
        if e is None:
            return
        view, bname, memory, gm, bm = e
        sub = view if box is None else view[box]
        if sub.size == 0 or sub.all():
            return
        self._report(at, a, view, box, bm, bname if gm else (name or bname), memory, gm, span,
                     op)

    def read_valid(self, at: Reader, a: Any, span: Span | None, op: str,
                   name: str | None = None) -> None:
        """An operand of a compute op: its valid region is read."""
        valid = getattr(a, "valid", None)
        box = None if valid is None else tuple(slice(0, int(v)) for v in valid)
        self.read(at, a, box, span, op, name)

    # -- reports --------------------------------------------------------------------

    def _report(self, at: Reader, a: np.ndarray, view: np.ndarray, box: tuple | None,
                bm: np.ndarray, name: str, memory: str, gm: bool, span: Span | None,
                op: str) -> None:
        # the unwritten elements read, in the buffer's own coordinates
        probe = np.zeros(bm.shape, bool)
        pview = _over(probe, a, root_of(a))
        if pview is None:
            return
        (pview if box is None else pview[box])[...] = True
        miss = probe & ~bm
        idx = np.nonzero(miss)
        ranges = [(int(i.min()), int(i.max()) + 1) for i in idx] if miss.ndim else []
        count = int(miss.sum())
        # (the task's own record in a traced run; else its frame names it)
        rec = at.rec
        region = rec.name if rec is not None else region_name(at.region)
        tid = rec.id if rec is not None else at.task_id
        key = (name, gm, span, op)
        if not self.strict and key in self._sites:
            self._sites[key].count += 1
            return
        r = UninitRead(name, memory, op, tid, region, at.block, str(span) if span else
                       "<unknown>", getattr(span, "line", 0) or 0, ranges, count, gm=gm)
        if self.strict:
            what = "pl.Out buffer" if memory == "pl.Out" else (
                "tensor from pl.create_tensor (no init_value)" if memory == "pl.create_tensor"
                else "tile from pl.create_tile")
            raise_err = fault(
                f"uninitialized read: {op} of '{name}'{r.index_text} reads {count} element(s) "
                f"nothing has written ({what}; its contents are allocator residue)", span,
                region=at.region, block=at.block, tensor=name, indices=r.index_text,
                hint=("write these elements before reading them" + (
                    ", or declare the parameter pl.InOut if the kernel updates the caller's "
                    "data" if memory == "pl.Out" else
                    " (pl.full / an assemble), or give pl.create_tensor an init_value"
                    if memory != "pl.Out" else "")),
                note=f"checks=('uninit',): reading task {tid} '{region}'"
                     + (f" block {at.block}" if at.block is not None else ""))
            raise UninitializedReadError(raise_err.message, raise_err.span, raise_err.hint,
                                         raise_err.note, read=r, tensor=name,
                                         region=raise_err.region, block=raise_err.block,
                                         indices=r.index_text)
        self._sites[key] = r
        self.reads.append(r)


def _over(bm: np.ndarray, a: np.ndarray, root: np.ndarray) -> np.ndarray | None:
    """`bm` (shaped like `root`) viewed over the elements of `a`, a view of `root`."""
    if a is root:
        return bm
    if a.dtype.itemsize != root.dtype.itemsize:
        return None  # a reinterpreting view: not followed
    if a.shape == root.shape and a.strides == root.strides and \
            a.__array_interface__["data"][0] == root.__array_interface__["data"][0]:
        return bm
    try:
        return strided_like(bm, a, root)
    except (ValueError, TypeError):
        return None


__all__ = ["UninitRead", "UninitTracker", "UninitializedReadError"]
