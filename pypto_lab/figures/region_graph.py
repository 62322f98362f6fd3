"""A `DiGraph` from `graphs.py` + a layered layout → `go.Figure`.

One line trace per edge kind (segments separated by None), one marker trace per
colour class, arrows and edge labels as annotations. Trace names are stable, so
tests can find them in `fig.to_dict()`.
"""
from __future__ import annotations

import networkx as nx
import plotly.graph_objects as go

from pypto_lab.figures.style import CLASS_COLORS, EDGE_STYLES, RACE_COLOR, UNINIT_COLOR, base_layout
from pypto_lab.layout import layered_positions

_SYMBOLS = {"orchestration": "circle", "loop": "diamond", "region": "square",
            "core": "circle", "task": "square"}
_SIZES = {"orchestration": 22, "loop": 16, "region": 26, "core": 16, "task": 18}
_EDGE_NAMES = {"explicit": "deps= edge", "tensormap": "tensor-map edge",
               "creator": "creator edge", "race": "missing edge (race)"}


def graph_figure(graph: nx.DiGraph, title: str) -> go.Figure:
    """Draw `graph` left to right, one column per topological generation."""
    pos = layered_positions(graph)
    traces = [_edge_trace(graph, pos, kind) for kind in EDGE_STYLES]
    traces = [t for t in traces if t is not None]
    for cls in sorted({d["cls"] for _, d in graph.nodes(data=True)}):
        traces.append(_node_trace(graph, pos, cls))
    traces += _sanitizer_markers(graph, pos)
    why = _edge_hovers(graph, pos)
    if why is not None:
        traces.append(why)
    layers = max((x for x, _ in pos.values()), default=0) + 1
    rows = max((sum(1 for p in pos.values() if p[0] == x)
                for x in {p[0] for p in pos.values()}), default=1)
    # a row of nodes needs room for its label above it and an edge's label between rows
    height = max(180, 90 * rows) if rows < 2 else 120 * rows + 40
    lines = title.count("<br>")
    fig = go.Figure(traces, base_layout(
        title, height=min(height + 18 * lines, 900), width=max(520, 190 * layers),
        margin={"l": 40, "r": 20, "t": 40 + 18 * lines, "b": 30}, showlegend=True,
        legend={"orientation": "h", "y": -0.05},
        xaxis={"visible": False, "range": [-0.6, layers - 0.15]},
        yaxis={"visible": False, "range": _y_range(pos)}))
    fig.update_layout(annotations=_arrows(graph, pos) + _edge_labels(graph, pos))
    return fig


def _y_range(pos: dict) -> list[float]:
    ys = [y for _, y in pos.values()] or [0.0]
    return [min(ys) - 0.6, max(ys) + 0.6]  # room for the labels above the top nodes


def _edge_trace(graph: nx.DiGraph, pos: dict, kind: str) -> go.Scatter | None:
    xs: list = []
    ys: list = []
    for u, v, d in sorted(graph.edges(data=True)):
        if d["kind"] != kind:
            continue
        xs += [pos[u][0], pos[v][0], None]
        ys += [pos[u][1], pos[v][1], None]
    if not xs:
        return None
    style = EDGE_STYLES[kind]
    return go.Scatter(x=xs, y=ys, mode="lines", name=_EDGE_NAMES.get(kind, f"{kind} edge"),
                      hoverinfo="skip",
                      line={"color": style["color"], "dash": style["dash"],
                            "width": style["width"]})


def _node_trace(graph: nx.DiGraph, pos: dict, cls: str) -> go.Scatter:
    nodes = sorted(n for n, d in graph.nodes(data=True) if d["cls"] == cls)
    data = [graph.nodes[n] for n in nodes]
    return go.Scatter(
        x=[pos[n][0] for n in nodes], y=[pos[n][1] for n in nodes], mode="markers+text",
        name=cls, text=[d["label"] for d in data], textposition="top center",
        hovertext=[d.get("hover", d["label"]) for d in data], hoverinfo="text",
        customdata=nodes,
        marker={"color": CLASS_COLORS.get(cls, "#999999"), "line": {"width": 1,
                                                                    "color": "#333333"},
                "symbol": [_SYMBOLS.get(d["kind"], "circle") for d in data],
                "size": [_SIZES.get(d["kind"], 16) for d in data]})


