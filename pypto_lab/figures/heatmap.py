"""Golden-mismatch heatmap of one output (a 2-D slice of it).

Four layers, each a `go.Heatmap` with gaps where another layer owns the cell:
`within tolerance` (muted), `error` (metric, red scale), `NaN/Inf` (black) and
`unwritten` (cells no task wrote; magenta, the region outlined and labelled with
the harness's fix). Sanitizer findings on this tensor are outlined on top: reads of
unwritten elements (orange, dash-dot, named after the reading task and line) and
races (red, naming the two tasks). Large slices are max-pooled to at most `max_side` cells a
side, keeping the worst cell of each block (and its provenance) as its value.
"""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from pypto_lab.figures.style import (
    ERROR_SCALE,
    NAN_COLOR,
    PASS_COLOR,
    RACE_COLOR,
    UNINIT_COLOR,
    UNWRITTEN_OUTLINE,
    base_layout,
)
from pypto_lab.runs import LabOutput

METRICS = {"abs": "|actual − expected|", "rel": "relative error", "ulp": "error in ULPs"}


def slice_2d(a: np.ndarray, lead: tuple[int, ...]) -> np.ndarray:
    """The trailing 2-D plane of `a` at leading indices `lead` (1-D becomes one row)."""
    a = np.asarray(a)
    if a.ndim == 0:
        return a.reshape(1, 1)
    if a.ndim == 1:
        return a.reshape(1, -1)
    return a[tuple(lead) + (slice(None), slice(None))] if a.ndim > 2 else a


def error_metric(actual: np.ndarray, expected: np.ndarray, metric: str) -> np.ndarray:
    """`abs`, `rel` (over |expected|) or `ulp` (in units of the output dtype's spacing)."""
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    diff = np.abs(a - e)
    if metric == "abs":
        return diff
    if metric == "rel":
        return diff / np.maximum(np.abs(e), np.finfo(np.float64).tiny)
    if metric == "ulp":
        try:
            eps = float(np.finfo(actual.dtype).eps)
        except ValueError:  # integer outputs: one unit is one ULP
            return diff
        mag = np.maximum(np.abs(e), np.finfo(np.float64).tiny)
        return diff / (eps * np.exp2(np.floor(np.log2(mag))))
    raise ValueError(f"unknown metric {metric!r}; choose one of {sorted(METRICS)}")


