"""The live heatmap: controls above the figure, and the figure's own zooms and clicks.

A large output is drawn pooled (each cell the worst element of a block). Zooming into
the pooled map (a box drag, or a pan) redraws the zoomed window from the kernel's arrays,
at full resolution when it fits `MAX_SIDE` a side and pooled more finely otherwise; a
click on a pooled cell opens the `MAX_SIDE` window around it; a double click (plotly's
autorange) goes back to the whole plane. The same window is what the "full resolution
window" controls pick, so the two stay in step. Everything here is plain Python over
events (`on_figure_event`), tested without a browser; `LiveFigure` delivers the events.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from pypto_lab.figures.mismatch import MAX_SIDE, METRICS, metrics_for, pool_factor

Window = tuple[int, int, int, int]
_HINT = ("<small style='color:#555'>Drag a box on the map (or click a cell) for the "
         "full-resolution values of that window; double-click for the whole output. "
         "Needs the running kernel.</small>")


def zoom_window(plane: tuple[int, int], x: list, y: list) -> Window | None:
    """The (r0, r1, c0, c1) window of a `plane`-shaped map that axis ranges `x`
    (columns) and `y` (rows) show; element (r, c) is drawn over [c-0.5, c+0.5] x
    [r-0.5, r+0.5]. None when they show the whole plane (or nothing of it)."""
    h, w = plane
    c0, c1 = _span(x, w)
    r0, r1 = _span(y, h)
    if c1 <= c0 or r1 <= r0 or (r0, r1, c0, c1) == (0, h, 0, w):
        return None
    return (r0, r1, c0, c1)


def _span(limits: list, n: int) -> tuple[int, int]:
    lo, hi = sorted(float(v) for v in limits)
    # the first and one past the last element whose span reaches strictly inside
    return max(0, math.floor(lo - 0.5) + 1), min(n, math.ceil(hi + 0.5))


def click_window(plane: tuple[int, int], x: float, y: float, side: int = MAX_SIDE
                 ) -> Window:
    """The `side`-square window (16-aligned, inside the plane) around element (y, x)."""
    h, w = plane

    def corner(i: float, n: int) -> int:
        start = round(i) - side // 2
        return max(0, min(start // 16 * 16, n - side))

    r0, c0 = corner(y, h), corner(x, w)
    return (r0, min(h, r0 + side), c0, min(w, c0 + side))


def is_pooled(plane: tuple[int, int], window: Window | None) -> bool:
    """Whether the map of `window` (or the whole plane) is drawn pooled."""
    h, w = (window[1] - window[0], window[3] - window[2]) if window else plane
    return pool_factor(h, MAX_SIDE) * pool_factor(w, MAX_SIDE) > 1


class HeatmapExplorer:
    """Controls for a `HeatmapView`; `draw(view)` shows each view they (or the figure's
    events) pick. `controls` is the ipywidgets box; `hint` tells what zoom and click do
    (shown for pooled maps)."""

    def __init__(self, view: Any, draw: Callable[[Any], None]):
        import ipywidgets as w

        self.view = view
        self.draw = draw
        self.window: Window | None = view.window
        self._busy = False
        run = view.run
        self.pick = w.Dropdown(options=[o.name for o in run.outputs], value=view.output,
                               description="output", layout={"width": "240px"})
        # the label sits beside the buttons as its own widget: as the ToggleButtons'
        # description it took a line of its own and pushed the buttons below it
        metrics = metrics_for(run.output(view.output))
        self.metric = w.ToggleButtons(options=metrics, value=view.metric,
                                      tooltips=[METRICS[m] for m in metrics],
                                      style={"button_width": "64px"},
                                      layout={"width": "max-content"})
        metric_label = w.Label("metric", layout={"margin": "0 4px 0 16px"})
        self.dims = w.HBox()
        self.full = w.Checkbox(value=self.window is not None, indent=False,
                               description="full resolution window", layout={"width": "200px"})
        self.row = w.IntSlider(description="rows from", continuous_update=False, step=16)
        self.col = w.IntSlider(description="cols from", continuous_update=False, step=16)
        self.next = w.Button(description="next mismatch", icon="forward",
                             layout={"width": "150px"})
        self.where = w.HBox([self.full, self.next, self.row, self.col])
        self.hint = w.HTML(_HINT)
        self.controls = w.VBox([w.HBox([self.pick, metric_label, self.metric],
                                       layout={"align_items": "center"}),
                                self.dims, self.where])
        self._lead_sliders()
        self._fit()
        self.pick.observe(self._on_output, "value")
        self.metric.observe(lambda _: self.redraw(), "value")
        for c in (self.full, self.row, self.col):
            c.observe(self._on_window_controls, "value")
        self.next.on_click(self.next_mismatch)

    # --- state -------------------------------------------------------------------------
    def lead(self) -> tuple:
        return tuple(s.value for s in self.dims.children)

    def plane(self) -> tuple[int, int]:
        return self.view.plane_of(self.view.run, self.pick.value, self.lead())

    def redraw(self) -> None:
        if self._busy:
            return
        view = type(self.view)(self.view.run, self.pick.value, self.metric.value,
                               self.lead(), self.window)
        self.view = view
        self.draw(view)

    def show_window(self, window: Window | None) -> None:
        """Draw `window` (None: the whole plane) and set the window controls to it."""
        self.window = window
        self._busy = True
        try:
            self.full.value = window is not None
            if window is not None:
                self.row.value, self.col.value = window[0], window[2]
        finally:
            self._busy = False
        self.redraw()

    # --- the figure's events ---------------------------------------------------------
    def on_figure_event(self, event: dict) -> None:
        """A zoom / reset / click on the drawn map (see `LiveFigure`)."""
        kind, plane = event.get("kind"), self.plane()
        if kind == "reset":
            if self.window is not None:
                self.show_window(None)
        elif kind == "zoom" and is_pooled(plane, self.window):
            window = zoom_window(plane, event["x"], event["y"])
            if window != self.window:
                self.show_window(window)
        elif kind == "click" and is_pooled(plane, self.window):
            self.show_window(click_window(plane, float(event["x"]), float(event["y"])))

    # --- the controls ----------------------------------------------------------------
    def _lead_sliders(self) -> None:
        import ipywidgets as w

        arr = self.view.run.output(self.pick.value).actual
        self.dims.children = [
            w.IntSlider(value=0, min=0, max=arr.shape[i] - 1, description=f"dim {i}",
                        continuous_update=False) for i in range(max(0, arr.ndim - 2))]
        for s in self.dims.children:
            s.observe(lambda _: self.redraw(), "value")

    def _fit(self) -> None:
        h, wd = self.plane()
        # any corner (a zoom may start a window anywhere); the window stops at the edge
        self.row.max, self.col.max = max(0, h - 1), max(0, wd - 1)
        big = h > MAX_SIDE or wd > MAX_SIDE
        self.where.layout.display = "" if big else "none"
        self.hint.layout.display = "" if big else "none"

    def _on_output(self, _change: Any) -> None:
        metrics = metrics_for(self.view.run.output(self.pick.value))
        if list(self.metric.options) != metrics:
            self._busy = True
            try:
                keep = self.metric.value if self.metric.value in metrics else "abs"
                self.metric.options = metrics
                self.metric.tooltips = [METRICS[m] for m in metrics]
                self.metric.value = keep
            finally:
                self._busy = False
        self._lead_sliders()
        self._fit()
        self.window = None
        self.show_window(None)

    def _on_window_controls(self, _change: Any) -> None:
        if self._busy:
            return
        if not self.full.value:
            self.window = None
        else:
            h, wd = self.plane()
            self.window = (self.row.value, min(h, self.row.value + MAX_SIDE), self.col.value,
                           min(wd, self.col.value + MAX_SIDE))
        self.redraw()

    def next_mismatch(self, _button: Any = None) -> None:
        corners = self.view.mismatch_windows()
        if not corners:
            return
        here = (self.row.value, self.col.value) if self.full.value else (-1, -1)
        r0, c0 = ([c for c in corners if c > here] or corners)[0]
        h, wd = self.plane()
        r0, c0 = min(r0, max(0, h - MAX_SIDE)), min(c0, max(0, wd - MAX_SIDE))
        self.show_window((r0, min(h, r0 + MAX_SIDE), c0, min(wd, c0 + MAX_SIDE)))
