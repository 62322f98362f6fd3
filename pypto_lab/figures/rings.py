"""The runtime's ring heaps over a run, from the core's replay (`RingReport`): per ring,
the heap bytes and the task-window slots its live tasks hold after every submit, against
the ring's capacity, and the deadlock the device would latch, at the submit and scope
where it would.

Two stacked panels share the x axis (the submits, in order): heap bytes above, task
slots below. The occupancy is the core's best case (every task done when submitted, so
a scope's tensors live until the scope ends and no longer): a lower bound of the
device's, labelled as such. A capacity far above the peak is said in the legend instead
of squashing the curve against the axis.
"""
from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from pypto_lab.figures.style import PALETTE, esc, layout

# a capacity more than this many times the peak is named, not drawn
_OFF_SCALE = 8.0


def _mib(n: float) -> str:
    return f"{n / 2**20:.2f} MiB" if n >= 2**20 else f"{n / 1024:.1f} KiB" if n >= 1024 \
        else f"{int(n)} B"


def _what(submit: Any) -> str:
    where = f" @ {submit.span.file.rsplit('/', 1)[-1]}:{submit.span.line}" \
        if submit.span is not None and submit.span.known else ""
    what = "alloc_tensors" if submit.kind == "alloc" else f"task '{submit.name}'"
    return what + where


def rings_figure(report: Any, title: str) -> go.Figure:
    """Heap and task-window occupancy of each ring `report` (a `RingReport`) used."""
    caps = report.capacities
    submits = report.submits
    data: list = []
    shapes: list = []
    notes: list = []
    for ring in sorted({u.ring for u in report.uses}):
        color = PALETTE[ring % len(PALETTE)]
        uses = [u for u in report.uses if u.ring == ring]
        xs = [u.pos for u in uses]
        heap = [u.heap for u in uses]
        slots = [u.slots for u in uses]
        hover = [f"<b>ring {ring}</b> after submit {u.pos}: {esc(_what(submits[u.pos]))}"
                 f"<br>heap held: {_mib(u.heap)} of {_mib(caps.heap[ring])}"
                 f"<br>task slots held: {u.slots} of {caps.task_window[ring]}" for u in uses]
        data.append(go.Scatter(x=xs, y=heap, mode="lines", line_shape="hv",
                               name=f"ring {ring} heap", legendgroup=f"r{ring}",
                               line={"color": color}, hovertext=hover, hoverinfo="text",
                               yaxis="y"))
        data.append(go.Scatter(x=xs, y=slots, mode="lines", line_shape="hv",
                               name=f"ring {ring} task slots", legendgroup=f"r{ring}",
                               line={"color": color, "dash": "dot"}, hovertext=hover,
                               hoverinfo="text", yaxis="y2"))
        for value, peak, axis, unit in ((caps.heap[ring], max(heap), "y", _mib),
                                        (caps.task_window[ring], max(slots), "y2", str)):
            if value > _OFF_SCALE * max(peak, 1):
                data.append(go.Scatter(x=[None], y=[None], mode="lines",
                                       name=f"ring {ring} capacity {unit(value)} (off scale)",
                                       line={"color": color, "dash": "dash"},
                                       legendgroup=f"r{ring}", hoverinfo="skip", yaxis=axis))
                continue
            shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": axis,
                           "y0": value, "y1": value,
                           "line": {"color": color, "dash": "dash", "width": 1}})
            notes.append({"xref": "paper", "x": 0, "xanchor": "left", "yref": axis,
                          "y": value, "yanchor": "bottom", "showarrow": False,
                          "text": f"ring {ring} capacity {unit(value)}",
                          "font": {"size": 10, "color": color}})
    dead = report.deadlock
    if dead is not None:
        heap_kind = dead.name == "HEAP_RING_DEADLOCK"
        data.append(go.Scatter(
            x=[dead.submit.pos], y=[dead.used + dead.needed if heap_kind else dead.used],
            mode="markers", yaxis="y" if heap_kind else "y2",
            name=f"{dead.name} (orch_error_code={dead.code})",
            marker={"symbol": "x", "size": 14, "color": "#c0392b"},
            hovertext=[esc(dead.message())], hoverinfo="text"))
    peaks = ", ".join(f"ring {r}: {_mib(p.value)}" for r, p in enumerate(report.heap_peak)
                      if p.value)
    head = esc(f"{title}: heap held per ring (peak {peaks or 'none'})")
    head += ("<br>estimate: best case, every task done when submitted (the device holds "
             "at least this)")
    if dead is not None:
        head += (f"<br><b>{esc(dead.name)}</b> at submit {dead.submit.pos}, "
                 f"{esc(_what(dead.submit))}<br>innermost open scope: {esc(dead.where)}")
    fig = go.Figure(data, layout(
        head, height=470 + (32 if dead is not None else 0),
        margin={"l": 70, "r": 20, "t": 96 if dead is not None else 64, "b": 120},
        xaxis={"title": {"text": "submit (task or alloc), in order", "standoff": 8},
               "zeroline": False, "anchor": "y2", "automargin": True},
        yaxis={"title": {"text": "heap bytes held"}, "domain": [0.45, 1.0],
               "rangemode": "tozero"},
        yaxis2={"title": {"text": "task slots"}, "domain": [0.0, 0.33],
                "rangemode": "tozero", "anchor": "x"},
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom",
                "x": 0},
        shapes=shapes, annotations=notes))
    return fig


__all__ = ["rings_figure"]
