"""Task frames: the state of one task - or one block of it - while it runs.

The runtime makes a frame for every task it launches (and for every block of an SPMD
task that runs interleaved), so nothing is saved and restored around a launch: the
caller's frame is left as it was. Compiled code finds its frame in its environment
(`env[FRAME]`, `pypto.sim.engine.values`). A frame is also the execution context that
op impls with `wants_ctx=True` receive as `ctx=`: `in_region`, `block_idx`,
`block_num`, `subblock_idx`, `split_mode`, `platform`, `task_id`, `span`,
`new_task_id()`, `barrier()`, `sync` (the core's flags and cross-core events),
`lane_slots` (what the lanes of a pl.split_aiv region share), `group` (the core group
the core is a member of: its pipes).
"""
from __future__ import annotations

from operator import add, mul
from typing import Any

import numpy as np

from pypto.errors import SimulationError
from pypto.ir.span import Span
from pypto.platform import Platform
from pypto.sim.device.memory import GlobalBuffer
from pypto.sim.device.views import box_at, strided_geometry, view_frame
from pypto.sim.faults import fault
from pypto.sim.machine.interleave import Interleaver
from pypto.sim.machine.run import Run
from pypto.sim.machine.sync import CoreSync
from pypto.sim.trace.access import Access
from pypto.sim.trace.costs import Costs
from pypto.sim.trace.trace import RAW_OPEN, TaskRecord
from pypto.sim.trace.writers import WriteLog


