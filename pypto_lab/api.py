"""The workbench without IPython: each function takes a kernel, a compiled program,
a run or a `%%pypto` result, and returns a display object (`views.View`)."""
from __future__ import annotations

import base64
import html
import json
from typing import Any

import numpy as np

from pypto.ir.printer import print_program
from pypto_lab.coerce import compiled_of, run_of
from pypto_lab.dump_table import DumpView, dumps  # noqa: F401 - API
from pypto_lab.figures.data_path import data_path_figure
from pypto_lab.figures.pipeline import pass_diff, pass_table, stages_figure
from pypto_lab.figures.precision import drift_figure, ladder_figure
from pypto_lab.figures.ranks import rank_figure
from pypto_lab.figures.region_graph import graph_figure
from pypto_lab.figures.rings import rings_figure
from pypto_lab.figures.task_grid import grid_planes, task_grid_figure
from pypto_lab.figures.timeline import timeline_figure
from pypto_lab.figures.windows import window_figure
from pypto_lab.graphs import pipe_label, region_graph, task_graph, ub_text
from pypto_lab.heatmap_view import HeatmapView  # noqa: F401
from pypto_lab.heatmap_view import heatmap as _heatmap
from pypto_lab.model import KernelModel
from pypto_lab.pipelining import inner_pipelines
from pypto_lab.rank_steps import on_rank, rank_run  # noqa: F401 - on_rank is API
from pypto_lab.rank_steps import summary as rank_summary
from pypto_lab.runs import LabRun
from pypto_lab.schedule import (
    CriticalPath,
    Schedule,
    chrome_trace,
    critical_path,
    estimate,
    write_chrome_trace,
)
from pypto_lab.views import FigureView, HtmlView, Panel, View, output_of, table_html, table_text

# --- summary ------------------------------------------------------------------------

_REGION_HEADER = ["region", "kind", "class", "ops per unit", "UB estimate", "loops", "pipe"]
_RAN_HEADER = "ran"


def ran_text(decisions: tuple) -> str:
    """How a region's launches ran in a simulated run and why (its `Decision`s), or
    "-" when the run did not launch it."""
    return "; ".join(str(d) for d in decisions) or "-"


def region_rows(model: KernelModel, run: LabRun | None = None) -> list[list[str]]:
    """One row per region (`_REGION_HEADER`); with a simulated run, also how its
    launches ran (`ran_text`)."""
    rows = []
    for r in model.regions:
        kind = r.kind + (f" ×{r.core_num}" if r.kind == "spmd" else "")
        if r.parent != model.entry:
            kind += f" (in {r.parent})"
        rows.append([r.label, kind, r.classification,
                     " ".join(f"{u}={n}" for u, n in r.ops_per_unit.items()), ub_text(r),
                     " › ".join(f.label for f in r.loops) or "-",
                     pipe_label(r) if r.classification == "mixed" else "-"])
        if run is not None:
            rows[-1].append(ran_text(run.decisions.get(r.name, ())))
    return rows


def summary_view(model: KernelModel, run: LabRun | None = None) -> HtmlView:
    """Regions, tasks and warnings of one kernel as a compact table; with a simulated
    run, how each region's launches ran (batched, split or block by block) and why."""
    rows = region_rows(model, run)
    header = _REGION_HEADER + ([_RAN_HEADER] if run is not None else [])
    head = (f"{model.name} on {model.platform}: {len(model.regions)} region(s), "
            f"{len(model.sites)} launch site(s), {len(model.edges)} region edge(s)")
    text = head + ("\n" + table_text(rows, header) if rows else "")
    warn = list(model.warnings)
    if warn:
        text += "\nwarnings:\n" + "\n".join("  " + w for w in warn)
    esc = [[html.escape(c) for c in r] for r in rows]
    for r, region in zip(esc, model.regions):
        if region.over_budget:
            r[4] = f"<b style='color:#c0392b'>{r[4]}</b>"
    body = table_html(esc, header) if rows else "<i>no InCore regions</i>"
    warn_html = "".join(f"<div style='color:#8a6d3b'>⚠ {html.escape(w)}</div>" for w in warn)
    return HtmlView(f"summary {model.name}", text,
                    f"<div style='margin:4px 0'><b>{html.escape(head)}</b>{body}{warn_html}"
                    "</div>")