def _sanitizer_markers(graph: nx.DiGraph, pos: dict) -> list[go.Scatter]:
    """Markers next to task nodes: `race` (a race inside the node, e.g. between two of
    its folded blocks) and `uninitialized read`."""
    out = []
    for attr, name, symbol, color, dx in (("races", "race", "x", RACE_COLOR, 0.16),
                                          ("uninit", "uninitialized read", "triangle-up",
                                           UNINIT_COLOR, -0.16)):
        nodes = sorted(n for n, d in graph.nodes(data=True) if d.get(attr))
        if not nodes:
            continue
        out.append(go.Scatter(
            x=[pos[n][0] + dx for n in nodes], y=[pos[n][1] - 0.18 for n in nodes],
            mode="markers", name=name, customdata=nodes, hoverinfo="text",
            hovertext=["<br>".join(graph.nodes[n][attr][:6]) for n in nodes],
            marker={"color": color, "symbol": symbol, "size": 13,
                    "line": {"width": 1, "color": "#333333"}}))
    return out


def _edge_hovers(graph: nx.DiGraph, pos: dict) -> go.Scatter | None:
    """A faint point at the middle of every edge that has something to say (why the
    runtime makes it; for a missing edge, the race and its fix): lines do not hover."""
    edges = [(u, v, d) for u, v, d in sorted(graph.edges(data=True)) if d.get("hover")]
    if not edges:
        return None
    return go.Scatter(
        x=[(pos[u][0] + pos[v][0]) / 2 for u, v, _ in edges],
        y=[(pos[u][1] + pos[v][1]) / 2 for u, v, _ in edges], mode="markers",
        name="edge reasons", showlegend=False, hoverinfo="text",
        hovertext=[d["hover"] for _, _, d in edges],
        marker={"size": 9, "opacity": 0.35,
                "color": [EDGE_STYLES[d["kind"]]["color"] for _, _, d in edges]})


def _arrows(graph: nx.DiGraph, pos: dict) -> list[dict]:
    out = []
    for u, v, d in sorted(graph.edges(data=True)):
        if d["kind"] == "contains":
            continue
        style = EDGE_STYLES[d["kind"]]
        out.append({"x": pos[v][0], "y": pos[v][1], "ax": pos[u][0], "ay": pos[u][1],
                    "xref": "x", "yref": "y", "axref": "x", "ayref": "y", "text": "",
                    "showarrow": True, "arrowhead": 2, "arrowsize": 1.2, "standoff": 12,
                    "arrowcolor": style["color"], "arrowwidth": style["width"]})
    return out


def _edge_labels(graph: nx.DiGraph, pos: dict) -> list[dict]:
    out = []
    for u, v, d in sorted(graph.edges(data=True)):
        if not d.get("label"):
            continue
        x = (pos[u][0] + pos[v][0]) / 2
        y = (pos[u][1] + pos[v][1]) / 2
        note = {"x": x, "y": y, "xref": "x", "yref": "y", "text": d["label"],
                "showarrow": False, "yshift": 9,
                "font": {"size": 10, "color": EDGE_STYLES[d["kind"]]["color"]},
                "bgcolor": "rgba(255,255,255,0.8)"}
        if pos[u][0] == pos[v][0]:  # a vertical edge: the label beside it
            note.update(xanchor="left", xshift=14, yshift=0)
        elif d["kind"] == "pipe":  # under the pipe: the nodes' names sit above them
            note.update(yshift=-13)
        out.append(note)
    return out
