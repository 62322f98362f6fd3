"""Swimlane of an estimated schedule: one lane per core and pipe, one bar per
(task, block, pipe), coloured by region; the hover lists the estimate's parts."""
from __future__ import annotations

import html

import plotly.graph_objects as go

from pypto_lab.figures.style import base_layout, region_colors
from pypto_lab.schedule import Schedule


def timeline_figure(schedule: Schedule, title: str) -> go.Figure:
    """One `go.Bar` trace per region (legend = regions), lanes top to bottom."""
    colors = region_colors([b.task.name for b in schedule.bars])
    traces = []
    for name in sorted(colors):
        bars = [b for b in schedule.bars if b.task.name == name]
        traces.append(go.Bar(
            name=name, orientation="h", y=[b.lane for b in bars],
            x=[round(b.end_us - b.start_us, 4) for b in bars],
            base=[round(b.start_us, 4) for b in bars], marker={"color": colors[name],
                                                               "line": {"width": 0.5,
                                                                        "color": "white"}},
            hovertext=[_hover(b, schedule.clock_ghz) for b in bars], hoverinfo="text",
            customdata=[[b.task.task, b.task.block, b.pipe] for b in bars]))
    height = max(220, 70 + 22 * len(schedule.lanes))
    return go.Figure(traces, base_layout(
        f"{title} · estimated makespan {schedule.makespan_us:.2f} µs", barmode="overlay",
        height=min(height, 1100), width=900, bargap=0.25,
        xaxis={"title": {"text": "µs (estimate)"}, "showgrid": True, "gridcolor": "#eeeeee",
               "zeroline": False},
        yaxis={"categoryorder": "array", "categoryarray": list(schedule.lanes)[::-1],
               "type": "category", "automargin": True},
        legend={"title": {"text": "region"}}))


def _hover(b, clock_ghz: float) -> str:  # a schedule Bar
    t = b.task
    parts = "<br>".join(f"&nbsp;&nbsp;{p}: {c:,.0f} cycles" + (" ◀" if p == b.pipe else "")
                        for p, c in sorted(t.cost.items(), key=lambda kv: -kv[1]))
    return (f"<b>{html.escape(t.name)}</b> task {t.task} block {t.block}/{t.blocks}<br>"
            f"{b.lane}: {b.start_us:.3f} → {b.end_us:.3f} µs<br>"
            f"estimate (pipes overlap; block = slowest):<br>{parts}<br>"
            f"@ {html.escape(t.source)}<br>clock {clock_ghz} GHz")
