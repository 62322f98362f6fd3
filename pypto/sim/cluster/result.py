"""`ClusterResult`: the outcome of one multi-card call - the host's outputs, every rank's
own result (its trace, its device memory), the ranks' conversation and the windows."""
from __future__ import annotations

import numpy as np

from pypto.sim.checks.races import RaceReport, find_races
from pypto.sim.cluster.happens import WindowRace
from pypto.sim.cluster.world import CommEvent, World
from pypto.sim.machine.run import Run
from pypto.sim.result import SimResult


class ClusterResult(SimResult):
    """A `SimResult` of the host, with the ranks it ran (see the module docstring)."""

    def __init__(self, run: Run, returns: tuple, batch_refusals: dict[str, str],
                 world: World):
        super().__init__(run, returns, batch_refusals)
        self.world_size = world.size
        self.device_ids = world.device_ids
        #: per rank: its own SimResult (trace, device buffers, what its checks found)
        self.ranks: list[SimResult] = [SimResult(r, (), batch_refusals) for r in world.runs
                                       if r is not None]
        #: the notify / wait / dispatch / remote-write steps of the ranks, in run order
        self.events: list[CommEvent] = list(world.events)
        #: how often the turn passed between ranks (the schedule's length)
        self.switches = world.scheduler.switches
        #: checks=("race",): the window accesses of different ranks nothing orders
        self.window_races: list[WindowRace] = []
        self._world = world

    def window(self, name: str, rank: int) -> np.ndarray:
        """The bytes of window buffer `name` on `rank` at the end of the run, as the
        first view the host made of it."""
        for buf in self._world.windows.buffers:
            if buf.name == name:
                views = buf.arrays[rank]
                return next(iter(views.values())) if views else buf.memory[rank]
        raise KeyError(f"no window buffer {name!r}; the run has "
                       f"{[b.name for b in self._world.windows.buffers]}")

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


__all__ = ["ClusterResult"]
