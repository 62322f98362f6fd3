"""A workbench figure spec (plotly JSON) drawn as a static SVG, with numpy only.

The stand-in for a figure wherever plotly.js does not run: GitHub's and nbviewer's
notebook views, `jupyter nbconvert --to html` of a notebook stored without plotly.js
(`set_plotlyjs("none")`, the tutorials). It draws what the workbench's figures use:
scatter traces (lines, `hv` steps, markers, marker text), bars (vertical, and
horizontal with a `base`: the timeline), heatmaps (one embedded PNG per trace, NaN
transparent, so the layers of the mismatch map stack as in plotly), rectangle and line
shapes, annotations, the title, linear, log and category axes with their ticks, stacked
subplots (`yaxis2` with a domain), horizontal legends. Not hover, vertical legends or
colour bars: the live figure has those.

The output is bounded: a trace draws at most `MAX_MARKS` marks (evenly picked) and a
heatmap image at most `MAX_PIXELS` cells a side (nearest cell), so a figure's SVG stays
well under 200 KB whatever the kernel's size. The pixels of a heatmap trace come from
`raster` (a colour scale into RGBA, RGBA into a PNG).
"""
from __future__ import annotations

import html
import math
import re
from typing import Any

import numpy as np

from pypto_lab.figures.raster import NAMED_SCALES, colorize, png_bytes, png_uri  # noqa: F401
from pypto_lab.figures.typed import decode

CLASS = "pypto-static-figure"
MAX_MARKS = 1500
MAX_PIXELS = 320
_DEFAULT_W, _DEFAULT_H = 760, 450
_COLORWAY = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
             "#7f7f7f", "#bcbd22", "#17becf")
_TAG = re.compile(r"<[^>]*>")


def figure_svg(spec: dict) -> str:
    """`spec` (a plotly figure as JSON: `data`, `layout`) as one `<svg>` element."""
    layout = spec.get("layout", {}) or {}
    data = spec.get("data", []) or []
    width = int(layout.get("width") or _DEFAULT_W)
    height = int(layout.get("height") or _DEFAULT_H)
    margin = {"l": 80, "r": 80, "t": 100, "b": 80, **(layout.get("margin") or {})}
    font = layout.get("font") or {}
    family = html.escape(str(font.get("family", "sans-serif")), quote=True)
    size = float(font.get("size", 12))
    margin["l"] = max(margin["l"], _auto_left(layout, data, size))
    plot = (margin["l"], margin["t"], max(20, width - margin["l"] - margin["r"]),
            max(20, height - margin["t"] - margin["b"]))
    axes = _Axes(layout, data, plot)
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' class='{CLASS}' width='{width}' "
           f"height='{height}' viewBox='0 0 {width} {height}' font-family='{family}' "
           f"font-size='{size:g}'>",
           f"<rect width='{width}' height='{height}' "
           f"fill='{_color(layout.get('paper_bgcolor'), 'white')}'/>"]
    for name in axes.names():
        out += axes.frame(name, layout.get("plot_bgcolor"))
    shapes = layout.get("shapes") or []
    below = [s for sh in shapes if sh.get("layer") == "below" for s in _shape(sh, axes)]
    out.append(f"<g class='shape'>{''.join(below)}</g>")
    for i, trace in enumerate(data):
        out.append(f"<g class='trace'>{''.join(_trace(trace, axes, i))}</g>")
    above = [s for sh in shapes if sh.get("layer") != "below" for s in _shape(sh, axes)]
    out.append(f"<g class='shape'>{''.join(above)}</g>")
    for name in axes.names():
        out += axes.ticks(name, size)
    out += [s for a in layout.get("annotations") or [] for s in _annotation(a, axes, size)]
    out += _title(layout.get("title"), plot, margin, size)
    out += _legend(layout, data, width, height, size)
    out.append("</svg>")
    return "".join(out)


# --- axes ------------------------------------------------------------------------------


