"""The estimated time of a simulated run, from its trace: what a sweep ranks tilings by.

The trace's cost model gives each task's per-block cycles (`TaskRecord.block_cycles`)
and the dependency edges between tasks. The sum of the tasks' times
(`Trace.totals()["est_us_serial"]`) ignores that independent tasks run on different
cores at once, so it cannot tell one 256-row tile from eight 32-row ones. A sweep needs
the makespan: here its classic lower bound, the larger of
  the critical path  - the longest chain of dependent tasks, each taking its slowest
                       block times its waves over the cores of its unit, and
  the work bound     - per core kind (cube tasks on the AIC cores, vector tasks on the
                       AIV cores), all its blocks' cycles spread evenly over those cores,
each with the platform's **launch cost** (`Platform.task_overhead_us`, the pickup of a
task by a core): once per task on the path, once per block in the work. Without it
the smallest tile always wins, however many tasks it takes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Estimate:
    """A run's estimated makespan and what sets it (all in µs; estimates, not times)."""

    makespan_us: float
    path_us: float  # the critical path, launch costs included
    work_us: dict  # per core kind ("cube", "vector"): its work spread over its cores
    launch_us: float  # the launch costs inside the binding term
    tasks: int
    bound: str  # "dependency path", "cube work" or "vector work"

    def to_dict(self) -> dict:
        return {"makespan_us": round(self.makespan_us, 3), "path_us": round(self.path_us, 3),
                "work_us": {k: round(v, 3) for k, v in self.work_us.items()},
                "launch_us": round(self.launch_us, 3), "tasks": self.tasks,
                "bound": self.bound}


def estimate(trace: Any, launch_us: float | None = None) -> Estimate:
    """The estimate of a traced run (`launch_us`: the launch cost per task, default the
    platform's)."""
    plat = trace.platform
    per_us = plat.clock_ghz * 1e3
    over = (plat.task_overhead_us if launch_us is None else launch_us) * per_us
    finish: dict[int, float] = {}
    launches: dict[int, int] = {}  # the launches on the longest chain into each task
    preds: dict[int, list[int]] = {}
    for e in trace.edges:
        preds.setdefault(e.dst, []).append(e.src)
    work = {"cube": 0.0, "vector": 0.0}
    blocks = {"cube": 0, "vector": 0}
    for t in sorted(trace.tasks, key=lambda t: t.id):  # ids follow submission order
        best = max(preds.get(t.id, ()), key=lambda p: finish.get(p, 0.0), default=None)
        start = finish.get(best, 0.0) if best is not None else 0.0
        finish[t.id] = start + t.est_cycles(plat) + over
        launches[t.id] = (launches.get(best, 0) if best is not None else 0) + 1
        kind = "cube" if "cube" in t.units else "vector"
        work[kind] += sum(t.block_cycles) + over * max(1, len(t.block_cycles))
        blocks[kind] += max(1, len(t.block_cycles))
    last = max(finish, key=finish.__getitem__, default=None)
    path = finish[last] if last is not None else 0.0
    cores = {"cube": max(1, plat.aic_cores), "vector": max(1, plat.aiv_cores)}
    spread = {k: work[k] / cores[k] for k in work}
    kind = max(spread, key=spread.__getitem__)
    if path >= spread[kind]:
        chain = launches[last] if last is not None else 0
        bound, cost, launch = "dependency path", path, over * chain
    else:
        bound, cost, launch = f"{kind} work", spread[kind], over * blocks[kind] / cores[kind]
    return Estimate(cost / per_us, path / per_us, {k: v / per_us for k, v in spread.items()},
                    launch / per_us, len(trace.tasks), bound)


def makespan_us(trace: Any) -> float:
    """The estimated makespan of a traced run, in µs (`estimate`)."""
    return estimate(trace).makespan_us


__all__ = ["Estimate", "estimate", "makespan_us"]
