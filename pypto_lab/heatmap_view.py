"""`pypto_lab.heatmap`: the mismatch heatmap view and its controls.

The figure shows one metric (the one picked); switching the metric, the output, a
leading index or the window redraws from numpy in milliseconds. A large output is drawn
pooled (each cell the worst element of its block); zooming or clicking the map, or the
window controls, show any part of it at full resolution, and "next mismatch" walks the
windows that hold mismatches (`heatmap_explorer`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto_lab.coerce import run_of
from pypto_lab.figures.heatmap import heatmap_figure
from pypto_lab.figures.mismatch import MAX_SIDE, METRICS, slice_2d
from pypto_lab.figures.style import esc
from pypto_lab.heatmap_explorer import HeatmapExplorer
from pypto_lab.runs import LabRun
from pypto_lab.views import PLOTLY_MIME, FigureView


def _first_drift(run: LabRun) -> str | None:
    """The core's first divergence of the run's float64 shadow, in words (None: no
    shadow, or no op's error jumped)."""
    first = run.shadow.first if run.shadow is not None else None
    if first is None:
        return None
    s = first.site
    return (f"the values first drift at {s.where()} ({s.op} -> {s.dtype.name}, task "
            f"{first.task_label}): rel-L2 {first.rel_l2:.2e} against the float64 shadow")


class HeatmapView(FigureView):
    """Mismatch heatmap of one output of a run; a passing output opens on the ownership
    view (`metric="task"`: which task wrote each element)."""

    interactive = True

    def __init__(self, run: LabRun, output: str | None = None, metric: str | None = None,
                 lead: tuple[int, ...] | None = None, window: tuple | None = None):
        if not run.outputs:
            raise ValueError(f"run of {run.kernel} has no checked outputs (no golden?)")
        self.run = run
        failing = [o.name for o in run.outputs if not o.passed]
        self.output = output or (failing[0] if failing else run.outputs[0].name)
        out = run.output(self.output)
        self.metric = metric or ("abs" if not out.passed or out.writer is None else "task")
        if self.metric not in METRICS:
            raise ValueError(f"unknown metric {self.metric!r}; choose one of "
                             f"{', '.join(METRICS)}")
        self.lead = tuple(lead) if lead is not None else (0,) * max(0, out.actual.ndim - 2)
        self.window = window
        spec = heatmap_figure(out, self.metric, self.lead, window)
        lines = out.lines or [f"'{out.name}': {'PASS' if out.passed else 'FAIL'}"]
        drift = _first_drift(run) if not out.passed else None
        if drift:  # a precision loss is blamed on the op where it starts, not the store
            lines = [*lines, drift]
            title = spec.get("layout", {}).get("title")
            if isinstance(title, dict) and "text" in title:
                title["text"] += f"<br><sub>{esc(drift)}</sub>"
        super().__init__(spec, f"heatmap {run.kernel}.{self.output}", "\n".join(lines))

    def plane_shape(self) -> tuple[int, int]:
        return slice_2d(self.run.output(self.output).actual, self.lead).shape

    def mismatch_windows(self, side: int = MAX_SIDE) -> list[tuple[int, int]]:
        """Corners (row, col) of the `side`-square windows holding mismatches, in order."""
        failing = self.run.output(self.output).failing()  # the comparator's verdict
        if failing is None:
            return []
        rows, cols = np.nonzero(slice_2d(failing, self.lead))
        corners = sorted({(int(r) // side * side, int(c) // side * side)
                          for r, c in zip(rows, cols)})
        return corners

    def widget(self) -> Any:
        """Controls over a `LiveFigure` of the map: the controls and the figure's own
        zooms and clicks redraw it in place (see `heatmap_explorer`)."""
        import ipywidgets as w

        from pypto_lab.live_figure import LiveFigure

        fig = LiveFigure(self.live_spec())

        def draw(view: HeatmapView) -> None:
            fig.figure = view.live_spec()

        explorer = HeatmapExplorer(self, draw)
        fig.on_event(explorer.on_figure_event)
        return w.VBox([explorer.controls, fig, explorer.hint])

    def live_spec(self) -> dict:
        """The figure spec as the live widget draws it (with the plotly config)."""
        return self.figure_bundle()[PLOTLY_MIME]

    def bundle(self) -> dict:
        """The live form (controls over the figure, in a widget) and the figure itself
        as plotly JSON and HTML, which a reopened notebook draws without the kernel."""
        return FigureView.bundle(self)

    def saved_bundle(self) -> dict:
        """The map as a static SVG: what a saved notebook shows in place of the live
        form. Not the plotly JSON: a map's spec carries every cell's hover values (about
        1 MB for a pooled 128x128 map), which the live widget already sends; its twin
        would send and store them a second time. The SVG is a few KB."""
        return {"text/plain": self.text(), "image/svg+xml": self.svg()}

    @staticmethod
    def plane_of(run: LabRun, name: str, lead: tuple) -> tuple[int, int]:
        return slice_2d(run.output(name).actual, lead).shape


def heatmap(obj: Any, output: str | None = None, metric: str | None = None,
            lead: tuple[int, ...] | None = None, window: tuple | None = None) -> HeatmapView:
    """Golden-mismatch heatmap of a run's output (the first failing one by default).
    `metric`: abs, rel, ulp, tol (error ÷ the comparator's threshold), or the ownership
    views task / block; `window`: (r0, r1,
    c0, c1) to draw that part at full resolution."""
    return HeatmapView(run_of(obj), output, metric, lead, window)