def heatmap_figure(out: LabOutput, metric: str = "abs", lead: tuple[int, ...] = (),
                   max_side: int = 160) -> go.Figure:
    """The mismatch map of `out` at leading indices `lead`."""
    a = slice_2d(out.actual, lead)
    e = slice_2d(out.expected, lead)
    writer = slice_2d(out.writer_task, lead) if out.writer_task is not None else None
    err = error_metric(a, e, metric)
    with np.errstate(invalid="ignore"):
        ok = np.isclose(a.astype(np.float64), e.astype(np.float64), out.rtol, out.atol,
                        equal_nan=False)
    nonfinite = ~np.isfinite(a.astype(np.float64)) & ~ok
    unwritten = (writer == -1) & ~ok if writer is not None else np.zeros(a.shape, bool)
    if writer is None and out.unwritten_bounds and out.direction == "Out":
        unwritten = _box_mask(a.shape, out.unwritten_bounds, lead) & ~ok
    badness = np.where(ok, -1.0, np.where(nonfinite | unwritten, np.inf, err))
    pick, fy, fx = _pool_index(badness, max_side)
    def take(m):
        return (np.take_along_axis(_blocks(m, fy, fx), pick[..., None], -1)[..., 0])
    ok_p, err_p = take(ok), take(err)
    nan_p, unw_p = take(nonfinite & ~unwritten), take(unwritten)
    rows, cols = np.indices(a.shape)
    r_p, c_p = take(rows), take(cols)
    xs, ys = np.arange(ok_p.shape[1]) * fx, np.arange(ok_p.shape[0]) * fy
    custom = _hover_data(out, a, e, err, r_p, c_p, lead)
    hover = ("[%{customdata[0]}]<br>expected %{customdata[1]}<br>actual %{customdata[2]}<br>"
             + METRICS[metric] + " %{customdata[3]}<br>last writer: %{customdata[4]}"
             "<extra>%{fullData.name}</extra>")

    def layer(name: str, mask: np.ndarray, z: np.ndarray, scale: list | str,
              show: bool = False) -> go.Heatmap:
        return go.Heatmap(z=np.where(mask, z, np.nan).tolist(), x=xs.tolist(), y=ys.tolist(),
                          name=name, colorscale=scale, showscale=show, hoverongaps=False,
                          customdata=custom, hovertemplate=hover, zauto=True,
                          colorbar={"title": {"text": metric}, "len": 0.8} if show else None)

    fail = ~ok_p & ~nan_p & ~unw_p
    traces = [layer("within tolerance", ok_p, np.ones(ok_p.shape), [[0, PASS_COLOR],
                                                                    [1, PASS_COLOR]]),
              layer("error", fail, err_p, ERROR_SCALE, show=bool(fail.any())),
              layer("NaN/Inf", nan_p, np.ones(ok_p.shape), [[0, NAN_COLOR], [1, NAN_COLOR]]),
              layer("unwritten", unw_p, np.ones(ok_p.shape), [[0, "#f4c6e7"],
                                                              [1, "#f4c6e7"]])]
    where = f"{out.name}[{', '.join(map(str, lead))}, :, :]" if lead else out.name
    pooled = f" (max over {fy}×{fx} blocks)" if fy * fx > 1 else ""
    bad = int((~ok).sum())
    title = (f"{where}: {bad}/{ok.size} outside rtol={out.rtol:g} atol={out.atol:g} · "
             f"{METRICS[metric]}{pooled}")
    height = int(min(640, max(220, 40 + 480 * a.shape[0] / max(a.shape[1], 1))))
    fig = go.Figure(traces, base_layout(
        title, height=height, width=720,
        xaxis={"title": {"text": "column"}, "constrain": "domain", "showgrid": False},
        yaxis={"title": {"text": "row"}, "autorange": "reversed", "showgrid": False,
               "scaleanchor": "x"}))
    _outline_unwritten(fig, out, lead)
    _outline_sanitizers(fig, out, lead)
    return fig


def _plane_box(ranges: list, lead: tuple) -> tuple | None:
    """((r0, r1), (c0, c1)) of an index box in the drawn plane, or None if the box
    misses the leading indices `lead`."""
    if not ranges or not all(lo <= i < hi for i, (lo, hi) in zip(lead, ranges)):
        return None
    return tuple(ranges[-2:]) if len(ranges) >= 2 else ((0, 1), tuple(ranges[-1]))


def _outline_sanitizers(fig: go.Figure, out: LabOutput, lead: tuple) -> None:
    marks = [(u["ranges"], UNINIT_COLOR, "dashdot", "uninitialized read",
              f"uninitialized read by task {u['task']} '{u['region']}'"
              + (f" block {u['block']}" if u.get("block") is not None else "")
              + f" (line {u['source'].rsplit(':', 2)[-2] if ':' in u['source'] else '?'})")
             for u in out.uninit_reads]
    marks += [(r["ranges"], RACE_COLOR, "solid", "race",
               f"race: task {r['first']['task']} '{r['first']['name']}' "
               f"({r['first']['mode']}) vs task {r['second']['task']} "
               f"'{r['second']['name']}' ({r['second']['mode']})")
              for r in out.races]
    for ranges, color, dash, name, text in marks:
        box = _plane_box([tuple(b) for b in ranges], lead)
        if box is None:
            continue
        (r0, r1), (c0, c1) = box
        fig.add_shape(type="rect", x0=c0 - 0.5, x1=c1 - 0.5, y0=r0 - 0.5, y1=r1 - 0.5,
                      line={"color": color, "width": 3, "dash": dash}, name=name)
        fig.add_annotation(x=(c0 + c1) / 2 - 0.5, y=r1 - 0.5, text=text, showarrow=False,
                           yanchor="top", font={"color": color, "size": 11},
                           bgcolor="rgba(255,255,255,0.85)", name=f"{name} label")


