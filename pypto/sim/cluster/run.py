"""Running a `@pl.jit.host` program: the entry the simulator calls for a host entry."""
from __future__ import annotations

from pypto.sim.checks.races import RaceError
from pypto.sim.cluster.happens import WindowRaceError
from pypto.sim.cluster.host import HostComm
from pypto.sim.cluster.result import ClusterResult
from pypto.sim.cluster.world import World
from pypto.sim.machine.run import Run
from pypto.sim.runtime.executable import Executable


class WorldCounters:
    """What a multi-card run's one progress line counts: the host's tasks and work and
    every rank's (the ranks report nothing of their own)."""

    def __init__(self, host: Run, world: World):
        self.host, self.world = host, world

    @property
    def work(self) -> int:
        return self.host.work + sum(r.work for r in self.world.runs if r is not None)

    @property
    def next_tid(self) -> int:
        return self.host.next_tid + sum(r.next_tid for r in self.world.runs if r is not None)


def run_host(exe: Executable, args: tuple, kwargs: dict) -> ClusterResult:
    """One call of a host program on `SimConfig.device_ids` (one rank per device)."""
    settings = exe.settings
    devices = tuple(settings.config.device_ids or (0,))
    world = World(exe, devices)
    run = Run(settings, exe.program.name)
    run.comm = HostComm(world)
    run, rets = exe.run(args, kwargs, run=run, progress=WorldCounters(run, world))
    races = world.log.races(world.dispatches) \
        if settings.check_window and world.log is not None else []
    if not settings.keep_trace:  # traced for the window check alone: the run as untraced
        for r in (run, *world.runs):
            if r is not None:
                r.trace = None
    result = ClusterResult(run, rets, exe.batch.refusals, world)
    if settings.check_window:  # (on by default: "window")
        # the default check leaves out the races only the ranks' pace orders (see
        # `pypto.sim.cluster.happens`): a device whose workers keep pace gives the values
        # the simulator gives; the "race" check asks for every unordered pair
        result.window_races = [w for w in races if settings.check_race or not w.by_timing]
        result.window_races_by_timing = [w for w in races if w.by_timing]
        if settings.strict and result.window_races:
            raise WindowRaceError(result.window_races, result)
    if settings.check_race:
        result.races = result.rank_races()
        if settings.strict and result.races:
            raise RaceError(result.races, result)
    return result


__all__ = ["WorldCounters", "run_host"]
