"""The tasks of a run laid over each output they write: per output, one box per
(task, block) where it wrote that output's trailing 2-D plane, coloured by its estimated
cost, labelled with its task id, the dependency edges as arrows between boxes, and the
elements no task wrote marked. It reads like the output itself: which task owns which
tile, which tiles cost most, what waits on what, what nothing wrote.

Every output gets its plane at its true shape (not the extent of what was written). A
thin plane (a 128x1 column of row sums) is drawn stretched to a readable width instead
of at 1:1, where it would be a one-pixel strip."""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from pypto_lab.figures.mismatch import MAX_SIDE, pool_factor
from pypto_lab.figures.style import UNWRITTEN_COLOR, esc, layout
from pypto_lab.figures.typed import typed
from pypto_lab.runs import LabRun

MAX_BOXES = 400  # boxes drawn as shapes; more become markers only
MAX_ARROWS = 120
MAX_LABELS = 96
# a plane whose sides differ by more than this is drawn stretched, not at 1:1
THIN_RATIO = 8


@dataclass(frozen=True)
class GridPlane:
    """One output's trailing plane and the task blocks that wrote it."""

    tensor: str
    shape: tuple[int, int]
    boxes: tuple[dict, ...]
    unwritten: np.ndarray | None
    """bool (rows, cols): elements no task wrote in any leading index; None when the
    run does not know who wrote the output."""

    @property
    def unwritten_count(self) -> int:
        return 0 if self.unwritten is None else int(self.unwritten.sum())


def grid_planes(run: LabRun) -> list[GridPlane]:
    """One `GridPlane` per output some task writes, in the run's output order (every
    tensor a task writes when the run checked no outputs)."""
    trace = run.trace
    written: dict[str, dict[tuple[int, int], list]] = {}
    buffer_of: dict[str, int] = {}
    for rec in getattr(trace, "tasks", None) or ():
        for a in rec.accesses:
            if a.mode != "W":
                continue
            buffer_of.setdefault(a.tensor, a.uid)
            lo, hi = _plane(a.lo), _plane(a.hi)
            boxes = written.setdefault(a.tensor, {})
            key = (rec.id, a.block)
            box = boxes.get(key)
            boxes[key] = [lo[0], hi[0], lo[1], hi[1]] if box is None else [
                min(box[0], lo[0]), max(box[1], hi[0]), min(box[2], lo[1]),
                max(box[3], hi[1])]
    if run.outputs:
        names = [o.name for o in run.outputs if o.name in written]
    else:  # no golden: the kernel's parameters it writes (not its scratch tensors)
        names = [n for n in written
                 if trace.buffers.get(buffer_of[n], (n, (), None, "param"))[3] == "param"]
    cost = {(t.task, t.block): t for t in run.tasks}
    planes = []
    for name in names:
        boxes = [_box(task, block, rect, cost.get((task, block)))
                 for (task, block), rect in sorted(written[name].items())]
        shape, unwritten = _extent(run, name, buffer_of[name], boxes)
        planes.append(GridPlane(name, shape, tuple(boxes), unwritten))
    return planes


def _box(task: int, block: int, rect: list, t: object | None) -> dict:
    r0, r1, c0, c1 = rect
    return {"task": task, "block": block, "r0": r0, "r1": r1, "c0": c0, "c1": c1,
            "cycles": t.cycles if t is not None else 0.0,
            "name": t.name if t is not None else "?",
            "source": t.source if t is not None else "",
            "cost": dict(t.cost) if t is not None else {},
            "deps": t.deps if t is not None else ()}


def _extent(run: LabRun, name: str, uid: int, boxes: list[dict]
            ) -> tuple[tuple[int, int], np.ndarray | None]:
    """The plane's true shape (the checked output's, else the buffer the trace saw)
    and its never-written elements, from the trace's last writer of each element."""
    out = next((o for o in run.outputs if o.name == name), None)
    info = run.trace.buffers.get(uid)
    full = tuple(np.shape(out.actual)) if out is not None else \
        tuple(info[1]) if info is not None else None
    if full is None:
        return (max(b["r1"] for b in boxes), max(b["c1"] for b in boxes)), None
    shape = (1, 1) if not full else (1, full[0]) if len(full) == 1 else full[-2:]
    writer = out.writer if out is not None and out.writer is not None \
        else run.trace.writers.get(name)
    unwritten = None
    if writer is not None and np.shape(writer.events) == full:
        never = np.asarray(writer.events) == 0
        unwritten = never.reshape(shape) if never.ndim < 2 else \
            never.reshape((-1,) + tuple(shape)).all(axis=0)
    return (int(shape[0]), int(shape[1])), unwritten


