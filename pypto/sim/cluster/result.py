"""`ClusterResult`: the outcome of one multi-card call - the host's outputs, every rank's
own result (its trace, its device memory), the ranks' conversation and the windows."""
from __future__ import annotations

import numpy as np

from pypto.sim.checks.races import RaceReport, find_races
from pypto.sim.cluster.happens import WindowRace
from pypto.sim.cluster.world import CommEvent, World
from pypto.sim.machine.decisions import Decision, DecisionLog
from pypto.sim.machine.run import Run
from pypto.sim.result import SimResult


class ClusterResult(SimResult):
    """A `SimResult` of the host, with the ranks it ran (see the module docstring)."""

    def __init__(self, run: Run, returns: tuple, batch_refusals: dict[str, str],
                 world: World):
        on_ranks = world.batch_refusals()
        super().__init__(run, returns, {**batch_refusals, **on_ranks})
        self.world_size = world.size
        self.device_ids = world.device_ids
        #: per rank: its own SimResult (trace, device buffers, what its checks found)
        self.ranks: list[SimResult] = [SimResult(r, (), on_ranks) for r in world.runs
                                       if r is not None]
        for rank in self.ranks:
            if rank.trace is not None:
                rank.program, rank.analyses = world.exe.program, world.exe.analyses
        #: the notify / wait / dispatch / remote-write steps of the ranks, in run order
        self.events: list[CommEvent] = list(world.events)
        #: how often the turn passed between ranks (the schedule's length)
        self.switches = world.scheduler.switches
        #: checks "window" (a default) / "race": the window accesses of different ranks
        #: nothing orders
        self.window_races: list[WindowRace] = []
        #: the window races only the timing of the ranks' dispatches orders (a later
        #: round's overwrite of what a peer read); reported by the "race" check
        self.window_races_by_timing: list[WindowRace] = []
        self._world = world
        _merge_rank_writes(run, world)

    @property
    def batch_stats(self) -> dict[str, int]:
        """Launches run batched and batched runs abandoned, summed over the host and every
        rank (the ranks launch the kernels; the host only dispatches)."""
        total = dict(super().batch_stats)
        for rank in self.ranks:
            for key, n in rank.batch_stats.items():
                total[key] = total.get(key, 0) + n
        return total

    def decisions(self) -> dict[str, tuple[Decision, ...]]:
        """How each region's launches ran and why, over the host and every rank (each
        decision's times summed)."""
        total = DecisionLog()
        total.merge(self._decisions)
        for rank in self.ranks:
            total.merge(rank._decisions)
        return total.decisions()

    def window(self, name: str, rank: int) -> np.ndarray:
        """The bytes of window buffer `name` on `rank` at the end of the run, as the
        first view the host made of it."""
        for buf in self._world.windows.buffers:
            if buf.name == name:
                views = buf.arrays[rank]
                return next(iter(views.values())) if views else buf.memory[rank]
        raise KeyError(f"no window buffer {name!r}; the run has "
                       f"{[b.name for b in self._world.windows.buffers]}")

    def window_writers(self, name: str, rank: int) -> np.ndarray:
        """Per element of `window(name, rank)`: the rank that last wrote it (-1: nobody;
        a rank's own stores count when the run is traced)."""
        view = self.window(name, rank)
        at = self._world.windows.locate(view)
        assert at is not None
        return self._world.windows.written_by(view, at, rank)

    @property
    def window_names(self) -> list[str]:
        return [b.name for b in self._world.windows.buffers]

    def rank_races(self) -> RaceReport:
        """The races inside each rank (tasks of one rank the runtime does not order),
        from the ranks' traces."""
        report = RaceReport()
        exe = self._world.exe
        for run in self._world.runs:
            if run is None or run.trace is None:
                continue
            got = find_races(run.trace, exe.program, exe.analyses)
            report.races.extend(got.races)
            report.tasks += got.tasks
            report.accesses += got.accesses
        return report

    def __repr__(self) -> str:
        return (f"<ClusterResult on {self.platform.name}: {self.world_size} ranks, "
                f"{sum(r.task_count for r in self.ranks)} tasks, {len(self.events)} "
                f"comm events>")


def _merge_rank_writes(host: Run, world: World) -> None:
    """Mark the elements of the host's tensors that a rank wrote (through the slice the
    host dispatched to it) as written in the host's last-writer map, by the host's
    dispatch to that rank (task -2, block = the rank): the host launches no task itself,
    so without this every output of a multi-card run would look never written, and the
    golden's unwritten-region diagnosis would excuse a wrong result."""
    trace = host.trace
    if trace is None:
        return
    for r, run in enumerate(world.runs):
        if run is None:
            continue
        for buf in run.memory.buffer_list:
            if buf.writer is None or buf.kind != "param":
                continue
            # a rank's parameter is the host's slice itself (`x[r]`), or a copy of it
            seen = buf.host if buf.host is not None else buf.array
            owner, _ = host.memory.locate(seen)
            if owner is None:
                continue
            writers = trace.writers.get(owner.name)
            if writers is None or writers.events.shape != owner.array.shape:
                continue
            flat = _elements(seen, owner.array)
            if flat is not None and buf.writer.shape == seen.shape:
                writers.writable_events().reshape(-1)[flat[buf.writer != 0]] = \
                    trace.write_event(-2, r, -1)


def _elements(view: np.ndarray, base: np.ndarray) -> np.ndarray | None:
    """The flat indices into C-contiguous `base` of every element of `view` (any view of
    it, an integer index that drops an axis included), shaped like `view`."""
    if not base.flags.c_contiguous:
        return None
    offset, rest = divmod(view.ctypes.data - base.ctypes.data, base.itemsize)
    if rest or any(s % base.itemsize for s in view.strides):
        return None
    index = np.arange(base.size, dtype=np.int64)
    return np.lib.stride_tricks.as_strided(
        index[offset:], shape=view.shape,
        strides=tuple(s // base.itemsize * index.itemsize for s in view.strides))


__all__ = ["ClusterResult"]
