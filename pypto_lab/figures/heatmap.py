"""Golden-mismatch heatmap of one output (a 2-D plane of it), as a plotly figure spec.

Built straight from numpy (typed arrays, no Python lists, no plotly validation), and
only for the metric on screen. Layers, bottom to top:

* one *writer* trace per source statement that last wrote the elements (plus one for
  elements never written): the status colour (grey within tolerance, black NaN/Inf,
  magenta never written) and the hover, which names the element, its values, the task,
  block and loop indices that wrote it, and the statement (file:line and its text);
* the *metric* trace: the error (red scale) of the elements outside tolerance, or, for
  the ownership metrics `task` / `block`, who wrote each element; no hover of its own;
* outlines: the unwritten `pl.Out` region with the kernel-side fix, and the sanitizer
  findings (uninitialized reads, races) on this tensor.

Large planes are pooled (`mismatch.pool`): each cell is a block's worst element.
"""
from __future__ import annotations

import numpy as np

from pypto_lab.figures.mismatch import (
    METRICS,
    NONFINITE,
    OWNERSHIP,
    STATUS_NAMES,
    Pooled,
    pool,
)
from pypto_lab.figures.style import (
    ERROR_SCALE,
    NAN_COLOR,
    PALETTE,
    PASS_COLOR,
    RACE_COLOR,
    UNINIT_COLOR,
    UNWRITTEN_COLOR,
    UNWRITTEN_OUTLINE,
    esc,
    layout,
)
from pypto_lab.figures.typed import typed
from pypto_lab.runs import LabOutput

_STATUS_COLORS = (PASS_COLOR, "#f5b7b1", NAN_COLOR, UNWRITTEN_COLOR)
_STATUS_SCALE = [[v, c] for i, c in enumerate(_STATUS_COLORS) for v in (i / 4, (i + 1) / 4)]
_OWNER_SCALE = [[v, c] for i, c in enumerate(PALETTE)
                for v in (i / len(PALETTE), (i + 1) / len(PALETTE))]
# customdata columns of the writer traces; a pooled map adds the worst element's row and
# column and the block's count of elements outside tolerance; loop values follow
_EXP, _ACT, _VAL, _TASK, _BLOCK, _ROW, _COL, _BAD = range(8)


