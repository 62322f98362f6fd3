"""The workbench without IPython: each function takes a kernel, a compiled program,
a run or a `%%pypto` result, and returns a display object (`views.View`)."""
from __future__ import annotations

import html
from typing import Any

from pypto.ir.printer import print_program
from pypto_lab.figures.heatmap import METRICS, heatmap_figure
from pypto_lab.figures.pipeline import pass_diff, pass_table, stages_figure
from pypto_lab.figures.region_graph import graph_figure
from pypto_lab.figures.timeline import timeline_figure
from pypto_lab.graphs import pipe_label, region_graph, task_graph, ub_text
from pypto_lab.model import KernelModel
from pypto_lab.runs import LabRun
from pypto_lab.schedule import Schedule, chrome_trace, estimate, write_chrome_trace
from pypto_lab.views import FigureView, HtmlView, Panel, View, table_html, table_text

# --- coercion -----------------------------------------------------------------------


def compiled_of(obj: Any) -> Any:
    """A `CompiledProgram` from a kernel, a compiled program or a result object."""
    if hasattr(obj, "program") and hasattr(obj, "records"):
        return obj
    if hasattr(obj, "compiled") and obj.compiled is not None:
        return obj.compiled
    if hasattr(obj, "kernels") and obj.kernels:
        return compiled_of(obj.kernels[-1])
    if hasattr(obj, "compile"):
        return obj.compile()
    raise TypeError(f"expected a @pl.jit kernel, a CompiledProgram or a %%pypto result, "
                    f"not {type(obj).__name__}")


def run_of(obj: Any) -> LabRun:
    """The `LabRun` held by `obj` (a `LabRun`, a kernel result or a cell result)."""
    if isinstance(obj, LabRun):
        return obj
    run = getattr(obj, "run", None)
    if isinstance(run, LabRun):
        return run
    for k in getattr(obj, "kernels", ()):
        if isinstance(getattr(k, "run", None), LabRun):
            return k.run
    raise ValueError("no simulated run here: use %%pypto --run SPECS [GOLDEN], or "
                     "pypto_lab.run(kernel, specs, golden)")


# --- summary ------------------------------------------------------------------------

_REGION_HEADER = ["region", "kind", "class", "ops per unit", "UB estimate", "loops", "pipe"]


def region_rows(model: KernelModel) -> list[list[str]]:
    rows = []
    for r in model.regions:
        kind = r.kind + (f" ×{r.core_num}" if r.kind == "spmd" else "")
        if r.parent != model.entry:
            kind += f" (in {r.parent})"
        rows.append([r.label, kind, r.classification,
                     " ".join(f"{u}={n}" for u, n in r.ops_per_unit.items()), ub_text(r),
                     " › ".join(f.label for f in r.loops) or "-",
                     pipe_label(r) if r.classification == "mixed" else "-"])
    return rows


def summary_view(model: KernelModel) -> HtmlView:
    """Regions, tasks and warnings of one kernel as a compact table."""
    rows = region_rows(model)
    head = (f"{model.name} on {model.platform}: {len(model.regions)} region(s), "
            f"{len(model.sites)} launch site(s), {len(model.edges)} region edge(s)")
    text = head + ("\n" + table_text(rows, _REGION_HEADER) if rows else "")
    warn = list(model.warnings)
    if warn:
        text += "\nwarnings:\n" + "\n".join("  " + w for w in warn)
    esc = [[html.escape(c) for c in r] for r in rows]
    for r, region in zip(esc, model.regions):
        if region.over_budget:
            r[4] = f"<b style='color:#c0392b'>{r[4]}</b>"
    body = table_html(esc, _REGION_HEADER) if rows else "<i>no InCore regions</i>"
    warn_html = "".join(f"<div style='color:#8a6d3b'>⚠ {html.escape(w)}</div>" for w in warn)
    return HtmlView(f"summary {model.name}", text,
                    f"<div style='margin:4px 0'><b>{html.escape(head)}</b>{body}{warn_html}"
                    "</div>")


def ir_view(compiled: Any) -> HtmlView:
    """The final IR, printed as `pl` source."""
    text = print_program(compiled.program)
    return HtmlView("IR", text, "<details open><summary><b>IR after all passes</b></summary>"
                    "<pre style='font-size:12px;max-height:480px;overflow:auto'>"
                    f"{html.escape(text)}</pre></details>")


# --- graph --------------------------------------------------------------------------


