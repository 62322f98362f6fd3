"""An estimated placement of a run's task blocks on the chip's cores, in ticks of the
platform's system counter: what the estimated chip swimlane and the PMU rows report.

List scheduling in task order (the order the runtime submits them): a task is ready
when its producers have finished (the dependency edges given, e.g. deps.json's); each
of its blocks takes the earliest free core of each side it needs (AIC for cube work,
AIV for vector work and data moves, one of each for a mixed block; `CorePool`, shared
with the workbench's pipe-level `pypto_lab.schedule.estimate`) and runs for the cost
model's estimate of that block (`TaskRecord.block_cycles`, the core clock) converted to
ticks, at least one. No dispatch latency is modelled: a block starts when it is ready
and its cores are free. Linear in the blocks (times the cores of a side, for the pick).
"""
from __future__ import annotations

import heapq
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# the platform's system counter (PLATFORM_PROF_SYS_CNT_FREQ, simpler 6ebaf77
# src/<arch>/platform/include/common/platform_config.h): the swimlane's clock
SYS_CNT_FREQ_HZ = {"a2a3": 50_000_000, "a5": 1_000_000_000}
# the first tick of the estimated schedule: the readers take 0 for "not recorded"
ORIGIN_TICK = 1000


def sys_cnt_freq(platform: Any) -> int:
    """The system counter frequency of a platform (its simulator's twin included)."""
    name = getattr(platform, "name", str(platform))
    return SYS_CNT_FREQ_HZ["a5" if name.startswith("a5") else "a2a3"]


class CorePool:
    """The cores of each side and when each is next free (any time unit): a heap per
    side, so a pick is logarithmic in the cores."""

    def __init__(self, aic: int, aiv: int, start: Any = 0.0):
        self.free: dict[str, list] = {"AIC": [(start, i) for i in range(max(1, aic))],
                                      "AIV": [(start, i) for i in range(max(1, aiv))]}

    def take(self, sides: Iterable[str], ready: Any) -> tuple[dict[str, int], Any]:
        """The earliest free core of each side (lowest index on a tie), taken out of the
        pool until `release`, and when a block needing them all can start, not before
        `ready`."""
        cores = {}
        start = ready
        for s in sides:
            when, i = heapq.heappop(self.free[s])
            cores[s] = i
            start = max(start, when)
        return cores, start

    def release(self, cores: dict[str, int], end: Any) -> None:
        """The cores `take` (or `hold`) gave are free again at `end`."""
        for s, i in cores.items():
            heapq.heappush(self.free[s], (end, i))

    def earliest(self, side: str) -> tuple[Any, int]:
        """(when it is free, its index) of the side's earliest free core, left in the
        pool."""
        when, i = self.free[side][0]
        return when, i

    def hold(self, side: str, core: int) -> Any:
        """Take core `core` of `side` out of the pool until `release`; when it was free.
        (Linear in the side's cores: for a core that runs a loop's iterations.)"""
        heap = self.free[side]
        k = next(k for k, (_, i) in enumerate(heap) if i == core)
        when = heap[k][0]
        heap[k] = heap[-1]
        heap.pop()
        heapq.heapify(heap)
        return when


def sides(units: Iterable[str]) -> tuple[str, ...]:
    """The core sides a task's blocks run on, from the units its ops used."""
    units = set(units)
    if "cube" not in units:
        return ("AIV",)
    return ("AIC", "AIV") if "vector" in units else ("AIC",)


@dataclass(frozen=True)
class Slot:
    """One block of one task on one core."""

    task: int
    """The trace's task id."""
    block: int
    side: str
    """AIC or AIV."""
    core: int
    """The core's index among the chip's cores (AIC first, then AIV)."""
    start: int
    end: int
    """Ticks of the system counter."""
    cycles: float
    """The block's estimate in core cycles."""


def place_blocks(trace: Any, preds: dict[int, list[int]]) -> list[Slot]:
    """Every block of every kernel task of `trace` on a core (see the module doc);
    `preds`: trace task id -> its producers' ids."""
    plat = trace.platform
    ticks_per_cycle = sys_cnt_freq(plat) / (plat.clock_ghz * 1e9)
    aic = plat.aic_cores
    pool = CorePool(aic, plat.aiv_cores, ORIGIN_TICK)
    finish: dict[int, int] = {}
    slots: list[Slot] = []
    for t in sorted(trace.tasks, key=lambda t: t.id):
        ready: int = max((finish[p] for p in preds.get(t.id, ()) if p in finish),
                         default=ORIGIN_TICK)
        if t.kind == "dummy" or not t.block_cycles:
            finish[t.id] = ready
            continue
        need = sides(t.units)
        end_all = ready
        for b, cyc in enumerate(t.block_cycles):
            cores, start = pool.take(need, ready)
            end = start + max(1, math.ceil(cyc * ticks_per_cycle))
            pool.release(cores, end)
            for s, i in cores.items():
                slots.append(Slot(t.id, b, s, i if s == "AIC" else aic + i, start, end, cyc))
            end_all = max(end_all, end)
        finish[t.id] = end_all
    return slots


def core_types(platform: Any) -> list[str]:
    """"aic" / "aiv" per core id, as the swimlane's metadata lists them."""
    return ["aic"] * platform.aic_cores + ["aiv"] * platform.aiv_cores


__all__ = ["ORIGIN_TICK", "SYS_CNT_FREQ_HZ", "CorePool", "Slot", "core_types", "place_blocks",
           "sides", "sys_cnt_freq"]