class _Axis:
    def __init__(self, spec: dict, lo_px: float, hi_px: float, flip: bool):
        self.spec = spec
        self.categories: list[str] = [str(c) for c in spec.get("categoryarray") or []]
        self.category = spec.get("type") == "category" or bool(self.categories)
        # a log axis: positions and its range in log10 units, as plotly keeps them
        self.log = spec.get("type") == "log"
        self.lo_px, self.hi_px, self.flip = lo_px, hi_px, flip
        self.range: tuple[float, float] = (0.0, 1.0)
        self.visible = spec.get("visible", True) is not False

    def values(self, v: Any, logged: bool = False) -> np.ndarray:
        """Data values as floats (categories by their index; unknown ones appended); on
        a log axis their log10 (`logged`: given in log10 already, as an annotation's
        position is; a value <= 0 has no place: NaN)."""
        a = self._values(v)
        if self.log and not logged:
            with np.errstate(divide="ignore", invalid="ignore"):
                a = np.where(a > 0, np.log10(np.where(a > 0, a, 1.0)), np.nan)
        return a

    def _values(self, v: Any) -> np.ndarray:
        a = decode(v) if v is not None else np.zeros(0)
        if a.dtype == object or a.dtype.kind in "US":
            if not self.category and any(isinstance(x, str) for x in a.tolist()):
                self.category = True
            if self.category:
                out = []
                for x in a.tolist():
                    if x is None:
                        out.append(np.nan)
                        continue
                    if str(x) not in self.categories:
                        self.categories.append(str(x))
                    out.append(float(self.categories.index(str(x))))
                return np.asarray(out, dtype=float)
            return np.asarray([np.nan if x is None else float(x) for x in a.tolist()])
        return a.astype(float).ravel()

    def fit(self, seen: list[np.ndarray]) -> None:
        given = self.spec.get("range")
        if given and len(given) == 2 and None not in given:
            lo, hi = float(given[0]), float(given[1])
        else:
            finite = [s[np.isfinite(s)] for s in seen if s.size]
            finite = [f for f in finite if f.size]
            if self.category and self.categories:
                lo, hi = -0.5, len(self.categories) - 0.5
            elif finite:
                lo = float(min(f.min() for f in finite))
                hi = float(max(f.max() for f in finite))
                if self.spec.get("rangemode") == "tozero":
                    lo = min(lo, 0.0)
                pad = (hi - lo) * 0.05 or 0.5
                lo, hi = lo - (0 if self.spec.get("rangemode") == "tozero" and lo == 0
                               else pad), hi + pad
            else:
                lo, hi = 0.0, 1.0
            if self.spec.get("autorange") == "reversed":
                lo, hi = hi, lo
        self.range = (lo, hi)

    def px(self, v: np.ndarray | float) -> Any:
        lo, hi = self.range
        span = (hi - lo) or 1.0
        frac = (np.asarray(v, dtype=float) - lo) / span
        if self.flip:
            frac = 1.0 - frac
        return self.lo_px + frac * (self.hi_px - self.lo_px)

    def tick_values(self) -> list[tuple[float, str]]:
        if self.spec.get("tickvals") is not None:
            vals = [float(v) for v in decode(self.spec["tickvals"]).tolist()]
            texts = self.spec.get("ticktext") or [_num(v) for v in vals]
            return list(zip(vals, map(str, texts)))
        if self.category:
            n = len(self.categories)
            step = max(1, math.ceil(n / 24))
            return [(float(i), self.categories[i]) for i in range(0, n, step)]
        lo, hi = sorted(self.range)
        dtick = self.spec.get("dtick")
        step = float(dtick) if isinstance(dtick, (int, float)) and dtick > 0 else _nice(hi - lo)
        if self.log:  # a tick at each power of ten, labelled as one
            step = max(1.0, float(math.ceil((hi - lo) / 8)))
            first = math.ceil(lo / step) * step
            return [(first + k * step, f"1e{int(first + k * step)}")
                    for k in range(int((hi - first) / step + 1e-9) + 1)][:40]
        first = math.ceil(lo / step) * step
        return [(first + k * step, _num(first + k * step))
                for k in range(int((hi - first) / step + 1e-9) + 1)][:40]


