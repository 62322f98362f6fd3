"""Run a kernel on the simulator against its golden, and normalise what comes back.

The core (`pypto.golden.run_jit`, `pypto.sim`) owns running and checking; this
module only calls it and turns its `RunResult` / `Trace` into the flat data the
figures read: `LabTask` (one per task × block) and `LabOutput` (one per checked
output, with the last-writer arrays that blame each element).
"""
from __future__ import annotations

import contextlib
import io
import linecache
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pypto.golden.data import seed_global_generators
from pypto.golden.report import OutputCheck
from pypto.golden.validation import ElementRule
from pypto.sim import on_progress

Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class LabTask:
    """One block of one task of a simulated run."""

    task: int
    block: int
    blocks: int
    region: str
    """The outlined function's name (joins the task to its region)."""
    name: str
    units: tuple[str, ...]
    cost: dict
    """Estimated cycles per pipe for this block (cube, vector, mte2, ...)."""
    deps: tuple[int, ...]
    dep_origin: dict
    """Producer task id → how the runtime makes the edge: `explicit` (deps=), `creator`
    (the task allocated a tensor this one reads) or `tensormap` (it wrote what this one
    reads or rewrites); `data` for a run whose dependencies the core did not give."""
    source: str = ""
    dep_reason: dict = field(default_factory=dict)
    """Producer task id → why the runtime waits for it (the core's words)."""

    @property
    def cycles(self) -> float:
        """Pipes overlap inside a block: the estimate is the slowest pipe."""
        return max(self.cost.values(), default=0.0)


@dataclass
class LabOutput:
    """One checked output: arrays, verdict, tolerance and who wrote each element."""

    name: str
    actual: np.ndarray
    expected: np.ndarray
    passed: bool
    rtol: float = 1e-5
    atol: float = 1e-5
    direction: str | None = None
    writer: Any = None
    """The trace's `LastWriter` of this tensor (per element: write event id)."""
    trace: Any = None
    unwritten_bounds: list | None = None
    """`[(start, stop), ...]` per axis of the region no task wrote."""
    unwritten_fix: str = ""
    lines: list = field(default_factory=list)
    """The harness's own text for this output (headline, mismatch, fixes)."""
    races: list = field(default_factory=list)
    """Races on this tensor (`Race.to_dict()`), drawn as outlines on the heatmap."""
    uninit_reads: list = field(default_factory=list)
    """Reads of unwritten elements of this tensor (`UninitRead.to_dict()`)."""
    check: Any = None
    """The core's `OutputCheck`: its comparator's element verdict is the one drawn. None
    (an output built by hand): the core's allclose rule at `rtol` / `atol`."""
    _element: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def comparator(self) -> str:
        return self.check.comparator if self.check is not None else "allclose"

    def _rule(self) -> ElementRule:
        if self.check is not None and self.check.rule is not None:
            return self.check.rule
        return ElementRule(None, self.rtol, self.atol)

    def failing(self) -> np.ndarray | None:
        """The elements the comparator fails (the core's verdict, the output's shape), or
        None when the comparator judges only the output as a whole."""
        if "failing" not in self._element:
            if self.check is not None and self.check.rule is not None:
                self._element["failing"] = self.check.failing_elements()
            else:
                self._element["failing"] = self._rule().verdict(self.actual, self.expected)
        return self._element["failing"]

    @property
    def has_error_ratio(self) -> bool:
        return self._rule().has_error_ratio

    def error_ratio(self) -> np.ndarray | None:
        """Each element's error over the threshold the comparator holds it to (> 1
        fails), or None when its rule has no threshold."""
        if "ratio" not in self._element:
            self._element["ratio"] = self._rule().error_ratio(self.actual, self.expected)
        return self._element["ratio"]

    # -- who wrote what: read from the trace on demand (an output can be 10^8 elements) --

    def events_plane(self, lead: tuple = ()) -> np.ndarray | None:
        """Write event ids of the 2-D plane at `lead` (0 = never written), or None."""
        if self.writer is None:
            return None
        ev = np.asarray(self.writer.events)
        if ev.ndim == 0:
            return ev.reshape(1, 1)
        if ev.ndim == 1:
            return ev.reshape(1, -1)
        return ev[tuple(lead) + (slice(None), slice(None))] if ev.ndim > 2 else ev

    def event_table(self) -> np.ndarray:
        """(events, 3) int array: task, block, site of each write event."""
        return np.asarray(self.trace.write_events, dtype=np.int64).reshape(-1, 3)

    @property
    def writer_task(self) -> np.ndarray | None:
        return None if self.writer is None else np.asarray(self.writer.task)

    @property
    def writer_block(self) -> np.ndarray | None:
        return None if self.writer is None else np.asarray(self.writer.block)

    @property
    def writer_site(self) -> np.ndarray | None:
        return None if self.writer is None else np.asarray(self.writer.site)

    def task_name(self, task: int) -> str:
        rec = self.trace.task(task) if self.trace is not None and task >= 0 else None
        return getattr(rec, "name", "?") if rec is not None else "?"

    def task_loops(self, task: int) -> tuple:
        """((loop variable, value), ...) of the orchestration loops around the launch."""
        rec = self.trace.task(task) if self.trace is not None and task >= 0 else None
        return tuple(getattr(rec, "loops", ()) or ()) if rec is not None else ()

    def site(self, site: int) -> tuple[str, str, str]:
        """(file:line, op, the source line) of a trace site."""
        if self.trace is None or not 0 <= site < len(self.trace.sites):
            return "?", "?", ""
        span, op = self.trace.sites[site]
        text = ""
        if getattr(span, "file", None) and getattr(span, "line", 0):
            text = linecache.getline(span.file, span.line).strip()
        where = f"{span.file}:{span.line}" if getattr(span, "file", None) else str(span)
        return where, str(op), text


