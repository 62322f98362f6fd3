"""The task graph of a run laid over the output's tile space: one box per (task, block)
where it wrote the output most tasks write, coloured by its estimated cost, labelled
with its task id, and the dependency edges as arrows between boxes. It reads like the
output itself: which task owns which tile, which tiles cost most, what waits on what."""
from __future__ import annotations

import itertools

import plotly.graph_objects as go

from pypto_lab.figures.style import esc, layout
from pypto_lab.runs import LabRun

MAX_BOXES = 400  # boxes drawn as shapes; more become markers only
MAX_ARROWS = 120
MAX_LABELS = 96


def grid_boxes(run: LabRun) -> tuple[str, list[dict]] | None:
    """(tensor, boxes): the output most tasks write, and per (task, block) the box it
    wrote there in the trailing two dims; None when no task writes an output."""
    trace = run.trace
    outputs = {o.name for o in run.outputs} or None
    counts: dict[str, set] = {}
    for rec in getattr(trace, "tasks", None) or ():
        for a in rec.accesses:
            if a.mode == "W" and (outputs is None or a.tensor in outputs):
                counts.setdefault(a.tensor, set()).add(rec.id)
    if not counts:
        return None
    tensor = max(sorted(counts), key=lambda t: len(counts[t]))
    cost = {(t.task, t.block): t for t in run.tasks}
    boxes: dict[tuple[int, int], list] = {}
    for rec in trace.tasks:
        for a in rec.accesses:
            if a.mode != "W" or a.tensor != tensor:
                continue
            lo, hi = _plane(a.lo), _plane(a.hi)
            key = (rec.id, a.block)
            box = boxes.get(key)
            boxes[key] = [lo[0], hi[0], lo[1], hi[1]] if box is None else [
                min(box[0], lo[0]), max(box[1], hi[0]), min(box[2], lo[1]),
                max(box[3], hi[1])]
    out = []
    for (task, block), (r0, r1, c0, c1) in sorted(boxes.items()):
        t = cost.get((task, block))
        out.append({"task": task, "block": block, "r0": r0, "r1": r1, "c0": c0, "c1": c1,
                    "cycles": t.cycles if t is not None else 0.0,
                    "name": t.name if t is not None else "?",
                    "source": t.source if t is not None else "",
                    "cost": dict(t.cost) if t is not None else {},
                    "deps": t.deps if t is not None else ()})
    return tensor, out


def _plane(index: tuple) -> tuple[int, int]:
    """The trailing two coordinates of an index (a 1-D tensor is one row)."""
    index = tuple(int(i) for i in index)
    return (index[-2], index[-1]) if len(index) >= 2 else (0, index[-1] if index else 0)