def ir_view(compiled: Any) -> HtmlView:
    """The final IR, printed as `pl` source."""
    text = print_program(compiled.program)
    return HtmlView("IR", text, "<details open><summary><b>IR after all passes</b></summary>"
                    "<pre style='font-size:12px;max-height:480px;overflow:auto;white-space:pre'>"
                    f"{html.escape(text)}</pre></details>")


# --- graph --------------------------------------------------------------------------


def show_graph(obj: Any, *, max_tasks: int = 60) -> View:
    """Region graph of a kernel, with the data path of each mixed region; with a
    simulated run, also its tasks laid over the output's tiles (and the task graph with
    the sanitizer findings, when there are any)."""
    compiled = compiled_of(obj)
    model = KernelModel.of(compiled)
    views = region_views(compiled, model) + task_views(obj, max_tasks=max_tasks)
    return views[0] if len(views) == 1 else Panel(f"graphs {model.name}", views)


def region_views(compiled: Any, model: KernelModel) -> list[View]:
    """The region graph and the data path of each mixed region (no run needed)."""
    g = region_graph(model)
    summary = (f"nodes: {', '.join(sorted(g.nodes))}\nedges: "
               + ", ".join(f"{u}->{v}:{d['kind']}" for u, v, d in sorted(g.edges(data=True))))
    views: list[View] = [FigureView(graph_figure(g, f"region graph · {model.name}"),
                                    f"region graph {model.name}", summary)]
    return views + data_path_views(compiled, model)


def task_views(obj: Any, *, max_tasks: int = 60) -> list[View]:
    """What ran: the tasks over the output's tiles (and the task graph, with the
    sanitizer findings when there are any); nothing without a simulated run."""
    try:
        run = run_of(obj)
    except ValueError:
        return []
    model = KernelModel.of(compiled_of(obj))
    platform = getattr(run.trace, "platform", None)
    planes = grid_planes(run)
    views: list[View] = []
    for plane in planes:
        grid = task_grid_figure(plane, f"tasks · {model.name}",
                                clock_ghz=getattr(platform, "clock_ghz", 1.8))
        n = len({b["task"] for b in plane.boxes})
        unwritten = (f"; {plane.unwritten_count} element(s) no task wrote"
                     if plane.unwritten_count else "")
        views.append(FigureView(grid, f"task grid {model.name} · {plane.tensor}",
                                f"{n} task(s) over {plane.tensor}'s {plane.shape[0]}x"
                                f"{plane.shape[1]} plane, by estimated cost{unwritten}"))
    if not planes or run.races or run.uninit_reads:
        views.append(_task_graph_view(model, run, max_tasks))
    return views


def _task_graph_view(model: KernelModel, run: LabRun, max_tasks: int) -> FigureView:
    tg = task_graph(model, run.tasks, max_nodes=max_tasks, races=run.races,
                    uninit=run.uninit_reads)
    found = ""
    if run.races or run.uninit_reads:  # (a line of its own: the title must not be cut)
        found = (f"<br>{len(run.races)} race(s), {len(run.uninit_reads)} uninitialized "
                 "read site(s)")
    return FigureView(graph_figure(tg, f"task graph · {model.name} "
                                       f"(one node per {tg.graph['fold']}){found}"),
                      f"task graph {model.name}",
                      f"{tg.number_of_nodes()} nodes, {tg.number_of_edges()} edges, "
                      f"folded per {tg.graph['fold']}{found.replace('<br>', '; ')}")


def data_path_views(compiled: Any, model: KernelModel) -> list[View]:
    """GM → L1 → L0 → cube → L0C → pipe → UB → vector → GM for each mixed region."""
    infos = {getattr(r, "function", None): r for r in getattr(compiled, "regions", ()) or ()}
    out: list[View] = []
    for r in model.regions:
        if r.classification != "mixed":
            continue
        info = infos.get(r.name)
        out.append(FigureView(data_path_figure(r, info, f"data path · {r.label}"),
                              f"data path {r.label}",
                              "GM > L1 > L0A/L0B > cube > L0C > pipe > UB > vector > GM"))
    return out


