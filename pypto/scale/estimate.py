"""The estimated time of a simulated run, from its trace: what a sweep ranks tilings by.

The trace's cost model gives each task's per-block cycles (`TaskRecord.block_cycles`)
and the dependency edges between tasks. The sum of the tasks' times
(`Trace.totals()["est_us_serial"]`) ignores that independent tasks run on different
cores at once, so it cannot tell one 256-row tile from eight 32-row ones. A sweep needs
the makespan: here its classic lower bound, the larger of
  the critical path  - the longest chain of dependent tasks, each taking its slowest
                       block times its waves over the cores of its unit, and
  the work bound     - per core kind (cube tasks on the AIC cores, vector tasks on the
                       AIV cores), all its blocks' cycles spread evenly over those cores.
"""
from __future__ import annotations

from typing import Any


def makespan_us(trace: Any) -> float:
    plat = trace.platform
    finish: dict[int, float] = {}
    preds: dict[int, list[int]] = {}
    for e in trace.edges:
        preds.setdefault(e.dst, []).append(e.src)
    work = {"cube": 0.0, "vector": 0.0}
    for t in sorted(trace.tasks, key=lambda t: t.id):  # ids follow submission order
        start = max((finish.get(p, 0.0) for p in preds.get(t.id, ())), default=0.0)
        finish[t.id] = start + t.est_cycles(plat)
        work["cube" if "cube" in t.units else "vector"] += sum(t.block_cycles)
    path = max(finish.values(), default=0.0)
    spread = max(work["cube"] / max(1, plat.aic_cores), work["vector"] / max(1, plat.aiv_cores))
    return max(path, spread) / (plat.clock_ghz * 1e3)