class _Axes:
    """The x and y axes of every subplot, fitted to the data drawn on them."""

    def __init__(self, layout: dict, data: list, plot: tuple[float, float, float, float]):
        x0, y0, w, h = plot
        self.plot = plot
        self.axes: dict[str, _Axis] = {}
        for key in sorted(k for k in layout if re.fullmatch(r"[xy]axis\d*", k)) or ["xaxis"]:
            spec = layout.get(key) or {}
            d0, d1 = (spec.get("domain") or [0, 1])[:2]
            if key.startswith("x"):
                self.axes[key] = _Axis(spec, x0 + d0 * w, x0 + d1 * w, False)
            else:
                # y grows upward: the domain is measured from the bottom of the plot area
                self.axes[key] = _Axis(spec, y0 + (1 - d1) * h, y0 + (1 - d0) * h, True)
        for key in ("xaxis", "yaxis"):
            if key not in self.axes:
                flip = key == "yaxis"
                self.axes[key] = _Axis({}, y0 if flip else x0, y0 + h if flip else x0 + w, flip)
        seen: dict[str, list[np.ndarray]] = {k: [] for k in self.axes}
        for trace in data:
            xa, ya = self.pair(trace)
            xs, ys = _trace_extent(trace, self.axes[xa], self.axes[ya])
            seen[xa].append(xs)
            seen[ya].append(ys)
        for key, axis in self.axes.items():
            axis.fit(seen[key])
        self._lock(layout)

    def _lock(self, layout: dict) -> None:
        """`scaleanchor` (1:1 heatmaps): shrink the looser axis to the same units per px,
        centred, as plotly's `constrain: domain` does."""
        ya = self.axes["yaxis"]
        if (layout.get("yaxis") or {}).get("scaleanchor") != "x":
            return
        xa = self.axes["xaxis"]
        xu = abs(xa.range[1] - xa.range[0]) / max(1e-9, xa.hi_px - xa.lo_px)
        yu = abs(ya.range[1] - ya.range[0]) / max(1e-9, ya.hi_px - ya.lo_px)
        if xu > yu:  # y gets fewer px
            span = abs(ya.range[1] - ya.range[0]) / xu
            ya.lo_px, ya.hi_px = ya.lo_px, ya.lo_px + span
        else:
            span = abs(xa.range[1] - xa.range[0]) / yu
            mid = (xa.lo_px + xa.hi_px) / 2
            xa.lo_px, xa.hi_px = mid - span / 2, mid + span / 2

    def names(self) -> list[tuple[str, str]]:
        xs = [k for k in self.axes if k.startswith("x")]
        ys = [k for k in self.axes if k.startswith("y")]
        pairs = []
        for y in ys:
            anchor = (self.axes[y].spec.get("anchor") or "x").replace("x", "xaxis", 1)
            pairs.append((anchor if anchor in self.axes else xs[0], y))
        return pairs

    def pair(self, obj: dict) -> tuple[str, str]:
        xa = str(obj.get("xaxis") or "x").replace("x", "xaxis", 1)
        ya = str(obj.get("yaxis") or "y").replace("y", "yaxis", 1)
        return (xa if xa in self.axes else "xaxis", ya if ya in self.axes else "yaxis")

    def frame(self, pair: tuple[str, str], bg: Any) -> list[str]:
        xa, ya = self.axes[pair[0]], self.axes[pair[1]]
        x, y = min(xa.lo_px, xa.hi_px), min(ya.lo_px, ya.hi_px)
        w, h = abs(xa.hi_px - xa.lo_px), abs(ya.hi_px - ya.lo_px)
        return [f"<rect x='{x:.1f}' y='{y:.1f}' width='{w:.1f}' height='{h:.1f}' "
                f"fill='{_color(bg, 'white')}'/>"]

    def ticks(self, pair: tuple[str, str], size: float) -> list[str]:
        xa, ya = self.axes[pair[0]], self.axes[pair[1]]
        out = []
        ybottom = max(ya.lo_px, ya.hi_px)
        xleft = min(xa.lo_px, xa.hi_px)
        if xa.visible:
            out.append(_line(xa.lo_px, ybottom, xa.hi_px, ybottom, "#444", 1))
            lo, hi = sorted(xa.range)
            for v, t in xa.tick_values():
                if lo <= v <= hi:
                    px = float(xa.px(v))
                    out.append(_line(px, ybottom, px, ybottom + 4, "#444", 1))
                    out.append(_text(px, ybottom + 6 + size, t, "middle", size * 0.9))
            out += _axis_title(xa.spec, (xa.lo_px + xa.hi_px) / 2, ybottom + 2.6 * size + 8,
                               size, vertical=False)
        if ya.visible:
            out.append(_line(xleft, ya.lo_px, xleft, ya.hi_px, "#444", 1))
            lo, hi = sorted(ya.range)
            for v, t in ya.tick_values():
                if lo <= v <= hi:
                    py = float(ya.px(v))
                    out.append(_line(xleft - 4, py, xleft, py, "#444", 1))
                    out.append(_text(xleft - 6, py + size * 0.35, _clip(t, 28), "end",
                                     size * 0.9))
            out += _axis_title(ya.spec, xleft - 3.2 * size - 10, (ya.lo_px + ya.hi_px) / 2,
                               size, vertical=True)
        return out