def show_graph(obj: Any, *, max_tasks: int = 60) -> View:
    """Region graph of a kernel; with a simulated run, also its task-level graph."""
    compiled = compiled_of(obj)
    model = KernelModel.of(compiled)
    g = region_graph(model)
    summary = (f"nodes: {', '.join(sorted(g.nodes))}\nedges: "
               + ", ".join(f"{u}->{v}:{d['kind']}" for u, v, d in sorted(g.edges(data=True))))
    view = FigureView(graph_figure(g, f"region graph · {model.name}"),
                      f"region graph {model.name}", summary)
    try:
        run = run_of(obj)
    except ValueError:
        return view
    tg = task_graph(model, run.tasks, max_nodes=max_tasks, races=run.races,
                    uninit=run.uninit_reads)
    found = ""
    if run.races or run.uninit_reads:
        found = (f"; {len(run.races)} race(s), {len(run.uninit_reads)} uninitialized "
                 "read site(s)")
    task_view = FigureView(graph_figure(tg, f"task graph · {model.name} "
                                            f"(one node per {tg.graph['fold']}){found}"),
                           f"task graph {model.name}",
                           f"{tg.number_of_nodes()} nodes, {tg.number_of_edges()} edges, "
                           f"folded per {tg.graph['fold']}{found}")
    return Panel(f"graphs {model.name}", [view, task_view])


# --- heatmap ------------------------------------------------------------------------


class HeatmapView(FigureView):
    """Mismatch heatmap with controls: output, leading-dim slice, metric."""

    interactive = True

    def __init__(self, run: LabRun, output: str | None = None, metric: str = "abs",
                 lead: tuple[int, ...] | None = None):
        if not run.outputs:
            raise ValueError(f"run of {run.kernel} has no checked outputs (no golden?)")
        self.run = run
        failing = [o.name for o in run.outputs if not o.passed]
        self.output = output or (failing[0] if failing else run.outputs[0].name)
        self.metric = metric
        out = run.output(self.output)
        self.lead = tuple(lead) if lead is not None else (0,) * max(0, out.actual.ndim - 2)
        fig = heatmap_figure(out, metric, self.lead)
        lines = out.lines or [f"'{out.name}': {'PASS' if out.passed else 'FAIL'}"]
        super().__init__(fig, f"heatmap {run.kernel}.{self.output}", "\n".join(lines))

    def widget(self) -> Any:
        import ipywidgets as w

        names = [o.name for o in self.run.outputs]
        pick = w.Dropdown(options=names, value=self.output, description="output")
        metric = w.ToggleButtons(options=list(METRICS), value=self.metric, description="metric")
        dims = w.HBox()
        out = w.Output()

        def lead_sliders(name: str) -> list:
            arr = self.run.output(name).actual
            return [w.IntSlider(value=0, min=0, max=arr.shape[i] - 1, description=f"dim {i}",
                                continuous_update=False) for i in range(max(0, arr.ndim - 2))]

        def redraw(*_: Any) -> None:
            lead = tuple(s.value for s in dims.children)
            view = HeatmapView(self.run, pick.value, metric.value, lead)
            # replace, not add: clear_output(wait=True) only waits for outputs that arrive
            # as kernel messages, and append_display_data sets the trait directly
            out.outputs = ()
            out.append_display_data(_FigureOnly(view))

        def on_output(change: Any) -> None:
            dims.children = lead_sliders(change["new"])
            for s in dims.children:
                s.observe(redraw, "value")
            redraw()

        dims.children = lead_sliders(self.output)
        for s in dims.children:
            s.observe(redraw, "value")
        pick.observe(on_output, "value")
        metric.observe(redraw, "value")
        out.append_display_data(_FigureOnly(self))
        return w.VBox([w.HBox([pick, metric]), dims, out])


class _FigureOnly:
    def __init__(self, view: FigureView):
        self.view = view

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        return self.view.figure_bundle()


def heatmap(obj: Any, output: str | None = None, metric: str = "abs",
            lead: tuple[int, ...] | None = None) -> HeatmapView:
    """Golden-mismatch heatmap of a run's output (the first failing one by default)."""
    return HeatmapView(run_of(obj), output, metric, lead)


# --- timeline -----------------------------------------------------------------------