@dataclass
class LabRun:
    """A simulated run as the workbench sees it."""

    kernel: str
    platform: str
    passed: bool
    outputs: list[LabOutput]
    tasks: list[LabTask]
    report: str
    seconds: float
    error: str | None = None
    raw: Any = None
    """The core's own result object (`RunResult`)."""
    trace: Any = None
    log: str = ""
    """What the harness printed while running."""
    races: list = field(default_factory=list)
    """Every race the `race` check found (`Race.to_dict()`)."""
    uninit_reads: list = field(default_factory=list)
    """Every read of unwritten memory the `uninit` check found (`UninitRead.to_dict()`)."""
    dumps: list = field(default_factory=list)
    """The args dump's snapshots (`SimResult.arg_dumps`: `ArgSnapshot`s, the core's own)."""
    dump_level: int = 0
    """The args dump level the run captured at (0: none)."""
    artifacts: list = field(default_factory=list)
    """What the harness wrote (`RunResult.artifacts`: `pypto.dfx.artifacts.Artifact`)."""
    rings: list = field(default_factory=list)
    """The runtime's rings replayed over the run (`RunResult.rings`: the core's
    `RingReport`, one per rank)."""
    shadow: Any = None
    """The float64 shadow comparison (`RunResult.shadow`, the core's `ShadowReport`) when
    the run asked for it (`%%pypto --precision`); None otherwise."""
    decisions: dict = field(default_factory=dict)
    """Region name → how its launches ran and why (`SimResult.decisions()`: each a
    `pypto.sim.machine.decisions.Decision`)."""

    def output(self, name: str) -> LabOutput:
        for o in self.outputs:
            if o.name == name:
                return o
        raise KeyError(name)

    def __repr__(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        return (f"<LabRun {self.kernel} on {self.platform}: {verdict}, {len(self.outputs)} "
                f"output(s), {len({t.task for t in self.tasks})} task(s)>")


#: The workbench runs every simulator check, non-strictly: races and uninitialized
#: reads are collected and drawn instead of stopping the run.
CHECKS = ("oob", "ub", "race", "uninit")


def run_kernel(kernel: Any, specs: list, golden: Callable | None, *, platform: str,
               seed: int = 0, rtol: float = 1e-5, atol: float = 1e-5,
               progress: Progress | None = None, checks: tuple = CHECKS,
               dump_args: int = 0, shadow: bool = False) -> LabRun:
    """Simulate `kernel` on inputs built from `specs` and compare with `golden`
    (`checks`: the simulator checks, all four by default; `dump_args`: the args dump
    level, `enable_dump_args`, whose files the harness writes in the build directory;
    `shadow`: also run the float64 precision shadow, `runtime_cfg["sim_shadow"]`)."""
    from pypto.golden import run_jit

    note = progress or (lambda stage, frac: None)
    note("simulating", 0.1)
    t0 = time.perf_counter()
    kwargs: dict = dict(golden_fn=golden, rtol=rtol, atol=atol,
                        runtime_cfg={"platform": platform, "sim_checks": tuple(checks),
                                     "sim_strict": False,
                                     # the workbench shows what the device does: fresh
                                     # memory is garbage even on the a2a3sim model
                                     "sim_uninit": "residue"})
    if dump_args:
        kwargs["runtime_cfg"]["enable_dump_args"] = dump_args
    if shadow:
        kwargs["runtime_cfg"]["sim_shadow"] = "fp64"
    seed_global_generators(seed)  # `--seed`: what spec factories draw from
    log = io.StringIO()
    # a long simulation moves the bar (the core's progress hook, in place of its line on
    # stderr); the fraction is nominal: how long a run takes is not known ahead
    watch = on_progress(lambda p: note(f"simulating: {p.seconds:.0f} s, {p.tasks:,} tasks",
                                       0.1 + 0.8 * (1 - 0.5 ** (p.seconds / 10))),
                        delay=0.5)
    with contextlib.redirect_stdout(log), watch:  # the harness narrates its stages; keep it
        result = run_jit(kernel, specs, **kwargs)
    note("checking", 0.95)
    run = from_run_result(result, getattr(kernel, "__name__", "kernel"), platform, rtol, atol)
    run.seconds = time.perf_counter() - t0
    run.log = log.getvalue()
    note("done", 1.0)
    return run


def from_run_result(result: Any, kernel: str, platform: str, rtol: float | None = None,
                    atol: float | None = None) -> LabRun:
    """Adapt a `pypto.golden.RunResult`; the tolerances are the ones it recorded (given
    ones, or run_jit's defaults, for a result that recorded none)."""
    rtol = _first(getattr(result, "rtol", None), rtol, 1e-5)
    atol = _first(getattr(result, "atol", None), atol, 1e-5)
    sim = getattr(result, "sim", None)
    trace = getattr(sim, "trace", None) if sim is not None else None
    outputs = [_output(c, trace, rtol, atol) for c in getattr(result, "outputs", {}).values()]
    report = result.report() if hasattr(result, "report") else str(result)
    if outputs:
        head, _, rest = report.partition("\n")
        report = f"{head} · compared with rtol={rtol:g} atol={atol:g}" + \
            (f"\n{rest}" if rest else "")
    races = getattr(sim, "races", None) if sim is not None else None
    race_dicts = [r.to_dict() for r in races] if races else []
    reads = [u.to_dict() for u in (getattr(sim, "uninit_reads", None) or [])]
    for o in outputs:
        o.races = [r for r in race_dicts if r["tensor"] == o.name]
        o.uninit_reads = [u for u in reads if u["tensor"] == o.name and u["gm"]]
    if races:
        report += "\n" + races.text()
    if reads:
        report += f"\n{len(reads)} read(s) of unwritten memory:\n" + "\n".join(
            f"  - {u}" for u in sim.uninit_reads)
    return LabRun(kernel, getattr(result, "platform", None) or platform,
                  bool(result.passed), outputs,
                  tasks_of(trace, sim.dependencies() if trace is not None else None), report,
                  float(getattr(result, "execution_time", 0.0) or 0.0),
                  getattr(result, "error", None), result, trace, races=race_dicts,
                  uninit_reads=reads, dumps=list(getattr(sim, "arg_dumps", None) or []),
                  dump_level=int(getattr(sim, "dump_args_level", 0) or 0),
                  artifacts=list(getattr(result, "artifacts", None) or []),
                  rings=list(getattr(result, "rings", None) or []),
                  shadow=getattr(result, "shadow", None),
                  decisions=sim.decisions() if hasattr(sim, "decisions") else {})


def _first(*values: float | None) -> float:
    return float(next(v for v in values if v is not None))


def _output(check: Any, trace: Any, rtol: float, atol: float) -> LabOutput:
    out = LabOutput(check.name, np.asarray(check.actual), np.asarray(check.expected),
                    bool(check.passed), rtol, atol, getattr(check, "direction", None),
                    lines=list(check.lines()) if hasattr(check, "lines") else [],
                    check=check if isinstance(check, OutputCheck) else None)
    writer = getattr(trace, "writers", {}).get(check.name) if trace is not None else None
    if writer is not None and np.shape(writer.events) == out.actual.shape:
        out.writer, out.trace = writer, trace
    u = getattr(check, "unwritten", None)
    if u is not None:
        out.unwritten_bounds = [tuple(int(v) for v in b) for b in u.bounds]
        out.unwritten_fix = getattr(u, "kernel_fix", "") or (u.fixes[0] if u.fixes else "")
    return out


# when one producer reaches a task by several edges, the one drawn
_SOURCE_RANK = {"data": 0, "tensormap": 1, "creator": 2, "explicit": 3}


def tasks_of(trace: Any, dependencies: list | None = None) -> list[LabTask]:
    """One `LabTask` per block of every task in a `pypto.sim` trace; its dependencies
    are the runtime's (`SimResult.dependencies()`), or the trace's observed conflicts
    when none are given."""
    if trace is None:
        return []
    preds: dict[int, dict[int, str]] = {}
    reasons: dict[int, dict[int, str]] = {}
    if dependencies is not None:
        for d in dependencies:
            mine = preds.setdefault(d.succ, {})
            if _SOURCE_RANK[d.source] >= _SOURCE_RANK.get(mine.get(d.pred, ""), -1):
                mine[d.pred] = d.source
            why = reasons.setdefault(d.succ, {})
            why[d.pred] = f"{why[d.pred]}<br>{d.reason}" if d.pred in why else d.reason
    else:
        for e in getattr(trace, "edges", []):
            mine = preds.setdefault(e.dst, {})
            if mine.get(e.src) != "explicit":
                mine[e.src] = "explicit" if e.kind == "explicit" else "data"
    out = []
    for t in trace.tasks:
        if getattr(t, "kind", "at") == "entry":
            continue
        blocks = max(1, int(getattr(t, "blocks", 1) or 1))
        # The trace sums each pipe over all blocks; blocks of one task do equal work.
        cost = {p: round(c / blocks, 1) for p, c in t.cycles.items() if c} or {"scalar": 0.0}
        deps = preds.get(t.id, {})
        for b in range(blocks):
            out.append(LabTask(t.id, b, blocks, getattr(t, "function", t.name), t.name,
                               tuple(sorted(getattr(t, "units", ()))), dict(cost),
                               tuple(sorted(deps)), dict(deps), getattr(t, "source", ""),
                               dict(reasons.get(t.id, {}))))
    return out