def _trace_extent(trace: dict, xa: _Axis, ya: _Axis) -> tuple[np.ndarray, np.ndarray]:
    kind = trace.get("type", "scatter")
    if kind == "heatmap":
        z = _z(trace)
        if z is None:
            return np.zeros(0), np.zeros(0)
        xs, ys = _cell_edges(trace, z.shape)
        return xs, ys
    if kind == "bar":
        xs, ys = xa.values(trace.get("x")), ya.values(trace.get("y"))
        base = trace.get("base")
        if trace.get("orientation") == "h":
            b = _broadcast(base, xs.shape)
            return np.concatenate([b, b + xs]), ys
        b = _broadcast(base, ys.shape)
        return xs, np.concatenate([b, b + ys])
    return xa.values(trace.get("x")), ya.values(trace.get("y"))


# --- traces ----------------------------------------------------------------------------


def _trace(trace: dict, axes: _Axes, index: int) -> list[str]:
    if trace.get("visible") is False or trace.get("visible") == "legendonly":
        return []
    kind = trace.get("type", "scatter")
    xa, ya = (axes.axes[k] for k in axes.pair(trace))
    if kind == "heatmap":
        return _heatmap(trace, xa, ya)
    if kind == "bar":
        return _bars(trace, xa, ya, index)
    return _scatter(trace, xa, ya, index)


def _scatter(trace: dict, xa: _Axis, ya: _Axis, index: int) -> list[str]:
    xs, ys = xa.values(trace.get("x")), ya.values(trace.get("y"))
    n = min(len(xs), len(ys))
    if n == 0:
        return []
    xs, ys = xs[:n], ys[:n]
    mode = trace.get("mode") or ("lines+markers" if n < 20 else "lines")
    line = trace.get("line") or {}
    marker = trace.get("marker") or {}
    default = _COLORWAY[index % len(_COLORWAY)]
    out = []
    px, py = xa.px(xs), ya.px(ys)
    if "lines" in mode:
        color = _color(line.get("color") or marker.get("color"), default)
        dash = {"dash": "6,4", "dot": "2,3", "dashdot": "6,3,2,3"}.get(line.get("dash"), "")
        out += _polylines(px, py, line.get("shape") == "hv", color,
                          float(line.get("width", 2)), dash)
    keep = _pick(n)
    sizes = _per_point(marker.get("size"), n, 6)
    if "markers" in mode and float(marker.get("opacity", 1)) > 0:
        colors = _per_point(marker.get("color"), n, default)
        if marker.get("colorscale") and any(_isnum(c) for c in colors):
            colors = _scale_colors(colors, marker)
        symbols = _per_point(marker.get("symbol"), n, "circle")
        edge = marker.get("line") or {}
        stroke = (f" stroke='{_color(edge.get('color'), '#444')}' "
                  f"stroke-width='{float(edge.get('width', 0)):g}'" if edge.get("width") else "")
        for i in keep:
            if not (np.isfinite(px[i]) and np.isfinite(py[i])):
                continue
            r = float(sizes[i]) / 2 if _isnum(sizes[i]) else 3.0
            out.append(_marker(float(px[i]), float(py[i]), r, str(symbols[i]),
                               _color(colors[i], default), stroke))
    if "text" in mode and trace.get("text") is not None:
        texts = _per_point(trace.get("text"), n, "")
        pos = str(trace.get("textposition", "middle center"))
        for i in keep:
            if not (np.isfinite(px[i]) and np.isfinite(py[i])) or not texts[i]:
                continue
            # beside the marker, as plotly places it (its radius plus a gap)
            r = float(sizes[i]) / 2 + 3 if "markers" in mode and _isnum(sizes[i]) else 3.0
            dx = r + 2 if "right" in pos else -r - 2 if "left" in pos else 0
            dy = -r - 2 if "top" in pos else r + 10 if "bottom" in pos else 4
            anchor = "start" if "right" in pos else "end" if "left" in pos else "middle"
            out.append(_text(float(px[i]) + dx, float(py[i]) + dy, _clip(str(texts[i]), 40),
                             anchor, None))
    return out


