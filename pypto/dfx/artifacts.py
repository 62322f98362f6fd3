"""Writing a run's DFX artifacts into its build directory, and the viewer command for
each, as pypto's runner prints them (`_collect_dfx_outputs`, runner.py, pypto e2d0f78).

`write_run(request, sim, compiled, build)` writes what `request` asks under
`build.dfx()` (a multi-card run: `build.dfx(rank)` per rank, `rank<r>/d0/`: the
simulator keeps one trace per rank, every dispatch of the rank in it), and
`write_passes(compiled, build)` the pass dumps. The swimlane and the PMU rows share one
estimated schedule, whose edges are deps.json's (what `critical_path` joins against),
so deps.json and its name map are written with either of them too.
"""
from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pypto.dfx.args_dump import write_args_dump
from pypto.dfx.build_dir import BuildDir
from pypto.dfx.deps_json import write_deps_json
from pypto.dfx.knobs import DfxRequest
from pypto.dfx.passes_dump import write_passes_dump
from pypto.dfx.pmu import event_type, write_pmu
from pypto.dfx.schedule import Slot, place_blocks, sys_cnt_freq
from pypto.dfx.scope_stats import write_scope_stats as _scope_stats
from pypto.dfx.swimlane import write_swimlane
from pypto.dfx.task_ids import RuntimeTaskIds
from pypto.sim.runtime.rings import RingCapacities, RingReport

VIEWERS = "python -m simpler_setup.tools"


@dataclass(frozen=True)
class Artifact:
    """One file or directory a run wrote, and how to look at it."""

    kind: str
    """deps, name_map, args_dump, swimlane, pmu, scope_stats or passes_dump."""
    path: Path
    message: str
    """What the run prints for it (the viewer command, as pypto's runner prints it)."""


def write_passes(compiled: Any, build: BuildDir) -> list[Artifact]:
    """`passes_dump/` from the compilation's pass records."""
    records = list(getattr(compiled, "records", None) or [])
    paths = write_passes_dump(records, build.passes_dump)
    if not paths:
        return []
    return [Artifact("passes_dump", build.passes_dump,
                     f"passes_dump written to {build.passes_dump} ({len(paths)} files: "
                     "00_frontend.py, NN_after_<Pass>.py; pypto-lab's passes)")]


def write_run(request: DfxRequest, sim: Any, compiled: Any, build: BuildDir) -> list[Artifact]:
    """Every dfx_outputs artifact `request` asks for, of a finished simulation."""
    if not request.any_dfx or sim is None:
        return []
    ranks = getattr(sim, "ranks", None)
    if ranks:
        out: list[Artifact] = []
        for r, rank in enumerate(ranks):
            out += _write_one(request, rank, compiled, build.dfx(r), build.root.name)
        return out
    return _write_one(request, sim, compiled, build.dfx(), build.root.name)


def _write_one(request: DfxRequest, sim: Any, compiled: Any, dfx: Path,
               work_name: str) -> list[Artifact]:
    trace = getattr(sim, "trace", None)
    if trace is None:
        return []
    program = getattr(compiled, "program", None)
    analyses = getattr(compiled, "analyses", None) or {}
    ids = RuntimeTaskIds.of_run(trace, program, analyses)
    out: list[Artifact] = []
    if request.dep_gen or request.swimlane or request.pmu:
        paths = write_deps_json(trace, program, analyses, dfx, work_name)
        deps = next((p for p in paths if p.name == "deps.json"), None)
        if deps is not None and request.dep_gen:
            q = shlex.quote(str(deps))
            out.append(Artifact("deps", deps, (
                f"deps.json written to {q} — render with:\n  {VIEWERS}.deps_viewer {q}\n"
                f"  # for large graphs, render HTML with a scalable layout engine:\n"
                f"  {VIEWERS}.deps_viewer {q} --format html --engine sfdp")))
    if request.dump_args:
        where = write_args_dump([s for s in sim.arg_dumps if s.task in ids],
                                request.dump_args, ids, dfx)
        out.append(Artifact("args_dump", where, f"args_dump written to {where} — inspect "
                            f"with: {VIEWERS}.dump_viewer {where}"))
    if request.swimlane or request.pmu:
        slots = [s for s in place_blocks(trace, _preds(dfx / "deps.json", ids, trace))
                 if s.task in ids]
        if request.swimlane:
            path = write_swimlane(slots, ids, trace.platform, request.swimlane, dfx)
            q = shlex.quote(str(path))
            out.append(Artifact("swimlane", path, (
                f"chip_swimlane_records.json (estimated from the cost model) written to {q} "
                f"— convert and analyse with:\n  {VIEWERS}.swimlane_converter {q}\n"
                f"  {VIEWERS}.critical_path {shlex.quote(str(dfx))} --stdout")))
        if request.pmu:
            path = write_pmu(slots, trace, ids, event_type(request.pmu), dfx)
            out.append(Artifact("pmu", path, f"PMU CSV (estimated from the cost model) "
                                f"written to: {path}"))
    return out


def ring_reports(sim: Any, capacities: RingCapacities) -> list[RingReport]:
    """The run (each rank of a multi-card run) replayed through the runtime's rings under
    `capacities`; none for an untraced run."""
    runs = list(getattr(sim, "ranks", None) or []) or [sim]
    return [r.ring_report(capacities) for r in runs
            if r is not None and getattr(r, "trace", None) is not None]


def write_scope_stats(reports: list[RingReport], build: BuildDir) -> list[Artifact]:
    """`scope_stats/scope_stats.jsonl` per report (per rank, under `rank<r>/d0/`)."""
    out = []
    for r, report in enumerate(reports):
        path = _scope_stats(report, build.dfx(r) if len(reports) > 1 else build.dfx())
        q = shlex.quote(str(path))
        out.append(Artifact("scope_stats", path, (
            f"scope_stats.jsonl (estimated by the ring model) written to {q} — render "
            f"with:\n  {VIEWERS}.scope_stats_plot {q}")))
    return out


def _preds(deps: Path, ids: Any, trace: Any) -> dict[int, list[int]]:
    """The producers of each task by deps.json's edges (the runtime's rule), in trace ids
    (an edge from a task the trace does not hold, an alloc, orders nothing timed)."""
    back = {ids.raw(t.id): t.id for t in trace.tasks if t.id in ids}
    preds: dict[int, list[int]] = {}
    try:
        edges = json.loads(deps.read_text())["edges"]
    except (OSError, ValueError, KeyError):
        edges = [{"pred": ids.raw(e.src), "succ": ids.raw(e.dst)} for e in trace.edges
                 if e.src in ids and e.dst in ids]
    for e in edges:
        p, s = back.get(int(e["pred"])), back.get(int(e["succ"]))
        if p is not None and s is not None:
            preds.setdefault(s, []).append(p)
    return preds


def critical_path_us(sim: Any) -> float | None:
    """The estimated schedule's makespan in µs (the trace's edges), or None untraced."""
    trace = getattr(sim, "trace", None)
    if trace is None or not trace.tasks:
        return None
    preds: dict[int, list[int]] = {}
    for e in trace.edges:
        preds.setdefault(e.dst, []).append(e.src)
    slots: list[Slot] = place_blocks(trace, preds)
    if not slots:
        return 0.0
    ticks = max(s.end for s in slots) - min(s.start for s in slots)
    return ticks * 1e6 / sys_cnt_freq(trace.platform)


__all__ = ["Artifact", "critical_path_us", "ring_reports", "write_passes", "write_run",
           "write_scope_stats"]
