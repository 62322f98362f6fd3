"""Rank lanes of a multi-card run: one lane per rank, its steps left to right in the
order the scheduler ran them (x is that order, one clock for every rank: the simulator
has no cross-rank time model), a marker per kind of step, and an arrow from each notify
to the wait it released. A rank stuck in a deadlock ends in a red cross at the wait it
is stuck on, with the cell, the expected and the current value in its hover."""
from __future__ import annotations

import plotly.graph_objects as go

from pypto_lab.figures.style import base_layout, esc
from pypto_lab.rank_steps import KIND_LABELS, RankRun

_MARKERS = {  # kind -> (symbol, colour)
    "dispatch": ("square", "#34495e"),
    "notify": ("triangle-right", "#2b7bba"),
    "wait": ("circle-open", "#e67e22"),
    "wait_done": ("circle", "#27ae60"),
    "defer_wait": ("diamond-open", "#8e44ad"),
    "remote_write": ("star", "#16a085"),
    "finish": ("line-ns", "#7f8c8d"),
    "deadlock": ("x", "#d62728"),
}
MAX_EDGES = 400


def _lane(rank: int) -> str:
    return f"rank {rank}"


def rank_figure(run: RankRun, title: str) -> go.Figure:
    traces: list = []
    for kind, (symbol, color) in _MARKERS.items():
        steps = [s for s in run.steps if s.kind == kind]
        if not steps:
            continue
        traces.append(go.Scatter(
            name=KIND_LABELS[kind], x=[s.seq for s in steps], y=[_lane(s.rank) for s in steps],
            mode="markers", hoverinfo="text",
            hovertext=[esc(s.text) + (f"<br>@ {esc(s.source)}" if s.source else "")
                       for s in steps],
            marker={"symbol": symbol, "color": color, "size": 16 if kind == "deadlock" else 10,
                    "line": {"width": 2 if kind in ("wait", "deadlock") else 1,
                             "color": color}}))
    for released in (True, False):
        edges = _edge_trace(run, released)
        if edges is not None:
            traces.insert(0, edges)
    lanes = [_lane(r) for r in range(run.world_size)]
    status = "DEADLOCK: every rank that has not finished waits" if run.stuck else "finished"
    return go.Figure(traces, base_layout(
        f"{title} · {run.world_size} ranks · {status}",
        height=min(160 + 60 * run.world_size, 900),
        margin={"l": 10, "r": 20, "t": 40, "b": 80},
        xaxis={"title": {"text": "step (the scheduler's order; one clock for all ranks)"},
               "showgrid": True, "gridcolor": "#eeeeee", "zeroline": False,
               "automargin": True},
        yaxis={"type": "category", "categoryorder": "array", "categoryarray": lanes[::-1],
               "automargin": True},
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom",
                "x": 0}))


def _edge_trace(run: RankRun, released: bool) -> go.Scatter | None:
    """The notify → wait arrows that released their wait, or (released=False) the last
    notify each stuck wait saw, which was not enough."""
    edges = [e for e in run.edges if e.released == released][:MAX_EDGES]
    xs: list = []
    ys: list = []
    for e in edges:
        xs += [e.src_seq, e.dst_seq, None]
        ys += [_lane(e.src), _lane(e.dst), None]
    if not xs:
        return None
    color = "#2b7bba" if released else "#d62728"
    name = "notify → wait" if released else "last notify → stuck wait"
    return go.Scatter(x=xs, y=ys, mode="lines+markers", hoverinfo="skip",
                      name=f"{name} ({len(edges)})",
                      line={"color": color, "width": 1, "dash": "dot"},
                      marker={"symbol": "arrow", "angleref": "previous", "size": 9,
                              "color": color})