def _plane(index: tuple) -> tuple[int, int]:
    """The trailing two coordinates of an index (a 1-D tensor is one row)."""
    index = tuple(int(i) for i in index)
    return (index[-2], index[-1]) if len(index) >= 2 else (0, index[-1] if index else 0)


def task_grid_figure(plane: GridPlane, title: str, clock_ghz: float = 1.8) -> go.Figure:
    """The task blocks over `plane` (see the module doc)."""
    tensor, boxes = plane.tensor, list(plane.boxes)
    rows, cols = plane.shape
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
                          "font": {"size": 11, "color": "#111111"}})
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
    data = [marker] + _unwritten_traces(plane)
    thin = max(rows, cols) > THIN_RATIO * min(rows, cols)
    if thin:  # stretched: a 1:1 128x1 plane is a one-pixel strip under its own ticks
        height = 380 if rows >= cols else 200
    else:
        height = int(min(380, max(200, 520 * rows / max(cols, 1))))
    # two lines: one long line is cut at the figure's right edge
    full = esc(f"{title} · {tensor}: {len(boxes)} task block(s) over {tensor}'s "
               f"{rows}x{cols} tile space") + "<br>colour = estimated cycles"
    if plane.unwritten_count:
        full += f" · {plane.unwritten_count:,} element(s) no task wrote (magenta)"
    yaxis = {"title": {"text": "row"}, "range": [rows - 0.5, -0.5], "showgrid": False,
             "zeroline": False, **_ticks(rows)}
    if not thin:
        yaxis.update(scaleanchor="x", constrain="domain")
    legend = 40 if plane.unwritten_count else 0  # the key sits under the x axis
    fig = go.Figure(data, layout(
        full, height=height + 106 + legend,
        margin={"l": 56, "r": 20, "t": 56, "b": 40 + legend},
        xaxis={"title": {"text": "column"}, "range": [-0.5, cols - 0.5], "showgrid": False,
               "zeroline": False, "constrain": "domain", **_ticks(cols)},
        yaxis=yaxis, shapes=shapes, annotations=notes,
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom",
                "x": 0}))
    return fig


def _ticks(n: int) -> dict:
    """A short axis gets one tick per index (plotly would put 0.5 steps on a 1-wide one)."""
    return {"tickvals": list(range(n))} if n <= 4 else {}


def _unwritten_traces(plane: GridPlane) -> list:
    """The never-written elements as a magenta layer (pooled: a cell is marked when any
    of its elements is), drawn over the boxes, transparent where written; a legend
    entry says what it is."""
    if not plane.unwritten_count:
        return []
    m = plane.unwritten
    rows, cols = m.shape
    fy, fx = pool_factor(rows, MAX_SIDE), pool_factor(cols, MAX_SIDE)
    if fy * fx > 1:
        pad = np.zeros((-(-rows // fy) * fy, -(-cols // fx) * fx), bool)
        pad[:rows, :cols] = m
        m = pad.reshape(pad.shape[0] // fy, fy, pad.shape[1] // fx, fx).any(axis=(1, 3))
    z = np.where(m, 1.0, np.nan)
    layer = go.Heatmap(z=typed(z), x0=(fx - 1) / 2, dx=fx, y0=(fy - 1) / 2, dy=fy,
                       colorscale=[[0, UNWRITTEN_COLOR], [1, UNWRITTEN_COLOR]],
                       showscale=False, hoverinfo="skip", hoverongaps=False,
                       name="never written")
    key = go.Scatter(x=[None], y=[None], mode="markers", showlegend=True,
                     name=f"never written ({plane.unwritten_count:,})", hoverinfo="skip",
                     marker={"symbol": "square", "size": 12, "color": UNWRITTEN_COLOR,
                             "line": {"width": 1, "color": "#999999"}})
    return [layer, key]


# light to mid blue: the task labels (dark text) stay readable on every box
_SCALE = [[0.0, "#eff6fc"], [0.5, "#9ecae1"], [1.0, "#4a98c9"]]


def _shade(frac: float) -> str:
    """The colour of `frac` (0..1) on `_SCALE`, as rgb()."""
    frac = min(1.0, max(0.0, frac))
    stops = [(p, tuple(int(c[i:i + 2], 16) for i in (1, 3, 5))) for p, c in _SCALE]
    for (p0, c0), (p1, c1) in itertools.pairwise(stops):
        if frac <= p1:
            w = (frac - p0) / (p1 - p0) if p1 > p0 else 0.0
            r, g, b = (round(a + (z - a) * w) for a, z in zip(c0, c1))
            return f"rgb({r},{g},{b})"
    return "rgb(74,152,201)"


def _blocks(boxes: list[dict], task: int) -> bool:
    return sum(1 for b in boxes if b["task"] == task) > 1


__all__ = ["GridPlane", "grid_planes", "task_grid_figure"]