# --- heatmap ------------------------------------------------------------------------

heatmap = _heatmap


# --- timeline -----------------------------------------------------------------------


class TimelineView(FigureView):
    """Estimated swimlane with its critical path (`.critical`, None when not drawn); the
    Perfetto export is a link in the view (and `.chrome_trace()` / `.save(path)`)."""

    interactive = True

    def __init__(self, run: LabRun, schedule: Schedule, critical: CriticalPath | None = None):
        self.run = run
        self.schedule = schedule
        self.critical = critical
        lanes = ", ".join(schedule.lanes)
        summary = (f"{len(schedule.bars)} bars on {len(schedule.lanes)} lanes ({lanes}); "
                   f"makespan {schedule.makespan_us:.3f} us (estimate)")
        if critical is not None:
            summary += "\n" + critical.text()
        super().__init__(timeline_figure(schedule, f"timeline · {run.kernel}", critical),
                         f"timeline {run.kernel}", summary)

    def chrome_trace(self) -> dict:
        return chrome_trace(self.schedule, self.run.kernel)

    def save(self, path: str) -> Any:
        """Write Chrome/Perfetto trace JSON; open it in ui.perfetto.dev."""
        return write_chrome_trace(self.schedule, path, self.run.kernel)

    def export_html(self) -> str:
        """A download link carrying the trace (no kernel needed), or how to save it."""
        data = json.dumps(self.chrome_trace(), separators=(",", ":"))
        name = f"{self.run.kernel}.perfetto.json"
        if len(data) > _MAX_LINK_BYTES:
            return (f"<small>Perfetto export: <code>pypto_lab.timeline(...).save("
                    f"'{html.escape(name)}')</code>, then open it in ui.perfetto.dev</small>")
        b64 = base64.b64encode(data.encode()).decode("ascii")
        return (f"<small><a download='{html.escape(name)}' href='data:application/json;"
                f"base64,{b64}'>⤓ {html.escape(name)}</a> (Chrome trace JSON: open it in "
                f"ui.perfetto.dev or chrome://tracing)</small>")

    def html(self) -> str:
        return super().html() + self.export_html()

    def widget(self) -> Any:
        import ipywidgets as w

        return w.VBox([w.HTML(self.export_html()), output_of(self)])


_MAX_LINK_BYTES = 2_000_000


def pipeline_stages(run: LabRun) -> dict[str, int]:
    """Region function → `pl.pipeline` stage count, for regions launched inside such a
    loop (their tasks overlap in the timeline)."""
    compiled = getattr(run.raw, "compiled", None)
    if compiled is None:
        return {}
    out: dict[str, int] = {}
    for site in KernelModel.of(compiled).sites:
        for frame in site.loops:
            if frame.kind == "pipeline" and frame.stage:
                out[site.region] = max(out.get(site.region, 0), int(frame.stage))
    return out


def timeline(obj: Any, *, pickup_us: float | None = None,
             critical: bool = True) -> TimelineView:
    """Estimated timeline of a simulated run from the trace's cost model, with the
    critical path drawn over it (`critical=False`: without)."""
    run = run_of(obj)
    platform = getattr(run.trace, "platform", None)
    sched = estimate(run.tasks, aic=getattr(platform, "aic_cores", 24),
                     aiv=getattr(platform, "aiv_cores", 48),
                     clock_ghz=getattr(platform, "clock_ghz", 1.8),
                     pickup_us=pickup_us if pickup_us is not None else 0.0,
                     stages=pipeline_stages(run), inner=_inner_pipelines(run))
    return TimelineView(run, sched, critical_path(sched) if critical else None)


