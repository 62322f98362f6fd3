"""Swimlane of an estimated schedule: one lane per core and pipe, one bar per
(task, block, pipe) coloured by region, stages in data order (load → compute → store),
and the dependency edges as arrows from a producer's last bar to its consumer's first.
The critical path (`schedule.critical_path`) is drawn over it: its tasks' bars outlined
in red and the edges between them as red arrows. The figure takes the width of its
output area (no fixed width: nothing is clipped)."""
from __future__ import annotations

import itertools

import plotly.graph_objects as go

from pypto_lab.figures.style import CRITICAL_COLOR, base_layout, esc, region_colors
from pypto_lab.schedule import Bar, CriticalPath, Schedule

MAX_DEP_ARROWS = 200


def timeline_figure(schedule: Schedule, title: str, critical: CriticalPath | None = None
                    ) -> go.Figure:
    """One `go.Bar` trace per region (legend = regions), lanes top to bottom; `critical`:
    the critical path to draw over them."""
    colors = region_colors([b.task.name for b in schedule.bars])
    traces: list = []
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
    deps = _dependency_trace(schedule)
    if deps is not None:
        traces.append(deps)
    note = ""
    if critical is not None and critical.tasks:
        traces += _critical_traces(schedule, critical)
        note = (f"<br>critical path: {len(critical.tasks)} task(s), "
                f"{critical.busy_us:.2f} µs busy + {sum(critical.waits):.2f} µs waiting")
    height = max(240, 110 + 20 * len(schedule.lanes))
    if schedule.pipelined:
        # the regions by the names the legend uses, on a line of their own (a long list
        # of outlined function names ran off the figure)
        names = sorted({b.task.name for b in schedule.bars
                        if b.task.region in schedule.pipelined})
        note += "<br>pl.pipeline overlap: " + ", ".join(map(esc, names))
    return go.Figure(traces, base_layout(
        f"{title} · estimated makespan {schedule.makespan_us:.2f} µs{note}", barmode="overlay",
        height=min(height, 1100), bargap=0.25,
        margin={"l": 10, "r": 20, "t": 40 + 20 * note.count("<br>"), "b": 70},
        xaxis={"title": {"text": "µs (estimate)"}, "showgrid": True, "gridcolor": "#eeeeee",
               "zeroline": False, "automargin": True},
        yaxis={"categoryorder": "array", "categoryarray": list(schedule.lanes)[::-1],
               "type": "category", "automargin": True},
        legend={"title": {"text": "region"}, "orientation": "h", "yref": "container",
                "y": 0, "yanchor": "bottom", "x": 0}))


def _ends(schedule: Schedule) -> tuple[dict[int, Bar], dict[int, Bar]]:
    """Each task's first bar and last bar."""
    last: dict[int, Bar] = {}
    first: dict[int, Bar] = {}
    for b in schedule.bars:
        t = b.task.task
        if t not in last or b.end_us >= last[t].end_us:
            last[t] = b
        if t not in first or b.start_us < first[t].start_us:
            first[t] = b
    return first, last


def _segments(pairs: list, first: dict, last: dict) -> tuple[list, list]:
    """x, y of the arrows from each producer's last bar to its consumer's first."""
    xs: list = []
    ys: list = []
    for src, dst in pairs:
        a, z = last.get(src), first.get(dst)
        if a is None or z is None:
            continue
        xs += [round(a.end_us, 4), round(z.start_us, 4), None]
        ys += [a.lane, z.lane, None]
    return xs, ys


def _dependency_trace(schedule: Schedule) -> go.Scatter | None:
    """Dependency edges as line segments (producer's end → consumer's start)."""
    first, last = _ends(schedule)
    xs, ys = _segments(list(schedule.deps[:MAX_DEP_ARROWS]), first, last)
    if not xs:
        return None
    shown = min(len(schedule.deps), MAX_DEP_ARROWS)
    return go.Scatter(x=xs, y=ys, mode="lines+markers", name=f"dependency ({shown})",
                      hoverinfo="skip", line={"color": "#555555", "width": 1, "dash": "dot"},
                      marker={"symbol": "arrow", "angleref": "previous", "size": 8,
                              "color": "#555555"})


def _hover(b: Bar, clock_ghz: float) -> str:
    t = b.task
    parts = "<br>".join(f"&nbsp;&nbsp;{p}: {c:,.0f} cycles" + (" ◀" if p == b.pipe else "")
                        for p, c in sorted(t.cost.items(), key=lambda kv: -kv[1]))
    part = f"{esc(b.note)}<br>" if b.note else ""
    return (f"<b>{esc(t.name)}</b> task {t.task} block {t.block}/{t.blocks}<br>{part}"
            f"{b.lane}: {b.start_us:.3f} → {b.end_us:.3f} µs<br>"
            f"estimated cycles per pipe:<br>{parts}<br>"
            f"@ {esc(t.source)}<br>clock {clock_ghz} GHz")


def _critical_traces(schedule: Schedule, path: CriticalPath) -> list:
    """The path's bars outlined (no fill: the region colour shows through) and its edges
    as arrows, one legend entry for both."""
    on_path = set(path.tasks)
    bars = [b for b in schedule.bars if b.task.task in on_path]
    name = f"critical path ({len(path.tasks)} tasks)"
    outline = go.Bar(
        name=name, legendgroup="critical", orientation="h", y=[b.lane for b in bars],
        x=[round(b.end_us - b.start_us, 4) for b in bars],
        base=[round(b.start_us, 4) for b in bars],
        marker={"color": "rgba(0,0,0,0)", "line": {"width": 2.5, "color": CRITICAL_COLOR}},
        hoverinfo="skip", customdata=[[b.task.task, b.task.block, b.pipe] for b in bars])
    first, last = _ends(schedule)
    xs, ys = _segments(list(itertools.pairwise(path.tasks)), first, last)
    if not xs:
        return [outline]
    edges = go.Scatter(x=xs, y=ys, mode="lines+markers", name=name, legendgroup="critical",
                       showlegend=False, hoverinfo="skip",
                       line={"color": CRITICAL_COLOR, "width": 2.5},
                       marker={"symbol": "arrow", "angleref": "previous", "size": 10,
                               "color": CRITICAL_COLOR})
    return [outline, edges]
