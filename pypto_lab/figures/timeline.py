"""Swimlane of an estimated schedule: one lane per core and pipe, one bar per
(task, block, pipe) coloured by region, stages in data order (load → compute → store),
and the dependency edges as arrows from a producer's last bar to its consumer's first.
The critical path (`schedule.critical_path`) is drawn over it: its tasks' bars outlined
in red and the edges between them as red arrows. The figure takes the width of its
output area (no fixed width: nothing is clipped).

Built as plotly JSON straight from the schedule (numbers as typed arrays, no plotly
validation): a 10,000-task run's figure took 20 s to build through `go.Bar`, almost
all of it plotly checking each of the bars' numbers one by one."""
from __future__ import annotations

import itertools

import numpy as np

from pypto_lab.figures.style import CRITICAL_COLOR, esc, layout, region_colors
from pypto_lab.figures.typed import typed
from pypto_lab.schedule import Bar, CriticalPath, Schedule

MAX_DEP_ARROWS = 200


def _bar_trace(bars: list[Bar], **style: object) -> dict:
    """A horizontal bar trace of `bars`: lane, start (base) and length in µs, and
    (task, block) per bar as customdata."""
    start = np.fromiter((b.start_us for b in bars), np.float64, len(bars))
    end = np.fromiter((b.end_us for b in bars), np.float64, len(bars))
    ids = np.array([(b.task.task, b.task.block) for b in bars], np.int32).reshape(-1, 2)
    return {"type": "bar", "orientation": "h", "y": [b.lane for b in bars],
            "x": typed(end - start), "base": typed(start), "customdata": typed(ids),
            **style}


def timeline_figure(schedule: Schedule, title: str, critical: CriticalPath | None = None
                    ) -> dict:
    """One bar trace per region (legend = regions), lanes top to bottom; `critical`:
    the critical path to draw over them."""
    colors = region_colors([b.task.name for b in schedule.bars])
    by_region: dict[str, list[Bar]] = {}
    for b in schedule.bars:
        by_region.setdefault(b.task.name, []).append(b)
    traces: list = []
    for name in sorted(colors):
        bars = by_region.get(name, [])
        traces.append(_bar_trace(
            bars, name=name, marker={"color": colors[name],
                                     "line": {"width": 0.5, "color": "white"}},
            hovertext=_hovers(bars, schedule.clock_ghz), hoverinfo="text"))
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
    return {"data": traces, "layout": layout(
        f"{title} · estimated makespan {schedule.makespan_us:.2f} µs{note}", barmode="overlay",
        height=min(height, 1100), bargap=0.25,
        margin={"l": 10, "r": 20, "t": 40 + 20 * note.count("<br>"), "b": 70},
        xaxis={"title": {"text": "µs (estimate)"}, "showgrid": True, "gridcolor": "#eeeeee",
               "zeroline": False, "automargin": True},
        yaxis={"categoryorder": "array", "categoryarray": list(schedule.lanes)[::-1],
               "type": "category", "automargin": True},
        legend={"title": {"text": "region"}, "orientation": "h", "yref": "container",
                "y": 0, "yanchor": "bottom", "x": 0})}


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


def _dependency_trace(schedule: Schedule) -> dict | None:
    """Dependency edges as line segments (producer's end → consumer's start)."""
    first, last = _ends(schedule)
    xs, ys = _segments(list(schedule.deps[:MAX_DEP_ARROWS]), first, last)
    if not xs:
        return None
    shown = min(len(schedule.deps), MAX_DEP_ARROWS)
    return {"type": "scatter", "x": xs, "y": ys, "mode": "lines+markers",
            "name": f"dependency ({shown})", "hoverinfo": "skip",
            "line": {"color": "#555555", "width": 1, "dash": "dot"},
            "marker": {"symbol": "arrow", "angleref": "previous", "size": 8,
                       "color": "#555555"}}


def _hovers(bars: list[Bar], clock_ghz: float) -> list[str]:
    """Each bar's hover: its task, lane and times, and the task's cycles per pipe with
    the bar's own marked. A task's pipes sort once for all its bars (a 10,000-task run
    has 30,000 bars)."""
    pipes: dict[int, list] = {}
    out = []
    for b in bars:
        t = b.task
        key = id(t)
        ranked = pipes.get(key)
        if ranked is None:
            ranked = pipes[key] = [(p, f"&nbsp;&nbsp;{p}: {c:,.0f} cycles") for p, c in
                                   sorted(t.cost.items(), key=lambda kv: -kv[1])]
        parts = "<br>".join(line + (" ◀" if p == b.pipe else "") for p, line in ranked)
        part = f"{esc(b.note)}<br>" if b.note else ""
        out.append(f"<b>{esc(t.name)}</b> task {t.task} block {t.block}/{t.blocks}<br>{part}"
                   f"{b.lane}: {b.start_us:.3f} → {b.end_us:.3f} µs<br>"
                   f"estimated cycles per pipe:<br>{parts}<br>"
                   f"@ {esc(t.source)}<br>clock {clock_ghz} GHz")
    return out


def _critical_traces(schedule: Schedule, path: CriticalPath) -> list:
    """The path's bars outlined (no fill: the region colour shows through) and its edges
    as arrows, one legend entry for both."""
    on_path = set(path.tasks)
    bars = [b for b in schedule.bars if b.task.task in on_path]
    name = f"critical path ({len(path.tasks)} tasks)"
    outline = _bar_trace(
        bars, name=name, legendgroup="critical",
        marker={"color": "rgba(0,0,0,0)", "line": {"width": 2.5, "color": CRITICAL_COLOR}},
        hoverinfo="skip")
    first, last = _ends(schedule)
    xs, ys = _segments(list(itertools.pairwise(path.tasks)), first, last)
    if not xs:
        return [outline]
    edges = {"type": "scatter", "x": xs, "y": ys, "mode": "lines+markers", "name": name,
             "legendgroup": "critical", "showlegend": False, "hoverinfo": "skip",
             "line": {"color": CRITICAL_COLOR, "width": 2.5},
             "marker": {"symbol": "arrow", "angleref": "previous", "size": 10,
                        "color": CRITICAL_COLOR}}
    return [outline, edges]
