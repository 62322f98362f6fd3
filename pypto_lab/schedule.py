"""An estimated schedule of a simulated run: which core and pipe runs what, when.

List scheduling in task order. A block starts when its producers have finished and a
core of the right kind is free (AIC for cube work, AIV for vector work and data moves;
a mixed block takes one of each). Inside a block the stages follow the data: the loads
(MTE2) come first, then the compute, then the stores (MTE3); on the cube side
MTE1 (L1 → L0) → cube → FIX (draining L0C). A mixed block's vector epilogue starts when
the cube result it consumes is out of FIX. Tasks launched by one `pl.pipeline(...,
stage=F)` loop share a core and overlap: iteration i loads while iteration i-1
computes, as long as one of the F buffers is free; a `pl.pipeline` loop *inside* a
region overlaps the same way within its task (`pipelining`). `pickup_us` models the
dispatch latency of each task switch.

`chrome_trace` writes the Chrome / Perfetto trace-event JSON of the same schedule.
"""
from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pypto.dfx.schedule import CorePool
from pypto_lab.pipelining import InnerPipeline, iteration_plan
from pypto_lab.runs import LabTask

AIC_PIPES = ("cube", "mte1", "fix")
_PIPE_ORDER = ("mte2", "mte1", "cube", "fix", "vector", "scalar", "mte3")
# the stages of one block, in data order, per side
_AIC_STAGES = (("mte2",), ("mte1",), ("cube",), ("fix",))
_AIV_STAGES = (("mte2",), ("vector", "scalar"), ("mte3",))


@dataclass(frozen=True)
class Bar:
    lane: str
    """`AIC0 · cube`, `AIV3 · mte2`, ..."""
    core: str
    pipe: str
    start_us: float
    end_us: float
    task: LabTask
    note: str = ""
    """What part of the task: `iterations 3-4 of pl.pipeline k ×8 ...`, `before the loop`."""


@dataclass(frozen=True)
class Schedule:
    bars: tuple[Bar, ...]
    lanes: tuple[str, ...]
    makespan_us: float
    clock_ghz: float
    deps: tuple[tuple[int, int], ...] = field(default=())
    """(producer task, consumer task) pairs of the run's dependency edges."""
    pipelined: tuple[str, ...] = field(default=())
    """Names of the regions whose tasks overlap as `pl.pipeline` iterations."""

    def task_span(self, task: int) -> tuple[float, float] | None:
        spans = [(b.start_us, b.end_us) for b in self.bars if b.task.task == task]
        if not spans:
            return None
        return min(s for s, _ in spans), max(e for _, e in spans)


def estimate(tasks: list[LabTask], *, aic: int = 24, aiv: int = 48, clock_ghz: float = 1.8,
             pickup_us: float = 0.0, stages: dict[str, int] | None = None,
             inner: dict[str, InnerPipeline] | None = None) -> Schedule:
    """Place every block on a core and return the bars (times in µs). `stages`: region
    function → `pl.pipeline` stage count for tasks launched inside such a loop; `inner`:
    region function → the `pl.pipeline` loop inside its body."""
    inner = inner or {}
    us = 1.0 / (clock_ghz * 1e3)
    pool = CorePool(aic, aiv)
    finish: dict[int, float] = {}
    bars: list[Bar] = []
    stages = stages or {}
    ring: dict[str, dict] = {}  # region -> its pipeline's core and pipe clocks
    for t in sorted(tasks, key=lambda t: (t.task, t.block)):
        ready = max((finish.get(d, 0.0) for d in t.deps), default=0.0)
        sides = _sides(t)
        depth = stages.get(t.region, 0)
        if depth > 1:
            end = _pipelined(t, sides, depth, ring, pool, ready, pickup_us, us, bars)
        else:
            cores, start = pool.take(sides, ready)
            end = _place(t, sides, cores, start + pickup_us, us, bars, inner.get(t.region))
            pool.release(cores, end)
        finish[t.task] = max(finish.get(t.task, 0.0), end)
    lanes = tuple(sorted({b.lane for b in bars}, key=_lane_key))
    deps = tuple(sorted({(d, t.task) for t in tasks for d in t.deps if d in finish}))
    overlapped = {r for r, n in stages.items() if n > 1} | set(inner)
    return Schedule(tuple(bars), lanes, max((b.end_us for b in bars), default=0.0),
                    clock_ghz, deps, tuple(sorted(overlapped & {t.region for t in tasks})))


@dataclass(frozen=True)
class CriticalPath:
    """The chain of tasks that sets a schedule's makespan, first to last."""

    tasks: tuple[int, ...]
    spans: tuple[tuple[float, float], ...]
    """(start, end) of each task's bars, µs."""
    waits: tuple[float, ...]
    """Per task after the first: how long it started after its producer on the path had
    finished (µs; a core was busy, or the dispatch latency)."""

    @property
    def busy_us(self) -> float:
        return sum(e - s for s, e in self.spans)

    def text(self) -> str:
        if not self.tasks:
            return "critical path: none (no task ran)"
        chain = " → ".join(str(t) for t in self.tasks)
        return (f"critical path: tasks {chain} ({self.busy_us:.3f} us busy, "
                f"{sum(self.waits):.3f} us waiting)")