class TaskFrame:
    """One task (or one block of it) while it runs; see the module docstring."""

    __slots__ = (
        "_sync",
        "block",
        "block_num",
        "costs",
        "group",
        "in_region",
        "interleaver",
        "lane_slots",
        "rec",
        "region",
        "run",
        "span",
        "split_mode",
        "subblock_idx",
        "task_id",
        "views",
        "work_mult",
    )

    # a frame running all blocks of a batch at once (`pypto.sim.batch.frame.BatchFrame`):
    # what a check finds there is found again, per block, by the block-by-block rerun
    batched = False

    def __init__(self, run: Run, rec: TaskRecord | None = None, region: str | None = None,
                 block: int | None = None, block_num: int = 1, task_id: int = -1,
                 in_region: bool = False, work_mult: int = 1):
        self.run = run
        self.rec = rec  # the task's trace record (traced runs), else None
        self.costs: Costs = {}  # the current block's cycles per pipe (traced runs)
        self.region = region  # the launch label, "'name' (file:line)"; None: orchestration
        self.block = block  # the block index inside a region, else None
        self.block_num = block_num
        self.subblock_idx = 0
        self.split_mode: str | None = None  # inside a pl.split_aiv region: its mode's name
        self._sync: CoreSync | None = None  # made on first use (most kernels never sync)
        self.group: Any = None  # the CoreGroup this core is a member of (Group functions)
        # inside a pl.split_aiv region: what its lanes share (pl.aic_gather's buffers)
        self.lane_slots: dict = {}
        self.task_id = task_id
        self.in_region = in_region
        self.interleaver: Interleaver | None = None  # blocks meeting at pl.system.syncall
        self.work_mult = work_mult  # a batched run counts loop work once per block
        self.span: Span | None = None  # the op call a wants_ctx impl runs for
        # traced runs: (id(view), window shape) -> (view, its `view_frame`), for the
        # accesses through views that are not windows (made on first use)
        self.views: dict | None = None

    # -- the execution context of op impls ------------------------------------------------

    @property
    def block_idx(self) -> int:
        return self.block or 0

    @property
    def platform(self) -> Platform:
        return self.run.settings.platform

    def new_task_id(self) -> int:
        return self.run.dummy_task((), self.span)

    def barrier(self) -> None:
        if self.interleaver is not None:
            self.interleaver.barrier(self.span)

    @property
    def sync(self) -> CoreSync:
        """This core's pipe flags and cross-core events (fresh for every block)."""
        s = self._sync
        if s is None:
            s = self._sync = CoreSync()
        return s

    # -- blocks ------------------------------------------------------------------------------

    def start_block(self, b: int) -> None:
        """Block `b` of the task starts (sequentially, after the previous one)."""
        self.block = b
        self._sync = None
        if self.rec is not None:
            self.costs = dict.fromkeys(self.rec.cycles, 0.0)

    def close_block(self) -> None:
        """The current block's costs go into the task's record."""
        rec = self.rec
        if rec is None:
            return
        bc = self.costs
        rec.block_cycles.append(max(bc.values()) if bc else 0.0)
        cyc = rec.cycles
        for k, v in bc.items():
            cyc[k] += v

    def for_block(self, b: int) -> TaskFrame:
        """A frame of its own for block `b` (blocks that run interleaved)."""
        f = TaskFrame(self.run, self.rec, self.region, b, self.block_num, self.task_id,
                      self.in_region, self.work_mult)
        if self.rec is not None:
            f.costs = dict.fromkeys(self.rec.cycles, 0.0)
        return f

    # -- faults and work ---------------------------------------------------------------------

    def fault(self, message: str, span: Span | None = None, *, tensor: str | None = None,
              indices: Any = None, hint: str | None = None, note: str | None = None
              ) -> SimulationError:
        """The error of a fault here: it names the tensor, the region and the block."""
        return fault(message, span, region=self.region, block=self.block, tensor=tensor,
                     indices=indices, hint=hint, note=note)

    def over_work(self, span: Span | None, what: str, more: int = 0) -> SimulationError:
        """The fault of a run whose work passes `SimConfig.max_work` because of `what`
        (`more`: the work it would add, known before it runs; 0: what it just added)."""
        limit = self.run.settings.max_work
        work = self.run.work
        told = f"{what} would take" if more else f"{what} takes"
        return self.fault(
            f"{told} the simulated work past its limit of {limit:,} loop iterations and "
            f"blocks ({work + more:,}" + (f", {work:,} done before it" if more else "") +
            ")", span,
            hint="this is almost certainly a wrong loop bound or block count; shrink the "
                 "problem for simulation or raise SimConfig.max_work")

    # -- access recording (traced runs) ----------------------------------------------------

    def record(self, a: np.ndarray, buf: GlobalBuffer, origin: tuple | None, lo: tuple,
               ext: tuple, write: bool, site: Any, atomic: bool = False) -> None:
        """A traced access of the window [lo, lo + ext) of `a`, a view of `buf` at
        `origin` (None: a view that is not a window, e.g. through a reshape); `site` the
        op's `SiteId` (or its number in the trace)."""
        if origin is None:
            # its box in the buffer, exact when it is one (else the enclosing box), so
            # accesses of disjoint parts through a reshape stay disjoint (the race check);
            # a task takes a view's geometry once per view and window shape
            views = self.views
            if views is None:
                views = self.views = {} if self.rec is not None else None
            key = (id(a), ext)
            got = views.get(key) if views is not None else None
            if got is None or got[0] is not a:
                got = (a, view_frame(a, buf.array, ext))
                if views is not None:
                    if len(views) >= 256:  # (it holds the views: a loop may make many)
                        views.clear()
                    views[key] = got
            frame = got[1]
            glo, ghi = box_at(frame, lo)
            self.record_box(a, buf, None, lo, ext, glo, ghi, write, site, atomic, frame)
            return
        glo = tuple(map(add, origin, lo))
        self.record_box(a, buf, origin, lo, ext, glo, tuple(map(add, glo, ext)), write, site,
                        atomic)

    def record_box(self, a: np.ndarray, buf: GlobalBuffer, origin: tuple | None, lo: tuple,
                   ext: tuple, glo: tuple, ghi: tuple, write: bool, site: Any,
                   atomic: bool = False, frame: tuple | None = None) -> None:
        """`record` of an access whose box [glo, ghi) in `buf` is known (a batched run's
        replay computes the boxes of a whole log at once); `frame`: the `view_frame` of
        `a` when it is not a window (origin None), if known."""
        run = self.run
        trace = run.trace
        assert trace is not None
        if type(site) is not int:
            # (numbered at its first recorded access: a batched run numbers its sites in
            # the order block by block meets them)
            memo = site.memo
            site = memo[1] if memo is not None and memo[0] is trace else site.of(trace)
        blk = -1 if self.block is None else self.block
        rec = self.rec
        if rec is not None:
            # (merged when read: `TaskRecord.accesses`)
            raw = rec._raw
            raw.append((buf.name, buf.uid, write, blk, atomic,
                        self.interleaver.phase if self.interleaver is not None else 0,
                        glo, ghi))
            if len(raw) > RAW_OPEN:
                rec.merge_raw()
        else:
            trace.orchestration_accesses.append(Access(buf.name, "W" if write else "R", blk,
                                                       glo, ghi, buf.uid))
        if buf.kind == "window" and run.comm is not None:  # pypto.sim.cluster
            run.comm.local_access(self, buf, glo, ghi, write, atomic,
                                  trace.sites[site] if site >= 0 else None)
        if write:
            # the last writers: logged, made into the table when read (`WriteLog`)
            log = buf.writes
            if log is None:
                log = buf.writes = WriteLog(buf.array.shape, trace)
            tid = rec.id if rec is not None else -2
            if origin is not None:
                log.pending.append((tid, blk, site, glo, ghi))
            else:  # the window's elements: a strided run of the buffer's
                first, strides = frame[2:4] if frame is not None and len(frame) == 6 else \
                    strided_geometry(a, buf.array)
                log.pending.append((tid, blk, site, first + sum(map(mul, lo, strides)),
                                    strides, ext))
            if len(log.pending) > WriteLog.LIMIT:
                log.table()


__all__ = ["TaskFrame"]