def rings(obj: Any, rank: int = 0) -> FigureView:
    """The runtime's ring heaps over a run (the core's replay): heap bytes and task slots
    each ring's open scopes hold at every scope begin and end, the capacities, and the
    deadlock the device would latch, at its scope's line."""
    run = run_of(obj)
    if not run.rings:
        raise ValueError(f"the run of {run.kernel} has no ring replay: it was not traced "
                         "(a harness run replays the rings of every traced run)")
    if not 0 <= rank < len(run.rings):
        raise ValueError(f"rank {rank} out of range: the run has {len(run.rings)} "
                         f"rank(s)")
    report = run.rings[rank]
    title = f"rings {run.kernel}" + (f" rank {rank}" if len(run.rings) > 1 else "")
    return FigureView(rings_figure(report, title), title, report.text())


def precision(obj: Any, stage: int | None = None) -> Panel:
    """Where the kernel's values drift from their float64 shadow (the core's
    `ShadowReport`): the ladder of every intermediate's rel-L2 error, and the drift map
    (kernel - shadow) of one stage - `stage` by its site number, default the first
    divergence, else the stage with the largest error - with the casts it went through."""
    run = run_of(obj)
    report = run.shadow
    if report is None:
        raise ValueError(f"the run of {run.kernel} has no precision shadow: run it with "
                         "%%pypto --run SPECS GOLDEN --precision (or runtime_cfg="
                         "{'sim_shadow': 'fp64'})")
    if not report.stages:
        raise ValueError(f"the precision shadow of {run.kernel} watched no value: the kernel "
                         "computes nothing from a float")
    if stage is None:
        chosen = report.first or max(report.stages, key=lambda s: (s.rel_l2 == s.rel_l2,
                                                                    s.rel_l2))
    else:
        numbers = [s.site.number for s in report.stages]
        if stage not in numbers:
            raise ValueError(f"no stage {stage} in the precision shadow of {run.kernel}; its "
                             f"stages are {', '.join(map(str, numbers))}")
        chosen = report.stage(stage)
    by_number = {s.site.number: s.site for s in report.stages}
    casts = [by_number[n] for n in chosen.casts if n in by_number]
    text = report.text()
    ladder = FigureView(ladder_figure(report, f"precision ladder · {run.kernel}"),
                        f"precision {run.kernel}", "\n".join(
                            ln for ln in text.splitlines() if not ln.startswith("  ")))
    drift = FigureView(drift_figure(chosen, f"kernel − float64 shadow · "
                                    f"[{chosen.site.number}] {chosen.site.where()} "
                                    f"{chosen.site.op}", casts),
                       f"drift [{chosen.site.number}]", "\n".join(chosen.lines()))
    head = text.splitlines()[-1]
    return Panel(f"precision {run.kernel}", [ladder, drift],
                 header_html=f"<b>{html.escape(head)}</b>", header_text=head)


def _inner_pipelines(run: LabRun) -> dict:
    compiled = getattr(run.raw, "compiled", None)
    return inner_pipelines(compiled.program) if compiled is not None else {}


# --- pipeline -----------------------------------------------------------------------


class PassesView(View):
    """The passes with their IR diffs: a slider over them live, `<details>` in HTML."""

    interactive = True

    def __init__(self, title: str, records: list):
        self.title = title
        self.records = records

    def first_changed(self) -> int:
        """The pass the view opens on: the first that changed the IR (0 if none did)."""
        return next((i for i, r in enumerate(self.records) if r.changed), 0)

    def text(self) -> str:
        rows = pass_table(self.records)
        return "\n".join([self.title, table_text(rows, ["#", "pass", "changed", "summary"])])

    def html(self) -> str:
        parts = [f"<b>{html.escape(self.title)}</b>"]
        first = self.first_changed()
        for i, r in enumerate(self.records):
            _, diff = pass_diff(r)
            opened = " open" if i == first and r.changed else ""
            parts.append(f"<details{opened}><summary>{i}. <b>{html.escape(r.name)}</b> — "
                         f"{html.escape(r.summary)} ({'changed' if r.changed else 'no change'})"
                         f"</summary>{diff}</details>")
        return "<div>" + "".join(parts) + "</div>"

    def widget(self) -> Any:
        import ipywidgets as w

        names = [f"{i}. {r.name}" + ("" if r.changed else " (no change)")
                 for i, r in enumerate(self.records)]
        first = names[self.first_changed()]
        slider = w.SelectionSlider(options=names, value=first, description="pass",
                                   continuous_update=False, readout=False,
                                   layout={"width": "420px"})
        diff = w.HTML(pass_diff(self.records[self.first_changed()])[1],
                      layout={"width": "100%", "overflow": "auto"})
        summary = w.HTML()

        def show(change: Any) -> None:
            r = self.records[names.index(change["new"])]
            summary.value = (f"<b>{html.escape(change['new'])}</b> — "
                             f"<i>{html.escape(r.summary)}</i> · {r.seconds * 1e3:.2f} ms")
            diff.value = pass_diff(r)[1]

        slider.observe(show, "value")
        show({"new": first})
        return w.VBox([w.HTML(f"<b>{html.escape(self.title)}</b>"), slider, summary, diff])


