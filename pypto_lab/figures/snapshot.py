"""Heatmap of one args-dump snapshot: the values a task's argument held at one of its
boundaries (before dispatch / after completion), as the mismatch heatmap draws a plane.

The same conventions as `figures.heatmap`: the trailing 2-D plane at leading indices
`lead` (`mismatch.slice_2d`), rows down, locked 1:1, large planes pooled into at most
`MAX_SIDE` cells a side with power-of-two blocks (`mismatch.pool_factor`), arrays as
typed arrays. A pooled cell shows its block's element of largest magnitude, so an
outlier stays visible; NaN / Inf (a `pl.Out` not written yet holds NaN residue) are
drawn black, like the mismatch map's non-finite class.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto_lab.figures.mismatch import MAX_SIDE, pool_factor, slice_2d
from pypto_lab.figures.style import NAN_COLOR, esc, layout
from pypto_lab.figures.typed import typed


def pool_values(plane: np.ndarray, fy: int, fx: int) -> np.ndarray:
    """`plane` in blocks of fy×fx, each its element of largest magnitude (NaN only when
    the whole block is; a non-finite element beats any finite one)."""
    h, w = plane.shape
    if fy == fx == 1:
        return plane.astype(np.float64)
    rows, cols = -(-h // fy), -(-w // fx)
    pad = np.full((rows * fy, cols * fx), np.nan)
    pad[:h, :w] = plane
    real = np.zeros(pad.shape, bool)
    real[:h, :w] = True

    def blocks(a: np.ndarray) -> np.ndarray:
        return a.reshape(rows, fy, cols, fx).transpose(0, 2, 1, 3).reshape(rows, cols, -1)

    values = blocks(pad)
    with np.errstate(invalid="ignore"):
        mag = np.where(np.isfinite(values), np.abs(values), np.inf)
    mag = np.where(blocks(real), mag, -1.0)  # the padding never wins
    return np.take_along_axis(values, mag.argmax(axis=-1)[..., None], -1)[..., 0]


def snapshot_figure(data: np.ndarray, title: str, name: str, lead: tuple = (),
                    max_side: int = MAX_SIDE) -> dict:
    """The values of `data` (a snapshot's payload) at leading indices `lead`."""
    a = np.asarray(data)
    lead = tuple(lead) or (0,) * max(0, a.ndim - 2)
    plane = slice_2d(a, lead).astype(np.float64)
    h, w = plane.shape
    fy, fx = pool_factor(h, max_side), pool_factor(w, max_side)
    z = pool_values(plane, fy, fx)
    finite = np.isfinite(z)
    bad = np.where(finite, np.nan, 1.0)
    z = np.where(finite, z, np.nan)
    lo = float(np.nanmin(z)) if finite.any() else 0.0
    hi = float(np.nanmax(z)) if finite.any() else 1.0
    signed = lo < 0 < hi
    top = max(abs(lo), abs(hi)) or 1.0
    axis = {"x0": (fx - 1) / 2, "dx": fx, "y0": (fy - 1) / 2, "dy": fy}
    index = ", ".join(map(str, lead)) + ", " if lead else ""
    block = f"<br>largest |value| of its {fy}×{fx} block" if fy * fx > 1 else ""
    values = {"type": "heatmap", "name": "value", "z": typed(z), **axis,
              "colorscale": "RdBu" if signed else "Viridis", "reversescale": signed,
              "zmin": -top if signed else lo, "zmax": top if signed else hi,
              "hoverongaps": False, "colorbar": {"len": 0.6, "thickness": 12},
              "hovertemplate": f"<b>{esc(name)}[{index}%{{y:d}}, %{{x:d}}]</b> = "
                               f"%{{z:.6g}}{block}<extra></extra>"}
    traces: list[dict[str, Any]] = [values]
    n_bad = int(np.count_nonzero(~np.isfinite(plane)))
    if n_bad:
        traces.append({"type": "heatmap", "name": "NaN/Inf", "z": typed(bad), **axis,
                       "colorscale": [[0, NAN_COLOR], [1, NAN_COLOR]], "showscale": False,
                       "hoverongaps": False, "hovertemplate":
                       f"<b>{esc(name)}[{index}%{{y:d}}, %{{x:d}}]</b>: NaN/Inf<extra></extra>"})
    where = f"{name}[{index}:, :]" if lead else name
    pooled = f" · each cell the largest |value| of a {fy}×{fx} block" if fy * fx > 1 else ""
    stats = f"min {lo:.4g} · max {hi:.4g}" + (f" · {n_bad} NaN/Inf" if n_bad else "")
    ph, pw = z.shape
    plot_h = int(min(360, max(160, 520 * ph / max(pw, 1))))
    return {"data": traces, "layout": layout(
        f"{esc(title)}<br>{esc(where)}: {stats}{pooled}", height=plot_h + 120,
        margin={"l": 56, "r": 20, "t": 60, "b": 50},
        xaxis={"title": {"text": "column"}, "constrain": "domain", "showgrid": False,
               "zeroline": False, "range": [-0.5, w - 0.5]},
        yaxis={"title": {"text": "row"}, "showgrid": False, "zeroline": False,
               "range": [h - 0.5, -0.5], "scaleanchor": "x", "constrain": "domain"})}