def _bars(trace: dict, xa: _Axis, ya: _Axis, index: int) -> list[str]:
    xs, ys = xa.values(trace.get("x")), ya.values(trace.get("y"))
    n = min(len(xs), len(ys))
    marker = trace.get("marker") or {}
    colors = _per_point(marker.get("color"), n, _COLORWAY[index % len(_COLORWAY)])
    edge = marker.get("line") or {}
    horizontal = trace.get("orientation") == "h"
    base = _broadcast(trace.get("base"), (n,))
    out = []
    for i in _pick(n):
        if horizontal:
            (a, b), c, half = (base[i], base[i] + xs[i]), ys[i], 0.4
            x0, x1 = sorted((float(xa.px(a)), float(xa.px(b))))
            y0, y1 = sorted((float(ya.px(c - half)), float(ya.px(c + half))))
        else:
            (a, b), c, half = (base[i], base[i] + ys[i]), xs[i], 0.4
            y0, y1 = sorted((float(ya.px(a)), float(ya.px(b))))
            x0, x1 = sorted((float(xa.px(c - half)), float(xa.px(c + half))))
        if not all(map(math.isfinite, (x0, x1, y0, y1))):
            continue
        stroke = (f" stroke='{_color(_per_point(edge.get('color'), n, '#444')[i], '#444')}' "
                  f"stroke-width='{float(_first(edge.get('width'), 1)):g}'"
                  if edge.get("width") else "")
        out.append(f"<rect x='{x0:.1f}' y='{y0:.1f}' width='{max(x1 - x0, 0.5):.1f}' "
                   f"height='{max(y1 - y0, 0.5):.1f}' fill='{_color(colors[i], '#1f77b4')}'"
                   f"{stroke}/>")
    return out


def _heatmap(trace: dict, xa: _Axis, ya: _Axis) -> list[str]:
    z = _z(trace)
    if z is None or z.size == 0:
        return []
    lo = float(trace["zmin"]) if trace.get("zmin") is not None else float(np.nanmin(z))
    hi = float(trace["zmax"]) if trace.get("zmax") is not None else float(np.nanmax(z))
    scale = trace.get("colorscale") or "Viridis"
    if isinstance(scale, str):
        scale = NAMED_SCALES.get(scale, NAMED_SCALES["Viridis"])
    step_r = max(1, math.ceil(z.shape[0] / MAX_PIXELS))
    step_c = max(1, math.ceil(z.shape[1] / MAX_PIXELS))
    xs, ys = _cell_edges(trace, z.shape)
    x0, x1 = float(xa.px(xs[0])), float(xa.px(xs[-1]))
    y0, y1 = float(ya.px(ys[0])), float(ya.px(ys[-1]))
    img = z[::step_r, ::step_c]
    if x1 < x0:
        img, (x0, x1) = img[:, ::-1], (x1, x0)
    if y1 < y0:
        img, (y0, y1) = img[::-1, :], (y1, y0)
    uri = png_uri(img, lo, hi, scale)
    return [f"<image x='{x0:.1f}' y='{y0:.1f}' width='{x1 - x0:.1f}' height='{y1 - y0:.1f}' "
            f"preserveAspectRatio='none' style='image-rendering:pixelated' href='{uri}'/>"]


def _scale_colors(values: list, marker: dict) -> list:
    """Numeric marker colours through the marker's colour scale (`cmin`..`cmax`)."""
    scale = marker["colorscale"]
    if isinstance(scale, str):
        scale = NAMED_SCALES.get(scale, NAMED_SCALES["Viridis"])
    v = np.asarray([float(c) if _isnum(c) else np.nan for c in values])
    lo = float(marker.get("cmin", np.nanmin(v)))
    hi = float(marker.get("cmax", np.nanmax(v)))
    rgba = colorize(v.reshape(1, -1), lo, hi, scale)[0]
    return [f"#{r:02x}{g:02x}{b:02x}" for r, g, b, _ in rgba.tolist()]


def _auto_left(layout: dict, data: list, size: float) -> float:
    """The left margin an `automargin` y axis needs for its longest category label."""
    need = 0.0
    for key, spec in layout.items():
        if not (re.fullmatch(r"yaxis\d*", key) and isinstance(spec, dict)
                and spec.get("automargin")):
            continue
        labels = [str(c) for c in spec.get("categoryarray") or []]
        if not labels:
            ref = "y" + key[5:]
            for t in data:
                if (t.get("yaxis") or "y") == ref and t.get("y") is not None:
                    ys = decode(t["y"])
                    if ys.dtype == object or ys.dtype.kind in "US":
                        labels += [str(v) for v in ys.tolist()[:200]]
        if labels:
            longest = min(28, max(len(label) for label in labels))
            need = max(need, longest * size * 0.62 + 14 + (2.5 * size if spec.get("title")
                                                            else 0))
    return need