def heatmap_figure(out: LabOutput, metric: str = "abs", lead: tuple = (),
                   window: tuple | None = None, max_side: int | None = None) -> dict:
    """The mismatch map of `out` at leading indices `lead` (of `window` (r0, r1, c0, c1)
    of it at full resolution when it fits in `max_side`)."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; choose one of {', '.join(METRICS)}")
    p = pool(out, metric, tuple(lead), window, **({"max_side": max_side} if max_side else {}))
    traces = _writer_traces(out, p, metric, lead) + [_metric_trace(out, p, metric)]
    traces += _legend(p, metric)
    where = f"{out.name}[{', '.join(map(str, lead))}, :, :]" if lead else out.name
    if window is not None:
        where += f" rows {window[0]}:{window[1]}, cols {window[2]}:{window[3]}"
    pooled = f" · each cell the worst of a {p.fy}×{p.fx} block" if p.pooled else ""
    # two lines: a narrow (tall) map would clip one long title
    title = f"{esc(where)}: {_verdict_text(out, p)}<br>{METRICS[metric]}{pooled}"
    h, w = p.size
    plot_h = int(min(360, max(160, 520 * h / max(w, 1))))
    # both ranges explicit, the y one reversed: with the axes locked 1:1 an autoranged
    # y axis pads the map with empty rows below it (and the last rows hover as nothing)
    fig = {"data": traces, "layout": layout(
        title, height=plot_h + 150, margin={"l": 56, "r": 20, "t": 60, "b": 90},
        xaxis={"title": {"text": "column"}, "constrain": "domain", "showgrid": False,
               "zeroline": False, "range": [p.origin[1] - 0.5, p.origin[1] + w - 0.5]},
        yaxis={"title": {"text": "row"}, "showgrid": False, "zeroline": False,
               "range": [p.origin[0] + h - 0.5, p.origin[0] - 0.5],
               "scaleanchor": "x", "constrain": "domain"},
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom",
                "x": 0, "traceorder": "normal"})}
    shapes, notes = [], []
    _outline_unwritten(out, lead, shapes, notes)
    _outline_sanitizers(out, lead, shapes, notes)
    fig["layout"]["shapes"] = shapes
    fig["layout"]["annotations"] = _stack_notes(notes, fig["layout"])
    return fig


_NOTE_LINE_PX = 15
_LABEL_CHARS = 60


def _verdict_text(out: LabOutput, p: Pooled) -> str:
    """How many elements the comparator fails, in its own name."""
    rule = (f"rtol={out.rtol:g} atol={out.atol:g}" if out.comparator == "allclose"
            else out.comparator if len(out.comparator) <= _LABEL_CHARS
            else out.comparator[:_LABEL_CHARS - 1] + "…")
    if out.failing() is None:
        return (f"{esc(rule)} judges the output as a whole "
                f"({'PASS' if out.passed else 'FAIL'}): no element verdict, the map "
                "shows the metric everywhere")
    return f"{p.bad_total}/{p.total} failing {esc(rule)}"


def _stack_notes(notes: list[dict], layout: dict) -> list[dict]:
    """The labels of the outlines, one under another below the map's x axis (in the
    outline's colour): on the map a label covered the rows it explains and, on a
    narrow map, the axis too. The figure grows by their lines."""
    out, lines = [], 0
    for n in notes:
        out.append({**n, "xref": "paper", "yref": "paper", "x": 0, "y": 0,
                    "xanchor": "left", "yanchor": "top", "align": "left",
                    "yshift": -58 - _NOTE_LINE_PX * lines})
        lines += n["text"].count("<br>") + 1
    if lines:
        layout["margin"]["b"] += _NOTE_LINE_PX * lines + 16
        layout["height"] += _NOTE_LINE_PX * lines + 16
    return out


def _axis(p: Pooled) -> dict:
    """x0/dx, y0/dy that put each pooled cell over the elements it stands for."""
    return {"x0": p.origin[1] + (p.fx - 1) / 2, "dx": p.fx,
            "y0": p.origin[0] + (p.fy - 1) / 2, "dy": p.fy}


def _metric_trace(out: LabOutput, p: Pooled, metric: str) -> dict:
    if metric in OWNERSHIP:
        ids = _writer_columns(out, p)[:, :, 0 if metric == "task" else 1]
        written = ids >= 0
        z = np.where(written, ids % len(PALETTE), np.nan)
        return {"type": "heatmap", "name": f"writer {metric}", "z": typed(z), **_axis(p),
                "colorscale": _OWNER_SCALE, "zmin": -0.5, "zmax": len(PALETTE) - 0.5,
                "showscale": False, "hoverinfo": "skip", "hoverongaps": False}
    judged = out.failing() is not None
    err = (p.status == 1) if judged else np.isfinite(p.value)
    z = np.where(err, p.value, np.nan)
    title = metric
    if metric == "tol":  # ratios span decades; 1 (the threshold) sits at 0
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.log10(np.maximum(z, np.float32(1e-30)))
        title = "log10(err/tol)"
    top = float(np.nanmax(z)) if err.any() else 1.0
    low = 0.0 if metric != "tol" else float(min(0.0, np.nanmin(z))) if err.any() else 0.0
    return {"type": "heatmap", "name": "error", "z": typed(z), **_axis(p),
            "colorscale": ERROR_SCALE, "zmin": low, "zmax": top if top > low else low + 1.0,
            "showscale": bool(err.any()), "hoverinfo": "skip", "hoverongaps": False,
            "colorbar": {"title": {"text": title}, "len": 0.6, "thickness": 12}}


def _writer_columns(out: LabOutput, p: Pooled) -> np.ndarray:
    """(h, w, 3): task, block, site of each cell's worst element (-1: unknown)."""
    if p.events is None:
        return np.full(p.status.shape + (3,), -1, np.int64)
    return out.event_table()[p.events]


