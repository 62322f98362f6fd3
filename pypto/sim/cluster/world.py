"""A multi-card run: the host function, then the ranks it dispatched, stepped together.

The host function (`@pl.jit.host`) runs first, in a `Run` of its own: it allocates the
window buffers (zeroed on every rank), views them, and each `chip(..., device=r)`
queues a dispatch on rank `r`. When the host function returns, the ranks run
concurrently - one thread each, one at a time (`RankScheduler`) - each in a `Run` of
its own (its device memory, trace and task ids) made from the same compiled program:
rank `r` runs its dispatches in the order the host made them, a dispatch being a call
of the per-device function as an entry (its `pl.Out` arguments fresh, its `pl.InOut`
ones uploaded, copied back when it returns). Then the host's outputs go back to the
caller.
"""
from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np

from pypto.errors import SimulationError
from pypto.ir.span import Span
from pypto.sim.cluster.happens import AccessLog, Clocks, WindowAccess
from pypto.sim.cluster.rank import RankComm
from pypto.sim.cluster.scheduler import Blocked, RankScheduler
from pypto.sim.cluster.signals import DeadlockError, Wait
from pypto.sim.cluster.windows import Located, WindowError, Windows, WindowView
from pypto.sim.machine.frame import TaskFrame
from pypto.sim.machine.run import Run
from pypto.sim.runtime.executable import Executable


@dataclass
class CommEvent:
    """One step of the ranks' conversation, in the order the run made it."""

    seq: int
    rank: int
    kind: str  # notify / wait (blocked) / wait_done / defer_wait / dispatch / ...
    task: int  # the rank's task id (-1: its orchestration)
    span: Span | None
    info: dict = field(default_factory=dict)


@dataclass
class Dispatch:
    """A call queued on a rank: a per-device function with its arguments, or a builtin
    (a host collective) run by the rank's runtime."""

    func: str | None
    args: list
    span: Span | None
    builtin: Callable[[RankComm, TaskFrame], Any] | None = None


_CHIPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def chip_executable(exe: Executable, func: str) -> Executable:
    """The executable running `func` of `exe`'s program as an entry (made once)."""
    table = _CHIPS.setdefault(exe, {})
    chip = table.get(func)
    if chip is None:
        program = dataclasses.replace(exe.program, entry=func)
        chip = table[func] = Executable(program, exe.analyses, exe.settings)
    return chip