def critical_path(schedule: Schedule) -> CriticalPath:
    """The tasks that set the makespan: from the task that ends last, back through the
    producer that finished last (the dependency edges the schedule was made with, i.e.
    the task graph's), to a task with none. A task without bars (a dummy task) passes
    its own producers on. Linear in the bars and the edges."""
    spans: dict[int, tuple[float, float]] = {}
    for b in schedule.bars:
        s, e = spans.get(b.task.task, (b.start_us, b.end_us))
        spans[b.task.task] = (min(s, b.start_us), max(e, b.end_us))
    preds: dict[int, list[int]] = {}
    for src, dst in schedule.deps:
        preds.setdefault(dst, []).append(src)
    if not spans:
        return CriticalPath((), (), ())
    task = max(spans, key=lambda t: (spans[t][1], -t))
    chain = [task]
    while True:
        drawn = _drawn_producers(task, preds, spans)
        if not drawn:
            break
        task = max(drawn, key=lambda t: (spans[t][1], t))
        chain.append(task)
    chain.reverse()
    waits = tuple(max(0.0, spans[b][0] - spans[a][1]) for a, b in itertools.pairwise(chain))
    return CriticalPath(tuple(chain), tuple(spans[t] for t in chain), waits)


def _drawn_producers(task: int, preds: dict, spans: dict) -> set[int]:
    """The producers of `task` that have bars, looking through those that have none."""
    out: set[int] = set()
    todo, seen = list(preds.get(task, ())), set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        if p in spans:
            out.add(p)
        else:
            todo.extend(preds.get(p, ()))
    return out


def _place(t: LabTask, sides: tuple, cores: dict, start: float, us: float, bars: list,
           inner: InnerPipeline | None = None) -> float:
    """The stages of one block from `start`, in data order; returns its end. With a
    `pl.pipeline` loop inside the region, the loop's iterations overlap on the cube side
    (or the only side)."""
    side_end = {}
    cube_out = start
    mixed = len(sides) == 2
    if "AIC" in sides:
        if inner is not None:
            clock = _iterations(t, _AIC_STAGES, "AIC", cores["AIC"], start, us, bars, mixed,
                                inner)
        else:
            clock = start
            for stage in _AIC_STAGES:
                clock = _stage(t, stage, "AIC", cores["AIC"], clock, us, bars, mixed=mixed)
        cube_out = side_end["AIC"] = clock
    if "AIV" in sides:
        if inner is not None and not mixed:
            side_end["AIV"] = _iterations(t, _AIV_STAGES, "AIV", cores["AIV"], start, us,
                                          bars, mixed, inner)
        else:
            clock = start
            for k, stage in enumerate(_AIV_STAGES):
                if k == 1 and "AIC" in sides:
                    clock = max(clock, cube_out)  # the epilogue consumes the cube result
                clock = _stage(t, stage, "AIV", cores["AIV"], clock, us, bars, mixed=mixed)
            side_end["AIV"] = clock
    return max(side_end.values(), default=start)


def _stage(t: LabTask, pipes: tuple, side: str, core: int, clock: float, us: float,
           bars: list, mixed: bool) -> float:
    """Bars of one stage (its pipes run together) from `clock`; returns the stage's end."""
    return _cycles(t, {p: t.cost.get(p, 0.0) for p in pipes}, side, core, clock, us, bars,
                   mixed)


def _cycles(t: LabTask, cycles: dict, side: str, core: int, clock: float, us: float,
            bars: list, mixed: bool, note: str = "") -> float:
    """Bars of `cycles` per pipe, all from `clock`; returns when the last one ends."""
    end = clock
    for pipe, c in cycles.items():
        if mixed and pipe == "mte2" and side == "AIV" and "cube" in t.cost:
            continue  # a mixed block's loads go through the cube side (L1)
        if c <= 0:
            continue
        stop = clock + c * us
        bars.append(Bar(f"{side}{core} · {pipe}", f"{side}{core}", pipe, clock, stop, t, note))
        end = max(end, stop)
    return end


