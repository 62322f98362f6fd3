"""Running a `@pl.jit.host` program: the entry the simulator calls for a host entry."""
from __future__ import annotations

from pypto.sim.checks.races import RaceError
from pypto.sim.cluster.happens import WindowRaceError
from pypto.sim.cluster.host import HostComm
from pypto.sim.cluster.result import ClusterResult
from pypto.sim.cluster.world import World
from pypto.sim.machine.run import Run
from pypto.sim.runtime.executable import Executable


def run_host(exe: Executable, args: tuple, kwargs: dict) -> ClusterResult:
    """One call of a host program on `SimConfig.device_ids` (one rank per device)."""
    settings = exe.settings
    devices = tuple(settings.config.device_ids or (0,))
    world = World(exe, devices)
    run = Run(settings, exe.program.name)
    run.comm = HostComm(world)
    run, rets = exe.run(args, kwargs, run=run)
    races = world.log.races() if settings.check_window and world.log is not None else []
    if not settings.keep_trace:  # traced for the window check alone: the run as untraced
        for r in (run, *world.runs):
            if r is not None:
                r.trace = None
    result = ClusterResult(run, rets, exe.batch.refusals, world)
    if settings.check_window:  # (on by default: "window")
        result.window_races = races
        if settings.strict and result.window_races:
            raise WindowRaceError(result.window_races, result)
    if settings.check_race:
        result.races = result.rank_races()
        if settings.strict and result.races:
            raise RaceError(result.races, result)
    return result


__all__ = ["run_host"]
