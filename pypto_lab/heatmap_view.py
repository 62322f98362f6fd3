"""`pypto_lab.heatmap`: the mismatch heatmap view and its controls.

The figure shows one metric (the one picked); switching the metric, the output, a
leading index or the window redraws from numpy in milliseconds. A large output is drawn
pooled (each cell the worst element of its block); the window controls show any part of
it at full resolution, and "next mismatch" walks the windows that hold mismatches.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto_lab.coerce import run_of
from pypto_lab.figures.heatmap import heatmap_figure
from pypto_lab.figures.mismatch import MAX_SIDE, METRICS, slice_2d
from pypto_lab.runs import LabRun
from pypto_lab.views import FigureView, Raw


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
        super().__init__(spec, f"heatmap {run.kernel}.{self.output}", "\n".join(lines))

    def plane_shape(self) -> tuple[int, int]:
        return slice_2d(self.run.output(self.output).actual, self.lead).shape

    def mismatch_windows(self, side: int = MAX_SIDE) -> list[tuple[int, int]]:
        """Corners (row, col) of the `side`-square windows holding mismatches, in order."""
        out = self.run.output(self.output)
        a = slice_2d(out.actual, self.lead).astype(np.float64)
        e = slice_2d(out.expected, self.lead).astype(np.float64)
        with np.errstate(invalid="ignore"):
            bad = ~np.isclose(a, e, out.rtol, out.atol)
        rows, cols = np.nonzero(bad)
        corners = sorted({(int(r) // side * side, int(c) // side * side)
                          for r, c in zip(rows, cols)})
        return corners

    def widget(self) -> Any:
        import ipywidgets as w

        out = w.Output()

        def draw(view: HeatmapView) -> None:
            # replace, not add: clear_output(wait=True) only waits for outputs that arrive
            # as kernel messages, and append_display_data sets the trait directly
            out.outputs = ()
            out.append_display_data(Raw(view.figure_bundle()))

        draw(self)
        return w.VBox([self.controls(draw), out])

    def bundle(self) -> dict:
        """The live form (controls over the figure, in a widget: only an Output widget
        receives what a control's callback displays) and the figure itself as plotly
        JSON and HTML, which a reopened notebook draws without the kernel."""
        return FigureView.bundle(self)

    def controls(self, draw: Any) -> Any:
        """Output, metric, leading indices, full-resolution window; `draw(view)` shows
        the view they pick."""
        import ipywidgets as w

        names = [o.name for o in self.run.outputs]
        pick = w.Dropdown(options=names, value=self.output, description="output",
                          layout={"width": "240px"})
        metric = w.ToggleButtons(options=list(METRICS), value=self.metric,
                                 description="metric", tooltips=list(METRICS.values()),
                                 style={"button_width": "64px"})
        dims = w.HBox()
        full = w.Checkbox(value=self.window is not None, description="full resolution window",
                          indent=False, layout={"width": "200px"})
        row = w.IntSlider(description="rows from", continuous_update=False, step=16)
        col = w.IntSlider(description="cols from", continuous_update=False, step=16)
        nxt = w.Button(description="next mismatch", icon="forward", layout={"width": "150px"})
        where = w.HBox([full, nxt, row, col])
        state = {"view": self, "busy": False}

        def lead_sliders(name: str) -> list:
            arr = self.run.output(name).actual
            return [w.IntSlider(value=0, min=0, max=arr.shape[i] - 1, description=f"dim {i}",
                                continuous_update=False) for i in range(max(0, arr.ndim - 2))]

        def fit_window() -> None:
            h, wd = state["view"].plane_shape()
            row.max, col.max = max(0, h - MAX_SIDE), max(0, wd - MAX_SIDE)
            big = h > MAX_SIDE or wd > MAX_SIDE
            where.layout.display = "" if big else "none"

        def redraw(*_: Any) -> None:
            if state["busy"]:
                return
            lead = tuple(s.value for s in dims.children)
            window = None
            if full.value:
                h, wd = HeatmapView.plane_of(self.run, pick.value, lead)
                window = (row.value, min(h, row.value + MAX_SIDE), col.value,
                          min(wd, col.value + MAX_SIDE))
            view = HeatmapView(self.run, pick.value, metric.value, lead, window)
            state["view"] = view
            draw(view)

        def on_output(change: Any) -> None:
            dims.children = lead_sliders(change["new"])
            for s in dims.children:
                s.observe(redraw, "value")
            fit_window()
            redraw()

        def next_mismatch(_: Any) -> None:
            corners = state["view"].mismatch_windows()
            if not corners:
                return
            here = (row.value, col.value) if full.value else (-1, -1)
            later = [c for c in corners if c > here] or corners
            state["busy"] = True
            try:
                row.value, col.value = later[0]
                full.value = True
            finally:
                state["busy"] = False
            redraw()

        dims.children = lead_sliders(self.output)
        for s in dims.children:
            s.observe(redraw, "value")
        fit_window()
        pick.observe(on_output, "value")
        metric.observe(redraw, "value")
        for c in (full, row, col):
            c.observe(redraw, "value")
        nxt.on_click(next_mismatch)
        return w.VBox([w.HBox([pick, metric]), dims, where])

    @staticmethod
    def plane_of(run: LabRun, name: str, lead: tuple) -> tuple[int, int]:
        return slice_2d(run.output(name).actual, lead).shape


def heatmap(obj: Any, output: str | None = None, metric: str | None = None,
            lead: tuple[int, ...] | None = None, window: tuple | None = None) -> HeatmapView:
    """Golden-mismatch heatmap of a run's output (the first failing one by default).
    `metric`: abs, rel, ulp, or the ownership views task / block; `window`: (r0, r1,
    c0, c1) to draw that part at full resolution."""
    return HeatmapView(run_of(obj), output, metric, lead, window)
