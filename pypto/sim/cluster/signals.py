"""Signals between ranks: `pld.system.notify`, `wait` and `defer_wait` on one rank, and
the deadlock report when no rank can go on.

A signal is an integer cell of a window. `notify` changes the cell on the peer (an
atomic add, or a plain store), `wait` blocks this rank - and only it - until its own
cell compares to the expected value, `defer_wait` lets the running task finish and
holds back what depends on its TaskId until the cell does.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from pypto.errors import SimulationError
from pypto.ir.distributed import NotifyOp, WaitCmp
from pypto.ir.span import Span
from pypto.sim.cluster.windows import Located, check_box

if TYPE_CHECKING:
    from pypto.sim.cluster.world import World


@dataclass
class Wait:
    """A wait of one rank: where it is, the cell, and what it waits for."""

    rank: int
    span: Span | None
    window: str
    indices: tuple
    expected: int
    cmp: WaitCmp
    cell: np.ndarray  # a 0-d view of the cell (reads its current value)
    kind: str = "pld.system.wait"
    key: tuple = ()  # the cell's identity for the clocks

    def ready(self) -> bool:
        v = int(self.cell[()])
        return v >= self.expected if self.cmp is WaitCmp.Ge else v == self.expected

    @property
    def current(self) -> int:
        return int(self.cell[()])

    def text(self) -> str:
        at = f"{self.span.file}:{self.span.line}" if self.span is not None and \
            self.span.known else "?"
        op = ">=" if self.cmp is WaitCmp.Ge else "=="
        cell = f"{self.window}[{', '.join(map(str, self.indices))}]"
        return (f"rank {self.rank}: {self.kind} at {at} on {cell} (its own window) "
                f"waits for {op} {self.expected}; the cell holds {self.current}")


class DeadlockError(SimulationError):
    """Every rank that has not finished waits for a signal no running rank will send."""

    code = "S020"

    def __init__(self, waits: dict[int, Wait], finished: set[int], world_size: int):
        first = waits[min(waits)]
        lines = [waits[r].text() if r in waits else f"rank {r}: finished"
                 for r in range(world_size)]
        hint = ("every notify a wait counts on must happen: check the peer each "
                "pld.system.notify addresses, the conditions around it, and the expected "
                "values (a credit counter only grows: wait with pld.WaitCmp.Ge)")
        if world_size == 1:
            hint = ("the run has one rank: give the devices, e.g. run_jit(..., compile_cfg="
                    "dict(distributed_config=DistributedConfig(device_ids=[0, 1]))) or "
                    "config=SimConfig(device_ids=(0, 1))")
        super().__init__("deadlock: no rank can go on; " + "; ".join(lines), first.span,
                         hint, note="\n".join(lines))
        self.waits = waits
        self.finished = finished
        self.world_size = world_size
        #: the ranks' conversation up to the deadlock (`ClusterResult.events`), so the
        #: workbench can draw where each rank got stuck
        self.events: list = []


class Signals:
    """The signal ops of one rank (a part of its `RankComm`)."""

    def __init__(self, world: World, rank: int, deferred: dict[int, list[Wait]]):
        self.world = world
        self.rank = rank
        self.deferred = deferred  # task id -> its deferred conditions

    def _cell(self, ctx: Any, sig: Any, offsets: Any, peer: int, what: str
              ) -> tuple[Located, np.ndarray, tuple]:
        at = self.world.windows.locate(sig)
        if at is None:
            raise ctx.fault(f"{what} needs a window (pld.window); this tensor is not one",
                            ctx.span)
        idx = tuple(int(i) for i in offsets)
        why = check_box(idx, tuple(i + 1 for i in idx), sig.shape) if len(idx) == sig.ndim \
            else f"{len(idx)} indices for a rank-{sig.ndim} signal"
        if why is not None:
            raise ctx.fault(f"{what} on rank {self.rank} addresses cell {list(idx)} of the "
                            f"window '{at.buffer.name}' of rank {peer}, outside the "
                            f"{list(sig.shape)} signal ({why})", ctx.span,
                            tensor=at.buffer.name, indices=list(idx))
        view = self.world.peer_view(ctx, sig, at, peer, what)
        return at, view[idx + (Ellipsis,)], idx

    def notify(self, ctx: Any, target: Any, peer: Any, offsets: Any, value: Any,
               op: Any) -> None:
        peer = int(peer)
        at, cell, idx = self._cell(ctx, target, offsets, peer, "pld.system.notify")
        v = int(value)
        if NotifyOp(int(op)) is NotifyOp.AtomicAdd:
            cell[()] = np.asarray(int(cell[()]) + v).astype(cell.dtype, casting="unsafe")
        else:
            cell[()] = np.asarray(v).astype(cell.dtype, casting="unsafe")
        self.world.windows.mark_written(target, at, peer, idx, tuple(i + 1 for i in idx),
                                        self.rank)
        key = (at.buffer.index, peer, at.offset, idx)
        self.world.clocks.release(self.rank, key)
        self.world.event(ctx, self.rank, "notify", peer=peer, window=at.buffer.name,
                         indices=idx, value=v, op=NotifyOp(int(op)).name, after=int(cell[()]))

    def _wait_for(self, ctx: Any, signal: Any, offsets: Any, expected: Any, cmp: Any,
                  kind: str) -> tuple[Wait, tuple]:
        at, cell, idx = self._cell(ctx, signal, offsets, self.rank, kind)
        key = (at.buffer.index, self.rank, at.offset, idx)
        w = Wait(self.rank, ctx.span, at.buffer.name, idx, int(expected), WaitCmp(int(cmp)),
                 cell, kind, key)
        return w, key

    def wait(self, ctx: Any, signal: Any, offsets: Any, expected: Any, cmp: Any) -> None:
        w, key = self._wait_for(ctx, signal, offsets, expected, cmp, "pld.system.wait")
        blocked = not w.ready()
        if blocked:
            self.world.event(ctx, self.rank, "wait", window=w.window, indices=w.indices,
                             value=w.expected, after=w.current)
            self.world.scheduler.block(w.ready, w)
        self.world.clocks.acquire(self.rank, key)
        self.world.event(ctx, self.rank, "wait_done", window=w.window, indices=w.indices,
                         value=w.expected, after=w.current, blocked=blocked)

    def defer_wait(self, ctx: Any, signal: Any, offsets: Any, expected: Any, cmp: Any
                   ) -> None:
        w, _ = self._wait_for(ctx, signal, offsets, expected, cmp, "pld.system.defer_wait")
        self.deferred.setdefault(int(ctx.task_id), []).append(w)
        self.world.event(ctx, self.rank, "defer_wait", window=w.window, indices=w.indices,
                         value=w.expected, after=w.current)

    def complete(self, task_ids: Any = None) -> None:
        """The deferred conditions of `task_ids` (all when None) hold before going on: a
        task depending on such a TaskId, or the end of the dispatch, waits for them."""
        ids = list(self.deferred) if task_ids is None else [t for t in task_ids
                                                              if t in self.deferred]
        for tid in ids:
            for w in self.deferred.pop(tid, ()):
                if not w.ready():
                    self.world.scheduler.block(w.ready, w)
                self.world.clocks.acquire(self.rank, w.key)


__all__ = ["DeadlockError", "Signals", "Wait"]