def _writer_traces(out: LabOutput, p: Pooled, metric: str, lead: tuple) -> list[dict]:
    """One hover trace per group of cells sharing a writing statement."""
    who = _writer_columns(out, p)
    task, block, site = who[..., 0], who[..., 1], who[..., 2]
    key = np.where(task >= 0, site, np.where(task == -2, -2, -1))
    if p.events is None:
        key[:] = -3
    index = ", ".join(map(str, lead)) + ", " if lead else ""
    label = METRICS["abs" if metric in OWNERSHIP else metric]
    row, col = (f"customdata[{_ROW}]", f"customdata[{_COL}]") if p.pooled else ("y", "x")
    head = (f"<b>{esc(out.name)}[{index}%{{{row}:d}}, %{{{col}:d}}]</b><br>"
            f"expected %{{customdata[{_EXP}]:.6g}} · actual %{{customdata[{_ACT}]:.6g}}<br>")
    if metric not in OWNERSHIP:
        head += f"{label} %{{customdata[{_VAL}]:.3g}}<br>"
    if p.pooled:
        head += (f"worst of its {p.fy}×{p.fx} block: %{{customdata[{_BAD}]:d}} "
                 f"outside tolerance<br>")
    traces = []
    for k in np.unique(key).tolist():
        mask = key == k
        rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
        r0, r1, c0, c1 = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
        loops = out.task_loops(int(task[mask][0])) if k >= 0 else ()
        columns = [p.expected, p.actual, np.where(p.status >= NONFINITE, np.nan, p.value),
                   task, block]
        if p.pooled:
            columns += [p.rows, p.cols, p.bad]
        columns += [_loop_values(out, task, i) for i in range(len(loops))]
        custom = np.stack([np.asarray(c, np.float32)[r0:r1, c0:c1] for c in columns], -1)
        z = np.where(mask, p.status, np.nan)[r0:r1, c0:c1]
        axis = _axis(p)
        axis["x0"] += c0 * p.fx
        axis["y0"] += r0 * p.fy
        traces.append({"type": "heatmap", "name": _group_name(out, k), "z": typed(z),
                       "customdata": typed(custom), **axis, "colorscale": _STATUS_SCALE,
                       "zmin": -0.5, "zmax": 3.5, "showscale": False, "hoverongaps": False,
                       "hovertemplate": head + _writer_text(out, k, loops,
                                                            len(columns) - len(loops))
                       + "<extra></extra>"})
    return traces


def _loop_values(out: LabOutput, task: np.ndarray, i: int) -> np.ndarray:
    values = {t: out.task_loops(t) for t in np.unique(task).tolist() if t >= 0}
    lut = {t: (v[i][1] if i < len(v) else np.nan) for t, v in values.items()}
    return np.vectorize(lambda t: lut.get(t, np.nan), otypes=[np.float32])(task) \
        if lut else np.full(task.shape, np.nan, np.float32)


def _group_name(out: LabOutput, key: int) -> str:
    if key == -1:
        return "never written"
    if key == -2:
        return "orchestration"
    if key == -3:
        return "untraced"
    where, op, _ = out.site(key)
    return f"{where} {op}"


def _writer_text(out: LabOutput, key: int, loops: tuple, first_loop: int) -> str:
    if key == -1:
        return "never written by any task (what the device memory held)"
    if key == -2:
        return "written by orchestration code"
    if key == -3:
        return "writer unknown (no trace)"
    where, op, text = out.site(key)
    loop_text = "".join(f" · {esc(str(name))}=%{{customdata[{first_loop + i}]:d}}"
                        for i, (name, _) in enumerate(loops))
    src = f"<br>{esc(where)}  <b>{esc(text)}</b>" if text else \
        f"<br>{esc(where)} ({esc(op)})"
    return (f"written by task %{{customdata[{_TASK}]:d}} block %{{customdata[{_BLOCK}]:d}}"
            f"{loop_text}{src}")