class TimelineView(FigureView):
    """Estimated swimlane; `.chrome_trace()` / `.save(path)` export it for Perfetto."""

    def __init__(self, run: LabRun, schedule: Schedule):
        self.run = run
        self.schedule = schedule
        lanes = ", ".join(schedule.lanes)
        super().__init__(timeline_figure(schedule, f"timeline · {run.kernel}"),
                         f"timeline {run.kernel}",
                         f"{len(schedule.bars)} bars on {len(schedule.lanes)} lanes ({lanes}); "
                         f"makespan {schedule.makespan_us:.3f} us (estimate)")

    def chrome_trace(self) -> dict:
        return chrome_trace(self.schedule, self.run.kernel)

    def save(self, path: str) -> Any:
        """Write Chrome/Perfetto trace JSON; open it in ui.perfetto.dev."""
        return write_chrome_trace(self.schedule, path, self.run.kernel)


def timeline(obj: Any, *, pickup_us: float | None = None) -> TimelineView:
    """Estimated timeline of a simulated run from the trace's cost model."""
    run = run_of(obj)
    platform = getattr(run.trace, "platform", None)
    sched = estimate(run.tasks, aic=getattr(platform, "aic_cores", 24),
                     aiv=getattr(platform, "aiv_cores", 48),
                     clock_ghz=getattr(platform, "clock_ghz", 1.8),
                     pickup_us=pickup_us if pickup_us is not None else 0.0)
    return TimelineView(run, sched)


# --- pipeline -----------------------------------------------------------------------


class PipelineView(View):
    """The passes with their IR diffs (tabs in a widget, details in HTML), and the
    run-time pipelines of the kernel."""

    interactive = True

    def __init__(self, compiled: Any):
        self.compiled = compiled
        self.records = list(compiled.records)
        self.model = KernelModel.of(compiled)
        self.stages = stages_figure(self.model)
        self.title = f"pipeline {compiled.program.name}"

    def has_figure(self) -> bool:
        return self.stages is not None

    def text(self) -> str:
        rows = pass_table(self.records)
        out = [self.title, table_text(rows, ["#", "pass", "changed", "summary"])]
        if self.stages is not None:
            out.append("run-time pipelines: " + ", ".join(
                dict.fromkeys(y for y in self.stages.data[0].y)))
        return "\n".join(out)

    def html(self, include_js: bool = True) -> str:
        parts = [f"<b>{html.escape(self.title)}</b>"]
        for i, r in enumerate(self.records):
            _, diff = pass_diff(r)
            opened = " open" if r.changed and i == 0 else ""
            parts.append(f"<details{opened}><summary>{i}. <b>{html.escape(r.name)}</b> — "
                         f"{html.escape(r.summary)} ({'changed' if r.changed else 'no change'})"
                         f"</summary>{diff}</details>")
        if self.stages is not None:
            parts.append(FigureView(self.stages, "stages").html(include_js))
        return "<div>" + "".join(parts) + "</div>"

    def widget(self) -> Any:
        import ipywidgets as w

        names = [f"{i}. {r.name}" + ("" if r.changed else " (no change)")
                 for i, r in enumerate(self.records)]
        slider = w.SelectionSlider(options=names, value=names[0], description="pass",
                                   continuous_update=False, readout=False,
                                   layout={"width": "420px"})
        diff = w.HTML(pass_diff(self.records[0])[1])
        summary = w.HTML()

        def show(change: Any) -> None:
            r = self.records[names.index(change["new"])]
            summary.value = (f"<b>{html.escape(change['new'])}</b> — "
                             f"<i>{html.escape(r.summary)}</i> · {r.seconds * 1e3:.2f} ms")
            diff.value = pass_diff(r)[1]

        slider.observe(show, "value")
        show({"new": names[0]})
        kids = [slider, summary, diff]
        if self.stages is not None:
            out = w.Output()
            out.append_display_data(_FigureOnly(FigureView(self.stages, "stages")))
            kids.append(out)
        return w.VBox(kids)


def pipeline_view(obj: Any) -> PipelineView:
    """Passes as a list with before/after IR diffs, plus stage/ping-pong schematics."""
    return PipelineView(compiled_of(obj))


def inspect(obj: Any) -> Panel:
    """Everything about a kernel or result: summary, IR, graph, and the run if any."""
    compiled = compiled_of(obj)
    model = KernelModel.of(compiled)
    parts: list[View] = [summary_view(model), show_graph(obj), ir_view(compiled)]
    try:
        run = run_of(obj)
    except ValueError:
        run = None
    if run is not None:
        parts.append(HtmlView("run", run.report, f"<pre>{html.escape(run.report)}</pre>"))
        if run.outputs:
            parts.append(heatmap(run))
        if run.tasks:
            parts.append(timeline(run))
    return Panel(f"inspect {model.name}", parts)
