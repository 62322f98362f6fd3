"""An estimated schedule of a simulated run: which core and pipe runs what, when.

List scheduling in task order: a block starts when its producers have finished and
a core of the right kind is free (AIC for cube work, AIV for vector and data moves;
a mixed block takes one of each). Inside a block the pipes overlap, so the block
lasts as long as its slowest pipe; each pipe is drawn as its own bar from the block's
start. `pickup_us` models the dispatch latency of each task switch.

`chrome_trace` writes the Chrome / Perfetto trace-event JSON of the same schedule.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pypto_lab.runs import LabTask

AIC_PIPES = ("cube", "mte1", "fix")
_PIPE_ORDER = ("cube", "mte1", "fix", "mte2", "vector", "mte3", "scalar")


@dataclass(frozen=True)
class Bar:
    lane: str
    """`AIC0 · cube`, `AIV3 · mte2`, ..."""
    core: str
    pipe: str
    start_us: float
    end_us: float
    task: LabTask


@dataclass(frozen=True)
class Schedule:
    bars: tuple[Bar, ...]
    lanes: tuple[str, ...]
    makespan_us: float
    clock_ghz: float


def estimate(tasks: list[LabTask], *, aic: int = 24, aiv: int = 48, clock_ghz: float = 1.8,
             pickup_us: float = 0.0) -> Schedule:
    """Place every block on a core and return the bars (times in µs)."""
    free = {"AIC": [0.0] * aic, "AIV": [0.0] * aiv}
    finish: dict[int, float] = {}
    bars: list[Bar] = []
    for t in sorted(tasks, key=lambda t: (t.task, t.block)):
        ready = max((finish.get(d, 0.0) for d in t.deps), default=0.0)
        sides = _sides(t)
        cores = {s: min(range(len(free[s])), key=lambda i: (free[s][i], i)) for s in sides}
        start = max([ready] + [free[s][i] for s, i in cores.items()]) + pickup_us
        dur = t.cycles / (clock_ghz * 1e3)
        for s, i in cores.items():
            free[s][i] = start + dur
        finish[t.task] = max(finish.get(t.task, 0.0), start + dur)
        for pipe in sorted(t.cost, key=_pipe_rank):
            side = _side_of(pipe, sides)
            core = f"{side}{cores[side]}"
            end = start + t.cost[pipe] / (clock_ghz * 1e3)
            bars.append(Bar(f"{core} · {pipe}", core, pipe, start, end, t))
    lanes = tuple(sorted({b.lane for b in bars}, key=_lane_key))
    return Schedule(tuple(bars), lanes, max((b.end_us for b in bars), default=0.0), clock_ghz)


def _sides(t: LabTask) -> tuple[str, ...]:
    cube = any(p in t.cost for p in AIC_PIPES) or "cube" in t.units
    vector = "vector" in t.cost or "vector" in t.units
    if cube and vector:
        return ("AIC", "AIV")
    return ("AIC",) if cube else ("AIV",)


def _side_of(pipe: str, sides: tuple[str, ...]) -> str:
    if len(sides) == 1:
        return sides[0]
    return "AIC" if pipe in AIC_PIPES else "AIV"


def _pipe_rank(pipe: str) -> int:
    return _PIPE_ORDER.index(pipe) if pipe in _PIPE_ORDER else len(_PIPE_ORDER)


def _lane_key(lane: str) -> tuple:
    core, pipe = lane.split(" · ")
    return (core[:3], int(core[3:]), _pipe_rank(pipe))


def chrome_trace(schedule: Schedule, kernel: str = "kernel") -> dict:
    """Trace-event JSON (`chrome://tracing`, ui.perfetto.dev): one process per core,
    one thread per pipe, one complete event per bar; times in µs."""
    cores = sorted({b.core for b in schedule.bars}, key=lambda c: (c[:3], int(c[3:])))
    pid = {c: i + 1 for i, c in enumerate(cores)}
    tid: dict[tuple[str, str], int] = {}
    events: list[dict[str, Any]] = []
    for c in cores:
        events.append({"name": "process_name", "ph": "M", "pid": pid[c], "tid": 0,
                       "args": {"name": c}})
    for b in schedule.bars:
        key = (b.core, b.pipe)
        if key not in tid:
            tid[key] = _pipe_rank(b.pipe) + 1
            events.append({"name": "thread_name", "ph": "M", "pid": pid[b.core],
                           "tid": tid[key], "args": {"name": b.pipe}})
        t = b.task
        events.append({"name": f"{t.name}#{t.task}.{t.block}", "cat": t.region, "ph": "X",
                       "pid": pid[b.core], "tid": tid[key], "ts": round(b.start_us, 4),
                       "dur": round(b.end_us - b.start_us, 4),
                       "args": {"task": t.task, "block": t.block, "pipe": b.pipe,
                                "cycles": t.cost.get(b.pipe, 0.0), "estimate": dict(t.cost),
                                "source": t.source}})
    return {"traceEvents": events, "displayTimeUnit": "ns",
            "otherData": {"kernel": kernel, "estimated": True,
                          "clock_ghz": schedule.clock_ghz}}


def write_chrome_trace(schedule: Schedule, path: str | Path, kernel: str = "kernel") -> Path:
    """Write `chrome_trace(...)` to `path` and return it."""
    path = Path(path)
    path.write_text(json.dumps(chrome_trace(schedule, kernel), indent=1))
    return path