class PipelineView(Panel):
    """The passes with their IR diffs, and the run-time pipelines of the kernel
    (`pl.pipeline` buffers, the cube↔vector ping-pong) as a figure of their own."""

    def __init__(self, compiled: Any):
        self.compiled = compiled
        self.records = list(compiled.records)
        self.model = KernelModel.of(compiled)
        self.stages = stages_figure(self.model)
        title = f"pipeline {compiled.program.name}"
        parts: list[View] = [PassesView(title, self.records)]
        if self.stages is not None:
            lanes = ", ".join(dict.fromkeys(y for y in self.stages.data[0].y))
            parts.append(FigureView(self.stages, f"run-time pipelines {compiled.program.name}",
                                    f"run-time pipelines: {lanes}"))
        super().__init__(title, parts)


def ranks(obj: Any) -> FigureView:
    """The ranks of a multi-card run (a @pl.jit.host kernel's result, or the
    DeadlockError it raised): a lane per rank with its steps and notify → wait arrows."""
    run = rank_run(obj)
    return FigureView(rank_figure(run, "ranks"), "ranks", rank_summary(run))


def window_view(obj: Any, name: str) -> FigureView:
    """Window buffer `name` of a multi-card run (its result, or run_jit's result of
    one), one panel per rank's copy, each element coloured by the rank that wrote it."""
    cluster = obj if hasattr(obj, "window_writers") else getattr(obj, "sim", None)
    if not hasattr(cluster, "window_writers"):
        raise TypeError(f"window_view needs a multi-card run (the result of a @pl.jit.host "
                        f"kernel, or run_jit's result of one), not {type(obj).__name__}")
    if name not in cluster.window_names:
        raise KeyError(f"no window buffer {name!r}; the run has {cluster.window_names}")
    n = cluster.world_size
    values = [cluster.window(name, r) for r in range(n)]
    writers = [cluster.window_writers(name, r) for r in range(n)]
    lines = [f"window {name}: {list(values[0].shape)} per rank"]
    for r in range(n):
        who, count = np.unique(writers[r], return_counts=True)
        lines.append(f"  rank {r}'s copy: " + ", ".join(
            f"{c} by {'nobody' if w < 0 else f'rank {w}'}" for w, c in zip(who, count)))
    return FigureView(window_figure(name, values, writers), f"window {name}", "\n".join(lines))


def pipeline_view(obj: Any) -> PipelineView:
    """Passes as a list with before/after IR diffs, plus stage/ping-pong schematics."""
    return PipelineView(compiled_of(obj))


def inspect(obj: Any) -> Panel:
    """Everything about a kernel or result: summary, IR, graph, and the run if any."""
    compiled = compiled_of(obj)
    model = KernelModel.of(compiled)
    try:
        run = run_of(obj)
    except ValueError:
        run = None
    parts: list[View] = [summary_view(model, run), show_graph(obj), ir_view(compiled)]
    if run is not None:
        parts.append(HtmlView("run", run.report, f"<pre>{html.escape(run.report)}</pre>"))
        if run.outputs:
            parts.append(heatmap(run))
        if run.tasks:
            parts.append(timeline(run))
    return Panel(f"inspect {model.name}", parts)