def _legend(p: Pooled, metric: str) -> list[dict]:
    """Legend entries for the colours on screen (heatmaps have none of their own)."""
    present = set(np.unique(p.status).tolist())
    if metric in OWNERSHIP:
        present.discard(0)
        present.discard(1)
    out = []
    for code in sorted(present):
        color = ERROR_SCALE_SWATCH if code == 1 else _STATUS_COLORS[code]
        out.append({"type": "scatter", "x": [None], "y": [None], "mode": "markers",
                    "name": STATUS_NAMES[code], "hoverinfo": "skip", "showlegend": True,
                    "marker": {"symbol": "square", "size": 12, "color": color,
                               "line": {"width": 1, "color": "#999999"}}})
    return out


ERROR_SCALE_SWATCH = "#cb181d"


def _plane_box(ranges: list, lead: tuple) -> tuple | None:
    """((r0, r1), (c0, c1)) of an index box in the drawn plane, or None if the box
    misses the leading indices `lead`."""
    if not ranges or not all(lo <= i < hi for i, (lo, hi) in zip(lead, ranges)):
        return None
    return tuple(ranges[-2:]) if len(ranges) >= 2 else ((0, 1), tuple(ranges[-1]))


def _rect(box: tuple, color: str, dash: str, name: str) -> dict:
    (r0, r1), (c0, c1) = box
    return {"type": "rect", "x0": c0 - 0.5, "x1": c1 - 0.5, "y0": r0 - 0.5, "y1": r1 - 0.5,
            "line": {"color": color, "width": 3, "dash": dash}, "name": name}


def _note(text: str, color: str, name: str) -> dict:
    return {"text": text, "showarrow": False, "font": {"color": color, "size": 11},
            "name": name}


def _outline_unwritten(out: LabOutput, lead: tuple, shapes: list, notes: list) -> None:
    box = _plane_box(out.unwritten_bounds or [], lead)
    if box is None:
        return
    shapes.append(_rect(box, UNWRITTEN_OUTLINE, "dash", "unwritten region"))
    span = "[" + ", ".join(f"{lo}:{hi}" for lo, hi in out.unwritten_bounds) + "]"
    text = f"▭ unwritten pl.Out {span}"
    if out.unwritten_fix:
        text += ": " + esc(out.unwritten_fix)
    notes.append(_note(_wrap(text, 96), UNWRITTEN_OUTLINE, "unwritten label"))


def _outline_sanitizers(out: LabOutput, lead: tuple, shapes: list, notes: list) -> None:
    marks = [(u["ranges"], UNINIT_COLOR, "dashdot", "uninitialized read",
              f"uninitialized read by task {u['task']} '{u['region']}'"
              + (f" block {u['block']}" if u.get("block") is not None else "")
              + f" ({u['source']})") for u in out.uninit_reads]
    marks += [(r["ranges"], RACE_COLOR, "solid", "race",
               f"race: task {r['first']['task']} '{r['first']['name']}' "
               f"({r['first']['mode']}) vs task {r['second']['task']} "
               f"'{r['second']['name']}' ({r['second']['mode']})") for r in out.races]
    for ranges, color, dash, name, text in marks:
        box = _plane_box([tuple(b) for b in ranges], lead)
        if box is None:
            continue
        shapes.append(_rect(box, color, dash, name))
        notes.append(_note(_wrap("▭ " + esc(text), 96), color, f"{name} label"))


def _wrap(text: str, width: int) -> str:
    words, lines, cur = text.split(), [], ""
    for w in words:
        if cur and len(cur) + len(w) + 1 > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}".strip()
    return "<br>".join(lines + [cur])