def task_grid_figure(run: LabRun, title: str, clock_ghz: float = 1.8) -> go.Figure | None:
    found = grid_boxes(run)
    if found is None:
        return None
    tensor, boxes = found
    top = max((b["cycles"] for b in boxes), default=0.0) or 1.0
    shapes, notes = [], []
    for b in boxes[:MAX_BOXES]:
        shapes.append({"type": "rect", "x0": b["c0"] - 0.5, "x1": b["c1"] - 0.5,
                       "y0": b["r0"] - 0.5, "y1": b["r1"] - 0.5, "layer": "below",
                       "line": {"color": "white", "width": 1},
                       "fillcolor": _shade(b["cycles"] / top)})
    if len(boxes) <= MAX_LABELS:
        for b in boxes:
            label = f"#{b['task']}" + (f".{b['block']}" if _blocks(boxes, b["task"]) else "")
            notes.append({"x": (b["c0"] + b["c1"]) / 2 - 0.5, "y": (b["r0"] + b["r1"]) / 2 - 0.5,
                          "text": label, "showarrow": False,
                          "font": {"size": 10, "color": "#111111"}})
    centers = {(b["task"], b["block"]): ((b["c0"] + b["c1"]) / 2 - 0.5,
                                         (b["r0"] + b["r1"]) / 2 - 0.5) for b in boxes}
    by_task: dict[int, list] = {}
    for key, xy in centers.items():
        by_task.setdefault(key[0], []).append(xy)
    arrows = 0
    for b in boxes:
        for d in b["deps"]:
            if arrows >= MAX_ARROWS or d not in by_task:
                continue
            (ax, ay), (x, y) = by_task[d][0], centers[(b["task"], b["block"])]
            notes.append({"x": x, "y": y, "ax": ax, "ay": ay, "xref": "x", "yref": "y",
                          "axref": "x", "ayref": "y", "text": "", "showarrow": True,
                          "arrowhead": 2, "arrowsize": 1, "arrowwidth": 1.2,
                          "arrowcolor": "#555555", "standoff": 4})
            arrows += 1
    us = 1.0 / (clock_ghz * 1e3)
    hover = [f"<b>task {b['task']} block {b['block']}</b> '{esc(b['name'])}'<br>"
             f"writes {esc(tensor)}[{b['r0']}:{b['r1']}, {b['c0']}:{b['c1']}]<br>"
             f"estimate: {b['cycles']:,.0f} cycles ({b['cycles'] * us:.3f} µs)<br>"
             + "<br>".join(f"&nbsp;&nbsp;{p}: {c:,.0f}" for p, c in
                           sorted(b["cost"].items(), key=lambda kv: -kv[1]))
             + (f"<br>after task(s) {', '.join(map(str, b['deps']))}" if b["deps"] else "")
             + f"<br>@ {esc(b['source'])}" for b in boxes]
    marker = go.Scatter(
        x=[xy[0] for xy in centers.values()], y=[xy[1] for xy in centers.values()],
        mode="markers", name="tasks", hovertext=hover, hoverinfo="text", showlegend=False,
        customdata=[[k[0], k[1]] for k in centers],
        marker={"size": 10, "opacity": 0.0 if len(boxes) <= MAX_BOXES else 0.9,
                "color": [b["cycles"] for b in boxes], "colorscale": _SCALE,
                "cmin": 0, "cmax": top, "showscale": True,
                "colorbar": {"title": {"text": "cycles"}, "len": 0.6, "thickness": 12}})
    rows = max(b["r1"] for b in boxes)
    cols = max(b["c1"] for b in boxes)
    height = int(min(560, max(220, 520 * rows / max(cols, 1)))) + 90
    full = (f"{title}: {len(boxes)} task block(s) over {tensor}'s "
            f"{rows}x{cols} tile space · colour = estimated cycles")
    fig = go.Figure([marker], layout(
        esc(full), height=height, margin={"l": 56, "r": 20, "t": 40, "b": 40},
        xaxis={"title": {"text": "column"}, "range": [-0.5, cols - 0.5], "showgrid": False,
               "zeroline": False, "constrain": "domain"},
        yaxis={"title": {"text": "row"}, "range": [rows - 0.5, -0.5], "showgrid": False,
               "zeroline": False, "scaleanchor": "x", "constrain": "domain"},
        shapes=shapes, annotations=notes))
    return fig


_SCALE = [[0.0, "#deebf7"], [0.5, "#6baed6"], [1.0, "#08306b"]]


def _shade(frac: float) -> str:
    """The colour of `frac` (0..1) on `_SCALE`, as rgb()."""
    frac = min(1.0, max(0.0, frac))
    stops = [(p, tuple(int(c[i:i + 2], 16) for i in (1, 3, 5))) for p, c in _SCALE]
    for (p0, c0), (p1, c1) in itertools.pairwise(stops):
        if frac <= p1:
            w = (frac - p0) / (p1 - p0) if p1 > p0 else 0.0
            r, g, b = (round(a + (z - a) * w) for a, z in zip(c0, c1))
            return f"rgb({r},{g},{b})"
    return "rgb(8,48,107)"


def _blocks(boxes: list[dict], task: int) -> bool:
    return sum(1 for b in boxes if b["task"] == task) > 1


__all__ = ["grid_boxes", "task_grid_figure"]