class World:
    """The ranks of one multi-card run and everything they share."""

    def __init__(self, exe: Executable, device_ids: tuple[int, ...]):
        self.exe = exe
        self.settings = exe.settings
        self.device_ids = device_ids
        self.size = len(device_ids)
        self.windows = Windows(self.size)
        self.clocks = Clocks(self.size)
        self.log = AccessLog() if self.settings.check_window else None
        self.events: list[CommEvent] = []
        self.queues: list[list[Dispatch]] = [[] for _ in range(self.size)]
        # every dispatch the ranks ran, as [start, end] in the workers' pace (`Clocks`),
        # and the one each rank is running: the window check asks whether two overlap
        self.dispatches: list[list[int]] = []
        self.running: list[int] = [-1] * self.size
        self.runs: list[Run | None] = [None] * self.size
        self.scheduler = RankScheduler(self.size, self._rank, self._deadlock)

    # -- what the ranks share ------------------------------------------------------------

    def event(self, ctx: Any, rank: int, kind: str, **info: Any) -> None:
        self.events.append(CommEvent(len(self.events), rank, kind,
                                     int(getattr(ctx, "task_id", -1)),
                                     getattr(ctx, "span", None), info))

    def peer_view(self, ctx: Any, a: np.ndarray, at: Located, peer: int,
                  what: str) -> np.ndarray:
        try:
            return self.windows.peer(a, at, peer)
        except WindowError as exc:
            raise ctx.fault(f"{what} on rank {self.scheduler.rank}: {exc}", ctx.span,
                            tensor=at.buffer.name,
                            hint=f"the run has {self.size} device(s) {list(self.device_ids)}; "
                                 "give the devices the program is written for, e.g. "
                                 "DistributedConfig(device_ids=[0, 1]) or "
                                 "SimConfig(device_ids=(0, 1))") from None

    def access(self, ctx: Any, rank: int, at: Located, owner: int, lo: tuple, hi: tuple,
               write: bool, atomic: bool, what: str, span: Any = None,
               a: np.ndarray | None = None) -> None:
        """Rank `rank` touched the box [lo, hi) of `owner`'s copy of a window (`a`: the
        window array the box is in; by the op at `span`, None: the op `ctx` is running)."""
        if write and a is not None:
            self.windows.mark_written(a, at, owner, lo, hi, rank)
        if self.log is not None:
            self.log.add(at.buffer, owner, WindowAccess(rank, lo, hi, write, atomic,
                                                         self.clocks.now[rank], what,
                                                         span or getattr(ctx, "span", None),
                                                         self.running[rank]))
        if write and rank != owner:
            self.event(ctx, rank, "remote_write", peer=owner, window=at.buffer.name,
                       lo=lo, hi=hi, what=what)

    # -- running the ranks ---------------------------------------------------------------

    def run_ranks(self) -> None:
        """Every rank runs its dispatches; returns when all have finished."""
        if any(self.queues):
            self.scheduler.run()

    def _rank(self, r: int) -> None:
        run = Run(self.settings, f"{self.exe.program.name}@rank{r}")
        comm = RankComm(self, r, run)
        run.comm = comm
        self.runs[r] = run
        try:
            for d in self.queues[r]:
                self.event(None, r, "dispatch", func=d.func or "builtin",
                           device=self.device_ids[r])
                self.running[r] = len(self.dispatches)
                self.dispatches.append([self.clocks.begin_dispatch(r), -1])
                if d.builtin is not None:
                    d.builtin(comm, TaskFrame(run))
                else:
                    assert d.func is not None
                    chip_executable(self.exe, d.func).run(tuple(d.args), {}, run=run,
                                                          report=False)
                comm.complete()  # a dispatch returns when its tasks have completed
                self.dispatches[self.running[r]][1] = self.clocks.end_dispatch(r)
                self.scheduler.yield_turn()  # the other ranks' workers run meanwhile
        except SimulationError as err:
            self._on_rank(err, r)
            raise
        self.event(None, r, "finish")

    def _on_rank(self, err: SimulationError, r: int) -> None:
        """Name rank `r` (and its device) in a fault of its run: its blocks and tasks
        are numbered per rank, so "block 0" alone does not say which card."""
        if getattr(err, "rank", None) is not None:
            return
        err.rank = r  # type: ignore[attr-defined]
        who = f"rank {r} of {self.size} (device {self.device_ids[r]})"
        msg = err.message
        at = msg.rfind(" [")
        if msg.endswith("]") and at >= 0:
            err.message = f"{msg[:at]} [{who}, {msg[at + 2:]}"
        else:
            err.message = f"{msg} [{who}]"
        err.args = (err.message,)

    def batch_refusals(self) -> dict[str, str]:
        """Why regions of the per-device functions the ranks ran could not run batched:
        each function runs as its own executable (`chip_executable`), which keeps its
        own refusals, none of them in the host's."""
        merged: dict[str, str] = {}
        for chip in _CHIPS.get(self.exe, {}).values():
            merged.update(chip.batch.refusals)
        return merged

    def _deadlock(self, blocked: dict[int, Blocked], done: set[int]) -> BaseException:
        waits: dict[int, Wait] = {r: b.what for r, b in blocked.items()}
        for r, w in waits.items():
            self.event(SimpleNamespace(span=w.span), r, "deadlock", window=w.window,
                       indices=w.indices, value=w.expected, after=w.current)
        err = DeadlockError(waits, done, self.size)
        err.events = list(self.events)
        return err


def window_array(world: World, value: Any, rank: int) -> Any:
    """A dispatch argument for rank `rank`: a host-side window view becomes the rank's
    array of it; anything else is passed as it is."""
    if isinstance(value, WindowView):
        return world.windows.array(value, rank)
    return value


__all__ = ["CommEvent", "Dispatch", "World", "chip_executable", "window_array"]