def _z(trace: dict) -> np.ndarray | None:
    z = trace.get("z")
    if z is None:
        return None
    a = decode(z)
    if a.dtype == object:
        a = np.asarray([[np.nan if v is None else v for v in row] for row in z], dtype=float)
    a = a.astype(float)
    return a if a.ndim == 2 else a.reshape(1, -1)


def _cell_edges(trace: dict, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The outer edges of the first and last cells along x and y (data units)."""
    out = []
    for axis, n in (("x", shape[1]), ("y", shape[0])):
        given = trace.get(axis)
        if given is not None:
            v = decode(given).astype(float)
            d = (v[-1] - v[0]) / max(1, len(v) - 1) if len(v) > 1 else 1.0
            out.append(np.array([v[0] - d / 2, v[-1] + d / 2]))
        else:
            start = float(trace.get(f"{axis}0", 0))
            d = float(trace.get(f"d{axis}", 1))
            out.append(np.array([start - d / 2, start + d * (n - 1) + d / 2]))
    return out[0], out[1]


# --- shapes, text ----------------------------------------------------------------------


def _ref(axes: _Axes, ref: Any, letter: str) -> _Axis | None:
    """The axis a shape or annotation coordinate refers to (None: the paper)."""
    ref = str(ref or letter)
    if ref.startswith("paper") or ref.endswith("domain"):
        return None
    key = ref.replace(letter, f"{letter}axis", 1)
    return axes.axes.get(key, axes.axes[f"{letter}axis"])


def _pos(axes: _Axes, obj: dict, key: str, letter: str, logged: bool = False) -> float:
    """The pixel of a shape's or annotation's coordinate (`logged`: an annotation's, in
    log10 units on a log axis, where a shape's is in data units)."""
    axis = _ref(axes, obj.get(f"{letter}ref"), letter)
    v = obj.get(key, 0)
    if axis is None:
        x0, y0, w, h = axes.plot
        return x0 + float(v) * w if letter == "x" else y0 + (1 - float(v)) * h
    return float(axis.px(float(axis.values([v], logged)[0])))


def _shape(shape: dict, axes: _Axes) -> list[str]:
    kind = shape.get("type", "rect")
    try:
        x0, x1 = _pos(axes, shape, "x0", "x"), _pos(axes, shape, "x1", "x")
        y0, y1 = _pos(axes, shape, "y0", "y"), _pos(axes, shape, "y1", "y")
    except (TypeError, ValueError):
        return []
    line = shape.get("line") or {}
    color = _color(line.get("color"), "#444")
    width = float(line.get("width", 2))
    dash = " stroke-dasharray='5,3'" if line.get("dash") not in (None, "solid") else ""
    if kind == "line":
        return [_line(x0, y0, x1, y1, color, width).replace("/>", f"{dash}/>")]
    fill = shape.get("fillcolor")
    opacity = shape.get("opacity")
    extra = f" fill-opacity='{float(opacity):g}'" if opacity is not None else ""
    return [f"<rect x='{min(x0, x1):.1f}' y='{min(y0, y1):.1f}' width='{abs(x1 - x0):.1f}' "
            f"height='{abs(y1 - y0):.1f}' fill='{_color(fill, 'none')}'{extra} "
            f"stroke='{color if width else 'none'}' stroke-width='{width:g}'{dash}/>"]


def _annotation(note: dict, axes: _Axes, size: float) -> list[str]:
    try:
        x, y = _pos(axes, note, "x", "x", True), _pos(axes, note, "y", "y", True)
    except (TypeError, ValueError):
        return []
    x += float(note.get("xshift", 0))
    y -= float(note.get("yshift", 0))
    arrow: list[str] = []
    if note.get("showarrow"):  # the text sits ax, ay pixels off the point, a line to it
        tx, ty = x + float(note.get("ax", 0) or 0), y + float(note.get("ay", 0) or 0)
        if (tx, ty) != (x, y):
            color = _color(note.get("arrowcolor"), "#444")
            arrow = [f'<line x1="{tx:.1f}" y1="{ty:.1f}" x2="{x:.1f}" y2="{y:.1f}" '
                     f'stroke="{color}" stroke-width="1.2"/>']
        x, y = tx, ty - 4
    anchor = {"left": "start", "right": "end"}.get(note.get("xanchor"), "middle")
    lines = _lines(note.get("text", ""))
    fsize = float((note.get("font") or {}).get("size", size))
    if note.get("yanchor") == "top":
        y += fsize
    color = _color((note.get("font") or {}).get("color"), "#333")
    return arrow + [_text(x, y - (len(lines) - 1 - k) * fsize * 1.2 if arrow
                          else y + k * fsize * 1.2, t, anchor, fsize, color)
                    for k, t in enumerate(lines)]


def _title(title: Any, plot: tuple, margin: dict, size: float) -> list[str]:
    spec = title if isinstance(title, dict) else {"text": title or ""}
    lines = _lines(spec.get("text", ""))
    fsize = float((spec.get("font") or {}).get("size", size * 1.3))
    x = 6 + float(spec.get("x", 0.01) if isinstance(spec.get("x"), (int, float)) else 0.01) \
        * (plot[2] + margin["l"] + margin["r"])
    return [f"<text class='gtitle' x='{x:.1f}' y='{18 + k * fsize * 1.25:.1f}' "
            f"font-size='{fsize:g}' fill='#222'>{_esc(t)}</text>"
            for k, t in enumerate(lines)]


def _legend(layout: dict, data: list, width: int, height: int, size: float) -> list[str]:
    """A horizontal legend (the workbench's form: `orientation: "h"`) along the bottom
    of the figure: a swatch and the name of every trace that shows in plotly's."""
    spec = layout.get("legend") or {}
    if spec.get("orientation") != "h" or layout.get("showlegend") is False:
        return []
    # as plotly: heatmaps only when asked, other traces unless told not to
    shown = [t for t in data if t.get("name") and (t.get("showlegend") is True or (
        t.get("showlegend") is not False and t.get("type", "scatter") != "heatmap"
        and (layout.get("showlegend") or len(data) > 1)))]
    out, x, y = [], 8.0, height - 8.0
    seen = set()
    for t in shown:
        name = " ".join(_lines(t["name"]))
        if name in seen:
            continue
        seen.add(name)
        marker, line = t.get("marker") or {}, t.get("line") or {}
        color = _color(_first(marker.get("color"), None) if not isinstance(
            marker.get("color"), str) else marker["color"], "") or _color(line.get("color"),
                                                                          "#888")
        mode = t.get("mode") or ""
        if t.get("type", "scatter") == "scatter" and "lines" in mode and "markers" not in mode:
            out.append(_line(x, y - size * 0.35, x + 18, y - size * 0.35, color, 2))
            x += 22
        else:
            out.append(f"<rect x='{x:.1f}' y='{y - size * 0.85:.1f}' width='{size:g}' "
                       f"height='{size:g}' fill='{color}' stroke='#999'/>")
            x += size + 5
        out.append(_text(x, y, name, "start", size * 0.95))
        x += len(name) * size * 0.62 + 16
        if x > width - 60:
            break
    return out


def _axis_title(spec: dict, x: float, y: float, size: float, vertical: bool) -> list[str]:
    title = spec.get("title")
    text = title.get("text") if isinstance(title, dict) else title
    if not text:
        return []
    rot = f" transform='rotate(-90 {x:.1f} {y:.1f})'" if vertical else ""
    return [f"<text x='{x:.1f}' y='{y:.1f}' text-anchor='middle'{rot}>"
            f"{_esc(' '.join(_lines(text)))}</text>"]


def _polylines(px: np.ndarray, py: np.ndarray, hv: bool, color: str, width: float,
               dash: str) -> list[str]:
    ok = np.isfinite(px) & np.isfinite(py)
    out, run = [], []
    # runs of finite points: None breaks a line in plotly (edges are drawn that way)
    bounds = np.flatnonzero(np.diff(np.concatenate([[0], ok.astype(np.int8), [0]])))
    budget = MAX_MARKS * 4
    for a, b in zip(bounds[::2], bounds[1::2]):
        idx = np.arange(a, b)
        if len(idx) > budget:
            idx = idx[np.linspace(0, len(idx) - 1, budget).astype(int)]
        budget = max(2, budget - len(idx))
        pts = []
        for k, i in enumerate(idx):
            if hv and k:
                pts.append(f"{px[i]:.1f},{py[idx[k - 1]]:.1f}")
            pts.append(f"{px[i]:.1f},{py[i]:.1f}")
        run.append(" ".join(pts))
    dash_attr = f" stroke-dasharray='{dash}'" if dash else ""
    for pts in run:
        out.append(f"<polyline points='{pts}' fill='none' stroke='{color}' "
                   f"stroke-width='{width:g}'{dash_attr}/>")
    return out


def _marker(x: float, y: float, r: float, symbol: str, color: str, stroke: str) -> str:
    if symbol.startswith("square"):
        return (f"<rect x='{x - r:.1f}' y='{y - r:.1f}' width='{2 * r:.1f}' "
                f"height='{2 * r:.1f}' fill='{color}'{stroke}/>")
    if symbol.startswith("diamond"):
        return (f"<polygon points='{x:.1f},{y - r:.1f} {x + r:.1f},{y:.1f} {x:.1f},"
                f"{y + r:.1f} {x - r:.1f},{y:.1f}' fill='{color}'{stroke}/>")
    if symbol.startswith(("x", "cross")):
        return (f"<path d='M{x - r:.1f},{y - r:.1f}L{x + r:.1f},{y + r:.1f}M{x - r:.1f},"
                f"{y + r:.1f}L{x + r:.1f},{y - r:.1f}' stroke='{color}' stroke-width='2'/>")
    return f"<circle cx='{x:.1f}' cy='{y:.1f}' r='{r:.1f}' fill='{color}'{stroke}/>"


def _line(x0: float, y0: float, x1: float, y1: float, color: str, width: float) -> str:
    return (f"<line x1='{x0:.1f}' y1='{y0:.1f}' x2='{x1:.1f}' y2='{y1:.1f}' "
            f"stroke='{color}' stroke-width='{width:g}'/>")


def _text(x: float, y: float, text: str, anchor: str, size: float | None,
          color: str = "#333") -> str:
    fs = f" font-size='{size:g}'" if size else ""
    return (f"<text x='{x:.1f}' y='{y:.1f}' text-anchor='{anchor}'{fs} fill='{color}'>"
            f"{_esc(text)}</text>")


# --- values ----------------------------------------------------------------------------


def _lines(text: Any) -> list[str]:
    """Plotly's label markup (`<br>`, `<b>`, escaped entities) as plain lines."""
    parts = re.split(r"<br\s*/?>", str(text or ""))
    return [html.unescape(_TAG.sub("", p)) for p in parts if _TAG.sub("", p).strip()]


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def _clip(text: str, n: int) -> str:
    text = " ".join(_lines(text)) if "<" in text else text
    return text if len(text) <= n else text[:n - 1] + "…"


def _pick(n: int) -> np.ndarray:
    """At most `MAX_MARKS` indices of `n`, evenly spread (all when fewer)."""
    if n <= MAX_MARKS:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, MAX_MARKS).astype(int))


