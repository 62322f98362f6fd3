"""`LiveFigure`: a plotly figure that talks back to the kernel (an anywidget).

JupyterLab's plotly mimetype draws a figure but never tells Python what the user did with
it; the heatmap needs exactly that (a zoom or a click on a pooled map asks for the
full-resolution values of that window, which only the kernel has). This widget draws
the figure spec with plotly.js in the page and sends the user's zooms, resets and
clicks to Python as custom messages; assigning `figure` redraws in place.

plotly.js itself (4.8 MB) is not part of the widget: the first live figure on a page
asks the kernel for it once (a binary buffer), later ones reuse `window.Plotly` (also
when `%load_ext pypto_lab` already put it on the page). So a heatmap's widget state
is its figure spec only, in either plotly mode. Without a kernel (a static export, a
notebook reopened later) the widget does not draw; the output's plotly mimetype twin,
stored beside it, still draws the figure as it was built.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

_ESM = r"""
function loadPlotly(model) {
  if (window.Plotly && window.Plotly.react) return Promise.resolve(window.Plotly);
  if (!window.__pyptoLabPlotly) {
    window.__pyptoLabPlotly = new Promise((resolve, reject) => {
      const onMsg = (msg, buffers) => {
        if (!msg || msg.kind !== "plotlyjs") return;
        model.off("msg:custom", onMsg);
        // plotly.js is a UMD bundle: hide an AMD loader so that it sets window.Plotly
        const amd = window.define;
        window.define = undefined;
        const s = document.createElement("script");
        s.textContent = new TextDecoder().decode(buffers[0]);
        document.head.appendChild(s);
        window.define = amd;
        if (window.Plotly) resolve(window.Plotly);
        else { window.__pyptoLabPlotly = null; reject(new Error("plotly.js did not load")); }
      };
      model.on("msg:custom", onMsg);
      model.send({kind: "plotlyjs"});
    });
  }
  return window.__pyptoLabPlotly;
}

function ranges(gd) {
  const x = gd._fullLayout.xaxis.range, y = gd._fullLayout.yaxis.range;
  return {x: [Math.min(...x), Math.max(...x)], y: [Math.min(...y), Math.max(...y)]};
}

async function render({model, el}) {
  const div = document.createElement("div");
  div.className = "pypto-live-figure";
  div.style.width = "100%";
  el.appendChild(div);
  const Plotly = await loadPlotly(model);
  // a double click also relayouts (back to the initial ranges): hold each zoom back a
  // moment so that a double click can cancel it and send one reset instead
  let pending = null;
  const reset = () => { clearTimeout(pending); pending = null; model.send({kind: "reset"}); };
  const bind = () => {
    div.on("plotly_doubleclick", reset);
    div.on("plotly_relayout", (e) => {
      const keys = Object.keys(e);
      if (keys.some(k => k.endsWith(".autorange"))) { reset(); return; }
      if (!keys.some(k => k.startsWith("xaxis.range") || k.startsWith("yaxis.range"))) return;
      clearTimeout(pending);
      const r = ranges(div);
      pending = setTimeout(() => { pending = null; model.send(Object.assign({kind: "zoom"}, r)); },
                           400);
    });
    div.on("plotly_click", (e) => {
      const p = e.points && e.points[0];
      if (p) model.send({kind: "click", x: p.x, y: p.y});
    });
  };
  // newPlot, not react: react keeps the previous figure's constrained x range when the
  // axes are locked 1:1, and a window would be drawn inside the whole plane's range
  const draw = async () => {
    const f = model.get("figure");
    await Plotly.newPlot(div, f.data, f.layout, Object.assign({responsive: true}, f.config));
    bind();
  };
  await draw();
  model.on("change:figure", draw);
  return () => { model.off("change:figure", draw); Plotly.purge(div); };
}
export default { render };
"""


class LiveFigure(anywidget.AnyWidget):
    """A plotly figure spec drawn in the page, reporting zooms and clicks to Python.

    `on_event(handler)`: `handler(event)` gets `{"kind": "zoom", "x": [x0, x1],
    "y": [y0, y1]}` (the axis ranges after a box zoom or pan), `{"kind": "reset"}` (a
    double click, or the modebar's autoscale) or `{"kind": "click", "x": x, "y": y}` (the clicked
    point's coordinates)."""

    _esm = traitlets.Unicode(_ESM).tag(sync=True)
    figure = traitlets.Dict().tag(sync=True)

    def __init__(self, figure: dict, **kwargs: Any):
        super().__init__(figure=figure, **kwargs)
        self._handlers: list[Callable[[dict], None]] = []
        self.on_msg(self._on_message)

    def on_event(self, handler: Callable[[dict], None]) -> None:
        self._handlers.append(handler)

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        if content.get("kind") == "plotlyjs":
            self.send({"kind": "plotlyjs"}, buffers=[plotlyjs_bytes()])
            return
        if content.get("kind") in ("zoom", "reset", "click"):
            for handler in list(self._handlers):
                handler(content)


def plotlyjs_bytes() -> bytes:
    """plotly.js as shipped with the plotly package (read once per kernel)."""
    if _PLOTLYJS["bytes"] is None:
        from plotly.offline import get_plotlyjs

        _PLOTLYJS["bytes"] = get_plotlyjs().encode()
    return _PLOTLYJS["bytes"]


_PLOTLYJS: dict[str, bytes | None] = {"bytes": None}