def _iterations(t: LabTask, stages: tuple, side: str, core: int, start: float, us: float,
                bars: list, mixed: bool, p: InnerPipeline) -> float:
    """One side of a block whose region runs `p`: the loads outside the loop, then the
    loop's iterations with the stages chained (iteration i's stage k after its stage
    k-1 and after iteration i-1's stage k; its load waits for a free buffer: iteration
    i-F's compute done), then the compute and stores outside the loop."""
    pre, groups, post, per = iteration_plan(t.cost, stages, p)
    clock = _cycles(t, pre[0], side, core, start, us, bars, mixed, "before the loop")
    ends = [clock] * len(stages)
    freed: list[float] = []
    for g, each in enumerate(groups):
        first, last = g * per, min(p.trips, (g + 1) * per) - 1
        what = f"iteration{'s' if last > first else ''} {first}" + \
            (f"-{last}" if last > first else "") + f" of {p.label}"
        ready = clock
        for k in range(len(stages)):
            begin = max(ready, ends[k])
            if k == 0 and g >= p.stage:
                begin = max(begin, freed[g - p.stage])  # its buffer is still in use
            ready = ends[k] = _cycles(t, each[k], side, core, begin, us, bars, mixed, what)
        freed.append(ends[1] if len(stages) > 1 else ends[0])
    clock = max(ends)
    for k in range(1, len(stages)):
        clock = _cycles(t, post[k], side, core, clock, us, bars, mixed, "after the loop")
    return clock


def _pipelined(t: LabTask, sides: tuple, depth: int, ring: dict, pool: CorePool,
               ready: float, pickup_us: float, us: float, bars: list) -> float:
    """One iteration of a `pl.pipeline` loop: on its loop's core, its load may run
    while the previous iteration computes, as long as one of the `depth` buffers is free
    (the iteration `depth` back has finished computing); compute and stores stay in
    order."""
    side = "AIC" if "AIC" in sides else "AIV"
    state = ring.get(t.region)
    if state is None:
        when, core = pool.earliest(side)
        state = ring[t.region] = {"core": core, "load": when, "compute": 0.0,
                                  "store": 0.0, "done": []}
    core = state["core"]
    done = state["done"]
    buffer_free = done[-depth] if len(done) >= depth else 0.0
    load_start = max(ready, state["load"], buffer_free) + pickup_us
    load_end = _stage(t, ("mte2",), side, core, load_start, us, bars, mixed=False)
    compute = ("vector", "scalar") if side == "AIV" else ("mte1", "cube", "fix")
    c_start = max(load_end, state["compute"])
    c_end = _stage(t, compute, side, core, c_start, us, bars, mixed=False)
    s_start = max(c_end, state["store"])
    s_end = _stage(t, ("mte3",), side, core, s_start, us, bars, mixed=False)
    state.update(load=load_end, compute=c_end, store=s_end)
    done.append(c_end)
    pool.release({side: core}, max(pool.hold(side, core), s_end))
    return s_end


def _sides(t: LabTask) -> tuple[str, ...]:
    cube = any(p in t.cost for p in AIC_PIPES) or "cube" in t.units
    vector = "vector" in t.cost or "vector" in t.units
    if cube and vector:
        return ("AIC", "AIV")
    return ("AIC",) if cube else ("AIV",)


def _pipe_rank(pipe: str) -> int:
    return _PIPE_ORDER.index(pipe) if pipe in _PIPE_ORDER else len(_PIPE_ORDER)


def _lane_key(lane: str) -> tuple:
    core, pipe = lane.split(" · ")
    return (core[:3], int(core[3:]), _pipe_rank(pipe))


def chrome_trace(schedule: Schedule, kernel: str = "kernel") -> dict:
    """Trace-event JSON (`chrome://tracing`, ui.perfetto.dev): one process per core,
    one thread per pipe, one complete event per bar, a flow arrow per dependency;
    times in µs."""
    cores = sorted({b.core for b in schedule.bars}, key=lambda c: (c[:3], int(c[3:])))
    pid = {c: i + 1 for i, c in enumerate(cores)}
    tid: dict[tuple[str, str], int] = {}
    events: list[dict[str, Any]] = []
    for c in cores:
        events.append({"name": "process_name", "ph": "M", "pid": pid[c], "tid": 0,
                       "args": {"name": c}})
    last: dict[int, Bar] = {}
    first: dict[int, Bar] = {}
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
        if t.task not in last or b.end_us >= last[t.task].end_us:
            last[t.task] = b
        if t.task not in first or b.start_us < first[t.task].start_us:
            first[t.task] = b
    for n, (src, dst) in enumerate(schedule.deps):
        a, z = last.get(src), first.get(dst)
        if a is None or z is None:
            continue
        common = {"name": "dependency", "cat": "deps", "id": n + 1}
        events.append({**common, "ph": "s", "pid": pid[a.core], "tid": tid[(a.core, a.pipe)],
                       "ts": round(a.end_us, 4)})
        events.append({**common, "ph": "f", "bp": "e", "pid": pid[z.core],
                       "tid": tid[(z.core, z.pipe)], "ts": round(z.start_us, 4)})
    return {"traceEvents": events, "displayTimeUnit": "ns",
            "otherData": {"kernel": kernel, "estimated": True,
                          "clock_ghz": schedule.clock_ghz}}


def write_chrome_trace(schedule: Schedule, path: str | Path, kernel: str = "kernel") -> Path:
    """Write `chrome_trace(...)` to `path` and return it."""
    path = Path(path)
    path.write_text(json.dumps(chrome_trace(schedule, kernel), indent=1))
    return path