def _per_point(value: Any, n: int, default: Any) -> list:
    if value is None:
        return [default] * n
    if isinstance(value, (str, int, float)):
        return [value] * n
    a = decode(value).tolist()
    if not isinstance(a, list):
        return [a] * n
    return [v if v is not None else default for v in a] + [default] * max(0, n - len(a))


def _broadcast(value: Any, shape: tuple) -> np.ndarray:
    if value is None:
        return np.zeros(shape)
    if isinstance(value, (int, float)):
        return np.full(shape, float(value))
    a = decode(value)
    a = np.asarray([np.nan if v is None else v for v in a.tolist()], dtype=float) \
        if a.dtype == object else a.astype(float)
    return np.resize(a, shape)


def _first(value: Any, default: Any) -> Any:
    if isinstance(value, (int, float)):
        return value
    if value is None:
        return default
    a = decode(value).tolist()
    return a[0] if a else default


def _isnum(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _color(value: Any, default: str) -> str:
    if not isinstance(value, str) or not value:
        return default
    return html.escape(value, quote=True)


def _nice(span: float) -> float:
    """A 1-2-5 tick step giving about 6 ticks over `span`."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / 6
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)


def _num(v: float) -> str:
    return f"{v:.6g}" if abs(v - round(v)) > 1e-9 else str(round(v))
