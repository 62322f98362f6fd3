"""The precision ladder and the drift map, from the core's float64 shadow comparison
(`pypto.precision.shadow.ShadowReport`); nothing here measures anything itself.

* The ladder: every watched intermediate of the kernel, in the order the run reached it,
  with its rel-L2 error against the shadow on a log axis and, beside it, the error it
  inherited from its inputs. The first divergence (the core's verdict) is marked and
  named; every other stage whose error jumped is marked too. An exact stage (error 0)
  sits on the axis floor as an open marker, "exact" in its hover: a log axis has no 0.
* The drift map: kernel - shadow over one value of a stage (its worst, as the core
  kept it), on a diverging scale centred on 0, titled with its task and block and the
  casts its value went through.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import plotly.graph_objects as go

from pypto_lab.figures.style import CRITICAL_COLOR, PALETTE, esc, layout

_MOVE_COLOR = "#7f8c8d"
_CAST_COLOR = "#d9822b"


def _short(site: Any) -> str:
    """`line 6 cast→BF16`: the axis label (the hover and the title say the file)."""
    where = f"line {site.span.line}" if site.span.known else site.function
    return f"{where} {site.op}→{site.dtype.name}"


def ladder_figure(report: Any, title: str) -> go.Figure:
    """The rel-L2 error of every stage of `report` (a `ShadowReport`), log scale."""
    stages = list(report.stages)
    labels = [f"[{s.site.number}] {_short(s.site)}" for s in stages]
    errs = [s.rel_l2 for s in stages]
    positive = [e for e in errs + [s.inherited for s in stages] if e > 0 and math.isfinite(e)]
    floor = min([report.floor / 10] + [e / 3 for e in positive])
    top = max([report.floor * 10] + [e * 3 for e in positive])

    def shown(e: float) -> float:
        return e if e > 0 and math.isfinite(e) else floor

    hover = []
    for s in stages:
        grew = (f"{s.rel_l2 / s.inherited:.1f}× its inputs'" if s.inherited > 0
                else "from exact inputs" if s.rel_l2 > 0 else "exact")
        ties = f"<br>exact ties: {s.ties[0]} of {s.ties[1]}" if s.ties else ""
        hover.append(f"<b>{esc(s.site.where())}</b> {esc(s.site.op)}→{s.site.dtype.name}"
                     f"<br>{esc(s.site.kind)} in "
                     f"'{esc(s.site.function)}', task {esc(s.task_label)}<br>rel-L2 "
                     f"{s.rel_l2:.3e} ({grew})<br>cosine {s.measures.cosine:.7f}"
                     f"<br>{s.samples} value(s) compared{ties}")
    colors = [_CAST_COLOR if s.site.converts else _MOVE_COLOR if s.site.kind == "move"
              else PALETTE[0] for s in stages]
    symbols = [("x" if s.diverged else "diamond" if s.site.converts else "circle")
               + ("" if s.rel_l2 > 0 else "-open") for s in stages]
    data: list = [
        go.Scatter(x=labels, y=[shown(s.inherited) for s in stages], mode="lines",
                   line={"color": "#bbbbbb", "dash": "dot", "width": 1.5},
                   name="inherited from its inputs", hoverinfo="skip"),
        go.Scatter(x=labels, y=[shown(e) for e in errs], mode="lines+markers",
                   line={"color": "#9fb8d0", "width": 1},
                   marker={"color": colors, "symbol": symbols, "size": 11,
                           "line": {"color": colors, "width": 1.5}},
                   name="rel-L2 against the float64 shadow", hovertext=hover,
                   hoverinfo="text"),
    ]
    jumps = [s for s in stages if s.diverged]
    if jumps:
        data.append(go.Scatter(
            x=[labels[stages.index(s)] for s in jumps], y=[shown(s.rel_l2) for s in jumps],
            mode="markers", marker={"color": CRITICAL_COLOR, "symbol": "circle-open",
                                    "size": 22, "line": {"width": 2.5}},
            name=f"error jumps (> {report.ratio:g}× its inputs', ≥ {report.floor:g})",
            hoverinfo="skip"))
    fig = go.Figure(data)
    shapes = [{"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": report.floor,
               "y1": report.floor, "line": {"color": "#aaaaaa", "dash": "dash", "width": 1}}]
    annotations = [{"xref": "paper", "x": 1, "y": math.log10(report.floor), "xanchor": "right",
                    "yanchor": "bottom", "showarrow": False, "font": {"size": 10,
                                                                     "color": "#888888"},
                    "text": f"noise floor {report.floor:g}"}]
    first = report.first
    if first is not None:
        annotations.append({"x": labels[stages.index(first)], "y": math.log10(shown(
            first.rel_l2)), "text": f"<b>first divergence</b><br>{esc(_short(first.site))}",
            "showarrow": True, "arrowcolor": CRITICAL_COLOR, "ax": 0, "ay": -46,
            "font": {"color": CRITICAL_COLOR, "size": 11}, "bgcolor": "rgba(255,255,255,0.85)"})
    fig.update_layout(**layout(f"{title}<br><sub>every watched intermediate, in the order "
                               "the run reached it</sub>", height=500))
    fig.update_layout(
        shapes=shapes, annotations=annotations,
        yaxis={"type": "log", "title": "rel-L2 error vs float64",
               "range": [math.log10(floor) - 0.2, math.log10(top) + 0.3],
               "exponentformat": "e"},
        xaxis={"tickangle": -35, "automargin": True},
        legend={"orientation": "h", "y": -0.5, "yanchor": "top", "x": 0},
        margin={"t": 70, "b": 190, "l": 70})
    return fig


def drift_figure(stage: Any, title: str, casts: list[Any]) -> go.Figure:
    """kernel - shadow over `stage`'s worst value (2-D: its last two axes)."""
    sample = stage.worst
    k = np.asarray(sample.kernel, dtype=np.float64)
    e = np.asarray(sample.shadow, dtype=np.float64)
    diff = k - e
    grid = diff.reshape(-1, diff.shape[-1]) if diff.ndim >= 2 else diff.reshape(1, -1)
    finite = grid[np.isfinite(grid)]
    span = float(np.max(np.abs(finite))) if finite.size else 1.0
    span = span or 1.0
    kk = k.reshape(grid.shape)
    ee = e.reshape(grid.shape)
    custom = np.stack([kk, ee], axis=-1)
    fig = go.Figure(go.Heatmap(
        z=grid, zmin=-span, zmax=span, colorscale="RdBu_r", zmid=0,
        customdata=custom, colorbar={"title": "kernel − shadow"},
        hovertemplate="row %{y}, col %{x}<br>kernel %{customdata[0]:.7g}<br>shadow "
                      "%{customdata[1]:.7g}<br>kernel − shadow %{z:.3e}<extra></extra>"))
    where = f"task {sample.task_label}, block {sample.block}" + (
        f", occurrence {sample.occurrence}" if sample.occurrence else "")
    through = ", ".join(_short(c) for c in casts) or "no cast"
    fig.update_layout(**layout(f"{title}<br><sub>{esc(where)} · rel-L2 "
                               f"{sample.rel_l2:.3e} · through {esc(through)}</sub>",
                               height=max(260, min(560, 40 + 6 * grid.shape[0]))))
    fig.update_layout(yaxis={"autorange": "reversed", "title": "row"},
                      xaxis={"title": "column"}, margin={"t": 80})
    return fig
