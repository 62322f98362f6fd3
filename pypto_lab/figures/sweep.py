"""A tile-size sweep as a figure: the estimated time over the grid, infeasible points
marked with why, the best feasible tiling named and outlined.

Two or more constants: a heatmap over the first two (each cell the best feasible point
over the others, its values in the hover). One constant: bars. Reads only the
`pypto.scale.sweep.SweepResult` the core returns.
"""
from __future__ import annotations

import html
from typing import Any

import plotly.graph_objects as go

from pypto_lab.figures.style import base_layout

INFEASIBLE = {"compile error": "no compile", "over budget": "over budget",
              "fault": "sim fault", "fail": "fails golden", "diagnosed": "fails golden",
              "killed": "killed", "error": "error", "no golden": "no golden"}
BEST_OUTLINE = "#d62728"


def _short(p: Any) -> str:
    if p.feasible:
        return f"{p.est_us:.3g}" if p.est_us is not None else "ok"
    return INFEASIBLE.get(p.verdict, p.verdict or "?")


def _hover(p: Any) -> str:
    vals = ", ".join(f"{k}={v}" for k, v in p.values.items())
    est = f"{p.est_us:.3f} µs (estimate)" if p.est_us is not None else "no estimate"
    e = p.estimate
    bound = (f"<br>bound by the {e.bound}; launch {e.launch_us:.2f} µs of it, {e.tasks} "
             "task(s)" if e is not None else "")
    why = f"<br>{html.escape(p.reason[:160])}" if p.reason else ""
    use = []
    if p.ub_use is not None:
        use.append(f"UB {p.ub_use:.0%} of the fullest region's")
    if p.heap_peak is not None:
        use.append(f"ring heap peak {p.heap_peak / 1024:.1f} KiB")
    uses = "<br>" + "; ".join(use) if use else ""
    return f"<b>{html.escape(vals)}</b><br>{p.verdict}: {est}{bound}{uses}{why}"


def _because(p: Any) -> str:
    """What sets the best point's estimate (the core's `Estimate`), for the title."""
    e = p.estimate
    return (f": {e.bound}, {e.launch_us:.2f} µs launching {e.tasks} task(s)"
            if e is not None else "")


def _cell(points: list) -> Any:
    """The point a cell shows: its best feasible one, else its first."""
    ok = [p for p in points if p.feasible and p.est_us is not None]
    return min(ok, key=lambda p: p.est_us or 0.0) if ok else points[0]


def sweep_figure(result: Any) -> go.Figure:
    names = list(result.grid)
    best = result.best
    title = f"{result.kernel}<br>" + (
        "best feasible tiling: " + ", ".join(f"{k}={v}" for k, v in best.values.items())
        + f" · {best.est_us:.3g} µs (estimate{_because(best)})" if best else
        "no feasible tiling")
    if len(names) == 1:
        return _bars(result, names[0], best, title)
    xs, ys = [str(v) for v in result.grid[names[0]]], [str(v) for v in result.grid[names[1]]]
    cells: dict = {}
    for p in result.points:
        cells.setdefault((str(p.values[names[0]]), str(p.values[names[1]])), []).append(p)
    shown = {k: _cell(v) for k, v in cells.items()}
    def grid(fn: Any, feasible: bool, empty: Any = None) -> list:
        return [[fn(shown[(x, y)]) if shown[(x, y)].feasible == feasible else empty
                 for x in xs] for y in ys]

    hover = [[_hover(shown[(x, y)]) for x in xs] for y in ys]
    traces = [
        # infeasible cells: grey, labelled with why (heatmap gaps show the layer below)
        go.Heatmap(x=xs, y=ys, z=grid(lambda p: 1.0, False), text=grid(_short, False, ""),
                   texttemplate="%{text}", hovertext=hover, hoverinfo="text",
                   colorscale=[[0, "#e4e4e4"], [1, "#e4e4e4"]], showscale=False,
                   xgap=2, ygap=2),
        go.Heatmap(x=xs, y=ys, z=grid(lambda p: p.est_us, True), text=grid(_short, True, ""),
                   texttemplate="%{text}", hovertext=hover, hoverinfo="text",
                   colorscale="Viridis", reversescale=True, xgap=2, ygap=2,
                   colorbar={"title": {"text": "µs (est.)"}}),
    ]
    shapes = []
    if best is not None:
        i, j = xs.index(str(best.values[names[0]])), ys.index(str(best.values[names[1]]))
        shapes.append({"type": "rect", "xref": "x", "yref": "y", "x0": i - 0.5,
                       "x1": i + 0.5, "y0": j - 0.5, "y1": j + 0.5,
                       "line": {"color": BEST_OUTLINE, "width": 3}})
    more = f" (best over {', '.join(names[2:])})" if len(names) > 2 else ""
    return go.Figure(traces, base_layout(
        title + more, width=min(1000, 220 + 90 * len(xs)),
        height=min(900, 170 + 55 * len(ys)), shapes=shapes,
        margin={"l": 60, "r": 20, "t": 70, "b": 50},
        xaxis={"title": {"text": names[0]}, "type": "category"},
        yaxis={"title": {"text": names[1]}, "type": "category"}))


def _bars(result: Any, name: str, best: Any, title: str) -> go.Figure:
    pts = result.points
    xs = [str(p.values[name]) for p in pts]
    colors = [BEST_OUTLINE if p is best else ("#2b7bba" if p.feasible else "#cccccc")
              for p in pts]
    heights = [p.est_us if p.feasible and p.est_us is not None else 0.0 for p in pts]
    bar = go.Bar(x=xs, y=heights, text=[_short(p) for p in pts], textposition="outside",
                 marker={"color": colors}, hovertext=[_hover(p) for p in pts],
                 hoverinfo="text", showlegend=False)
    return go.Figure([bar], base_layout(
        title, width=max(420, 160 + 70 * len(xs)), height=380,
        margin={"l": 60, "r": 20, "t": 70, "b": 50},
        xaxis={"title": {"text": name}, "type": "category"},
        yaxis={"title": {"text": "µs (estimate)"}, "rangemode": "tozero"}))