def _box_mask(shape: tuple, bounds: list, lead: tuple) -> np.ndarray:
    m = np.zeros(shape, bool)
    lead_ok = all(lo <= i < hi for i, (lo, hi) in zip(lead, bounds))
    if lead_ok:
        (r0, r1), (c0, c1) = (bounds[-2:] if len(bounds) >= 2 else [(0, 1), bounds[-1]])
        m[r0:r1, c0:c1] = True
    return m


def _outline_unwritten(fig: go.Figure, out: LabOutput, lead: tuple) -> None:
    b = out.unwritten_bounds
    if not b or not all(lo <= i < hi for i, (lo, hi) in zip(lead, b)):
        return
    (r0, r1), (c0, c1) = b[-2:] if len(b) >= 2 else [(0, 1), b[-1]]
    fig.add_shape(type="rect", x0=c0 - 0.5, x1=c1 - 0.5, y0=r0 - 0.5, y1=r1 - 0.5,
                  line={"color": UNWRITTEN_OUTLINE, "width": 3, "dash": "dash"},
                  name="unwritten region")
    box = "[" + ", ".join(f"{lo}:{hi}" for lo, hi in b) + "]"
    text = f"unwritten pl.Out {box}"
    if out.unwritten_fix:
        text += "<br>fix: " + _wrap(out.unwritten_fix, 60)
    fig.add_annotation(x=(c0 + c1) / 2 - 0.5, y=r0 - 0.5, text=text, showarrow=False,
                       yanchor="bottom", font={"color": UNWRITTEN_OUTLINE, "size": 11},
                       bgcolor="rgba(255,255,255,0.85)", name="unwritten label")


def _wrap(text: str, width: int) -> str:
    words, lines, cur = text.split(), [], ""
    for w in words:
        if cur and len(cur) + len(w) + 1 > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}".strip()
    return "<br>".join(lines + [cur])


def _pool_index(badness: np.ndarray, max_side: int) -> tuple[np.ndarray, int, int]:
    fy = max(1, math.ceil(badness.shape[0] / max_side))
    fx = max(1, math.ceil(badness.shape[1] / max_side))
    return np.argmax(_blocks(badness, fy, fx, fill=-np.inf), axis=-1), fy, fx


def _blocks(m: np.ndarray, fy: int, fx: int, fill: object = 0) -> np.ndarray:
    """(H, W) → (H/fy, W/fx, fy*fx), padding the edges with `fill`."""
    h, w = m.shape
    ph, pw = -h % fy, -w % fx
    if ph or pw:
        m = np.pad(m, ((0, ph), (0, pw)), constant_values=fill if m.dtype != bool else False)
    H, W = m.shape[0] // fy, m.shape[1] // fx
    return m.reshape(H, fy, W, fx).transpose(0, 2, 1, 3).reshape(H, W, fy * fx)


def _hover_data(out: LabOutput, a: np.ndarray, e: np.ndarray, err: np.ndarray,
                rows: np.ndarray, cols: np.ndarray, lead: tuple) -> list:
    data = []
    for r_row, c_row in zip(rows, cols):
        line = []
        for r, c in zip(r_row.tolist(), c_row.tolist()):
            idx = tuple(lead) + ((r, c) if out.actual.ndim >= 2 else (c,))
            line.append([",".join(map(str, idx)), f"{float(e[r, c]):.6g}",
                         f"{float(a[r, c]):.6g}", f"{float(err[r, c]):.3g}",
                         _writer_text(out, idx)])
        data.append(line)
    return data


def _writer_text(out: LabOutput, idx: tuple) -> str:
    if out.writer_task is None or out.actual.ndim == 0:
        return "unknown (no trace)"
    t = int(out.writer_task[idx])
    if t == -1:
        return "never written by a task"
    if t == -2:
        return "orchestration code"
    b = int(out.writer_block[idx]) if out.writer_block is not None else 0
    s = int(out.writer_site[idx]) if out.writer_site is not None else -1
    src = out.site_sources[s] if 0 <= s < len(out.site_sources) else "?"
    return f"task {t} '{out.task_names.get(t, '?')}' block {b} at {src}"
